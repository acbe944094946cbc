// One stream for the whole tree (issue 14 §2), on the objects' side. In a sub-agent's child task, the forwarder sends
// its log up to its parent's object as it grows: one push in flight at a time, the next carrying whatever arrived
// meanwhile (natural batching: no call per event), and how far it got kept in storage, so a push cut short by an
// eviction or a failure is sent again from the alarm. In the parent, the sink stores each event once (the child's
// high-water mark is kept with the events, in the same transaction, before the push is acknowledged).
//
// A task that is nobody's sub-agent pays nothing: its forwarder answers from the task row it already holds in memory.
// A parent that has ended takes no more of its children's events (a canceled parent's children winding down): its
// terminal event stays the last of its stream, and a child's own stream has them all.
import { z } from "zod";
import type { SubagentOrigin, SubagentRecord } from "../contracts/subagents.ts";
import type { Env } from "../env.ts";
import type { EventLog } from "../events/event-log.ts";
import type { ForwardedBatch } from "../events/event-tree.ts";
import { stateKey } from "../lib/state-key.ts";
import { isTerminal } from "../tasks/task.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import { SUBAGENT_ORIGIN_KEY, type TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/** How far this task's log has been stored by its parent (the last number it acknowledged). */
export const FORWARDED_KEY = stateKey("events_forwarded_through", z.number().int().nonnegative());
/** Events per push: enough that a burst of stream deltas goes in a few calls. */
const BATCH_EVENTS = 200;
/** Bytes of payload per push, well inside an RPC message (a single event can be up to a row's 2 MB). */
const BATCH_BYTES = 1024 * 1024;
/**
 * While a push is under way the alarm is still kept this far ahead: an awaited call does not keep an object alive,
 * and a child evicted in the middle of one (waiting for a person, with no heartbeat) would otherwise forward nothing
 * more until its next event.
 */
const IN_FLIGHT_CHECK_MS = 30_000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 5 * 60_000;

export interface ForwarderDeps {
  env: Pick<Env, "TASKS">;
  state: Pick<TaskState, "get" | "put">;
  events: Pick<EventLog, "rowsToForward" | "lastSeq">;
  /** The object's task, or null when it holds none. */
  task: () => TaskRecord | null;
  /** Makes sure the alarm comes by `at` (a failed push is tried again from it). */
  wake: (at: number) => Promise<void>;
  /**
   * Told when an ended task's parent has every event of its log: the report of its end waits for that
   * (src/subagents/parent-report.ts), and is due now.
   */
  forwardedAll?: () => Promise<void>;
}

/** A child task's log, forwarded to its parent's object in order, each event until the parent has stored it. */
export class EventForwarder {
  private readonly deps: ForwarderDeps;
  /** This task's place in the tree, read once per instance; null when it is nobody's sub-agent. */
  private origin: SubagentOrigin | null | undefined;
  /** The number the parent has acknowledged, as stored. */
  private through: number | undefined;
  private inFlight: Promise<void> | null = null;
  private scheduled = false;
  private failures = 0;
  private retryAt = 0;

  constructor(deps: ForwarderDeps) {
    this.deps = deps;
  }

  /** Called after every append: starts a push unless one is under way (which sends the rest when it returns). */
  poke(): void {
    if (this.scheduled || this.inFlight || !this.parent()) return;
    if (Date.now() < this.retryAt || this.caughtUp()) return;
    this.scheduled = true;
    // After the current synchronous step: the append may be inside a transaction that has yet to commit.
    queueMicrotask(() => {
      this.scheduled = false;
      void this.pump();
    });
  }

  /** True when the parent has every event of this task's log (always, for a task that is nobody's sub-agent). */
  caughtUp(): boolean {
    return !this.parent() || this.forwardedThrough() >= this.deps.events.lastSeq();
  }

  /** When the alarm should push again, or null when nothing waits. */
  nextDueAt(): number | null {
    if (this.caughtUp()) return null;
    if (this.inFlight) return Date.now() + IN_FLIGHT_CHECK_MS;
    return Math.max(this.retryAt, Date.now());
  }

