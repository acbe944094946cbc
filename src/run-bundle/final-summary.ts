// final_summary.md of the run bundle (seed 002): the task's outcome in a form a person reads first. A task that
// delegated to sub-agents shows its usage rolled up with theirs, as tables (issue 14 §2).
import type { AgentUsage, UsageRollup } from "../contracts/usage.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

export function finalSummary(task: TaskRecord, rollup: UsageRollup | null = null): string {
  const lines = [`# ${task.kind === "session" ? "Session" : "Task"} ${task.id}`, "", `- Agent: ${task.assigned_agent}`];
  lines.push(`- Status: ${task.status}`);
  lines.push(`- Model: ${task.model}`, `- Tokens: ${task.usage.total_tokens}`);
  const cache = cacheLine(task.usage);
  if (cache) lines.push(cache);
  lines.push(`- Cost: ${task.usage.total_cost_usd === null ? "unknown" : `$${task.usage.total_cost_usd}`}`, "");
  if (task.result) lines.push("## Result", "", task.result, "");
  if (task.error) lines.push("## Error", "", `${task.error.code}: ${task.error.message}`, "");
  if (rollup) lines.push(...usageTables(rollup));
  return lines.join("\n");
}

const HEADER =
  "| Input tokens | Output tokens | Cache write tokens | Cache read tokens | Total tokens | Cost (USD) | Recovery attempts | Recovery tokens | Recovery cost (USD) |";

/** The usage columns of one line: the totals, then the recovery waste, which the totals do not include. */
function cells(usage: AgentUsage): string {
  const r = usage.recovery;
  return [
    usage.input_tokens,
    usage.output_tokens,
    usage.cache_creation_input_tokens,
    usage.cache_read_input_tokens,
    usage.total_tokens,
    usd(usage.total_cost_usd),
    r.attempts,
    r.input_tokens + r.output_tokens,
    usd(r.cost_usd),
  ].join(" | ");
}

/**
 * How the run's input was billed, when it used the prompt cache: plain input, cache writes (the 1-hour ones apart,
 * priced higher) and reads, and the share read (docs/costs.md). Null when the cache was neither written nor read.
 */
export function cacheLine(usage: AgentUsage): string | null {
  const write = usage.cache_creation_input_tokens;
  const read = usage.cache_read_input_tokens;
  if (write === 0 && read === 0) return null;
  const hour = usage.cache_creation_1h_input_tokens ?? 0;
  const share = Math.round((100 * read) / (usage.input_tokens + write + read));
  const writes = hour > 0 ? `${write} cache write (${hour} of them for 1 hour)` : `${write} cache write`;
  return `- Input tokens: ${usage.input_tokens} plain, ${writes}, ${read} cache read (cache ${share}%)`;
}

function usd(cost: number | null): string {
  return cost === null ? "unknown" : cost.toFixed(6);
}

function usageTables(rollup: UsageRollup): string[] {
  const rule = `|${"---|".repeat(4 + 9)}`;
  const byTask = [
    "## Usage of the task and its sub-agents",
    "",
    "Recovery is what model calls cut short by an eviction or a restart cost again: billed, and not in the totals.",
    "",
    `| Task | Agent | Model | Status ${HEADER}`,
    rule,
    `| this task | ${rollup.agent} | ${rollup.model} | | ${cells(rollup.own)} |`,
    ...rollup.subagents.flatMap((child) => [
      `| ${child.task_id} | ${child.agent} | ${child.model} | ${child.status} | ${cells(child.usage)} |`,
      ...(JSON.stringify(child.subtree) !== JSON.stringify(child.usage)
        ? [`| ${child.task_id} with its sub-agents | | | | ${cells(child.subtree)} |`]
        : []),
    ]),
    `| **Total** | | | | ${cells(rollup.total)} |`,
    "",
  ];
  const byAgent = [
    "## Usage by agent and model",
    "",
    `| Agent | Model | Tasks ${HEADER}`,
    `|${"---|".repeat(3 + 9)}`,
    ...rollup.by_agent_model.map((line) => `| ${line.agent} | ${line.model} | ${line.tasks} | ${cells(line.usage)} |`),
    "",
  ];
  return [...byTask, ...byAgent];
}
