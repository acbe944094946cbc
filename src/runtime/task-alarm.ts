// The object's one alarm over its ledger of timers (src/runtime/timers.ts): each duty's handler, the things sent on
// the object's own schedule brought into the ledger after every status change, and the alarm set to the earliest.
import type { TaskTimerKind, TaskTimers } from "./timers.ts";
import { type OutboxDuty, syncOutboxDuty, TASK_TIMER_KINDS } from "./timers.ts";

/** What the object sends on its own schedule, each a timer of its ledger. */
export interface Outbox {
  /** Takes note of what has happened since it last looked (the callbacks turn new events into deliveries). */
  sync(): void;
  /** Each thing sent, in the order of TASK_TIMER_KINDS. */
  duties: readonly OutboxDuty[];
}

export interface TaskAlarmDeps {
  timers: TaskTimers;
  outbox: Outbox;
  /** False once the task has expired (its storage, ledger included, is gone). */
  alive: () => boolean;
  /**
   * The duties that are not sent: the run's heartbeat, approval deadline and wait on its provider, the ended run's
   * upload and expiry.
   */
  duties: Record<"heartbeat" | "approval_deadline" | "provider_wait" | "bundle_upload" | "expiry", () => Promise<void>>;
}

export class TaskAlarm {
  private readonly deps: TaskAlarmDeps;
  /** One handler per timer of the ledger. */
  private readonly handlers: Readonly<Record<TaskTimerKind, () => Promise<void>>>;

  constructor(deps: TaskAlarmDeps) {
    this.deps = deps;
    // Each sender has delivered what was due before any timer runs (fire): its handler brings its row up to date.
    const sync = (duty: OutboxDuty) => async () => syncOutboxDuty(deps.timers, duty);
    const sent = Object.fromEntries(deps.outbox.duties.map((duty) => [duty.kind, sync(duty)]));
    const nothing = async () => undefined;
    this.handlers = {
      callbacks: nothing,
      directory: nothing,
      forwarding: nothing,
      parent_report: nothing,
      evaluation_report: nothing,
      ...sent,
      ...deps.duties,
    };
  }

  /**
   * Brings the ledger in line with what is to be sent (the callbacks turn new events into deliveries first) and sets
   * the alarm to the earliest timer.
   */
  async arm(): Promise<void> {
    if (!this.deps.alive()) return;
    this.deps.outbox.sync();
    for (const duty of this.deps.outbox.duties) syncOutboxDuty(this.deps.timers, duty);
    await this.deps.timers.arm();
  }

  /**
   * The alarm came. What is sent goes first, whichever timer brought the alarm: each sender checks its own due time,
   * and one can come due through another's progress (a child's report of its end waits for its events to reach the
   * parent), so all are asked. Then each timer that is due runs through its handler (src/storage/timer-ledger.ts).
   * Idempotent.
   */
  async fire(): Promise<void> {
    if (!this.deps.alive()) return;
    for (const duty of this.deps.outbox.duties) await duty.deliverDue();
    await this.deps.timers.fire(TASK_TIMER_KINDS, (timer) => this.handlers[timer.kind](), {
      alive: this.deps.alive,
      onError: (timer, error) =>
        console.error("a timer's duty failed; retrying", timer.kind, error instanceof Error ? error.message : error),
    });
    // A duty may have changed the task's status: what is to be sent follows.
    await this.arm();
  }
}
