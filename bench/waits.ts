// The bench's provider-wait cases (issue 35): tasks that meet a provider which is down or rate limiting, against the
// emulator refusing as the real APIs do (emulator/conditions.ts), on self-hosted Outpost. The outage case: 8 one-call
// tasks in flight when the provider answers 529 without retry-after for 60 s. The rate-limit case: 24 three-call tasks
// against a limit of 30 requests a minute (the bucket full at the start, refilled continuously). Every task must
// complete; the waste is the requests the provider refused per call it answered.
// `npm run bench:waits` runs these cases alone; `npm run bench` runs them after its other cases.
import { performance } from "node:perf_hooks";
import type { RequestRecord } from "../emulator/server.ts";
import { caseTarget, runCaseAlone } from "./case.ts";
import { API_KEY, SCRIPT } from "./config.ts";
import { type EmulatorProcess, startEmulatorProcess } from "./emulator-process.ts";
import { httpJson } from "./http.ts";
import { buildSelfHosted } from "./self-hosted.ts";
import { percentile, round } from "./util.ts";

const log = (line: string) => process.stderr.write(`[bench:waits] ${line}\n`);

export const OUTAGE = { marker: "[outpost-bench-outage]", tasks: 8, durationMs: 60_000 } as const;
export const RATE_LIMIT = { marker: "[outpost-bench-rate-limit]", tasks: 24, perMinute: 30, calls: 3 } as const;
/** The waste the rate-limit case may show: requests answered 429 per call answered. */
export const WASTE_TARGET = 0.5;

export interface WaitCase {
  name: string;
  tasks: number;
  completed: number;
  /** Calls the provider answered, and requests it refused. */
  answered: number;
  refused: number;
  /** refused ÷ answered. */
  waste: number;
  /** Each task's POST → its end, in seconds. */
  taskSeconds: { p50: number; max: number };
  /** Tasks that showed waiting_for while parked, seen by polling. */
  parkedTasks: number;
  /** Outage only: the provider's recovery (its first request + the outage) → the last task's end, in seconds. */
  recoveryLagSeconds?: number;
}

export interface WaitsResult {
  outage: WaitCase;
  rateLimit: WaitCase;
}

interface TaskOutcome {
  id: string;
  status: string;
  seconds: number;
  parked: boolean;
  endedAt: number;
}

/** Starts a task and polls it (GET ?wait=) to its end, noting whether it was ever seen waiting for its provider. */
async function runTask(baseUrl: string, agent: string, input: string): Promise<TaskOutcome> {
  const started = performance.now();
  const created = await httpJson("POST", `${baseUrl}/v1/agents/${agent}/tasks`, { apiKey: API_KEY, body: { input } });
  const id = (created.body as { id?: unknown } | null)?.id;
  if (created.status !== 202 || typeof id !== "string") {
    throw new Error(`POST /v1/agents/${agent}/tasks: HTTP ${created.status}: ${JSON.stringify(created.body)}`);
  }
  let parked = false;
  for (;;) {
    const res = await httpJson("GET", `${baseUrl}/v1/tasks/${id}?wait=20`, { apiKey: API_KEY });
    const task = res.body as { status?: string; waiting_for?: unknown } | null;
    if (res.status !== 200 || !task?.status) throw new Error(`GET /v1/tasks/${id}: HTTP ${res.status}`);
    if (task.waiting_for) parked = true;
    if (["completed", "failed", "canceled"].includes(task.status)) {
      return { id, status: task.status, seconds: (performance.now() - started) / 1000, parked, endedAt: Date.now() };
    }
  }
}

async function records(emulator: EmulatorProcess, marker: string): Promise<RequestRecord[]> {
  const res = await httpJson("GET", `${emulator.url}/_emulator/stats?match=${encodeURIComponent(marker)}`);
  if (res.status !== 200) throw new Error(`emulator stats: HTTP ${res.status}`);
  return (res.body as { requests: RequestRecord[] }).requests;
}

function summarize(name: string, outcomes: TaskOutcome[], requests: RequestRecord[]): WaitCase {
  const answered = requests.filter((r) => r.status === 200).length;
  const refused = requests.filter((r) => r.refusal !== null && r.refusal !== undefined).length;
  const seconds = outcomes.map((o) => o.seconds);
  return {
    name,
    tasks: outcomes.length,
    completed: outcomes.filter((o) => o.status === "completed").length,
    answered,
    refused,
    waste: answered === 0 ? Number.POSITIVE_INFINITY : round(refused / answered, 3),
    taskSeconds: { p50: round(percentile(seconds, 50), 1), max: round(Math.max(...seconds), 1) },
    parkedTasks: outcomes.filter((o) => o.parked).length,
  };
}

