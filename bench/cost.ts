// The bench's cost case (issue 33): what a realistic run bills at list prices, and how close Outpost's prompt caching
// comes to the best any caller could do. An agent with a 10k-token system prompt and the file tools reads twelve
// notes of 1–4k tokens (bench/cost-workload.ts) against the emulator billing as Anthropic does (its prompt cache on,
// time to first token growing with the uncached prompt), on self-hosted Outpost. Three variants of the same run:
// caching on and cold (a new agent edition, so nothing of the prompt is cached), caching on and warm (the agent's
// tools and system prompt written by an earlier task within the TTL), and caching off (`prompt_cache: false`).
// Each run's figures come from the emulator's record of its calls (the usage it billed, the prompt's cacheable units,
// time to first token) and from Outpost's own usage; the cache-optimal bound is bench/cost-bound.ts.
// `npm run bench:cost` runs this case alone; `npm run bench` runs it after its other cases.
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { runCaseAlone } from "./case.ts";
import { API_KEY } from "./config.ts";
import { billedCalls, costRun } from "./cost-calls.ts";
import { type CostSummary, costReport, costTargets, summarizeCost } from "./cost-report.ts";
import { COST_MARKER, costAgent, costScript, noteFiles } from "./cost-workload.ts";
import { type EmulatorProcess, startEmulatorProcess } from "./emulator-process.ts";
import { httpJson, readSse } from "./http.ts";
import { buildSelfHosted } from "./self-hosted.ts";

/** Runs of each variant; the report gives their medians. */
export const COST_RUNS = 3;
/**
 * The emulator's prefill time: this much more time to first token per 1,000 prompt tokens not read from the cache.
 * An assumed rate, ten times the emulator's default: with it, prefill is most of a long uncached prompt's time to
 * first token, as with a real model (seconds for 40k tokens), while a run with caching off still takes seconds.
 */
export const PREFILL_MS_PER_1K_TOKENS = 20;

export type CostVariant = "cold" | "warm" | "off";

export interface CostCall {
  promptTokens: number;
  plain: number;
  write: number;
  read: number;
  output: number;
  /** Indexes of the prompt units that carried cache_control. */
  breakpoints: number[];
  /** The emulator's time to first token. */
  ttftMs: number;
  /** At the client: the call's llm_request_sent frame → its first llm_text_delta frame (null: none came). */
  clientTtftMs: number | null;
  inputUsd: number;
  /** The call's share of the run's cache-optimal bound. */
  bound: { write: number; read: number; plain: number; usd: number };
}

export interface CostRun {
  variant: CostVariant;
  taskId: string;
  model: string;
  /** POST → run_finished at the client. */
  wallMs: number;
  tokens: { plain: number; write: number; write1h: number; read: number; output: number };
  /** At list prices (src/config/prices.ts) from the usage the emulator billed. */
  usd: { input: number; output: number; total: number };
  /** The task's own usage (GET /v1/tasks/:id). */
  outpost: { usd: number | null; plain: number; write: number; read: number; output: number };
  /** read ÷ (plain + write + read). */
  readShare: number;
  bound: { usd: number; write: number; read: number; plain: number };
  /** usd.input ÷ bound.usd. */
  boundRatio: number;
  /** Tokens a call's prompt added to the one before it (the previous turn's reads and calls): min and max. */
  growth: { min: number; max: number };
  calls: CostCall[];
}

export interface CostResult {
  model: string;
  /** The model's minimum cacheable length, as the emulator applied it. */
  minCacheableTokens: number;
  /** The agent's tools and system prompt: a cached task's first call's tokens up to its first breakpoint. */
  agentPrefixTokens: number;
  runsPerVariant: number;
  prefillMsPer1kTokens: number;
  runs: CostRun[];
  summary: CostSummary;
  /**
   * Where a run is not what Outpost promises: its usage differs from what the emulator billed, a warm run read
   * nothing of its agent's prefix (the prefix is not the same bytes from task to task), a run with caching off
   * cached. Findings, not noise: the same run gives the same tokens every time.
   */
  findings: string[];
}

