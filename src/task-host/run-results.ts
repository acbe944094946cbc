// What an ended task's run comes to, as others read it: its ExecutionResult (seed 004), which POST
// /v1/agents/:name/invoke, the MCP server's agent tools and a run of an evaluation answer with, and the report of a
// run of an evaluation (its result, usage and duration, and the faults it injected).
import type { ExecutionResult } from "../contracts/execution-result.ts";
import { emptyUsage } from "../contracts/usage.ts";
import { type InjectedFault, type RunReport, runReport } from "../evaluation-runs/evaluation.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Redactor } from "../events/redaction.ts";
import { FAULT_STATE_KEY, type FaultInjected } from "../faults/faults.ts";
import type { MessageLog } from "../runtime/conversation.ts";
import { executionResult, type TurnOutcome } from "../runtime/execution-result.ts";
import { isTerminal } from "../tasks/task.ts";
import { INVOCATION_STATE_KEY, type TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/**
 * The task's ExecutionResult once it has ended: its run read off its messages (an invocation's, seed 004 invoke_once,
 * from its input on, after the context it was given), redacted as any answer is; null for no task or one that has
 * not ended.
 */
export function taskExecutionResult(
  task: TaskRecord | null,
  deps: { state: Pick<TaskState, "get">; conversation: Pick<MessageLog, "from">; redactor: Pick<Redactor, "value"> },
): ExecutionResult | null {
  if (!task || !isTerminal(task.status)) return null;
  const invocation = deps.state.get(INVOCATION_STATE_KEY);
  const outcome: TurnOutcome =
    task.status === "completed"
      ? { ok: true, response: task.result ?? "" }
      : {
          ok: false,
          reason: task.error?.message ?? "canceled by client",
          ...(task.result ? { response: task.result } : {}),
        };
  const messages = deps.conversation.from(invocation?.context_messages ?? 0);
  return deps.redactor.value(executionResult(messages, emptyUsage(), task.usage, outcome, task.structured_output));
}

/**
 * The report of the task's run to its evaluation once it has ended: its ExecutionResult, usage and duration, and for
 * a task that asked for faults the faults it injected (its fault_injected events). The task sends it from its alarm
 * (EvaluationReporter); the evaluation reads it back when that report was lost (run-watch.ts).
 */
export function taskRunReport(
  task: TaskRecord | null,
  result: ExecutionResult | null,
  deps: { state: Pick<TaskState, "get">; events: Pick<EventLog, "all"> },
): RunReport | null {
  if (!task || !result) return null;
  if (!deps.state.get(FAULT_STATE_KEY)) return runReport(task, result);
  const injected: InjectedFault[] = [];
  for (const e of deps.events.all()) {
    if (e.event_type === "fault_injected") injected.push({ ...(e.payload as unknown as FaultInjected), seq: e.seq });
  }
  return runReport(task, result, injected);
}