async function outageCase(baseUrl: string, emulator: EmulatorProcess): Promise<WaitCase> {
  await emulator.register({
    match: OUTAGE.marker,
    turns: [{ content: [{ type: "text", text: "Answered once the provider was back." }] }],
    outage: { duration_ms: OUTAGE.durationMs, status: 529 },
  });
  log(`outage: ${OUTAGE.tasks} tasks, 529 without retry-after for ${OUTAGE.durationMs / 1000} s…`);
  const outcomes = await Promise.all(
    Array.from({ length: OUTAGE.tasks }, (_, i) => runTask(baseUrl, "assistant", `${OUTAGE.marker} #${i}: say hi.`)),
  );
  const requests = await records(emulator, OUTAGE.marker);
  const first = Math.min(...requests.map((r) => r.started_at_ms));
  const result = summarize("outage", outcomes, requests);
  // started_at_ms is the emulator's performance.timeOrigin-based clock: epoch ms.
  result.recoveryLagSeconds = round(
    (Math.max(...outcomes.map((o) => o.endedAt)) - (first + OUTAGE.durationMs)) / 1000,
    1,
  );
  return result;
}

async function rateLimitCase(baseUrl: string, emulator: EmulatorProcess): Promise<WaitCase> {
  await emulator.register({
    match: RATE_LIMIT.marker,
    turns: SCRIPT.turns,
    rate_limit: { requests_per_minute: RATE_LIMIT.perMinute },
  });
  log(`rate limit: ${RATE_LIMIT.tasks} tasks of ${RATE_LIMIT.calls} calls, ${RATE_LIMIT.perMinute} requests a minute…`);
  const outcomes = await Promise.all(
    Array.from({ length: RATE_LIMIT.tasks }, (_, i) =>
      runTask(baseUrl, "planner", `${RATE_LIMIT.marker} #${i}: plan a small project.`),
    ),
  );
  return summarize("rate limit", outcomes, await records(emulator, RATE_LIMIT.marker));
}

export async function runWaitCases(options: { root: string; log?: (line: string) => void }): Promise<WaitsResult> {
  const say = options.log ?? log;
  const emulator = await startEmulatorProcess();
  try {
    say("building self-hosted Outpost for the provider-wait cases…");
    const build = await buildSelfHosted({
      root: options.root,
      vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
    });
    try {
      return await build.withServer(async (server) => ({
        outage: await outageCase(server.url, emulator),
        rateLimit: await rateLimitCase(server.url, emulator),
      }));
    } finally {
      build.remove();
    }
  } finally {
    await emulator.close();
  }
}

/** The report's lines. */
export function waitsReport(result: WaitsResult): string[] {
  const row = (c: WaitCase) =>
    `${c.name.padEnd(10)}  ${`${c.completed}/${c.tasks}`.padStart(9)}  ${String(c.answered).padStart(8)}  ` +
    `${String(c.refused).padStart(7)}  ${c.waste.toFixed(3).padStart(6)}  ${String(c.parkedTasks).padStart(6)}  ` +
    `${c.taskSeconds.p50.toFixed(1).padStart(7)}  ${c.taskSeconds.max.toFixed(1).padStart(7)}`;
  return [
    "Provider waits (self-hosted; emulator refusing as the APIs do):",
    "case        completed  answered  refused   waste  parked  p50 (s)  max (s)",
    row(result.outage),
    row(result.rateLimit),
    `outage: the last task ended ${result.outage.recoveryLagSeconds ?? "?"} s after the provider came back`,
  ];
}

/** The cases' targets, shaped as the bench's others (a number each; no floor has these figures). */
export function waitsTargets(result: WaitsResult) {
  const row = caseTarget;
  const { outage, rateLimit } = result;
  return [
    row(
      "provider outage: tasks completed",
      outage.completed,
      `${outage.tasks} of ${outage.tasks}`,
      outage.completed === outage.tasks,
    ),
    row(
      "rate limit: tasks completed",
      rateLimit.completed,
      `${rateLimit.tasks} of ${rateLimit.tasks}`,
      rateLimit.completed === rateLimit.tasks,
    ),
    row(
      "rate limit: requests answered 429 per completed call",
      rateLimit.waste,
      `<= ${WASTE_TARGET}`,
      rateLimit.waste <= WASTE_TARGET,
    ),
  ];
}

runCaseAlone(import.meta.url, "waits", (root) => runWaitCases({ root }), waitsReport, waitsTargets);
