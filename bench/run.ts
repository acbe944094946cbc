// `npm run bench`: Outpost's per-task latency and memory under wrangler dev, against the floor of a bare SDK loop.
// Starts the model emulator in-process with a fixed latency and `wrangler dev` on a free port, runs the 3-turn
// planner task at concurrency 1 and 20 (and at 1 created with its events in one streamed POST), the same loop
// through the bare SDK, a conversation, a fan-out tree of sub-agents (bench/fanout.ts) and a memory phase with 200
// stalled tasks; then the concurrency-1 level and the memory phase against self-hosted Outpost (bench/self-hosted.ts),
// the workerd floor, what a realistic run costs (bench/cost.ts), and tasks meeting a provider outage and a rate
// limit (bench/waits.ts), and a long chat session kept inside a small context window (bench/compaction.ts).
// Prints tables and one JSON object (also bench/results/latest.json). Exit code 0 even if a target is missed;
// non-zero only if the benchmark itself failed.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type ChatResult, chatScript, runChat } from "./chat.ts";
import { type CompactionCase, compactionReport, compactionTargets, runCompactionCase } from "./compaction.ts";
import {
  API_KEY,
  CHAT_MESSAGES,
  FANOUT_CHILDREN,
  LATENCY,
  LEVELS,
  MODEL_TURNS,
  SCRIPT,
  SELF_HOSTED_LEVEL,
  STALL_SCRIPT,
  STALLED_TASKS,
  TARGETS,
  WARMUP_TASKS,
} from "./config.ts";
import { type CostResult, runCostCase } from "./cost.ts";
import { costReport, costTargets } from "./cost-report.ts";
import { type EmulatorProcess, startEmulatorProcess } from "./emulator-process.ts";
import { type FanoutResult, fanoutScripts, runFanout } from "./fanout.ts";
import { type FloorSample, floorSample } from "./floor.ts";
import type { FloorChildResult } from "./floor-child.ts";
import { closeHttpAgent, httpJson } from "./http.ts";
import { type MemoryResult, memoryPhase, type RssSnapshot, rssSnapshot } from "./memory.ts";
import { type Breakdown, outpostSample, runOutpostTask } from "./outpost.ts";
import { buildSelfHosted, selfHostedMemory } from "./self-hosted.ts";
import { DevSession } from "./session.ts";
import { fmt, mean, round, runPool, type Summary, summarize, table } from "./util.ts";
import { runWaitCases, type WaitsResult, waitsReport, waitsTargets } from "./waits.ts";
import { measureWorkerdFloor, type WorkerdFloorResult } from "./workerd-floor.ts";
import { cpuMs, devProxyPid, type WranglerDev } from "./wrangler.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const execFileAsync = promisify(execFile);
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** CPU time spent during a phase by Outpost's workerd, wrangler's proxy workerd, and this process (client + emulator). */
interface CpuUse {
  /** ms of CPU per task. */
  workerMsPerTask: number;
  proxyMsPerTask: number;
  /** This process: the client. */
  benchMsPerTask: number;
  /** The emulator's own process. */
  emulatorMsPerTask: number;
  /** Share of one core the Outpost workerd was busy during the phase (its JavaScript, every object's, runs on one thread). */
  workerBusy: number;
  benchBusy: number;
}

/** The processes a level's CPU is read from: the workerd running Outpost, and wrangler's dev proxy if there is one. */
interface OutpostProcesses {
  workerPid: number;
  proxyPid?: number | undefined;
}

function devProcesses(dev: WranglerDev): OutpostProcesses {
  return { workerPid: dev.workerPid, proxyPid: devProxyPid(dev) };
}

/** CPU used from now on by Outpost's processes, by this one (the client) and by the emulator's. */
function cpuProbe(processes: OutpostProcesses, emulatorPid: number): (tasks: number) => CpuUse {
  const { workerPid, proxyPid } = processes;
  const read = () => {
    const own = process.cpuUsage();
    return {
      at: performance.now(),
      worker: cpuMs(workerPid),
      proxy: proxyPid === undefined ? Number.NaN : cpuMs(proxyPid),
      bench: (own.user + own.system) / 1000,
      emulator: cpuMs(emulatorPid),
    };
  };
  const before = read();
  return (tasks) => {
    const after = read();
    const elapsed = after.at - before.at;
    return {
      workerMsPerTask: round((after.worker - before.worker) / tasks),
      proxyMsPerTask: round((after.proxy - before.proxy) / tasks),
      benchMsPerTask: round((after.bench - before.bench) / tasks),
      emulatorMsPerTask: round((after.emulator - before.emulator) / tasks),
      workerBusy: round((after.worker - before.worker) / elapsed),
      benchBusy: round((after.bench - before.bench) / elapsed),
    };
  };
}

