// `npm run profile:turns`: what one task does, turn by turn. Runs the bench's 3-turn task against self-hosted Outpost
// (`npm start`'s workerd serve, so that no dev server's Workers are in the way) with workerd's own activity trace on
// (`--async-trace`: a line for every turn of every Worker and object, what caused it, and every I/O and storage call,
// with timings), then prints per task: the turns by where they ran (the Worker, a task's object, the rate limiter,
// the tenant's directory) and what woke them (a request, an RPC call, a stream read, a timer), the SQL statements run,
// and the longest turns with the calls they made. Turn times are wall time with the trace on, which slows every call a
// little: read them against each other, and measure a change with `npm run bench`. TRACE_TASKS (default 5) sets the
// measured tasks, after 10 not measured.
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { API_KEY } from "./config.ts";
import { startBenchEmulator } from "./emulator-process.ts";
import { runOutpostTask } from "./outpost.ts";
import { buildSelfHosted } from "./self-hosted.ts";
import { epochNow, fmt, runPool, table } from "./util.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const log = (line: string) => process.stderr.write(`[profile:turns] ${line}\n`);
const TASKS = Number(process.env.TRACE_TASKS ?? "5");
const WARMUP = 10;

/** The trace's records this reads (workerd 2026-11: one JSON object per line; times in ns since the header's epoch). */
type TraceLine =
  | { e: "header"; epochUnixMs: number }
  | { e: "ctx"; ctx: number; worker: string; actor: string | null }
  | { e: "init"; ctx: number; id: number; kind: string; name: string; at: number }
  | { e: "annotate"; ctx: number; id: number; k: string; v: unknown }
  | { e: "turn"; ctx: number; cause: number; start: number; end: number }
  | { e: string };

interface Turn {
  where: string;
  cause: string;
  start: number;
  ms: number;
  calls: string[];
}

/** Reads the trace from `fromEpochMs` on: every turn, where it ran, what caused it and the calls it made. */
function readTrace(file: string, fromEpochMs: number): { turns: Turn[]; statements: string[] } {
  const lines = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as TraceLine);
  const header = lines.find((l): l is Extract<TraceLine, { e: "header" }> => l.e === "header");
  if (!header) throw new Error(`${file}: no header line`);
  const from = (fromEpochMs - header.epochUnixMs) * 1e6;
  const contexts = new Map<number, { worker: string; actor: string | null }>();
  const inits = new Map<string, { kind: string; name: string; at: number; ctx: number }>();
  const queries = new Map<string, string>();
  for (const line of lines) {
    if (line.e === "ctx" && "ctx" in line && "worker" in line) contexts.set(line.ctx, line);
    else if (line.e === "init" && "kind" in line) inits.set(`${line.ctx}:${line.id}`, line);
    else if (line.e === "annotate" && "k" in line && line.k === "db.query.text") {
      queries.set(`${line.ctx}:${line.id}`, String(line.v).replace(/\s+/g, " "));
    }
  }
  // An object is named by what it stores: the trace gives its id, not its class.
  const roles = new Map<string, string>();
  for (const [key, query] of queries) {
    const actor = contexts.get(Number(key.split(":")[0]))?.actor;
    if (!actor || roles.get(actor) === "task object") continue;
    if (/\bevents_log\b/.test(query)) roles.set(actor, "task object");
    else if (/\bbucket\b/.test(query)) roles.set(actor, "rate limiter");
    else if (/\bdirectory_records\b/.test(query)) roles.set(actor, "tenant directory");
  }
  const byCtx = new Map<number, { at: number; key: string; name: string }[]>();
  for (const [key, init] of inits) {
    if (init.at < from) continue;
    const list = byCtx.get(init.ctx) ?? [];
    list.push({ at: init.at, key, name: init.name });
    byCtx.set(init.ctx, list);
  }
  const turns: Turn[] = [];
  const statements: string[] = [];
  for (const line of lines) {
    if (line.e !== "turn" || !("start" in line) || line.start < from) continue;
    const context = contexts.get(line.ctx);
    const actor = context?.actor ?? null;
    const where = actor === null ? `Worker (${context?.worker ?? "?"})` : (roles.get(actor) ?? "another object");
    const cause = inits.get(`${line.ctx}:${line.cause}`);
    const own = (byCtx.get(line.ctx) ?? []).filter((call) => call.at >= line.start && call.at <= line.end);
    const calls = own.map((call) => queries.get(call.key) ?? call.name);
    for (const call of own) {
      const query = queries.get(call.key);
      if (query !== undefined) statements.push(query);
    }
    turns.push({
      where,
      cause: cause ? `${cause.kind} ${cause.name}` : "?",
      start: line.start,
      ms: (line.end - line.start) / 1e6,
      calls,
    });
  }
  return { turns, statements };
}

