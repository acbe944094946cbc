// `npm run profile`: where Outpost's workerd spends its CPU on the benchmark's task. Starts the model emulator and
// `wrangler dev` with the V8 inspector open, warms up, then records a CPU profile of the Worker's isolate over the
// Chrome DevTools Protocol (Profiler.start … Profiler.stop) while it runs a batch of the bench's 3-turn tasks, and
// prints the top functions by self time and the same time grouped by module (a file of src/, or an npm package).
// The bundle wrangler serves keeps esbuild's `// <path>` comment before each module it inlines, so a sampled
// line maps back to its source file without a source map. The raw profile is saved under bench/results/ for
// DevTools (Performance panel → Load profile).
// PROFILE_TASKS (default 60) and PROFILE_CONCURRENCY (default 1) size the batch; PROFILE_SAMPLING_US (default 100)
// sets the sampling interval. The samples are wall-clock ticks of the isolate's thread, so on a loaded machine its
// "busy" time exceeds its CPU time: read the tables as shares, and CPU per task from /proc (printed beside).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { API_KEY } from "./config.ts";
import { startBenchEmulator } from "./emulator-process.ts";
import { httpJson } from "./http.ts";
import { runOutpostTask } from "./outpost.ts";
import { fmt, runPool, table } from "./util.ts";
import { cpuMs, freePort, startWrangler } from "./wrangler.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const log = (line: string) => process.stderr.write(`[profile] ${line}\n`);
const TASKS = Number(process.env.PROFILE_TASKS ?? "60");
const CONCURRENCY = Number(process.env.PROFILE_CONCURRENCY ?? "1");
/** Sampling interval of the profiler, µs (V8's default is 1000; finer shows short functions). */
const SAMPLING_US = Number(process.env.PROFILE_SAMPLING_US ?? "100");

interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A minimal Chrome DevTools Protocol session over the inspector's WebSocket. */
class Inspector {
  #next = 1;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #socket: WebSocket;
  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on("message", (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (message.id === undefined) return;
      const waiter = this.#pending.get(message.id);
      if (!waiter) return;
      this.#pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
  }

  static async connect(url: string): Promise<Inspector> {
    // workerd refuses an upgrade without an Origin header (PLATFORM.md), which Node's own WebSocket cannot set.
    const socket = new WebSocket(url, { headers: { origin: "http://localhost" } });
    await new Promise<void>((ok, fail) => {
      socket.once("open", () => ok());
      socket.once("error", fail);
    });
    return new Inspector(socket);
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.#next++;
    this.#socket.send(JSON.stringify({ id, method, params }));
    return new Promise<T>((ok, fail) => this.#pending.set(id, { resolve: ok as (v: unknown) => void, reject: fail }));
  }

  close(): void {
    this.#socket.close();
  }
}

/** For each line of the bundle, the module esbuild inlined there (from its `// <path>` comments). */
function moduleIndex(source: string): (line: number) => string {
  const starts: { line: number; module: string }[] = [];
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const match = /^\/\/ (\S+\.(?:[cm]?[jt]sx?|json))$/.exec(lines[i] as string);
    if (match) starts.push({ line: i, module: moduleName(match[1] as string) });
  }
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "(bundle preamble)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const start = starts[mid] as { line: number; module: string };
      if (start.line <= line) {
        found = start.module;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** `node_modules/@scope/pkg/…` → `@scope/pkg`; our own files keep their path. */
function moduleName(path: string): string {
  const nm = path.lastIndexOf("node_modules/");
  if (nm < 0) return path.replace(/^(\.\.\/)+/, "");
  const rest = path.slice(nm + "node_modules/".length).split("/");
  return rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : (rest[0] as string);
}

interface Row {
  name: string;
  module: string;
  selfMs: number;
}

function summarise(profile: Profile, moduleOf: (scriptId: string, line: number) => string) {
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = profile.samples[i] as number;
    selfUs.set(node, (selfUs.get(node) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byFunction = new Map<string, Row>();
  const byModule = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    const frame = node.callFrame;
    if (frame.functionName === "(idle)") {
      idleUs += us;
      continue;
    }
    totalUs += us;
    const module =
      frame.scriptId === "0" || frame.url === ""
        ? frame.functionName.startsWith("(")
          ? frame.functionName
          : "(native)"
        : moduleOf(frame.scriptId, frame.lineNumber);
    const name = frame.functionName || "(anonymous)";
    const key = `${name}\u0000${module}\u0000${frame.lineNumber}`;
    const row = byFunction.get(key) ?? { name, module, selfMs: 0 };
    row.selfMs += us / 1000;
    byFunction.set(key, row);
    byModule.set(module, (byModule.get(module) ?? 0) + us / 1000);
  }
  // Each sample charged to the nearest of Outpost's own functions on its stack (src/…), so the time of the natives
  // (SQLite, streams, crypto) and libraries a function calls is counted where the call was made.
  const parent = new Map<number, ProfileNode>();
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node);
  }
  const ours = new Map<string, Row>();
  for (const [id, us] of selfUs) {
    let node = byId.get(id);
    if (!node || node.callFrame.functionName === "(idle)") continue;
    let owner: Row | null = null;
    while (node) {
      const frame: CallFrame = node.callFrame;
      if (frame.scriptId !== "0" && frame.url !== "") {
        const module = moduleOf(frame.scriptId, frame.lineNumber);
        if (module.startsWith("src/")) {
          const name = frame.functionName || "(anonymous)";
          const key = `${name}\u0000${module}\u0000${frame.lineNumber}`;
          owner = ours.get(key) ?? { name, module, selfMs: 0 };
          ours.set(key, owner);
          break;
        }
      }
      node = parent.get(node.id);
    }
    if (owner) owner.selfMs += us / 1000;
    else {
      const key = "(outside Outpost's code)";
      const row = ours.get(key) ?? { name: key, module: "", selfMs: 0 };
      row.selfMs += us / 1000;
      ours.set(key, row);
    }
  }
  return {
    byFunction: [...byFunction.values()],
    byModule,
    byOwnFunction: [...ours.values()],
    busyMs: totalUs / 1000,
    idleMs: idleUs / 1000,
  };
}

async function main(): Promise<void> {
  const emulator = await startBenchEmulator();
  const inspectorPort = await freePort();
  log("starting wrangler dev with the inspector…");
  const dev = await startWrangler({
    root,
    vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
    extraArgs: ["--inspector-port", String(inspectorPort)],
  });
  try {
    log("warm-up: 10 tasks (not profiled)");
    await runPool(10, 2, (i) => runOutpostTask(dev.url, `profile warm-up #${i}`));

    const targets = (await httpJson("GET", `http://127.0.0.1:${inspectorPort}/json`)).body as {
      webSocketDebuggerUrl?: string;
      title?: string;
    }[];
    const target = targets.find((t) => t.webSocketDebuggerUrl) ?? null;
    if (!target?.webSocketDebuggerUrl) throw new Error(`no inspector target: ${JSON.stringify(targets)}`);
    const inspector = await Inspector.connect(target.webSocketDebuggerUrl);
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: SAMPLING_US });
    log(`profiling ${TASKS} tasks at concurrency ${CONCURRENCY}…`);
    const cpuBefore = cpuMs(dev.workerPid);
    await inspector.send("Profiler.start");
    await runPool(TASKS, CONCURRENCY, (i) => runOutpostTask(dev.url, `profile #${i}`));
    const { profile } = await inspector.send<{ profile: Profile }>("Profiler.stop");
    const cpuAfter = cpuMs(dev.workerPid);

    // The bundle's sources, to map sampled lines to modules; read after the profile so the debugger costs nothing.
    await inspector.send("Debugger.enable");
    const indexes = new Map<string, (line: number) => string>();
    for (const scriptId of new Set(profile.nodes.map((n) => n.callFrame.scriptId))) {
      if (scriptId === "0") continue;
      try {
        const { scriptSource } = await inspector.send<{ scriptSource: string }>("Debugger.getScriptSource", {
          scriptId,
        });
        indexes.set(scriptId, moduleIndex(scriptSource));
      } catch {
        // a script the debugger no longer knows (e.g. an eval'd snippet): its samples stay unattributed
      }
    }
    await inspector.send("Debugger.disable");
    inspector.close();
    const moduleOf = (scriptId: string, line: number) => indexes.get(scriptId)?.(line) ?? `(script ${scriptId})`;
    const summary = summarise(profile, moduleOf);

    const out = resolve(root, "bench/results");
    mkdirSync(out, { recursive: true });
    const file = resolve(out, `profile-${new Date().toISOString().replace(/[:.]/g, "-")}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));

    const perTask = (ms: number) => ms / TASKS;
    const lines: string[] = [];
    lines.push(
      `CPU profile of Outpost's workerd isolate: ${TASKS} bench tasks (3 model calls, 2 tool calls) at concurrency ${CONCURRENCY}`,
    );
    lines.push(
      `JavaScript busy ${fmt(perTask(summary.busyMs), 1)} ms/task (sampled); workerd process CPU ${fmt(perTask(cpuAfter - cpuBefore), 1)} ms/task (/proc, all threads)`,
    );
    lines.push("");
    lines.push("Self time by module (ms per task):");
    const modules = [...summary.byModule.entries()].sort((a, b) => b[1] - a[1]).slice(0, 30);
    lines.push(
      table(
        ["module", "ms/task", "% of busy"],
        modules.map(([module, ms]) => [module, fmt(perTask(ms), 2), fmt((100 * ms) / summary.busyMs, 1)]),
      ),
    );
    lines.push("");
    // The 40 heaviest rows of a function table, as ms per task and share of the busy time.
    const functionTable = (rows: Row[]) =>
      table(
        ["function", "module", "ms/task", "%"],
        [...rows]
          .sort((a, b) => b.selfMs - a.selfMs)
          .slice(0, 40)
          .map((r) => [
            r.name.slice(0, 48),
            r.module.slice(0, 56),
            fmt(perTask(r.selfMs), 2),
            fmt((100 * r.selfMs) / summary.busyMs, 1),
          ]),
      );
    lines.push("Top functions by self time (ms per task):", functionTable(summary.byFunction), "");
    lines.push(
      "Time charged to Outpost's own functions (self + the natives and libraries they call), ms per task:",
      functionTable(summary.byOwnFunction),
    );
    lines.push("");
    lines.push(`profile saved to ${file}`);
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await dev.stop();
    await emulator.close();
  }
}

await main();
