// The workerd floor as a bench phase: the floor's loop (bench/floor.ts) in a Durable Object of its own per run on a
// `workerd serve` of its own (bench/workerd-floor/), against the same emulator and script. Two levels at
// concurrency 1: the loop alone, and the loop with each message written to the object's SQLite before the next call
// (one commit per step, the least a durable loop does). Then its memory: runs held in flight by a model call that
// does not answer, as the memory phase holds Outpost's tasks, on workerd serve and under wrangler dev. And the durable
// loop under wrangler dev, where the headline is measured: at concurrency 1 and 20, through wrangler's proxy, its CPU
// per run, overhead per turn and runs per second. What it shows: how much of a task's CPU, latency and memory is the
// platform's (a new object per run, the isolate's turns, workerd's I/O, SQLite, the dev server's own Workers) and
// how much is Outpost's own work on top of it.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { RequestRecord } from "../emulator/server.ts";
import { MODEL_TURNS } from "./config.ts";
import { httpJson } from "./http.ts";
import { selfHostedSnapshot } from "./memory.ts";
import { buildSelfHosted } from "./self-hosted.ts";
import { round, runPool, type Summary, sleep, summarize } from "./util.ts";
import { cpuMs, devProxyPid, startWrangler } from "./wrangler.ts";

export interface WorkerdFloorLevel {
  /** Each message written to the object's SQLite before the next model call. */
  persist: boolean;
  /** The run's conversation written to the run store as one object when it ends (Outpost keeps a record of each run). */
  record: boolean;
  concurrency: number;
  runs: number;
  /** (the POST's answer − the POST − the emulator's service time for the run's calls) / turns. */
  overheadPerTurnMs: Summary;
  runWallMs: Summary;
  /** CPU time of the floor's workerd (/proc) during the level ÷ its runs. */
  cpuMsPerRun: number;
  /** Runs ended per second of the level's wall time. */
  runsPerSecond: number;
}

/** A level under wrangler dev: the workerd running the floor's Worker, and beside it the dev proxy's CPU. */
export interface DevFloorLevel extends WorkerdFloorLevel {
  /** CPU time of wrangler's dev proxy (the other workerd) during the level ÷ its runs. */
  proxyCpuMsPerRun: number;
}

/** RSS growth of the floor's workerd with `runs` persisted runs waiting on their model call, per run. */
export interface FloorMemory {
  runs: number;
  idleMiB: number;
  inFlightMiB: number;
  perRunKiB: number;
}

export interface WorkerdFloorResult {
  levels: WorkerdFloorLevel[];
  /** On workerd serve, beside self-hosted Outpost. */
  memory: FloorMemory;
  /** Under wrangler dev, beside the headline's memory figure (the same dev server, one request a run). */
  devMemory: FloorMemory;
  /** The durable loop under wrangler dev through its proxy, beside the headline's levels (c=1 and c=20). */
  devLevels: DevFloorLevel[];
}

const WARMUP_RUNS = 6;

interface FloorKind {
  persist: boolean;
  record: boolean;
}

/** The loop alone; each message written to SQLite (the durable floor); and its record kept as well (the platform floor). */
const FLOOR_KINDS: readonly FloorKind[] = [
  { persist: false, record: false },
  { persist: true, record: false },
  { persist: true, record: true },
];

