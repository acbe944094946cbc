// The task as its object returns it (TaskView): the stored record without what stays inside the object (its trace
// ids, tenant, bundle and retention flags), with what it waits for and the number of its newest event.
import { pendingRequest } from "../approvals/requests.ts";
import type { Redactor } from "../events/redaction.ts";
import type { TaskStatus, TaskView } from "./task.ts";
import { RUNTIME_AGENT_STATE_KEY, type TaskState, WORKFLOW_STATE_KEY } from "./task-state.ts";
import type { TaskRecord } from "./task-store.ts";
import { waitingFor } from "./waiting-for.ts";

export function taskView(
  task: TaskRecord,
  from: {
    state: Pick<TaskState, "get">;
    redactor: Pick<Redactor, "value">;
    lastEventSeq: number;
    /**
     * A sub-agent of this running task that waits for a person (the oldest delegation's): the task shows it as
     * input_required with the child's request, which its own resume answers (src/subagents/delegations.ts).
     */
    waitingChild?: { child_task_id: string; pending: Record<string, unknown> } | null;
  },
): TaskView {
  const {
    traceId: _t,
    rootSpanId: _s,
    bundleFlushed: _b,
    retentionExplicit: _r,
    tenant: _n,
    kind: _k,
    busy: _u,
    status,
    ...rest
  } = task;
  const stored = status === "input_required" ? pendingRequest(from.state) : undefined;
  // What the model asked for (a command, a tool's arguments) may hold a secret, like any text the runtime did not
  // write; the input_requested event and callbacks show it redacted too.
  let pending: TaskView["pending_input"] = stored ? from.redactor.value(stored) : null;
  let shown = status as TaskStatus;
  const child = from.waitingChild;
  if (status === "running" && child) {
    // Reported by the child already redacted.
    pending = { ...(child.pending as NonNullable<TaskView["pending_input"]>), task_id: child.child_task_id };
    shown = "input_required";
  }
  // Only a task's row is shown as a task, and a task's row never holds a session's statuses (ready, closed).
  return {
    ...rest,
    agent_version: from.state.get(RUNTIME_AGENT_STATE_KEY)?.version ?? null,
    workflow: from.state.get(WORKFLOW_STATE_KEY)?.name ?? null,
    status: shown,
    pending_input: pending,
    waiting_for: waitingFor(shown, from.state),
    last_event_seq: from.lastEventSeq,
  };
}
