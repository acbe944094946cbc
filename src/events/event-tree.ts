// One stream for a tree of tasks (issue 14 §2): what a sub-agent forwards up to its parent's log, and how a forwarded
// event is stored and shown there. A child task sends the rows of its log (its own events, and those its own children
// forwarded to it) to its parent in order (src/subagents/event-forwarding.ts); the parent stores each once, under the
// next number of its own sequence, marked with the task that emitted it, that task's parent and its depth below the
// parent, so one Last-Event-ID resumes the whole tree.
import type { EventRecord } from "./event-record.ts";

/** An event as a task forwards it to its parent: one row of its log. */
export interface ForwardedEvent {
  /** Its number in the sender's log: the parent keeps the highest it has stored per child, and skips repeats. */
  seq: number;
  timestamp: string;
  event_type: string;
  span_id: string;
  /** The payload as the sender stored it (its secrets already removed there): JSON. */
  payload: string;
  redaction_mode: "full" | "redacted";
  /** The task that emitted it, and that task's parent. */
  task_id: string;
  parent_task_id: string;
  /** Levels below the sender: 0 for the sender's own events. */
  depth: number;
  /** The emitting task's trace id. */
  trace_id: string;
}

/** One push from a child to its parent (TaskObject.forwardEvents). */
export interface ForwardedBatch {
  child_task_id: string;
  events: ForwardedEvent[];
}

/** A forwarded event as the parent's events_tree holds it: depth counts from the parent (1 for its child's own). */
export interface TreeEventRow extends Record<string, SqlStorageValue> {
  seq: number;
  timestamp: string;
  event_type: string;
  span_id: string;
  payload: string;
  redaction_mode: string;
  task_id: string;
  parent_task_id: string;
  depth: number;
  trace_id: string;
}

/**
 * The parent's table of forwarded events, made when the first arrives. via_task_id/via_seq are the direct child that
 * sent it and its number there: the child's high-water mark is their maximum, stored with the events themselves.
 */
export const TREE_TABLE_DDL: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS events_tree (
    seq INTEGER PRIMARY KEY,
    timestamp TEXT NOT NULL,
    event_type TEXT NOT NULL,
    span_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    redaction_mode TEXT NOT NULL,
    task_id TEXT NOT NULL,
    parent_task_id TEXT NOT NULL,
    depth INTEGER NOT NULL,
    trace_id TEXT NOT NULL,
    via_task_id TEXT NOT NULL,
    via_seq INTEGER NOT NULL,
    UNIQUE (via_task_id, via_seq)
  )`,
];

/** A stored forwarded event as the stream sends it. */
export function treeRecord(row: TreeEventRow): EventRecord {
  return {
    seq: row.seq,
    run_id: row.task_id,
    trace_id: row.trace_id,
    span_id: row.span_id,
    timestamp: row.timestamp,
    event_type: row.event_type,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    redaction_mode: row.redaction_mode === "redacted" ? "redacted" : "full",
    task_id: row.task_id,
    parent_task_id: row.parent_task_id,
    depth: row.depth,
  };
}