function report(turns: readonly Turn[], statements: readonly string[]): string {
  const perTask = (n: number) => n / TASKS;
  const groups = new Map<string, { where: string; cause: string; n: number; ms: number }>();
  for (const turn of turns) {
    const key = `${turn.where}\u0000${turn.cause}`;
    const group = groups.get(key) ?? { where: turn.where, cause: turn.cause, n: 0, ms: 0 };
    group.n++;
    group.ms += turn.ms;
    groups.set(key, group);
  }
  const total = turns.reduce((sum, t) => sum + t.ms, 0);
  const lines: string[] = [];
  lines.push(
    `Turns of ${TASKS} bench tasks (3 model calls, 2 tool calls) against self-hosted Outpost, workerd --async-trace:`,
    `${fmt(perTask(turns.length), 0)} turns and ${fmt(perTask(total), 1)} ms in turns per task (wall time inside turns, trace on)`,
    "",
    table(
      ["where", "woken by", "turns/task", "ms/task", "ms/turn"],
      [...groups.values()]
        .sort((a, b) => b.ms - a.ms)
        .map((g) => [g.where, g.cause, fmt(perTask(g.n), 1), fmt(perTask(g.ms), 2), fmt(g.ms / g.n, 3)]),
    ),
  );
  const counts = new Map<string, number>();
  for (const statement of statements) counts.set(statement, (counts.get(statement) ?? 0) + 1);
  lines.push(
    "",
    `SQL statements: ${fmt(perTask(statements.length), 0)} per task, ${counts.size} distinct; the most frequent:`,
    table(
      ["per task", "statement"],
      [...counts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 20)
        .map(([text, n]) => [fmt(perTask(n), 1), text.length > 110 ? `${text.slice(0, 107)}...` : text]),
    ),
  );
  lines.push("", "The longest turns, with the calls each made (storage calls as their statements):");
  for (const turn of [...turns].sort((a, b) => b.ms - a.ms).slice(0, 6)) {
    const calls = new Map<string, number>();
    for (const call of turn.calls) calls.set(call, (calls.get(call) ?? 0) + 1);
    lines.push(`  ${fmt(turn.ms, 2)} ms  ${turn.where}, ${turn.cause}: ${turn.calls.length} calls`);
    for (const [call, n] of [...calls].sort((a, b) => b[1] - a[1]).slice(0, 8)) {
      lines.push(`      ${String(n).padStart(3)} × ${call.length > 100 ? `${call.slice(0, 97)}...` : call}`);
    }
  }
  return lines.join("\n");
}

async function main(): Promise<void> {
  const emulator = await startBenchEmulator();
  const traceFile = join(tmpdir(), `outpost-turns-${process.pid}.jsonl`);
  log("building the self-hosted bundle…");
  const selfHosted = await buildSelfHosted({
    root,
    vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
  });
  try {
    // The trace is complete once workerd has exited: read after withServer stops it.
    const from = await selfHosted.withServer(
      async (server) => {
        log(`warm-up: ${WARMUP} tasks (not counted)`);
        await runPool(WARMUP, 1, (i) => runOutpostTask(server.url, `turns warm-up #${i}`));
        log(`tracing ${TASKS} tasks at concurrency 1…`);
        const started = epochNow();
        await runPool(TASKS, 1, (i) => runOutpostTask(server.url, `turns #${i}`));
        return started;
      },
      { workerdArgs: ["--async-trace", traceFile] },
    );
    const { turns, statements } = readTrace(traceFile, from);
    if (turns.length === 0) throw new Error(`${traceFile}: no turns after the warm-up`);
    console.log(report(turns, statements));
    console.log(`\ntrace kept at ${traceFile}`);
  } finally {
    selfHosted.remove();
    await emulator.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