interface OutpostLevel {
  concurrency: number;
  tasks: number;
  /**
   * Through wrangler's proxy with the headline flow; direct to the Worker's workerd; the one-request flow; or the
   * headline flow against self-hosted Outpost (npm start's workerd serve).
   */
  target: "wrangler proxy" | "direct" | "streamed POST" | "self-hosted";
  elapsedS: number;
  firstEventMs: Summary;
  postMs: Summary;
  overheadPerTurnMs: Summary;
  inRunOverheadPerTurnMs: Summary;
  taskWallMs: Summary;
  bundleMs: Summary;
  serviceMsPerTask: Summary;
  eventsPerTask: number;
  meanEventDeliveryMs: number;
  extraModelCalls: number;
  cpu: CpuUse;
  /** Mean ms per task spent in each phase (the parts add up to the mean task wall time). */
  breakdownMeanMs: Breakdown | null;
}

interface FloorLevel {
  concurrency: number;
  tasks: number;
  elapsedS: number;
  overheadPerTurnMs: Summary;
  taskWallMs: Summary;
  serviceMsPerTask: Summary;
  /** CPU ms per run of the floor's own process (the SDK loop; the emulator runs elsewhere). */
  cpuMsPerRun: number;
}

async function measureOutpost(
  processes: OutpostProcesses,
  baseUrl: string,
  emulator: EmulatorProcess,
  label: string,
  concurrency: number,
  tasks: number,
  target: OutpostLevel["target"],
): Promise<OutpostLevel> {
  const started = performance.now();
  const cpu = cpuProbe(processes, emulator.pid);
  const flow = target === "streamed POST" ? "streamed post" : "post, then events";
  const runs = await runPool(tasks, concurrency, (i) => runOutpostTask(baseUrl, `${label} #${i}`, flow));
  const cpuUse = cpu(tasks);
  const elapsedS = (performance.now() - started) / 1000;
  const records = await emulator.stats();
  const samples = runs.map((run) => outpostSample(run, records));
  const breakdowns = samples.map((s) => s.breakdown).filter((b): b is Breakdown => b !== null);
  const breakdownMeanMs =
    breakdowns.length === 0
      ? null
      : (Object.fromEntries(
          Object.keys(breakdowns[0] as Breakdown).map((key) => [
            key,
            round(mean(breakdowns.map((b) => b[key as keyof Breakdown]))),
          ]),
        ) as unknown as Breakdown);
  return {
    concurrency,
    tasks,
    target,
    elapsedS: round(elapsedS, 1),
    firstEventMs: summarize(samples.map((s) => s.firstEventMs)),
    postMs: summarize(samples.map((s) => s.postMs)),
    overheadPerTurnMs: summarize(samples.map((s) => s.overheadPerTurnMs)),
    inRunOverheadPerTurnMs: summarize(samples.map((s) => s.inRunOverheadPerTurnMs)),
    taskWallMs: summarize(samples.map((s) => s.totalMs)),
    bundleMs: summarize(samples.map((s) => s.bundleMs)),
    serviceMsPerTask: summarize(samples.map((s) => s.serviceMs)),
    eventsPerTask: round(mean(samples.map((s) => s.events)), 1),
    meanEventDeliveryMs: round(mean(samples.map((s) => s.meanEventDeliveryMs))),
    extraModelCalls: samples.reduce((n, s) => n + (s.modelCalls - MODEL_TURNS), 0),
    cpu: cpuUse,
    breakdownMeanMs,
  };
}

async function measureFloor(
  emulator: EmulatorProcess,
  label: string,
  concurrency: number,
  tasks: number,
): Promise<FloorLevel> {
  // In a child process: its CPU time is then the SDK loop's alone, without the emulator that shares this one.
  // Not spawnSync: the emulator it talks to runs on this process's event loop.
  const { stdout } = await execFileAsync(
    process.execPath,
    [resolve(root, "bench/floor-child.ts"), emulator.url, label, String(concurrency), String(tasks)],
    { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  );
  const out = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as FloorChildResult;
  const records = await emulator.stats();
  const samples: FloorSample[] = out.runs.map((run) => floorSample(run, records));
  return {
    concurrency,
    tasks,
    elapsedS: round(out.elapsedMs / 1000, 1),
    overheadPerTurnMs: summarize(samples.map((s) => s.overheadPerTurnMs)),
    taskWallMs: summarize(samples.map((s) => s.wallMs)),
    serviceMsPerTask: summarize(samples.map((s) => s.serviceMs)),
    cpuMsPerRun: round(out.cpuMs / tasks),
  };
}

/** GET / round trips: through wrangler's dev proxy and straight to the Worker's workerd. */
async function pingLatency(url: string, count: number): Promise<Summary> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await httpJson("GET", `${url}/`);
    if (res.status !== 200) throw new Error(`GET ${url}/: HTTP ${res.status}`);
    times.push(performance.now() - t0);
  }
  return summarize(times);
}

interface Target {
  name: string;
  value: number;
  limit: string;
  pass: boolean;
  /** The measured value ÷ the floor's, where the floor has the same figure (its SDK loop, same run). */
  ratioToFloor: number | null;
  /**
   * The same figure for the platform floor: the durable loop of bench/workerd-floor/ under the same wrangler dev, in
   * this run (a Durable Object per run, each message written to SQLite, nothing else). Null where it has no such
   * figure (it sends no events).
   */
  platformFloor: number | null;
  /** Whether the platform floor's figure meets the limit: where it does not, no code on top of it can. */
  platformPass: boolean | null;
}

