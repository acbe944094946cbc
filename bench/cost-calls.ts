// The cost case's reading of one run (bench/cost.ts): the emulator's records of the task's calls, checked against
// the contract of its prompt cache, and the run's figures from them (tokens, list-price USD, the cache-optimal bound,
// time to first token), with what is not as promised listed as findings.
import { z } from "zod";
import { DEFAULT_PRICES, findPrice, type ModelPrice, oneHourWritePrice } from "../src/config/prices.ts";
import type { ClientRun, CostCall, CostRun } from "./cost.ts";
import { cacheOptimalBound } from "./cost-bound.ts";
import { COST_MODEL_CALLS } from "./cost-workload.ts";
import { round } from "./util.ts";

/** What the emulator records of a model call when it bills like the provider (its prompt cache on). */
const BilledCallSchema = z.object({
  task_id: z.string().nullable(),
  status: z.number(),
  model: z.string(),
  started_at_ms: z.number(),
  usage: z.object({
    input_tokens: z.number(),
    output_tokens: z.number(),
    cache_creation_input_tokens: z.number(),
    cache_read_input_tokens: z.number(),
    cache_creation_1h_input_tokens: z.number().optional(),
  }),
  prompt_units: z.array(z.object({ tokens: z.number(), prefix_hash: z.string() })),
  breakpoints: z.array(z.number()),
  min_cacheable_tokens: z.number(),
  ttft_ms: z.number(),
});
type BilledCall = z.infer<typeof BilledCallSchema>;

/** The emulator's records of a task's answered calls, in the order they were made. */
export function billedCalls(records: readonly unknown[], taskId: string): BilledCall[] {
  const own = records.filter((r): r is Record<string, unknown> => (r as { task_id?: unknown }).task_id === taskId);
  const failed = own.filter((r) => r.status !== 200);
  if (failed.length > 0) {
    throw new Error(`task ${taskId}: ${failed.length} model calls failed (HTTP ${failed[0]?.status})`);
  }
  const parsed = z.array(BilledCallSchema).safeParse(own);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `the emulator's stats do not bill like the provider (${issue?.path.slice(1).join(".")}: ${issue?.message}); ` +
        "its prompt cache (startEmulator({promptCache: true}), --prompt-cache) records usage, prompt_units, " +
        "breakpoints, min_cacheable_tokens and ttft_ms for every answered call",
    );
  }
  return parsed.data.sort((a, b) => a.started_at_ms - b.started_at_ms);
}

function priceOf(model: string): ModelPrice {
  const price = findPrice(DEFAULT_PRICES, model);
  if (!price) throw new Error(`the cost case's model ${model} has no list price in src/config/prices.ts`);
  return price;
}

