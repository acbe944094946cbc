// The crash test's scenarios, run against a runtime the caller serves: `wrangler dev` (npm run test:crash,
// scripts/crash-test.ts) or self-hosted `workerd serve` (npm run test:crash:selfhost, scripts/crash-test-selfhost.ts).
// The runtime is killed in the middle of a run, for real, in four scenarios. Each SIGKILLs the runtime's whole process
// group (as a crashed machine would), serves it again on the same persisted state, and checks the run completes as if
// nothing had happened. Exits non-zero on any difference.
// 1. A three-turn tool-using task killed while the second model call waits for its first token: the same answer, no
//    tool run twice, the interrupted model call re-issued exactly once, and a gapless event log.
// 2. A task killed while a slow call of a side-effecting MCP tool is in flight, against the ledger server of
//    test/support/ledger-mcp-server.ts (run here in Node), which honours idempotency keys: the resumed run sends the call
//    again with the same key, the charge is executed once, the model gets its result once, the log is gapless.
//    CRASH_LOOPS=20 repeats this scenario (one kill each) and prints the figures; CI runs it once.
// 3. A chat session killed in the middle of its second message's turn (its second model call): the turn completes
//    with its answer, its tool ran once, the session takes the next message, and its event log is gapless.
// 4. A schedule (POST /v1/schedules, `at`) whose due time passes while the runtime is down: after the restart its
//    alarm fires by itself, one fire is recorded, and its one task runs to the end with the schedule as its trigger.
// The agent of scenario 2 must point at the ledger's random port and must not live in src/. So the Worker served is
// wrapped: the runtime adds an entry module to its snapshot of the tree that re-exports the Worker unchanged and
// registers one more agent in its registry before any request arrives, exactly as the vitest helpers register
// theirs. The production sources in the snapshot are not touched.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmulator } from "../emulator/server.ts";
import { type LedgerStats, startLedgerServer } from "../test/support/ledger-mcp-server.ts";

/** A runtime serving the Worker, as the scenarios need it. */
export interface CrashRuntime {
  url: string;
  /** The process that runs the Worker: a different one after a restart. */
  workerPid: number;
  /** SIGKILL to the runtime's whole process group; its state directory stays. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** How to serve the Worker: with these variables, these files added to its tree, `main` as its entry, on `stateDir`. */
export type ServeForCrash = (setup: {
  vars: Record<string, string>;
  extraFiles: Readonly<Record<string, string>>;
  main: string;
  stateDir: string;
}) => Promise<CrashRuntime>;

const KEY = "crash-test-key";
const LOOPS = Number(process.env.CRASH_LOOPS ?? "1");
if (!Number.isInteger(LOOPS) || LOOPS < 1) throw new Error(`CRASH_LOOPS must be a positive integer, not ${LOOPS}`);

const PLANNER_MARKER = `[crash-test-${crypto.randomUUID()}]`;
const PLANNER_ANSWER = "Plan: read the brief, then write the answer.";
const LEDGER_AGENT = "crash_ledger";
/** The charge sleeps this long on the server: the runtime is killed once the call has reached it. */
const CHARGE_DELAY_MS = 3_000;

const todo = (items: { content: string; status: string }[]) => ({
  content: [{ type: "tool_use", name: "TodoWrite", input: { todos: items } }],
  stop_reason: "tool_use",
});

const PLANNER_SCRIPT = {
  match: PLANNER_MARKER,
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
    { content: [{ type: "text", text: PLANNER_ANSWER }] },
  ],
};

const SESSION_MARKER = `[crash-session-${crypto.randomUUID()}]`;
const SESSION_ANSWER = "Second answer, after the restart.";
const SESSION_SCRIPT = {
  match: SESSION_MARKER,
  turns: [
    { content: [{ type: "text", text: "First answer." }] },
    todo([{ content: "Remember the first answer", status: "completed" }]),
    // The second message's second model call waits 4 s for its first token: the runtime is killed in that window.
    { content: [{ type: "text", text: SESSION_ANSWER }], ttft_ms: 4_000 },
    { content: [{ type: "text", text: "Third answer." }] },
  ],
};