function targets(
  outpost: OutpostLevel[],
  floor: FloorLevel[],
  chat: ChatResult,
  memory: MemoryResult,
  workerdFloor: WorkerdFloorResult,
): Target[] {
  const at = (c: number) => outpost.find((l) => l.target === "wrangler proxy" && l.concurrency === c);
  const floorAt = (c: number) => floor.find((f) => f.concurrency === c);
  const platformAt = (c: number) => workerdFloor.devLevels.find((l) => l.record && l.concurrency === c);
  const c1 = at(1);
  const c20 = at(20);
  const f1 = floorAt(1);
  const p1 = platformAt(1);
  const p20 = platformAt(20);
  const out: Target[] = [];
  const add = (name: string, value: number, limit: number, unit: string, floorValue?: number, platform?: number) =>
    out.push({
      name,
      value,
      limit: `<= ${limit}${unit}`,
      pass: value <= limit,
      ratioToFloor: floorValue ? round(value / floorValue, 2) : null,
      platformFloor: platform ?? null,
      platformPass: platform === undefined ? null : platform <= limit,
    });
  if (c1) {
    const name = "CPU per task, Outpost workerd (c=1)";
    add(name, c1.cpu.workerMsPerTask, TARGETS.cpuPerTaskMs, " ms", f1?.cpuMsPerRun, p1?.cpuMsPerRun);
  }
  if (c20) {
    const name = "CPU per task, Outpost workerd (c=20)";
    add(name, c20.cpu.workerMsPerTask, TARGETS.cpuPerTaskMs, " ms", floorAt(20)?.cpuMsPerRun, p20?.cpuMsPerRun);
  }
  if (c1) {
    add(
      "per-turn overhead as the client sees it, p50 (c=1)",
      c1.overheadPerTurnMs.p50,
      TARGETS.clientOverheadP50Ms,
      " ms",
      f1?.overheadPerTurnMs.p50,
      p1?.overheadPerTurnMs.p50,
    );
    if (f1) {
      const ratio = round(c1.inRunOverheadPerTurnMs.p50 / f1.overheadPerTurnMs.p50, 2);
      out.push({
        name: `in-run overhead p50 ÷ floor p50 (c=1: ${fmt(c1.inRunOverheadPerTurnMs.p50, 2)} ms)`,
        value: ratio,
        limit: `<= ${TARGETS.inRunOverheadRatioToFloor}x`,
        pass: ratio <= TARGETS.inRunOverheadRatioToFloor,
        ratioToFloor: ratio,
        platformFloor: null,
        platformPass: null,
      });
    }
  }
  if (c20) {
    add("first event p95 (c=20)", c20.firstEventMs.p95, TARGETS.c20FirstEventP95Ms, " ms");
    const perSecond = round(c20.tasks / c20.elapsedS, 1);
    const f20 = floorAt(20);
    out.push({
      name: "tasks per second (c=20)",
      value: perSecond,
      limit: `>= ${TARGETS.c20TasksPerSecond}/s`,
      pass: perSecond >= TARGETS.c20TasksPerSecond,
      ratioToFloor: f20 ? round(perSecond / (f20.tasks / f20.elapsedS), 2) : null,
      platformFloor: p20?.runsPerSecond ?? null,
      platformPass: p20 ? p20.runsPerSecond >= TARGETS.c20TasksPerSecond : null,
    });
  }
  // Memory's floor is the workerd floor's under the same dev server: the Node floor has no objects.
  add(
    "memory per in-flight task, Outpost workerd",
    memory.perTaskKiB,
    TARGETS.memoryPerTaskKiB,
    " KiB",
    workerdFloor.devMemory.perRunKiB,
    workerdFloor.devMemory.perRunKiB,
  );
  if (c1) {
    add("first event p95 (c=1)", c1.firstEventMs.p95, TARGETS.firstEventP95Ms, " ms");
    add("in-run overhead p95 (c=1)", c1.inRunOverheadPerTurnMs.p95, TARGETS.overheadP95Ms, " ms");
  }
  out.push({
    name: `session: CPU per message, median of the last 10 / of messages 2–11 (${CHAT_MESSAGES} messages)`,
    value: chat.cpuRatio,
    limit: `<= ${TARGETS.chatLateToEarlyRatio}x`,
    pass: chat.cpuRatio <= TARGETS.chatLateToEarlyRatio,
    ratioToFloor: null,
    platformFloor: null,
    platformPass: null,
  });
  return out;
}