/** One run's figures from its calls as the emulator billed them; what is not as promised goes to `findings`. */
export function costRun(run: ClientRun, calls: readonly BilledCall[], findings: string[]): CostRun {
  if (calls.length !== COST_MODEL_CALLS) {
    throw new Error(`task ${run.taskId}: ${calls.length} model calls instead of ${COST_MODEL_CALLS}`);
  }
  const model = calls[0]?.model ?? "";
  const price = priceOf(model);
  const writeHour = oneHourWritePrice(price);
  const bound = cacheOptimalBound(
    calls.map((call) => {
      const billed =
        call.usage.input_tokens + call.usage.cache_creation_input_tokens + call.usage.cache_read_input_tokens;
      const units = call.prompt_units.reduce((sum, unit) => sum + unit.tokens, 0);
      if (units > billed) findings.push(`task ${run.taskId}: prompt units of ${units} tokens, ${billed} billed`);
      return {
        units: call.prompt_units,
        minCacheableTokens: call.min_cacheable_tokens,
        extraTokens: Math.max(0, billed - units),
      };
    }),
    // The agents cache for 5 minutes (Outpost's default): the bound writes at that price.
    { input: price.input, write: price.cache_write, read: price.cache_read },
  );
  const perCall: CostCall[] = calls.map((call, i) => {
    const u = call.usage;
    const hour = u.cache_creation_1h_input_tokens ?? 0;
    const inputMicro =
      u.input_tokens * price.input +
      (u.cache_creation_input_tokens - hour) * price.cache_write +
      hour * writeHour +
      u.cache_read_input_tokens * price.cache_read;
    return {
      promptTokens: u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
      plain: u.input_tokens,
      write: u.cache_creation_input_tokens,
      read: u.cache_read_input_tokens,
      output: u.output_tokens,
      breakpoints: call.breakpoints,
      ttftMs: call.ttft_ms,
      clientTtftMs: run.clientTtftMs[i] ?? null,
      inputUsd: inputMicro / 1e6,
      bound: {
        write: bound.calls[i]?.writeTokens ?? 0,
        read: bound.calls[i]?.readTokens ?? 0,
        plain: bound.calls[i]?.inputTokens ?? 0,
        usd: bound.calls[i]?.usd ?? 0,
      },
    };
  });
  const sum = (pick: (call: BilledCall) => number) => calls.reduce((total, call) => total + pick(call), 0);
  const tokens = {
    plain: sum((c) => c.usage.input_tokens),
    write: sum((c) => c.usage.cache_creation_input_tokens),
    write1h: sum((c) => c.usage.cache_creation_1h_input_tokens ?? 0),
    read: sum((c) => c.usage.cache_read_input_tokens),
    output: sum((c) => c.usage.output_tokens),
  };
  const input = perCall.reduce((total, call) => total + call.inputUsd, 0);
  const output = (tokens.output * price.output) / 1e6;
  const outpost = {
    usd: run.usage.total_cost_usd,
    plain: run.usage.input_tokens,
    write: run.usage.cache_creation_input_tokens,
    read: run.usage.cache_read_input_tokens,
    output: run.usage.output_tokens,
  };
  for (const key of ["plain", "write", "read", "output"] as const) {
    if (outpost[key] !== tokens[key]) {
      findings.push(
        `task ${run.taskId}: ${key} tokens: Outpost counted ${outpost[key]}, the emulator billed ${tokens[key]}`,
      );
    }
  }
  // Outpost rounds each call's cost to 1e-9 USD.
  if (outpost.usd === null || Math.abs(outpost.usd - (input + output)) > 1e-6) {
    findings.push(
      `task ${run.taskId}: Outpost's total_cost_usd ${outpost.usd}, list price of the billed usage ${round(input + output, 6)}`,
    );
  }
  const first = perCall[0]?.read ?? 0;
  // A cold run that read something measured another case than the one it reports.
  if (run.variant === "cold" && first > 0) {
    throw new Error(`cold task ${run.taskId} read ${first} cached tokens at once`);
  }
  if (run.variant === "warm" && first === 0) {
    findings.push(`warm task ${run.taskId}: its first call read nothing of the agent's tools and system prompt`);
  }
  if (run.variant === "off" && tokens.write + tokens.read > 0) {
    findings.push(`task ${run.taskId}: caching off, but ${tokens.write} tokens written and ${tokens.read} read`);
  }
  const growth = perCall.slice(1).map((call, i) => call.promptTokens - (perCall[i]?.promptTokens ?? 0));
  const prompt = tokens.plain + tokens.write + tokens.read;
  return {
    variant: run.variant,
    taskId: run.taskId,
    model,
    wallMs: round(run.wallMs),
    tokens,
    usd: { input: round(input, 6), output: round(output, 6), total: round(input + output, 6) },
    outpost,
    readShare: round(prompt === 0 ? 0 : tokens.read / prompt, 4),
    bound: { usd: round(bound.usd, 6), write: bound.writeTokens, read: bound.readTokens, plain: bound.inputTokens },
    boundRatio: round(input / bound.usd, 3),
    growth: { min: Math.min(...growth), max: Math.max(...growth) },
    calls: perCall,
  };
}
