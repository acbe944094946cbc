// The duties a task's object does on its own schedule, each a row of its ledger of timers (src/storage/timer-ledger.ts)
// with one handler: the kinds, the order in which due ones run when the alarm comes, and how an object from before the
// ledger, which kept one alarm whose duty followed from its status, has that duty read into it.
import { approvalDueAt } from "../approvals/deadline.ts";
import type { TypedState } from "../lib/state-key.ts";
import type { TimerLedger } from "../storage/timer-ledger.ts";
import { isTerminal } from "../tasks/task.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/**
 * Every duty, in the order due ones run: the run first (its heartbeat relaunches it at once, and a person's deadline
 * lets it go on), then what is sent (a child's events reach its parent before its end does), then the ended run's
 * upload, and its expiry last, which deletes everything.
 */
export const TASK_TIMER_KINDS = [
  /** A run in flight: resumes it after an eviction (src/runtime/run-supervisor.ts). */
  "heartbeat",
  /** A person's request with a deadline (src/approvals/deadline.ts, through the supervisor). */
  "approval_deadline",
  /** A model call parked until its provider may answer: the run goes on (src/runtime/provider-retry.ts). */
  "provider_wait",
  /** The task's webhook and A2A push deliveries (src/callbacks/outbox.ts). */
  "callbacks",
  /** The task's entry in its tenant's directory (src/task-host/directory-report.ts). */
  "directory",
  /** A sub-agent's log, forwarded to its parent (src/subagents/event-forwarding.ts). */
  "forwarding",
  /** A sub-agent's end, reported to its parent (src/subagents/parent-report.ts). */
  "parent_report",
  /** A run of an evaluation, reported to the evaluation (src/task-host/evaluation-report.ts). */
  "evaluation_report",
  /** The ended run's bundle, to R2 (src/runtime/ended-run.ts). */
  "bundle_upload",
  /** The end of the task's retention (src/runtime/ended-run.ts, src/tasks/expiry.ts). */
  "expiry",
] as const;

export type TaskTimerKind = (typeof TASK_TIMER_KINDS)[number];

export type TaskTimers = TimerLedger<TaskTimerKind>;

/** Something the object sends on its own schedule, whose due time its own storage knows. */
export interface OutboxDuty {
  kind: TaskTimerKind;
  /** When it is next due (epoch ms), or null when nothing waits. */
  nextDueAt(): number | null;
  /** Sends what is due; safe to repeat. */
  deliverDue(): Promise<void>;
}

/**
 * Brings the outbox duty's row in line with what it says is next due. A row due sooner than needed is kept (its alarm
 * finds nothing due and sets the row again), so a duty asked after every step writes only when it moves sooner.
 */
export function syncOutboxDuty(timers: TaskTimers, duty: OutboxDuty, now = Date.now()): void {
  const due = duty.nextDueAt();
  const current = timers.get(duty.kind);
  if (due === null) timers.clear(duty.kind);
  else if (current === null || due < current.due_at || current.due_at < now) timers.set(duty.kind, due);
}

/**
 * An object whose storage came from before the ledger kept one alarm, for the duty its status implied: that duty is
 * written into the ledger, due now (its handler does nothing that is not due yet), so the alarm it kept finds it.
 */
export function adoptLegacyAlarm(
  timers: TaskTimers,
  task: TaskRecord,
  state: Pick<TypedState, "get">,
  awaitingSubagents: boolean,
): void {
  const now = Date.now();
  if (task.status === "input_required") {
    const due = approvalDueAt(state);
    if (due !== null) timers.set("approval_deadline", due);
  } else if (isTerminal(task.status)) {
    if (!task.bundleFlushed) timers.set("bundle_upload", now);
    else if (task.expires_at) timers.set("expiry", Date.parse(task.expires_at));
  } else if ((task.status === "running" || task.status === "pending") && !awaitingSubagents) {
    timers.set("heartbeat", now);
  }
  // Deliveries and reports are read into it from their own storage as soon as the supervisor arms its outbox.
  for (const kind of ["callbacks", "directory", "forwarding", "parent_report", "evaluation_report"] as const)
    timers.set(kind, now);
}
