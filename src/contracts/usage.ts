// The usage every run reports (seed 000 AgentUsage, FR-014) and the arithmetic that sums it across model calls: the
// runtime adds each call, the task row keeps the total, agents read it into their results; a parent task rolls its
// sub-agents' usage up with its own (usageRollup). Wire types: snake_case,
// the same shapes the HTTP API returns. A leaf: it imports nothing from the rest of src/.
import { z } from "zod";

export const AgentUsageSchema = z.strictObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_creation_input_tokens: z.number().int().nonnegative(),
  /** Of the cache writes, those at the 1-hour TTL (priced higher); absent when none. */
  cache_creation_1h_input_tokens: z.number().int().nonnegative().exactOptional(),
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
  /** Every cache write, both TTLs. */
  cache_creation_input_tokens: z.number().int().nonnegative(),
  /** Of the cache writes, those at the 1-hour TTL; absent when none. */
  cache_creation_1h_input_tokens: z.number().int().nonnegative().exactOptional(),
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
  const hour = (total.cache_creation_1h_input_tokens ?? 0) + (call.cache_creation_1h_input_tokens ?? 0);
  return {
    input_tokens: input,
    output_tokens: output,
    cache_creation_input_tokens: cacheWrite,
    ...(hour > 0 ? { cache_creation_1h_input_tokens: hour } : {}),
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

/** Two usages as one (a tree's tasks): tokens, calls and time add up; an unknown cost makes the sum's unknown. */
export function sumUsage(a: AgentUsage, b: AgentUsage): AgentUsage {
  const searches = (a.web_search_requests ?? 0) + (b.web_search_requests ?? 0);
  const hour = (a.cache_creation_1h_input_tokens ?? 0) + (b.cache_creation_1h_input_tokens ?? 0);
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cache_creation_input_tokens: a.cache_creation_input_tokens + b.cache_creation_input_tokens,
    ...(hour > 0 ? { cache_creation_1h_input_tokens: hour } : {}),
    cache_read_input_tokens: a.cache_read_input_tokens + b.cache_read_input_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    total_cost_usd: addCost(a.total_cost_usd, b.total_cost_usd),
    unpriced_models: [...a.unpriced_models, ...b.unpriced_models.filter((m) => !a.unpriced_models.includes(m))],
    model_calls: a.model_calls + b.model_calls,
    ...(searches > 0 ? { web_search_requests: searches } : {}),
    duration_ms: a.duration_ms + b.duration_ms,
    recovery: {
      attempts: a.recovery.attempts + b.recovery.attempts,
      input_tokens: a.recovery.input_tokens + b.recovery.input_tokens,
      output_tokens: a.recovery.output_tokens + b.recovery.output_tokens,
      cost_usd: addCost(a.recovery.cost_usd, b.recovery.cost_usd),
    },
  };
}

function addCost(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : Math.round((a + b) * 1e9) / 1e9;
}

// ---- A tree of tasks (sub-agents, issue 14 §2): usage rolled up from each child's report -------------------------

/** The usage of the tasks of one agent on one model, across a tree. */
export const AgentModelUsageSchema = z.strictObject({
  agent: z.string(),
  model: z.string(),
  /** How many of the tree's tasks ran this agent on this model. */
  tasks: z.number().int().positive(),
  usage: AgentUsageSchema,
});
export type AgentModelUsage = z.infer<typeof AgentModelUsageSchema>;

/**
 * What a sub-agent's child task reports of its usage when it ends (with its end, SubagentReport): its own, and its
 * whole subtree's, so a parent rolls up a tree of any depth from its children's reports alone.
 */
export const SubtreeUsageSchema = z.strictObject({
  agent: z.string(),
  model: z.string(),
  /** The task's own model calls. */
  own: AgentUsageSchema,
  /** The task and every task below it, by agent and model. */
  by_agent_model: z.array(AgentModelUsageSchema),
  /** The task and every task below it. Recovery waste is apart, in `total.recovery`, as in any usage. */
  total: AgentUsageSchema,
});
export type SubtreeUsage = z.infer<typeof SubtreeUsageSchema>;

/** A task's usage with its sub-agents' (run_finished's usage_rollup, final_summary.md's table). */
export const UsageRollupSchema = SubtreeUsageSchema.extend({
  /** Each delegation whose child has reported its end, in the order they were made. */
  subagents: z.array(
    z.strictObject({
      task_id: z.string(),
      tool_use_id: z.string(),
      agent: z.string(),
      model: z.string(),
      status: z.enum(["completed", "failed", "canceled"]),
      /** The child's own model calls. */
      usage: AgentUsageSchema,
      /** The child and every task below it. */
      subtree: AgentUsageSchema,
    }),
  ),
});
export type UsageRollup = z.infer<typeof UsageRollupSchema>;

/** A task's rollup: its own usage, and each child's as the child reported it. */
export function usageRollup(
  self: { agent: string; model: string; usage: AgentUsage },
  children: readonly {
    task_id: string;
    tool_use_id: string;
    status: UsageRollup["subagents"][number]["status"];
    usage: SubtreeUsage;
  }[],
): UsageRollup {
  const groups = new Map<string, AgentModelUsage>();
  const add = (line: AgentModelUsage) => {
    const key = JSON.stringify([line.agent, line.model]);
    const group = groups.get(key);
    groups.set(
      key,
      group ? { ...group, tasks: group.tasks + line.tasks, usage: sumUsage(group.usage, line.usage) } : line,
    );
  };
  add({ agent: self.agent, model: self.model, tasks: 1, usage: self.usage });
  let total = self.usage;
  for (const child of children) {
    for (const line of child.usage.by_agent_model) add(line);
    total = sumUsage(total, child.usage.total);
  }
  return {
    agent: self.agent,
    model: self.model,
    own: self.usage,
    by_agent_model: [...groups.values()],
    total,
    subagents: children.map((child) => ({
      task_id: child.task_id,
      tool_use_id: child.tool_use_id,
      agent: child.usage.agent,
      model: child.usage.model,
      status: child.status,
      usage: child.usage.own,
      subtree: child.usage.total,
    })),
  };
}
