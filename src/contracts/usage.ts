// The usage every run reports (seed 000 AgentUsage, FR-014) and the arithmetic that sums it across model calls: the
// runtime adds each call, the task row keeps the total, agents read it into their results. Wire types: snake_case,
// the same shapes the HTTP API returns. A leaf: it imports nothing from the rest of src/.
import { z } from "zod";

export const AgentUsageSchema = z.strictObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative(),
  cache_read_input_tokens: z.number().int().nonnegative(),
  /** input + output + cache tokens. */
  total_tokens: z.number().int().nonnegative(),
  /** Null when any call used a model with no known price: see unpriced_models. */
  total_cost_usd: z.number().nonnegative().nullable(),
  /** Models whose calls are counted in tokens but not in cost. */
  unpriced_models: z.array(z.string()),
  model_calls: z.number().int().nonnegative(),
  /** Anthropic web searches the model calls made (billed per search, in total_cost_usd); absent when none. */
  web_search_requests: z.number().int().nonnegative().exactOptional(),
  duration_ms: z.number().int().nonnegative(),
  /**
   * Model calls cut short by an eviction or a restart and issued again: billed by the provider, not part of the
   * totals above. Output tokens are estimated from the text that had arrived (4 characters a token).
   */
  recovery: z.strictObject({
    attempts: z.number().int().nonnegative(),
    input_tokens: z.number().int().nonnegative(),
    output_tokens: z.number().int().nonnegative(),
    cost_usd: z.number().nonnegative().nullable(),
  }),
});
export type AgentUsage = z.infer<typeof AgentUsageSchema>;

export function emptyUsage(): AgentUsage {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    total_tokens: 0,
    total_cost_usd: 0,
    unpriced_models: [],
    model_calls: 0,
    duration_ms: 0,
    recovery: { attempts: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
  };
}

/** Usage of one model call: token counts and its cost (null when its model has no price). */
export const CallUsageSchema = z.strictObject({
  model: z.string(),
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative(),
  cache_read_input_tokens: z.number().int().nonnegative(),
  /** Web searches run inside the call (usage.server_tool_use), billed per search; absent when none. */
  web_search_requests: z.number().int().nonnegative().exactOptional(),
  cost_usd: z.number().nonnegative().nullable(),
});
export type CallUsage = z.infer<typeof CallUsageSchema>;

/** Adds one call to a running total. An unknown price makes the total unknown rather than silently low. */
export function addCallUsage(total: AgentUsage, call: CallUsage): AgentUsage {
  const input = total.input_tokens + call.input_tokens;
  const output = total.output_tokens + call.output_tokens;
  const cacheWrite = total.cache_creation_input_tokens + call.cache_creation_input_tokens;
  const cacheRead = total.cache_read_input_tokens + call.cache_read_input_tokens;
  const unpriced =
    call.cost_usd === null && !total.unpriced_models.includes(call.model)
      ? [...total.unpriced_models, call.model]
      : total.unpriced_models;
  const cost =
    unpriced.length > 0 || total.total_cost_usd === null || call.cost_usd === null
      ? null
      : Math.round((total.total_cost_usd + call.cost_usd) * 1e9) / 1e9;
  const searches = (total.web_search_requests ?? 0) + (call.web_search_requests ?? 0);
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    total_tokens: input + output + cacheWrite + cacheRead,
    total_cost_usd: cost,
    unpriced_models: unpriced,
    model_calls: total.model_calls + 1,
    ...(searches > 0 ? { web_search_requests: searches } : {}),
    duration_ms: total.duration_ms,
    recovery: total.recovery,
  };
}

/** Adds an abandoned call to the usage's recovery figures (an unknown price makes their cost unknown). */
export function addRecovery(
  total: AgentUsage,
  call: { input_tokens: number; output_tokens: number; cost_usd: number | null },
): AgentUsage {
  const r = total.recovery;
  return {
    ...total,
    recovery: {
      attempts: r.attempts + 1,
      input_tokens: r.input_tokens + call.input_tokens,
      output_tokens: r.output_tokens + call.output_tokens,
      cost_usd:
        r.cost_usd === null || call.cost_usd === null ? null : Math.round((r.cost_usd + call.cost_usd) * 1e9) / 1e9,
    },
  };
}