  /** From the alarm: finishes the push under way, and sends what is left if it is due. Never throws. */
  async deliverDue(): Promise<void> {
    if (this.inFlight) await this.inFlight;
    const due = this.nextDueAt();
    if (due !== null && due <= Date.now()) await this.pump();
  }

  private pump(): Promise<void> {
    this.inFlight ??= this.pushAll().finally(() => {
      this.inFlight = null;
      // An event appended after the last read and before this line found a push under way: send it now.
      this.poke();
    });
    return this.inFlight;
  }

  private async pushAll(): Promise<void> {
    const task = this.deps.task();
    const origin = this.parent();
    if (!task || !origin) return;
    const self = { task_id: task.id, parent_task_id: origin.parent_task_id, trace_id: task.traceId };
    const parent = taskStubFor(this.deps.env, task.tenant, origin.parent_task_id);
    try {
      for (;;) {
        const events = this.batch(this.deps.events.rowsToForward(this.forwardedThrough(), BATCH_EVENTS, self));
        const last = events.at(-1);
        if (!last) break;
        await parent.forwardEvents({ child_task_id: task.id, events } satisfies ForwardedBatch);
        // Only once the parent has stored them: a push lost before this line is sent again, and skipped there.
        this.deps.state.put(FORWARDED_KEY, last.seq);
        this.through = last.seq;
      }
      this.failures = 0;
      this.retryAt = 0;
    } catch (error) {
      this.failures++;
      this.retryAt = Date.now() + Math.min(FIRST_RETRY_MS * 2 ** (this.failures - 1), MAX_RETRY_MS);
      console.error("forwarding events to the parent failed; retrying", task.id, errorText(error));
      await this.deps.wake(this.retryAt).catch(() => undefined);
      return;
    }
    const now = this.deps.task();
    if (now && isTerminal(now.status) && this.caughtUp()) {
      await this.deps.forwardedAll?.().catch((error: unknown) => {
        console.error("arming the report of the task's end failed", now.id, errorText(error));
      });
    }
  }

  /** The leading events of `rows` that fit in one push (at least one, whatever its size). */
  private batch<T extends { payload: string }>(rows: T[]): T[] {
    let bytes = 0;
    for (const [i, row] of rows.entries()) {
      bytes += row.payload.length;
      if (bytes > BATCH_BYTES && i > 0) return rows.slice(0, i);
    }
    return rows;
  }

  private forwardedThrough(): number {
    this.through ??= this.deps.state.get(FORWARDED_KEY) ?? 0;
    return this.through;
  }

  private parent(): SubagentOrigin | null {
    if (this.origin !== undefined) return this.origin;
    const task = this.deps.task();
    // Every sub-agent's task row names its parent; a task with none (nearly all) is answered from memory.
    if (!task || task.parent_task_id === null) return null;
    this.origin = this.deps.state.get(SUBAGENT_ORIGIN_KEY) ?? null;
    return this.origin;
  }
}

export interface SinkDeps {
  events: Pick<EventLog, "appendForwarded">;
  /** The object's task or session, or null when it holds none. */
  record: () => TaskRecord | null;
  /** The task's delegations (to know its children). */
  delegations: () => readonly SubagentRecord[];
  transaction: <T>(fn: () => T) => T;
}

/** In a parent: its children's forwarded events, each stored once, in order, in the parent's own sequence. */
export class ForwardedEventSink {
  private readonly deps: SinkDeps;
  private readonly children = new Set<string>();

  constructor(deps: SinkDeps) {
    this.deps = deps;
  }

  /**
   * Stores a push. Events of a task that is not this one's child, or that arrive once this task has ended, are
   * dropped: the push is acknowledged all the same, so the child stops sending.
   */
  receive(batch: ForwardedBatch): number {
    const record = this.deps.record();
    if (!record || isTerminal(record.status) || !this.isChild(batch.child_task_id)) return 0;
    return this.deps.transaction(() => this.deps.events.appendForwarded(batch.child_task_id, batch.events)).length;
  }

  private isChild(id: string): boolean {
    if (this.children.has(id)) return true;
    for (const delegation of this.deps.delegations()) {
      if (delegation.child_task_id !== null) this.children.add(delegation.child_task_id);
    }
    return this.children.has(id);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