function report(result: {
  outpost: OutpostLevel[];
  floor: FloorLevel[];
  memory: MemoryResult & { fresh_before_warmup: RssSnapshot };
  self_hosted_memory: MemoryResult;
  workerd_floor: WorkerdFloorResult;
  wrangler_restarts: string[];
  targets: Target[];
  ping: { proxy: Summary; direct: Summary | null };
  chat: ChatResult;
  fanout: FanoutResult;
  cost: CostResult;
  waits: WaitsResult;
  compaction: CompactionCase;
}): string {
  const lines: string[] = [];
  lines.push(
    "Headline: the targets of the issues, as a client sees them (through wrangler's proxy), beside the floor",
    "(the same 3-call loop with the bare SDK in its own Node process, measured in the same run) and the platform",
    "floor (that loop in a Durable Object per run, each message written to its SQLite and the conversation to the",
    "run store at the end, under the same wrangler dev):",
  );
  lines.push(
    table(
      ["target", "measured", "limit", "result", "× floor", "platform floor"],
      result.targets.map((t) => [
        t.name,
        fmt(t.value, 2),
        t.limit,
        t.pass ? "PASS" : "MISS",
        t.ratioToFloor === null ? "—" : `${fmt(t.ratioToFloor, 2)}x`,
        t.platformFloor === null ? "—" : fmt(t.platformFloor, 2),
      ]),
    ),
  );
  const beyond = result.targets.filter((t) => t.platformPass === false);
  if (beyond.length > 0) {
    lines.push(
      `The platform floor itself misses ${beyond.length === 1 ? "this limit" : "these limits"} on this machine: ` +
        `${beyond.map((t) => `${t.name.replace(/, Outpost workerd/, "")} (${fmt(t.platformFloor ?? 0, 2)} against ${t.limit})`).join("; ")}.`,
    );
  }
  lines.push("", ...floorsTable(result));
  lines.push("", "Explanation: latency per level (p50/p95) and per phase.");
  const rows: string[][] = [];
  for (const level of result.outpost) {
    const c = `c=${level.concurrency}${level.target === "wrangler proxy" ? "" : `, ${level.target}`}`;
    const floorLevel =
      level.target === "direct" ? undefined : result.floor.find((f) => f.concurrency === level.concurrency);
    const row = (metric: string, o: Summary, f: Summary | undefined) => [
      `${metric} (${c})`,
      fmt(o.p50),
      fmt(o.p95),
      fmt(f?.p50),
      fmt(f?.p95),
      f ? `${fmt(o.p50 / f.p50, 2)}x` : "—",
    ];
    rows.push(row("first event, ms", level.firstEventMs, undefined));
    rows.push(row("client-perceived overhead per turn, ms", level.overheadPerTurnMs, floorLevel?.overheadPerTurnMs));
    rows.push(row("in-run overhead per turn, ms", level.inRunOverheadPerTurnMs, floorLevel?.overheadPerTurnMs));
    rows.push(row("task wall time, ms", level.taskWallMs, floorLevel?.taskWallMs));
    rows.push(row("bundle in R2 after run_finished, ms", level.bundleMs, undefined));
    rows.push(row("model service/task, ms", level.serviceMsPerTask, floorLevel?.serviceMsPerTask));
  }
  lines.push(
    table(["metric", "outpost p50", "outpost p95", "floor p50", "floor p95", "ratio p50 outpost/floor"], rows),
  );

  lines.push(
    "",
    `Floor CPU (its own process: the SDK loop alone), ms per run: ${result.floor
      .map((f) => `${fmt(f.cpuMsPerRun)} at c=${f.concurrency}`)
      .join(", ")}`,
  );
  const selfHosted = result.outpost.find((l) => l.target === "self-hosted");
  const floorAtOne = result.floor.find((f) => f.concurrency === 1);
  if (selfHosted) {
    lines.push(
      `Self-hosted (npm start's workerd serve, no dev server's Workers in the request path), c=${selfHosted.concurrency}: ` +
        `CPU ${fmt(selfHosted.cpu.workerMsPerTask)} ms per task` +
        (floorAtOne ? ` (${fmt(selfHosted.cpu.workerMsPerTask / floorAtOne.cpuMsPerRun, 2)}x the floor's)` : "") +
        `, client-perceived overhead p50 ${fmt(selfHosted.overheadPerTurnMs.p50, 2)} ms per turn`,
    );
  }
  lines.push("", "Where an Outpost task's time goes (mean ms per task, summed over its 3 turns):");
  const parts: [keyof Breakdown, string][] = [
    ["start", "POST → 1st llm_request_sent"],
    ["dispatch", "llm_request_sent → emulator sees request"],
    ["bodyRead", "emulator reading request body"],
    ["service", "emulator service (model latency)"],
    ["drain", "emulator done → llm_response_received"],
    ["between", "response_received → next request_sent"],
    ["finish", "last response → run_finished"],
    ["delivery", "run_finished → SSE frame at client"],
  ];
  const levels = result.outpost.filter((l) => l.breakdownMeanMs);
  lines.push(
    table(
      ["phase", ...levels.map((l) => `c=${l.concurrency}${l.target === "wrangler proxy" ? "" : ` ${l.target}`}`)],
      [
        ...parts.map(([key, name]) => [name, ...levels.map((l) => fmt(l.breakdownMeanMs?.[key]))]),
        ["task wall time (mean)", ...levels.map((l) => fmt(l.taskWallMs.mean))],
        ["events per task", ...levels.map((l) => fmt(l.eventsPerTask, 0))],
        ["event timestamp → client (mean)", ...levels.map((l) => fmt(l.meanEventDeliveryMs))],
        ["POST round trip p50", ...levels.map((l) => fmt(l.postMs.p50))],
        ["CPU/task: Outpost workerd, ms", ...levels.map((l) => fmt(l.cpu.workerMsPerTask))],
        ["CPU/task: dev proxy workerd, ms", ...levels.map((l) => fmt(l.cpu.proxyMsPerTask))],
        ["CPU/task: bench client, ms", ...levels.map((l) => fmt(l.cpu.benchMsPerTask))],
        ["CPU/task: emulator, ms", ...levels.map((l) => fmt(l.cpu.emulatorMsPerTask))],
        ["Outpost workerd busy, % of a core", ...levels.map((l) => fmt(l.cpu.workerBusy * 100, 0))],
      ],
    ),
  );
  lines.push(
    "",
    `GET / round trip p50/p95: via wrangler proxy ${fmt(result.ping.proxy.p50, 2)}/${fmt(result.ping.proxy.p95, 2)} ms` +
      (result.ping.direct
        ? `, direct to the Worker's workerd ${fmt(result.ping.direct.p50, 2)}/${fmt(result.ping.direct.p95, 2)} ms`
        : ", direct port not found"),
  );

  const { chat } = result;
  const picked = chat.messages.filter((msg) => [1, 2, 10, 25, 49, 50].includes(msg.index));
  lines.push("", `Conversation: one session, ${chat.messages.length} messages (each POST …/messages?wait=60):`);
  lines.push(
    table(
      ["message", "wall ms", "model service ms", "overhead ms", "Outpost workerd CPU ms"],
      picked.map((msg) => [
        String(msg.index),
        fmt(msg.wallMs),
        fmt(msg.serviceMs),
        fmt(msg.overheadMs),
        fmt(msg.cpuMs),
      ]),
    ),
  );
  lines.push(
    `messages 2–11 median (mean): CPU ${fmt(chat.early.cpuMs)} (${fmt(chat.early.meanCpuMs)}) ms, overhead ${fmt(chat.early.overheadMs)} (${fmt(chat.early.meanOverheadMs)}) ms; last 10: CPU ${fmt(chat.late.cpuMs)} (${fmt(chat.late.meanCpuMs)}) ms, overhead ${fmt(chat.late.overheadMs)} (${fmt(chat.late.meanOverheadMs)}) ms (medians: ×${fmt(chat.cpuRatio, 2)} CPU, ×${fmt(chat.overheadRatio, 2)} overhead)`,
  );

  const { fanout } = result;
  lines.push(
    "",
    `Fan-out: one parent delegating ${fanout.children} children in one turn (each one model call, ${fanout.childTtftMs} ms to first token), ${fanout.trees} trees each way; POST → parent's run_finished:`,
  );
  lines.push(
    table(
      ["children", "p50 ms", "p95 ms", "CPU/tree, Outpost workerd ms"],
      [
        [
          `all at once (max_parallel ${fanout.children})`,
          fmt(fanout.parallelMs.p50),
          fmt(fanout.parallelMs.p95),
          fmt(fanout.parallelCpuMsPerTree),
        ],
        [
          "one at a time (max_parallel 1)",
          fmt(fanout.sequentialMs.p50),
          fmt(fanout.sequentialMs.p95),
          fmt(fanout.sequentialCpuMsPerTree),
        ],
      ],
    ),
  );
  lines.push(`parallel ÷ sequential p50: ×${fmt(fanout.ratio, 2)}`);

  const m = result.memory;
  lines.push("", `Memory (VmRSS, MiB) with ${m.tasks} tasks waiting on their model call:`);
  lines.push(
    table(
      ["process", "just started", "idle (warm)", `${m.tasks} in flight`, "after cancel"],
      (
        [
          ["workerd running Outpost", "workerMiB"],
          ["workerd dev proxy", "proxyMiB"],
          ["workerd total", "workerdMiB"],
          ["wrangler group total", "totalMiB"],
        ] as const
      ).map(([name, key]) => [
        name,
        fmt(m.fresh_before_warmup[key]),
        fmt(m.idle[key]),
        fmt(m.inFlight[key]),
        fmt(m.afterCancel[key]),
      ]),
    ),
  );
  lines.push(
    `≈ ${m.perTaskKiB} KiB per in-flight task (Outpost workerd); all in flight after ${m.secondsToAllInFlight} s`,
  );
  lines.push(
    `Control: ${m.control.requests} GETs of an unknown task (as many requests as the phase made) grew the Outpost ` +
      `workerd by ${fmt(m.control.after.workerMiB - m.control.before.workerMiB)} MiB, ${fmt(m.control.perRequestKiB)} KiB ` +
      `a request; less that growth for the phase's requests, ≈ ${m.netPerTaskKiB} KiB per in-flight task`,
  );

  const h = result.self_hosted_memory;
  lines.push(
    "",
    `Self-hosted (npm start, one workerd serve; VmRSS): ${fmt(h.idle.workerMiB)} MiB idle, ` +
      `${fmt(h.inFlight.workerMiB)} MiB with ${h.tasks} tasks in flight, ${fmt(h.afterCancel.workerMiB)} MiB after ` +
      `cancel: ≈ ${h.perTaskKiB} KiB per in-flight task (${h.netPerTaskKiB} KiB less the control's ` +
      `${fmt(h.control.perRequestKiB)} KiB a request)`,
  );

  lines.push("", ...costReport(result.cost));
  lines.push("", ...waitsReport(result.waits));
  lines.push("", ...compactionReport(result.compaction));
  if (result.wrangler_restarts.length > 0) {
    lines.push(
      "",
      `Note: wrangler restarted workerd during ${result.wrangler_restarts.join("; ")}; re-run on a fresh instance.`,
    );
  }
  return lines.join("\n");
}