const log = (line: string) => process.stderr.write(`[bench:cost] ${line}\n`);

const TaskUsageSchema = z.object({
  usage: z.object({
    input_tokens: z.number(),
    output_tokens: z.number(),
    cache_creation_input_tokens: z.number(),
    cache_read_input_tokens: z.number(),
    total_cost_usd: z.number().nullable(),
  }),
});

/** One run as the client saw it, before the emulator's records are read. */
export interface ClientRun {
  variant: CostVariant;
  taskId: string;
  wallMs: number;
  /** Per model call, in order (null: no text delta came). */
  clientTtftMs: (number | null)[];
  usage: z.infer<typeof TaskUsageSchema>["usage"];
}

async function putAgent(baseUrl: string, name: string, definition: unknown): Promise<void> {
  const res = await httpJson("PUT", `${baseUrl}/v1/agents/${name}`, { apiKey: API_KEY, body: definition });
  if (res.status !== 201 && res.status !== 200) {
    throw new Error(`PUT /v1/agents/${name}: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  }
}

async function runOnce(baseUrl: string, agent: string, variant: CostVariant, label: string): Promise<ClientRun> {
  const t0 = performance.now();
  const created = await httpJson("POST", `${baseUrl}/v1/agents/${agent}/tasks`, {
    apiKey: API_KEY,
    body: {
      input: `${COST_MARKER} ${label}: list the open questions of the notes in /workspace/notes.`,
      files: noteFiles(),
    },
  });
  const id = (created.body as { id?: unknown } | null)?.id;
  if (created.status !== 202 || typeof id !== "string") {
    throw new Error(`POST /v1/agents/${agent}/tasks: HTTP ${created.status}: ${JSON.stringify(created.body)}`);
  }
  const sentAt = new Map<number, number>();
  const firstDelta = new Map<number, number>();
  let finishedAt: number | null = null;
  let last = "";
  let failedTool: string | null = null;
  await readSse(`${baseUrl}/v1/tasks/${id}/events`, API_KEY, (frame) => {
    if (frame.id === null) return;
    const record = JSON.parse(frame.data) as {
      event_type: string;
      payload: { turn_index?: number; is_error?: boolean };
    };
    const turn = record.payload?.turn_index;
    last = record.event_type;
    if (record.event_type === "llm_request_sent" && turn !== undefined) sentAt.set(turn, frame.arrivedAt);
    if (record.event_type === "llm_text_delta" && turn !== undefined && !firstDelta.has(turn)) {
      firstDelta.set(turn, frame.arrivedAt);
    }
    if (record.event_type === "tool_call_completed" && record.payload.is_error) failedTool ??= frame.data;
    if (record.event_type === "run_finished") finishedAt = frame.arrivedAt;
  });
  if (finishedAt === null) throw new Error(`task ${id} ended with ${last || "no events"} instead of run_finished`);
  // A failed read would make a shorter prompt than the case means to measure.
  if (failedTool !== null) throw new Error(`task ${id}: a tool call failed: ${(failedTool as string).slice(0, 300)}`);
  const task = await httpJson("GET", `${baseUrl}/v1/tasks/${id}`, { apiKey: API_KEY });
  const parsed = TaskUsageSchema.safeParse(task.body);
  if (task.status !== 200 || !parsed.success) {
    throw new Error(`GET /v1/tasks/${id}: HTTP ${task.status}: ${JSON.stringify(task.body).slice(0, 300)}`);
  }
  // Calls in turn order, whatever the turns are numbered from.
  const clientTtftMs = [...sentAt.entries()]
    .sort(([a], [b]) => a - b)
    .map(([turn, sent]) => {
      const delta = firstDelta.get(turn);
      return delta === undefined ? null : delta - sent;
    });
  return { variant, taskId: id, wallMs: (finishedAt as number) - t0, clientTtftMs, usage: parsed.data.usage };
}

/** Runs the case against Outpost at `baseUrl`, whose model is `emulator`. */
async function measure(baseUrl: string, emulator: EmulatorProcess, say: (line: string) => void): Promise<CostResult> {
  // A new edition per bench run, so no earlier run's cache entries are read even on a long-lived emulator.
  const edition = Math.random().toString(16).slice(2, 8);
  await putAgent(baseUrl, "bench_cost_off", costAgent("bench_cost_off", `${edition}-off`, false));
  await putAgent(baseUrl, "bench_cost_warmup", costAgent("bench_cost_warmup", `${edition}-warmup`));
  const cached = Array.from({ length: COST_RUNS }, (_, i) => `bench_cost_cached_${i + 1}`);
  for (const [i, name] of cached.entries()) await putAgent(baseUrl, name, costAgent(name, `${edition}-${i + 1}`));
  say("warm-up: one run, not counted");
  await runOnce(baseUrl, "bench_cost_warmup", "cold", "warm-up");
  const runs: ClientRun[] = [];
  // Caching off and cold alternate, so both meet the same machine; each cold run is a new agent edition.
  for (const [i, name] of cached.entries()) {
    say(`run ${i + 1} of ${COST_RUNS}: caching off, then caching on and cold (${name})`);
    runs.push(await runOnce(baseUrl, "bench_cost_off", "off", `off #${i + 1}`));
    runs.push(await runOnce(baseUrl, name, "cold", `cold #${i + 1}`));
  }
  const warmAgent = cached.at(-1) ?? "";
  say(`${COST_RUNS} runs with caching on and warm (${warmAgent}'s tools and system prompt written by its cold run)`);
  for (let i = 0; i < COST_RUNS; i++) runs.push(await runOnce(baseUrl, warmAgent, "warm", `warm #${i + 1}`));
  const records = (await emulator.stats()) as unknown[];
  const findings: string[] = [];
  const billed = runs.map((run) => billedCalls(records, run.taskId));
  const measured = runs.map((run, i) => costRun(run, billed[i] ?? [], findings));
  const first = billed[runs.findIndex((run) => run.variant === "cold")]?.[0];
  const prefixEnd = first?.breakpoints[0] ?? -1;
  return {
    model: measured[0]?.model ?? "",
    minCacheableTokens: first?.min_cacheable_tokens ?? 0,
    agentPrefixTokens: (first?.prompt_units ?? []).slice(0, prefixEnd + 1).reduce((sum, unit) => sum + unit.tokens, 0),
    runsPerVariant: COST_RUNS,
    prefillMsPer1kTokens: PREFILL_MS_PER_1K_TOKENS,
    runs: measured,
    summary: summarizeCost(measured),
    findings,
  };
}

/**
 * The whole case on its own servers: the emulator billing like the provider, and self-hosted Outpost (npm start's
 * workerd serve, built from the tree) pointed at it.
 */
export async function runCostCase(options: { root: string; log?: (line: string) => void }): Promise<CostResult> {
  const say = options.log ?? log;
  const emulator = await startEmulatorProcess({ promptCache: true, prefillMsPer1kTokens: PREFILL_MS_PER_1K_TOKENS });
  try {
    await emulator.register(costScript());
    say("building self-hosted Outpost for the cost case…");
    const build = await buildSelfHosted({
      root: options.root,
      vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
    });
    try {
      return await build.withServer((server) => measure(server.url, emulator, say));
    } finally {
      build.remove();
    }
  } finally {
    await emulator.close();
  }
}

runCaseAlone(
  import.meta.url,
  "cost",
  (root) => runCostCase({ root }),
  (result) => [`Outpost cost bench — ${result.model}, ${COST_RUNS} runs of each variant`, "", ...costReport(result)],
  costTargets,
);
