// npm run test:crash — the runtime killed in the middle of a run, for real. Starts the model emulator and
// `wrangler dev` with persisted state, starts a three-turn tool-using task, SIGKILLs wrangler and its workerd
// processes while the second model call waits for its first token, starts `wrangler dev` again on the same state,
// and checks that the run completes as if nothing had happened: the same answer, no tool run twice, the
// interrupted model call re-issued exactly once, and a gapless event log. Exits non-zero on any difference.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startWrangler } from "../bench/wrangler.ts";
import { startEmulator } from "../emulator/server.ts";

const ROOT = resolve(import.meta.dirname, "..");
const KEY = "crash-test-key";
const MARKER = `[crash-test-${crypto.randomUUID()}]`;
const ANSWER = "Plan: read the brief, then write the answer.";

const todo = (items: { content: string; status: string }[]) => ({
  content: [{ type: "tool_use", name: "TodoWrite", input: { todos: items } }],
  stop_reason: "tool_use",
});

const SCRIPT = {
  match: MARKER,
  turns: [
    todo([{ content: "Read the brief", status: "in_progress" }]),
    // The second call waits 4 s for its first token: the runtime is killed in that window.
    {
      ...todo([
        { content: "Read the brief", status: "completed" },
        { content: "Write the answer", status: "in_progress" },
      ]),
      ttft_ms: 4_000,
    },
    { content: [{ type: "text", text: ANSWER }] },
  ],
};

interface EventRecord {
  seq: number;
  event_type: string;
  payload: Record<string, unknown>;
}

const failures: string[] = [];
function check(name: string, ok: boolean, detail: unknown): void {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok ? "" : `: ${JSON.stringify(detail)}`}`);
  if (!ok) failures.push(name);
}

async function api(base: string, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${KEY}`);
  if (init.body) headers.set("content-type", "application/json");
  return fetch(`${base}${path}`, { ...init, headers });
}

/** Reads the task's SSE stream until `predicate` matches an event (or the stream ends); returns the events read. */
async function readEvents(base: string, id: string, predicate?: (e: EventRecord) => boolean): Promise<EventRecord[]> {
  const res = await api(base, `/v1/tasks/${id}/events`);
  if (!res.body) return [];
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const events: EventRecord[] = [];
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += value;
    for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split("\n").find((l) => l.startsWith("data: "));
      if (!data) continue;
      const event = JSON.parse(data.slice(6)) as EventRecord;
      events.push(event);
      if (predicate?.(event)) {
        await reader.cancel();
        return events;
      }
    }
  }
}

const emulator = await startEmulator({ quiet: true });
const state = mkdtempSync(join(tmpdir(), "outpost-crash-"));
const vars = { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: KEY };
let dev = await startWrangler({ root: ROOT, vars, persistDir: state });
try {
  await fetch(`${emulator.url}/_emulator/scripts`, { method: "POST", body: JSON.stringify(SCRIPT) });
  const created = await api(dev.url, "/v1/agents/planner/tasks", {
    method: "POST",
    body: JSON.stringify({ input: `Plan the work ${MARKER}` }),
  });
  const task = (await created.json()) as { id: string };
  console.log(`task ${task.id}: waiting for the second model call`);
  await readEvents(dev.url, task.id, (e) => e.event_type === "llm_request_sent" && e.payload.turn_index === 2);
  await new Promise((r) => setTimeout(r, 500));
  const before = dev.workerPid;
  await dev.kill();
  console.log(`killed wrangler and workerd (pid ${before}) during the call; restarting on the same state`);
  dev = await startWrangler({ root: ROOT, vars, persistDir: state });

  // A reader arriving at an interrupted task resumes it at once.
  const done = (await (await api(dev.url, `/v1/tasks/${task.id}?wait=60`)).json()) as {
    status: string;
    result: string | null;
  };
  check("the run completed after the restart", done.status === "completed", done);
  check("with the same answer", done.result === ANSWER, done.result);

  const events = await readEvents(dev.url, task.id);
  const seqs = events.map((e) => e.seq);
  check(
    "the event log is gapless",
    seqs.every((s, i) => s === i + 1),
    seqs,
  );
  const count = (type: string) => events.filter((e) => e.event_type === type).length;
  check("each TodoWrite ran exactly once", count("todo_list_updated") === 2, count("todo_list_updated"));
  check("the run resumed once", count("run_resumed") === 1, count("run_resumed"));
  const resumed = events.filter((e) => e.event_type === "step_resumed").map((e) => e.payload);
  check(
    "only the interrupted model call ran again",
    JSON.stringify(resumed) === JSON.stringify([{ step: "turn_2_model", attempt: 2 }]),
    resumed,
  );
  const stats = (await (await fetch(`${emulator.url}/_emulator/stats`)).json()) as {
    requests: { task_id: string | null; turn: number }[];
  };
  const turns = stats.requests.filter((r) => r.task_id === task.id).map((r) => r.turn);
  check("the model saw turns 0, 1, 1 (re-issued once), 2", JSON.stringify(turns) === "[0,1,1,2]", turns);
  check("workerd really restarted", dev.workerPid !== before, { before, after: dev.workerPid });
} finally {
  await dev.stop();
  await emulator.close();
  rmSync(state, { recursive: true, force: true });
}

if (failures.length > 0) {
  console.error(`crash test failed: ${failures.join("; ")}`);
  process.exit(1);
}
console.log("crash test passed");