/**
 * The floors beside self-hosted Outpost, at concurrency 1: the bare SDK loop in Node, the same loop in a Durable
 * Object per run on workerd serve (alone, and writing each message to SQLite), and Outpost on the same workerd.
 */
function floorsTable(result: {
  outpost: OutpostLevel[];
  floor: FloorLevel[];
  self_hosted_memory: MemoryResult;
  workerd_floor: WorkerdFloorResult;
}): string[] {
  const node = result.floor.find((f) => f.concurrency === 1);
  const selfHosted = result.outpost.find((l) => l.target === "self-hosted");
  const kind = (persist: boolean, record: boolean) =>
    result.workerd_floor.levels.find((l) => l.persist === persist && l.record === record);
  const bare = kind(false, false);
  const durable = kind(true, false);
  const recorded = kind(true, true);
  const memory = result.workerd_floor.memory;
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? "—" : `${fmt(a / b, 2)}x`;
  const dev = result.workerd_floor.devMemory;
  return [
    "The floors, and Outpost on the same workerd (c=1; the workerd floor is bench/floor.ts's loop in a Durable Object",
    "of its own per run, on a workerd serve of its own: what the platform costs before Outpost does anything):",
    table(
      ["loop", "CPU ms/run", "overhead/turn p50 ms", "memory/in-flight run"],
      [
        ["bare SDK loop, Node process", fmt(node?.cpuMsPerRun), fmt(node?.overheadPerTurnMs.p50, 2), "—"],
        [
          "the same in a Durable Object per run (workerd)",
          fmt(bare?.cpuMsPerRun),
          fmt(bare?.overheadPerTurnMs.p50, 2),
          "—",
        ],
        [
          "  and each message written to its SQLite",
          fmt(durable?.cpuMsPerRun),
          fmt(durable?.overheadPerTurnMs.p50, 2),
          `${memory.perRunKiB} KiB`,
        ],
        [
          "  and its conversation put in the run store at the end",
          fmt(recorded?.cpuMsPerRun),
          fmt(recorded?.overheadPerTurnMs.p50, 2),
          "—",
        ],
        [
          "Outpost, self-hosted (workerd)",
          fmt(selfHosted?.cpu.workerMsPerTask),
          fmt(selfHosted?.overheadPerTurnMs.p50, 2),
          `${result.self_hosted_memory.perTaskKiB} KiB`,
        ],
        [
          "Outpost ÷ the durable workerd floor",
          ratio(selfHosted?.cpu.workerMsPerTask, durable?.cpuMsPerRun),
          ratio(selfHosted?.overheadPerTurnMs.p50, durable?.overheadPerTurnMs.p50),
          ratio(result.self_hosted_memory.perTaskKiB, memory.perRunKiB),
        ],
        [
          "Outpost ÷ the floor with its record",
          ratio(selfHosted?.cpu.workerMsPerTask, recorded?.cpuMsPerRun),
          ratio(selfHosted?.overheadPerTurnMs.p50, recorded?.overheadPerTurnMs.p50),
          "—",
        ],
      ],
    ),
    `Under wrangler dev the durable workerd floor held ${dev.perRunKiB} KiB per in-flight run (one request a run; ` +
      `the headline's memory ratio is to it).`,
    "",
    "The durable workerd floor under wrangler dev, through its proxy, as the headline's levels run (with its record: the",
    "platform floor of the headline):",
    table(
      [
        "floor",
        "CPU ms/run",
        "dev proxy CPU ms/run",
        "overhead/turn p50 ms",
        "runs/s",
        "Outpost: CPU ms/task",
        "overhead/turn",
        "tasks/s",
      ],
      result.workerd_floor.devLevels.map((level) => {
        const outpost = result.outpost.find(
          (l) => l.target === "wrangler proxy" && l.concurrency === level.concurrency,
        );
        return [
          `${level.record ? "with its record" : "durable"}, c=${level.concurrency} (${level.runs} runs)`,
          fmt(level.cpuMsPerRun),
          fmt(level.proxyCpuMsPerRun),
          fmt(level.overheadPerTurnMs.p50, 2),
          fmt(level.runsPerSecond),
          fmt(outpost?.cpu.workerMsPerTask),
          fmt(outpost?.overheadPerTurnMs.p50, 2),
          outpost ? fmt(outpost.tasks / outpost.elapsedS) : "—",
        ];
      }),
    ),
  ];
}

