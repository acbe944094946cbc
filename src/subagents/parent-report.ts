// A child task's side of a delegation (seed 003 SubAgentSession): its wait for a person and its end, each reported
// to its parent from the alarm until the parent acknowledges it. The parent records each child's outcome once
// (src/subagents/delegations.ts), and the report wakes its run (src/runtime/run-supervisor.ts, subagentEnded).
import { z } from "zod";
import type { SubagentOutcome, SubagentWaitReport } from "../contracts/subagents.ts";
import { type SubtreeUsage, type UsageRollup, usageRollup } from "../contracts/usage.ts";
import type { Env } from "../env.ts";
import { ReportBackoff } from "../lib/report-backoff.ts";
import { stateKey } from "../lib/state-key.ts";
import { isTerminal } from "../tasks/task.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import { SUBAGENT_ORIGIN_KEY, type TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/** Set once the parent has acknowledged the report of this task's end. */
const REPORTED_KEY = stateKey("subagent_reported", z.boolean());
/** The request id whose wait the parent last acknowledged ("" for none). */
const WAIT_REPORTED_KEY = stateKey("subagent_wait_reported", z.string());

export interface ParentReportDeps {
  env: Pick<Env, "TASKS">;
  state: Pick<TaskState, "get" | "put">;
  /** The object's task, or null when it holds none. */
  task: () => TaskRecord | null;
  /** Whether the parent has every event of this task's log: the task's end is reported after them. */
  forwarded: () => boolean;
  /** The task's usage rollup, if it delegated: its subtree's usage goes to the parent with its end. */
  usageRollup: () => UsageRollup | null;
  /** What the task waits for from a person, as its view shows it (redacted), or null. */
  pending: () => SubagentWaitReport["pending"];
}

/**
 * A child task's wait for a person and its end, each reported to its parent from the alarm until the parent
 * acknowledges it: a wait when the request the child waits for is not the one the parent last acknowledged.
 */
export class ParentReporter {
  private readonly deps: ParentReportDeps;
  private readonly backoff = new ReportBackoff();

  constructor(deps: ParentReportDeps) {
    this.deps = deps;
  }

  nextDueAt(): number | null {
    const task = this.deps.task();
    if (!task || !this.deps.state.get(SUBAGENT_ORIGIN_KEY)) return null;
    if (!isTerminal(task.status) && !this.waitChanged()) return null;
    if (isTerminal(task.status) && this.deps.state.get(REPORTED_KEY)) return null;
    // An end goes after the child's events (the forwarder's own schedule sends them), so the parent's stream has them
    // all before its subagent_finished. A wait is not held back: the parent shows it as soon as it can.
    if (isTerminal(task.status) && !this.deps.forwarded()) return null;
    return this.backoff.dueAt();
  }

  /** The request the task waits for is not the one its parent last acknowledged (none counts as ""). */
  private waitChanged(): boolean {
    const now = this.deps.pending()?.request_id ?? "";
    return now !== (this.deps.state.get(WAIT_REPORTED_KEY) ?? "");
  }

  async deliverDue(): Promise<void> {
    const due = this.nextDueAt();
    const task = this.deps.task();
    const origin = this.deps.state.get(SUBAGENT_ORIGIN_KEY);
    if (due === null || due > Date.now() || !task || !origin) return;
    const parent = taskStubFor(this.deps.env, task.tenant, origin.parent_task_id);
    const ended = isTerminal(task.status);
    const pending = ended ? null : this.deps.pending();
    try {
      // An ended child's report also ends its wait on the parent's side.
      if (ended) {
        await parent.subagentEnded({
          child_task_id: task.id,
          tool_use_id: origin.tool_use_id,
          outcome: outcomeOf(task),
          usage: subtreeUsage(task, this.deps.usageRollup()),
        });
      } else {
        await parent.subagentWaiting({ child_task_id: task.id, tool_use_id: origin.tool_use_id, pending });
      }
    } catch (error) {
      this.backoff.failed();
      console.error("sub-agent report failed; retrying", task.id, error instanceof Error ? error.message : error);
      return;
    }
    this.backoff.succeeded();
    if (ended) this.deps.state.put(REPORTED_KEY, true);
    else this.deps.state.put(WAIT_REPORTED_KEY, pending?.request_id ?? "");
  }
}

/** A task's usage as its parent rolls it up: its own, and its subtree's from its own rollup. */
function subtreeUsage(task: TaskRecord, rollup: UsageRollup | null): SubtreeUsage {
  const { subagents: _children, ...subtree } =
    rollup ?? usageRollup({ agent: task.assigned_agent, model: task.model, usage: task.usage }, []);
  return subtree;
}

/** What a child's end tells its parent's model. */
function outcomeOf(task: TaskRecord): SubagentOutcome {
  if (task.status === "completed") return { status: "completed", summary: task.result ?? "", is_error: false };
  if (task.status === "canceled") return { status: "canceled", summary: "The sub-agent was canceled.", is_error: true };
  const error = task.error ? `${task.error.code}: ${task.error.message}` : "unknown error";
  return { status: "failed", summary: `The sub-agent failed: ${error}`, is_error: true };
}
