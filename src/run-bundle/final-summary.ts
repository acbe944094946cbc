// final_summary.md of the run bundle (seed 002): the task's outcome in a form a person reads first.
import type { TaskRecord } from "../tasks/task-store.ts";

export function finalSummary(task: TaskRecord): string {
  const lines = [`# ${task.kind === "session" ? "Session" : "Task"} ${task.id}`, "", `- Agent: ${task.assigned_agent}`];
  lines.push(`- Status: ${task.status}`);
  lines.push(`- Model: ${task.model}`, `- Tokens: ${task.usage.total_tokens}`);
  lines.push(`- Cost: ${task.usage.total_cost_usd === null ? "unknown" : `$${task.usage.total_cost_usd}`}`, "");
  if (task.result) lines.push("## Result", "", task.result, "");
  if (task.error) lines.push("## Error", "", `${task.error.code}: ${task.error.message}`, "");
  return lines.join("\n");
}