async function main(): Promise<void> {
  const benchStarted = performance.now();
  log(`emulator latency: ttft ${LATENCY.ttftMs} ms, ${LATENCY.tokenDelayMs} ms per streamed chunk`);
  const emulator = await startEmulatorProcess();
  const session = new DevSession({
    root,
    vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
    log,
    warmup: async (dev, directUrl) => {
      log(`warm-up: ${WARMUP_TASKS} Outpost tasks (not counted)`);
      await runPool(WARMUP_TASKS, 2, (i) => runOutpostTask(dev.url, `warmup #${i}`));
      if (directUrl) await runPool(2, 1, (i) => runOutpostTask(directUrl, `warmup direct #${i}`));
    },
    saveLog: (dev, name) => {
      mkdirSync(resolve(root, "bench/results"), { recursive: true });
      dev.saveLog(resolve(root, "bench/results", name));
    },
  });
  try {
    // Logs of an earlier run would read as this run's.
    const results = resolve(root, "bench/results");
    if (existsSync(results)) {
      for (const name of readdirSync(results)) if (/^wrangler.*\.log$/.test(name)) rmSync(resolve(results, name));
    }
    await emulator.register(SCRIPT);
    await emulator.register(STALL_SCRIPT);
    await emulator.register(chatScript());
    for (const script of fanoutScripts()) await emulator.register(script);
    log(`emulator at ${emulator.url}; starting wrangler dev…`);
    await session.fresh();

    const outpost: OutpostLevel[] = [];
    const floor: FloorLevel[] = [];
    for (const { concurrency, tasks } of LEVELS) {
      log(`Outpost: ${tasks} tasks at concurrency ${concurrency}…`);
      const level = await session.phase(`the Outpost run at concurrency ${concurrency}`, (dev) =>
        measureOutpost(devProcesses(dev), dev.url, emulator, `c${concurrency}`, concurrency, tasks, "wrangler proxy"),
      );
      outpost.push(level);
      log(`  done in ${level.elapsedS} s; floor: ${tasks} bare-SDK runs at concurrency ${concurrency}…`);
      const floorLevel = await measureFloor(emulator, `c${concurrency}`, concurrency, tasks);
      floor.push(floorLevel);
      log(`  done in ${floorLevel.elapsedS} s`);
    }
    const direct = await session.phase("the direct run", async (dev, directUrl) => {
      if (!directUrl) return null;
      log("Outpost direct to the Worker's workerd (no dev proxy): 20 tasks at concurrency 1…");
      return measureOutpost(devProcesses(dev), directUrl, emulator, "direct", 1, 20, "direct");
    });
    if (direct) outpost.push(direct);
    // The same tasks, each created and followed in one request (Accept: text/event-stream on the POST).
    log("Outpost, each task created with its events in one request (streamed POST): 20 tasks at concurrency 1…");
    outpost.push(
      await session.phase("the streamed POST run", (dev) =>
        measureOutpost(devProcesses(dev), dev.url, emulator, "streamed", 1, 20, "streamed POST"),
      ),
    );
    const ping = await session.phase("the ping run", async (dev, directUrl) => ({
      proxy: await pingLatency(dev.url, 50),
      direct: directUrl ? await pingLatency(directUrl, 50) : null,
    }));

    log(`conversation: one session of ${CHAT_MESSAGES} messages, each sent with ?wait=…`);
    const chat = await session.phase("the conversation", (dev) => runChat(dev, dev.url, () => emulator.stats()));

    log(`fan-out: one parent, ${FANOUT_CHILDREN} children, all at once and one at a time…`);
    const fanout = await session.phase("the fan-out case", (dev) => runFanout(dev, dev.url));

    // A fresh wrangler for memory, so the idle baseline is not inflated by the heap of the runs above and no
    // leftover object from them wakes up mid-phase.
    log(`memory: fresh wrangler dev, then ${STALLED_TASKS} tasks with a model call that does not answer…`);
    const memory = await session.phase(
      "the memory phase",
      async (dev) => {
        const fresh = rssSnapshot(dev.pid, dev.port);
        await runPool(2, 1, (i) => runOutpostTask(dev.url, `memory warmup #${i}`));
        const measured = await memoryPhase({
          baseUrl: dev.url,
          snapshot: () => rssSnapshot(dev.pid, dev.port),
          tasks: STALLED_TASKS,
        });
        return { ...measured, fresh_before_warmup: fresh };
      },
      { fresh: true, warm: false },
    );
    await session.stop();
    // Self-hosted: the same tasks where no dev server's Workers stand in the request path, then its memory phase,
    // each on a fresh server.
    const selfHosted = await buildSelfHosted({
      root,
      vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
    });
    let selfHostedMemoryResult: MemoryResult;
    try {
      const { concurrency, tasks } = SELF_HOSTED_LEVEL;
      log(`Outpost self-hosted (npm start's workerd serve): ${tasks} tasks at concurrency ${concurrency}…`);
      outpost.push(
        await selfHosted.withServer(async (server) => {
          await runPool(WARMUP_TASKS, 2, (i) => runOutpostTask(server.url, `self-hosted warm-up #${i}`));
          return measureOutpost(
            { workerPid: server.pid },
            server.url,
            emulator,
            "self-hosted",
            concurrency,
            tasks,
            "self-hosted",
          );
        }),
      );
      log(
        `memory, self-hosted (npm start's workerd serve): ${STALLED_TASKS} tasks with a model call that does not answer…`,
      );
      selfHostedMemoryResult = await selfHosted.withServer((server) => selfHostedMemory(server, STALLED_TASKS));
    } finally {
      selfHosted.remove();
    }
    const concurrentRuns = LEVELS.find((l) => l.concurrency === 20)?.tasks ?? 100;
    log(
      `workerd floor: the floor's loop in a Durable Object per run (workerd serve), ${SELF_HOSTED_LEVEL.tasks} runs ` +
        `alone and ${SELF_HOSTED_LEVEL.tasks} writing each message to SQLite, then ${STALLED_TASKS} held in flight there and under wrangler dev, ` +
        `then the durable loop under wrangler dev: ${SELF_HOSTED_LEVEL.tasks} runs at concurrency 1, ${concurrentRuns} at 20…`,
    );
    const workerdFloor = await measureWorkerdFloor({
      root,
      emulatorUrl: emulator.url,
      records: () => emulator.stats(),
      runs: SELF_HOSTED_LEVEL.tasks,
      concurrentRuns,
      memoryRuns: STALLED_TASKS,
    });
    log("cost: 12 tool calls a run, caching on (cold, warm) and off, on an emulator billing like Anthropic…");
    const cost = await runCostCase({ root, log });
    log("provider waits: an outage of 60 s under 8 tasks, and 24 tasks at 30 requests a minute…");
    const waits = await runWaitCases({ root, log });
    log("compaction: a session of 40 messages of 1–3k tokens on a 32k-token window, with each summarizer…");
    const compaction = await runCompactionCase({ root, log });

    const result = {
      benchmark: "outpost-task-latency",
      at: new Date().toISOString(),
      node: process.version,
      cpus: availableParallelism(),
      emulator_latency: { ttft_ms: LATENCY.ttftMs, token_delay_ms: LATENCY.tokenDelayMs },
      task_shape: { agent: "planner", model_turns: MODEL_TURNS, tool_calls: MODEL_TURNS - 1 },
      definitions: {
        first_event_ms: "first SSE `id:` frame arrival − t0 (t0 = just before POST /v1/agents/planner/tasks)",
        in_run_overhead_per_turn_ms:
          "(run_finished arrival − first llm_request_sent arrival − Σ emulator service_ms of the task's requests) / 3; " +
          "for the floor, (wall time − Σ service_ms) / 3",
        task_overhead_per_turn_ms:
          "the headline, as a client sees it: (run_finished frame arrival − t0 − Σ emulator service_ms) / 3: " +
          "includes POST and SSE connect",
        cpu_per_task_ms:
          "CPU time of the workerd running Outpost during a level (its threads' schedstat run time from /proc, or " +
          "utime + stime where the kernel keeps no schedstat), ÷ its tasks; the floor's is its own process's " +
          "(process.cpuUsage) ÷ its runs",
        floor: "same loop with @anthropic-ai/sdk messages.stream().finalMessage() in Node, no Outpost",
        workerd_floor:
          "the floor's loop in a Durable Object of its own per run on workerd serve (bench/workerd-floor/), one POST " +
          "answered when the run ends; overhead per turn = (that answer − the POST − Σ service_ms) / 3; CPU from " +
          "/proc; persist: each message written to the object's SQLite before the next call; record: the " +
          "conversation put in the run store when the run ends; memory: RSS growth with runs held in flight by a " +
          "model call that does not answer, per run; devLevels: persist (and record) under wrangler dev through " +
          "its proxy at the headline's concurrency levels, the record level being the headline's platform floor",
      },
      outpost,
      floor,
      ping,
      memory,
      self_hosted_memory: selfHostedMemoryResult,
      workerd_floor: workerdFloor,
      chat,
      fanout,
      cost,
      waits,
      compaction,
      wrangler_restarts: session.reruns,
      targets: [
        ...targets(outpost, floor, chat, memory, workerdFloor),
        ...costTargets(cost),
        ...waitsTargets(waits),
        ...compactionTargets(compaction),
      ],
      bench_seconds: round((performance.now() - benchStarted) / 1000, 1),
    };
    const output = report(result);
    console.log(`\nOutpost benchmark — emulator ttft ${LATENCY.ttftMs} ms, ${LATENCY.tokenDelayMs} ms/chunk\n`);
    console.log(output);
    console.log(`\n${JSON.stringify(result)}`);
    const file = resolve(root, "bench/results/latest.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    log(`wrote ${file}; ${result.bench_seconds} s in all`);
  } finally {
    await session.stop();
    await emulator.close();
    closeHttpAgent();
  }
}

process.on("SIGINT", () => process.exit(130));
main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