/** The entry wrangler serves: the Worker as it is, plus the ledger agent (see the header). */
function entryModule(ledgerUrl: string): string {
  return `// Written by scripts/crash-test.ts into wrangler's snapshot of the tree; never part of the Worker's sources.
import { Agent } from "./src/agents/agent.ts";
import { registry } from "./src/agents/catalog.ts";

// Everything the Worker exports (its handler and its Durable Object classes), whatever they are named.
export * from "./src/index.ts";
export { default } from "./src/index.ts";

registry.register(
  ${JSON.stringify(LEDGER_AGENT)},
  class extends Agent {
    constructor() {
      super({
        name: ${JSON.stringify(LEDGER_AGENT)},
        systemPrompt: "You charge accounts with the ledger's charge tool.",
        mcpServers: { ledger: { url: ${JSON.stringify(`${ledgerUrl}/mcp`)} } },
        maxTurns: 4,
      });
    }
  },
);
`;
}

interface EventRecord {
  seq: number;
  event_type: string;
  payload: Record<string, unknown>;
}

const failures: string[] = [];
function check(name: string, ok: boolean, detail: unknown): boolean {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${ok ? "" : `: ${JSON.stringify(detail)}`}`);
  if (!ok) failures.push(name);
  return ok;
}

async function api(base: string, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${KEY}`);
  if (init.body) headers.set("content-type", "application/json");
  return fetch(`${base}${path}`, { ...init, headers });
}