export async function measureWorkerdFloor(options: {
  root: string;
  emulatorUrl: string;
  records: () => Promise<RequestRecord[]>;
  runs: number;
  /** Runs of the concurrency-20 level under wrangler dev (the headline's c=20 level runs as many tasks). */
  concurrentRuns: number;
  memoryRuns: number;
}): Promise<WorkerdFloorResult> {
  const build = await buildSelfHosted({
    root: options.root,
    vars: { ANTHROPIC_BASE_URL: options.emulatorUrl },
    wranglerConfig: "bench/workerd-floor/wrangler.toml",
  });
  const level = (url: string, pid: number, kind: FloorKind, concurrency: number, runs: number) =>
    floorLevel({ url, pid, ...kind, concurrency, runs, records: options.records });
  try {
    const levels: WorkerdFloorLevel[] = [];
    for (const kind of FLOOR_KINDS) {
      levels.push(await build.withServer((server) => level(server.url, server.pid, kind, 1, options.runs)));
    }
    const memory = await build.withServer((server) => floorMemory(server.url, server.pid, options.memoryRuns));
    // Under wrangler dev too, on a copy of the tree with the floor's files added, as the bench serves Outpost: a
    // fresh dev server for the memory (as the memory phase has), another for the levels.
    const dev = () => {
      const files = ["bench/workerd-floor/worker.ts", "bench/workerd-floor/wrangler.toml", "bench/floor.ts"];
      files.push("bench/config.ts");
      return startWrangler({
        root: options.root,
        vars: { ANTHROPIC_BASE_URL: options.emulatorUrl },
        extraFiles: Object.fromEntries(files.map((file) => [file, readFileSync(resolve(options.root, file), "utf8")])),
        extraArgs: ["--config", "bench/workerd-floor/wrangler.toml"],
      });
    };
    const memoryServer = await dev();
    let devMemory: FloorMemory;
    try {
      devMemory = await floorMemory(memoryServer.url, memoryServer.workerPid, options.memoryRuns);
    } finally {
      await memoryServer.stop();
    }
    const levelServer = await dev();
    const devLevels: DevFloorLevel[] = [];
    try {
      const proxyPid = devProxyPid(levelServer);
      for (const kind of FLOOR_KINDS.filter((k) => k.persist)) {
        for (const [concurrency, runs] of [
          [1, options.runs],
          [20, options.concurrentRuns],
        ] as const) {
          const proxyBefore = proxyPid === undefined ? Number.NaN : cpuMs(proxyPid);
          const measured = await level(levelServer.url, levelServer.workerPid, kind, concurrency, runs);
          const proxyCpu = proxyPid === undefined ? Number.NaN : cpuMs(proxyPid) - proxyBefore;
          devLevels.push({ ...measured, proxyCpuMsPerRun: round(proxyCpu / runs) });
        }
      }
    } finally {
      await levelServer.stop();
    }
    return { levels, memory, devMemory, devLevels };
  } finally {
    build.remove();
  }
}

/** One level of the floor at `url`: warm-up runs, then `runs` runs at `concurrency`, with the CPU of `pid`. */
async function floorLevel(options: {
  url: string;
  pid: number;
  persist: boolean;
  record: boolean;
  concurrency: number;
  runs: number;
  records: () => Promise<RequestRecord[]>;
}): Promise<WorkerdFloorLevel> {
  const { url, pid, persist, record, concurrency } = options;
  const run = async (label: string) => {
    const id = `workerd-floor-${label}-${crypto.randomUUID()}`;
    const t0 = performance.now();
    const res = await httpJson("POST", `${url}/runs/${id}?persist=${persist ? 1 : 0}&record=${record ? 1 : 0}`);
    if (res.status !== 200) throw new Error(`workerd floor run: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
    return { id, wallMs: performance.now() - t0 };
  };
  await runPool(WARMUP_RUNS, 1, (i) => run(`warm-up-${i}`));
  const before = cpuMs(pid);
  const started = performance.now();
  const runs = await runPool(options.runs, concurrency, (i) => run(String(i)));
  const elapsedS = (performance.now() - started) / 1000;
  const cpu = cpuMs(pid) - before;
  const records = await options.records();
  const overheads = runs.map(({ id, wallMs }) => {
    const mine = records.filter((r) => r.task_id === id);
    if (mine.length !== MODEL_TURNS) throw new Error(`workerd floor run ${id}: ${mine.length} model calls`);
    return (wallMs - mine.reduce((sum, r) => sum + r.service_ms, 0)) / MODEL_TURNS;
  });
  return {
    persist,
    record,
    concurrency,
    runs: options.runs,
    overheadPerTurnMs: summarize(overheads),
    runWallMs: summarize(runs.map((r) => r.wallMs)),
    cpuMsPerRun: round(cpu / options.runs),
    runsPerSecond: round(options.runs / elapsedS, 1),
  };
}

/** `runs` persisted floor runs held in flight by a model call that does not answer: the workerd's growth per run. */
async function floorMemory(url: string, pid: number, runs: number): Promise<FloorMemory> {
  // The workerd's resident memory, read as the self-hosted memory phase reads it.
  const rssMiB = () => selfHostedSnapshot(pid).workerMiB;
  const start = (label: string, query: string) =>
    httpJson("POST", `${url}/runs/workerd-floor-${label}-${crypto.randomUUID()}?persist=1&${query}`).then((res) => {
      if (res.status !== 200) throw new Error(`workerd floor memory: HTTP ${res.status}`);
    });
  await runPool(2, 1, (i) => start(`memory-warm-up-${i}`, "wait=1"));
  await sleep(1000);
  const idleMiB = rssMiB();
  await runPool(runs, 20, (i) => start(`stalled-${i}`, "stall=1&wait=0"));
  // As the memory phase does: let the model requests go out and settle before reading.
  await sleep(3000);
  const inFlightMiB = rssMiB();
  return {
    runs,
    idleMiB: round(idleMiB, 1),
    inFlightMiB: round(inFlightMiB, 1),
    perRunKiB: round(((inFlightMiB - idleMiB) * 1024) / runs, 0),
  };
}
