// `npm run profile:native`: where the Outpost workerd's CPU goes below JavaScript. `npm run profile` samples V8
// only, so SQLite, RPC, streams and whatever else workerd runs in the same process show there as "(native)" and
// "(program)". This records the whole process with Linux perf (`perf record -g`, call graphs) while a batch of the
// bench's 3-turn tasks runs, then prints the inclusive share of the workerd functions that stand for each kind of
// work (an RPC call, a SQL statement, a commit and its fsync, an incoming request, a tail stream...), with the CPU per
// task from /proc to read them against. The raw perf.data is saved under bench/results/ for `perf report`.
// Needs `perf` (Debian: apt-get install linux-perf) and the right to trace the process (root, or
// kernel.perf_event_paranoid ≤ 2 for one's own processes). PROFILE_TASKS (default 50) and PROFILE_CONCURRENCY
// (default 1) size the batch.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { API_KEY } from "./config.ts";
import { startBenchEmulator } from "./emulator-process.ts";
import { runOutpostTask } from "./outpost.ts";
import { fmt, runPool, sleep, table } from "./util.ts";
import { cpuMs, startWrangler } from "./wrangler.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const log = (line: string) => process.stderr.write(`[profile:native] ${line}\n`);
const TASKS = Number(process.env.PROFILE_TASKS ?? "50");
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? "1");

/** What a share of the samples stands for: a label, and the workerd (or kernel) function whose callees it counts. */
const MARKERS: readonly { label: string; symbol: RegExp }[] = [
  { label: "JavaScript, microtasks included (V8 entry)", symbol: /^v8::internal::\(anonymous namespace\)::Invoke$/ },
  { label: "JS RPC calls into a Worker or object", symbol: /^workerd::api::JsRpcTargetBase::callImpl$/ },
  { label: "HTTP requests into the Worker", symbol: /^workerd::IoContext::runSingle<.*WorkerEntrypoint::requestImpl/ },
  { label: "SQL statements (sql.exec)", symbol: /^workerd::api::SqlStorage::exec$/ },
  { label: "transactionSync", symbol: /^workerd::api::DurableObjectStorage::transactionSync$/ },
  { label: "SQLite commits", symbol: /^vdbeCommit$/ },
  { label: "  of which fsync", symbol: /^fsync$/ },
  { label: "tail streams (wrangler's trace collector)", symbol: /TailStreamTarget::report\(/ },
  { label: "garbage collection", symbol: /^v8::internal::Heap::CollectGarbage/ },
  { label: "system calls", symbol: /^entry_SYSCALL_64_after_hwframe$/ },
];

interface Row {
  children: number;
  self: number;
  symbol: string;
}

/** `perf report --children --stdio -g none`'s rows: "  12.34%  0.56%  [.] symbol". */
function parseReport(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*([\d.]+)%\s+([\d.]+)%\s+\[[.k]\]\s+(.+?)\s*$/.exec(line);
    if (m) rows.push({ children: Number(m[1]), self: Number(m[2]), symbol: m[3] ?? "" });
  }
  return rows;
}

function requirePerf(): void {
  const probe = spawnSync("perf", ["--version"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    log("perf is not installed (Debian: apt-get install linux-perf); `npm run profile` samples JavaScript without it");
    process.exit(2);
  }
}

async function main(): Promise<void> {
  requirePerf();
  const emulator = await startBenchEmulator();
  log("starting wrangler dev…");
  const dev = await startWrangler({
    root,
    vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
  });
  try {
    log("warm-up: 10 tasks (not recorded)");
    await runPool(10, 2, (i) => runOutpostTask(dev.url, `native profile warm-up #${i}`));

    const out = resolve(root, "bench/results");
    mkdirSync(out, { recursive: true });
    const file = resolve(out, `perf-${new Date().toISOString().replace(/[:.]/g, "-")}.data`);
    const perf = spawn("perf", ["record", "-F", "999", "-g", "-o", file, "-p", String(dev.workerPid)], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let perfErr = "";
    perf.stderr.on("data", (chunk: Buffer) => {
      perfErr += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((done) => perf.on("exit", (code) => done(code)));
    // perf attaches to the process's threads before it samples anything.
    await sleep(1000);
    if (perf.exitCode !== null) throw new Error(`perf record ended at once (${perf.exitCode}):\n${perfErr}`);
    log(`recording ${TASKS} tasks at concurrency ${CONCURRENCY}…`);
    const cpuBefore = cpuMs(dev.workerPid);
    await runPool(TASKS, CONCURRENCY, (i) => runOutpostTask(dev.url, `native profile #${i}`));
    const cpuPerTask = (cpuMs(dev.workerPid) - cpuBefore) / TASKS;
    perf.kill("SIGINT");
    const code = await exited;
    if (code !== 0 && code !== null) throw new Error(`perf record failed (${code}):\n${perfErr}`);

    const report = spawnSync("perf", ["report", "-i", file, "--children", "--sort", "sym", "--stdio", "-g", "none"], {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
    if (report.status !== 0) throw new Error(`perf report failed:\n${report.stderr}`);
    const rows = parseReport(report.stdout);
    if (rows.length === 0) throw new Error("perf report gave no samples");

    const lines: string[] = [];
    lines.push(
      `Native profile of Outpost's workerd (perf, call graphs): ${TASKS} bench tasks (3 model calls, 2 tool calls) at concurrency ${CONCURRENCY}`,
    );
    lines.push(`workerd process CPU ${fmt(cpuPerTask, 1)} ms/task (/proc, all threads)`);
    lines.push("");
    lines.push("Inclusive share of the samples (a function and everything it calls; shares overlap):");
    lines.push(
      table(
        ["work", "% of samples", "≈ ms/task", "function"],
        MARKERS.map(({ label, symbol }) => {
          const row = rows.find((r) => symbol.test(r.symbol));
          const share = row?.children ?? 0;
          return [label, fmt(share, 1), fmt((share / 100) * cpuPerTask, 1), row ? shorten(row.symbol) : "(no samples)"];
        }),
      ),
    );
    lines.push("");
    lines.push("Top functions by self time:");
    lines.push(
      table(
        ["% self", "function"],
        [...rows]
          .sort((a, b) => b.self - a.self)
          .slice(0, 25)
          .map((r) => [fmt(r.self, 2), shorten(r.symbol)]),
      ),
    );
    lines.push("");
    lines.push(`perf data saved to ${file} (perf report -i <file> --children)`);
    console.log(lines.join("\n"));
  } finally {
    await dev.stop();
    await emulator.close();
  }
}

/** C++ symbols run to hundreds of characters of template arguments: the head is what names the work. */
function shorten(symbol: string): string {
  return symbol.length > 90 ? `${symbol.slice(0, 87)}...` : symbol;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