/** Reads the task's SSE stream until `predicate` matches an event (or the stream ends); returns the events read. */
async function readEvents(
  base: string,
  id: string,
  predicate?: (e: EventRecord) => boolean,
  kind: "tasks" | "sessions" = "tasks",
): Promise<EventRecord[]> {
  const res = await api(base, `/v1/${kind}/${id}/events`);
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

async function startTask(base: string, agent: string, input: string): Promise<string> {
  const created = await api(base, `/v1/agents/${agent}/tasks`, { method: "POST", body: JSON.stringify({ input }) });
  if (created.status !== 202) throw new Error(`start failed: ${created.status} ${await created.text()}`);
  return ((await created.json()) as { id: string }).id;
}

/** Waits (as a reader, which resumes an interrupted task at once) for the task to end. */
async function finished(base: string, id: string): Promise<{ status: string; result: string | null }> {
  return (await (await api(base, `/v1/tasks/${id}?wait=60`)).json()) as { status: string; result: string | null };
}

async function modelTurns(emulatorUrl: string, id: string): Promise<number[]> {
  const stats = (await (await fetch(`${emulatorUrl}/_emulator/stats`)).json()) as {
    requests: { task_id: string | null; turn: number }[];
  };
  return stats.requests.filter((r) => r.task_id === id).map((r) => r.turn);
}

const gapless = (events: EventRecord[]) => events.every((e, i) => e.seq === i + 1);
const count = (events: EventRecord[], type: string) => events.filter((e) => e.event_type === type).length;

/** Runs the three scenarios against the runtime `serve` starts (`name` says which), then exits non-zero on failure. */
export async function runCrashTest(name: string, serve: ServeForCrash): Promise<void> {
  const emulator = await startEmulator({ quiet: true });
  const ledger = await startLedgerServer();
  const state = mkdtempSync(join(tmpdir(), "outpost-crash-"));
  const ENTRY = "crash-test-entry.ts";
  const setup = {
    vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: KEY, OUTPOST_ALLOW_PRIVATE_HOSTS: "127.0.0.1" },
    extraFiles: { [ENTRY]: entryModule(ledger.url) },
    main: ENTRY,
    stateDir: state,
  };
  let dev: CrashRuntime = await serve(setup);

  /** SIGKILL to the runtime's whole process group, then (after `downMs`) serve it again on the same state. */
  async function crashAndRestart(downMs = 0): Promise<number> {
    const before = dev.workerPid;
    await dev.kill();
    console.log(`killed ${name} (workerd pid ${before}); restarting on the same state`);
    if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
    dev = await serve(setup);
    return before;
  }

  async function plannerScenario(): Promise<void> {
    console.log("== scenario 1: killed while a model call waits for its first token");
    await fetch(`${emulator.url}/_emulator/scripts`, { method: "POST", body: JSON.stringify(PLANNER_SCRIPT) });
    const id = await startTask(dev.url, "planner", `Plan the work ${PLANNER_MARKER}`);
    console.log(`task ${id}: waiting for the second model call`);
    await readEvents(dev.url, id, (e) => e.event_type === "llm_request_sent" && e.payload.turn_index === 2);
    await new Promise((r) => setTimeout(r, 500));
    const before = await crashAndRestart();

    const done = await finished(dev.url, id);
    check("the run completed after the restart", done.status === "completed", done);
    check("with the same answer", done.result === PLANNER_ANSWER, done.result);
    const events = await readEvents(dev.url, id);
    check(
      "the event log is gapless",
      gapless(events),
      events.map((e) => e.seq),
    );
    const todos = count(events, "todo_list_updated");
    check("each TodoWrite ran exactly once", todos === 2, todos);
    check("the run resumed once", count(events, "run_resumed") === 1, count(events, "run_resumed"));
    const resumed = events.filter((e) => e.event_type === "step_resumed").map((e) => e.payload);
    check(
      "only the interrupted model call ran again",
      JSON.stringify(resumed) === JSON.stringify([{ step: "turn_2_model", attempt: 2, reason: "interrupted" }]),
      resumed,
    );
    const turns = await modelTurns(emulator.url, id);
    check("the model saw turns 0, 1, 1 (re-issued once), 2", JSON.stringify(turns) === "[0,1,1,2]", turns);
    check("workerd really restarted", dev.workerPid !== before, { before, after: dev.workerPid });
  }

  /** A chat session killed in the middle of its second message's turn: the turn completes, the session goes on. */
  async function sessionScenario(): Promise<void> {
    console.log("== scenario 3: a chat session killed in the middle of a turn");
    await fetch(`${emulator.url}/_emulator/scripts`, { method: "POST", body: JSON.stringify(SESSION_SCRIPT) });
    const created = await api(dev.url, "/v1/agents/planner/sessions", { method: "POST", body: "{}" });
    const id = ((await created.json()) as { id: string }).id;
    const send = async (message: string, wait: number) =>
      (await (
        await api(dev.url, `/v1/sessions/${id}/messages?wait=${wait}`, {
          method: "POST",
          body: JSON.stringify({ message }),
        })
      ).json()) as { id: string; status: string; result?: { response: string; tool_calls: unknown[] } | null };
    const first = await send(`Hello ${SESSION_MARKER}`, 30);
    check("the first message was answered", first.result?.response === "First answer.", first);
    const second = await send("Note it down, then answer.", 0);
    console.log(`session ${id}: waiting for the second message's second model call`);
    // Steps are numbered across the session: the second message's model turns are 2 and 3.
    await readEvents(dev.url, id, (e) => e.event_type === "llm_request_sent" && e.payload.turn_index === 3, "sessions");
    await new Promise((r) => setTimeout(r, 500));
    await crashAndRestart();

    const turn = (await (await api(dev.url, `/v1/sessions/${id}/turns/${second.id}?wait=60`)).json()) as {
      status: string;
      result: { response: string; tool_calls: unknown[] } | null;
    };
    check("the interrupted turn completed after the restart", turn.status === "completed", turn);
    check("with its answer", turn.result?.response === SESSION_ANSWER, turn.result);
    check("and its one tool call", turn.result?.tool_calls.length === 1, turn.result);
    const third = await send("And now?", 30);
    check("the session took the next message", third.result?.response === "Third answer.", third);
    const events = await readEvents(
      dev.url,
      id,
      (e) => e.event_type === "turn_finished" && e.payload.turn_id === third.id,
      "sessions",
    );
    check(
      "the session's event log is gapless",
      gapless(events),
      events.map((e) => e.seq),
    );
    check(
      "the TodoWrite ran exactly once",
      count(events, "todo_list_updated") === 1,
      count(events, "todo_list_updated"),
    );
    const turns = await modelTurns(emulator.url, id);
    check("the model saw turns 0, 1, 2 (re-issued once), 2, 3", JSON.stringify(turns) === "[0,1,2,2,3]", turns);
  }

  /** What one run of scenario 2 showed, for the figures of CRASH_LOOPS. */
  interface LedgerOutcome {
    completed: boolean;
    chargedOnce: boolean;
    resentWithSameKey: boolean;
  }

  async function ledgerScenario(loop: number): Promise<LedgerOutcome> {
    const label = LOOPS > 1 ? ` (run ${loop} of ${LOOPS})` : "";
    console.log(`== scenario 2${label}: killed while a side-effecting MCP call is in flight`);
    const marker = `[crash-ledger-${crypto.randomUUID()}]`;
    const account = `acct-${marker}`;
    const answer = `Charged ${account}.`;
    await fetch(`${emulator.url}/_emulator/scripts`, {
      method: "POST",
      body: JSON.stringify({
        match: marker,
        turns: [
          {
            content: [
              {
                type: "tool_use",
                name: "mcp__ledger__charge",
                input: { account, amount: 500, delay_ms: CHARGE_DELAY_MS },
              },
            ],
            stop_reason: "tool_use",
          },
          { content: [{ type: "text", text: answer }] },
        ],
      }),
    });
    const ledgerStats = async () => (await (await fetch(`${ledger.url}/stats`)).json()) as LedgerStats;
    const calls = async () =>
      (await ledgerStats()).requests.filter((r) => r.rpc === "tools/call" && r.account === account);

    const id = await startTask(dev.url, LEDGER_AGENT, `Charge the account ${marker}`);
    console.log(`task ${id}: waiting for the charge to reach the server`);
    const deadline = Date.now() + 30_000;
    while ((await calls()).length === 0) {
      if (Date.now() > deadline) throw new Error("the charge never reached the ledger server");
      await new Promise((r) => setTimeout(r, 50));
    }
    const before = await crashAndRestart();

    const done = await finished(dev.url, id);
    check("workerd really restarted", dev.workerPid !== before, { before, after: dev.workerPid });
    const completed = check("the run completed after the restart", done.status === "completed", done);
    check("with the model's answer", done.result === answer, done.result);
    const stats = await ledgerStats();
    const seen = await calls();
    const executions = stats.executions[account] ?? 0;
    const chargedOnce = check("the charge was executed exactly once", executions === 1, executions);
    const key = seen[0]?.header ?? null;
    const resentWithSameKey = check(
      "the server saw the call twice, with one key in the header and in _meta of both",
      seen.length === 2 && key !== null && seen.every((c) => c.header === key && c.meta === key),
      seen.map((c) => ({ header: c.header, meta: c.meta, status: c.status })),
    );
    const record = stats.keys.find((k) => k.key === key);
    check(
      "the server answered the re-send from its record of the key",
      record?.requests === 2 && record.executions === 1,
      record,
    );

    const events = await readEvents(dev.url, id);
    check(
      "the event log is gapless",
      gapless(events),
      events.map((e) => e.seq),
    );
    check("the run resumed once", count(events, "run_resumed") === 1, count(events, "run_resumed"));
    const attempts = events.filter((e) => e.event_type === "mcp_tool_call_started").map((e) => e.payload.attempt);
    check("the call was started twice (attempts 1 and 2)", JSON.stringify(attempts) === "[1,2]", attempts);
    check(
      "and completed once",
      count(events, "mcp_tool_call_completed") === 1,
      count(events, "mcp_tool_call_completed"),
    );

    // The model was asked twice, and its second request holds the one result.
    const turns = await modelTurns(emulator.url, id);
    check("the model saw turns 0, 1", JSON.stringify(turns) === "[0,1]", turns);
    const request = await api(
      dev.url,
      `/v1/tasks/${id}/artifacts/artifacts/llm/decision_loop_turn_2_attempt_1_request.txt`,
    );
    const body = request.status === 200 ? ((await request.json()) as { messages: { content: unknown }[] }) : null;
    const last = body?.messages.at(-1)?.content;
    const blocks = (Array.isArray(last) ? last : []) as { type?: string; content?: unknown }[];
    const results = blocks.filter((b) => b.type === "tool_result");
    check(
      "the model got the one charge's result, exactly once",
      results.length === 1 && results[0]?.content === `Charged 500 to ${account} (charge 1 on this account).`,
      results,
    );
    return { completed, chargedOnce, resentWithSameKey };
  }

  /** A schedule whose due time passes while the runtime is down fires once after the restart, by its own alarm. */
  async function scheduleScenario(): Promise<void> {
    console.log("== scenario 4: a schedule's due time passes while the runtime is down");
    const marker = `[crash-schedule-${crypto.randomUUID()}]`;
    const answer = "Scheduled answer.";
    await fetch(`${emulator.url}/_emulator/scripts`, {
      method: "POST",
      body: JSON.stringify({ match: marker, turns: [{ content: [{ type: "text", text: answer }] }] }),
    });
    const at = new Date(Date.now() + 4_000).toISOString();
    const created = await api(dev.url, "/v1/schedules", {
      method: "POST",
      body: JSON.stringify({ agent: "planner", input: `Plan the day ${marker}`, at }),
    });
    const { id } = (await created.json()) as { id: string };
    check("the schedule was created", created.status === 201, created.status);
    // Down from before the due time until well after it; nothing but reads is asked of the Worker after the restart.
    const before = await crashAndRestart(6_000);
    check("workerd really restarted", dev.workerPid !== before, { before, after: dev.workerPid });
    type Fire = { due_at: string; outcome: string; task_id: string | null; due_times: number };
    type Schedule = { status: string; recent_fires: Fire[] };
    const read = async () => (await (await api(dev.url, `/v1/schedules/${id}`)).json()) as Schedule;
    const deadline = Date.now() + 30_000;
    let schedule = await read();
    while (schedule.recent_fires[0]?.outcome !== "started" && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      schedule = await read();
    }
    const fires = schedule.recent_fires.map((f) => [f.due_at, f.due_times, f.outcome]);
    check("one fire, for the due time, started", JSON.stringify(fires) === JSON.stringify([[at, 1, "started"]]), fires);
    check("the at schedule is finished", schedule.status === "finished", schedule.status);
    const taskId = schedule.recent_fires[0]?.task_id ?? "";
    const done = await finished(dev.url, taskId);
    check("its task completed", done.status === "completed" && done.result === answer, done);
    const task = (await (await api(dev.url, `/v1/tasks/${taskId}`)).json()) as { trigger: unknown };
    check(
      "with the schedule as its trigger",
      JSON.stringify(task.trigger) === JSON.stringify({ kind: "schedule", schedule_id: id, due_at: at, due_times: 1 }),
      task.trigger,
    );
    const events = await readEvents(dev.url, taskId);
    check("created once", count(events, "task_created") === 1, count(events, "task_created"));
  }

  try {
    await plannerScenario();
    await sessionScenario();
    await scheduleScenario();
    const outcomes: LedgerOutcome[] = [];
    for (let loop = 1; loop <= LOOPS; loop++) outcomes.push(await ledgerScenario(loop));
    if (LOOPS > 1) {
      const tally = (key: keyof LedgerOutcome) => outcomes.filter((o) => o[key]).length;
      console.log(
        `scenario 2, ${LOOPS} runs each killed mid-call: ${tally("completed")} completed, ` +
          `${tally("chargedOnce")} charged exactly once, ${tally("resentWithSameKey")} re-sent with the same key`,
      );
    }
  } finally {
    await dev.stop();
    await ledger.close();
    await emulator.close();
    rmSync(state, { recursive: true, force: true });
  }

  if (failures.length > 0) {
    console.error(`crash test (${name}) failed: ${failures.join("; ")}`);
    process.exitCode = 1;
    return;
  }
  console.log(`crash test (${name}) passed`);
}
