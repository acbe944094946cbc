// The task's event log: the single source of truth for what happened. An event is appended to SQLite (getting its
// sequence number) before any listener sees it, so a reader that reconnects with Last-Event-ID never misses one.
// A parent task's log also holds the events its sub-agents forwarded up the tree (src/events/event-tree.ts), in
// events_tree, numbered in the same sequence: the stream reads both (readTreeAfter); everything else that reads the
// log (callbacks, the trace, the bundle, waiters) sees the task's own events only (readAfter, listen).
import type { CustomEventType, EventPayload, EventType } from "../contracts/events.ts";
import { serializePayload } from "../lib/safe-json.ts";
import type { EventRecord } from "./event-record.ts";
import { type ForwardedEvent, TREE_TABLE_DDL, type TreeEventRow, treeRecord } from "./event-tree.ts";
import { type RedactionMode, type Redactor, redactContent } from "./redaction.ts";

export interface EventIdentity {
  runId: string;
  traceId: string;
  rootSpanId: string;
}

type Listener = (record: EventRecord) => void;

interface EventRow extends Record<string, SqlStorageValue> {
  seq: number;
  timestamp: string;
  event_type: string;
  span_id: string;
  payload: string;
  redaction_mode: string;
}

export class EventLog {
  private readonly listeners = new Set<Listener>();
  /** Readers of the whole tree (the SSE streams): the task's own events and those forwarded by its sub-agents. */
  private readonly treeListeners = new Set<Listener>();
  /** The newest sequence number, read from storage once per instance. */
  private last: number | undefined;
  /**
   * Whether events_tree exists: made by the first forwarded event, so a task that never delegates pays no schema
   * write for it (not a migration step: every task would run it at creation). Read once per instance.
   */
  private tree: boolean | undefined;
  /** Called after every append, own or forwarded (a sub-agent forwards its log to its parent from here). */
  private appended: () => void = () => undefined;

  /** When the task's own newest event was appended (null before its first), once known. */
  private lastTimestamp: string | null | undefined;

  /** Forgets what this instance remembers of storage (after a rolled-back transaction). */
  invalidate(): void {
    this.last = undefined;
    this.tree = undefined;
    this.lastTimestamp = undefined;
  }

  /** The log was just created, empty, by this instance (a new task's object): nothing need be read back. */
  knownEmpty(): void {
    this.last = 0;
    this.tree = false;
    this.lastTimestamp = null;
  }

  /** Registers the one hook called after every append (the task host's event forwarder). */
  onAppended(hook: () => void): void {
    this.appended = hook;
  }

  private readonly sql: SqlStorage;
  private readonly identity: () => EventIdentity;

  /** How the task's events are shown: secrets always removed; prompts and responses too in redacted mode. */
  private readonly redaction: () => { redactor: Redactor; mode: RedactionMode } | null;

  constructor(
    sql: SqlStorage,
    identity: () => EventIdentity,
    redaction: () => { redactor: Redactor; mode: RedactionMode } | null = () => null,
  ) {
    this.sql = sql;
    this.identity = identity;
    this.redaction = redaction;
  }

  /**
   * Appends, then notifies listeners. A listener that throws is dropped; it never stops the run. The payload is typed
   * by the event catalog and not checked at runtime (the tests parse every event against it).
   */
  append<T extends EventType | CustomEventType>(eventType: T, original: EventPayload<T>, spanId?: string): EventRecord {
    const id = this.identity();
    const redaction = this.redaction();
    const mode: RedactionMode = redaction?.mode ?? "full";
    let payload = redaction ? redactContent(eventType, original, redaction.mode) : original;
    let json = serializePayload(payload);
    // One scan of the serialized event; only an event that may hold a secret is walked and rewritten.
    if (redaction?.redactor.mightNeedRedaction(json)) {
      payload = redaction.redactor.value(payload);
      json = serializePayload(payload);
    }
    const timestamp = new Date().toISOString();
    const span = spanId ?? id.rootSpanId;
    // The object is the log's only writer, so the next number is known without asking SQLite for it.
    const seq = this.lastSeq() + 1;
    this.sql.exec(
      "INSERT INTO events_log (seq, timestamp, event_type, span_id, payload, redaction_mode) VALUES (?, ?, ?, ?, ?, ?)",
      seq,
      timestamp,
      eventType,
      span,
      json,
      mode,
    );
    this.last = seq;
    this.lastTimestamp = timestamp;
    const record: EventRecord = {
      seq,
      run_id: id.runId,
      trace_id: id.traceId,
      span_id: span,
      timestamp,
      event_type: eventType,
      payload,
      redaction_mode: mode,
    };
    notify(this.listeners, record);
    notify(this.treeListeners, record);
    this.appended();
    return record;
  }

  /**
   * Appends what a sub-agent (`childId`) forwarded, each event once: those at or below the child's high-water mark
   * (the highest of its numbers stored here) were stored by an earlier push and are skipped. Each gets the next number
   * of this log and its depth below this task. Their secrets were removed by the child; a task shown redacted also
   * hides its sub-agents' content. Run inside the caller's transaction: the events and the mark commit together.
   */
  appendForwarded(childId: string, events: readonly ForwardedEvent[]): EventRecord[] {
    if (!this.hasTree()) {
      for (const statement of TREE_TABLE_DDL) this.sql.exec(statement);
      this.tree = true;
    }
    const through = this.forwardedThrough(childId);
    const mode: RedactionMode = this.redaction()?.mode ?? "full";
    const records: EventRecord[] = [];
    let seq = this.lastSeq();
    for (const event of events) {
      if (event.seq <= through) continue;
      let payload = event.payload;
      let eventMode = event.redaction_mode;
      if (mode === "redacted" && eventMode === "full") {
        payload = serializePayload(redactContent(event.event_type, JSON.parse(payload), mode));
        eventMode = "redacted";
      }
      seq++;
      const row: TreeEventRow = {
        seq,
        timestamp: event.timestamp,
        event_type: event.event_type,
        span_id: event.span_id,
        payload,
        redaction_mode: eventMode,
        task_id: event.task_id,
        parent_task_id: event.parent_task_id,
        depth: event.depth + 1,
        trace_id: event.trace_id,
      };
      this.sql.exec(
        `INSERT INTO events_tree (seq, timestamp, event_type, span_id, payload, redaction_mode, task_id, parent_task_id,
          depth, trace_id, via_task_id, via_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        row.seq,
        row.timestamp,
        row.event_type,
        row.span_id,
        row.payload,
        row.redaction_mode,
        row.task_id,
        row.parent_task_id,
        row.depth,
        row.trace_id,
        childId,
        event.seq,
      );
      this.last = seq;
      records.push(treeRecord(row));
    }
    for (const record of records) notify(this.treeListeners, record);
    if (records.length > 0) this.appended();
    return records;
  }

  /** The highest number of `childId`'s log stored here (0 before its first event). */
  forwardedThrough(childId: string): number {
    if (!this.hasTree()) return 0;
    return (
      this.sql
        .exec<{ seq: number | null }>("SELECT MAX(via_seq) AS seq FROM events_tree WHERE via_task_id = ?", childId)
        .one().seq ?? 0
    );
  }

  /**
   * The stream's events: the task's own and, when it has sub-agents, theirs at most `maxDepth` levels below it (all
   * of them when undefined), seq > after, oldest first, at most `limit`.
   */
  readTreeAfter(after: number, limit: number, maxDepth?: number): EventRecord[] {
    if (maxDepth === 0 || !this.hasTree()) return this.readAfter(after, limit);
    const own = this.readAfter(after, limit);
    const forwarded = this.sql
      .exec<TreeEventRow>(
        `SELECT seq, timestamp, event_type, span_id, payload, redaction_mode, task_id, parent_task_id, depth, trace_id
          FROM events_tree WHERE seq > ? AND depth <= ? ORDER BY seq LIMIT ?`,
        after,
        maxDepth ?? Number.MAX_SAFE_INTEGER,
        limit,
      )
      .toArray()
      .map(treeRecord);
    return mergeBySeq(own, forwarded, limit);
  }

  /**
   * What this task forwards to its parent: every row after `after` (its own events and those its sub-agents forwarded
   * to it), oldest first, at most `limit`, with their payloads as stored. `self` names this task in the tree.
   */
  rowsToForward(
    after: number,
    limit: number,
    self: { task_id: string; parent_task_id: string; trace_id: string },
  ): ForwardedEvent[] {
    const own = this.sql
      .exec<EventRow>("SELECT * FROM events_log WHERE seq > ? ORDER BY seq LIMIT ?", after, limit)
      .toArray()
      .map(
        (row): ForwardedEvent => ({
          seq: row.seq,
          timestamp: row.timestamp,
          event_type: row.event_type,
          span_id: row.span_id,
          payload: row.payload,
          redaction_mode: row.redaction_mode === "redacted" ? "redacted" : "full",
          ...self,
          depth: 0,
        }),
      );
    if (!this.hasTree()) return own;
    const forwarded = this.sql
      .exec<TreeEventRow>(
        `SELECT seq, timestamp, event_type, span_id, payload, redaction_mode, task_id, parent_task_id, depth, trace_id
          FROM events_tree WHERE seq > ? ORDER BY seq LIMIT ?`,
        after,
        limit,
      )
      .toArray()
      .map(
        (row): ForwardedEvent => ({ ...row, redaction_mode: row.redaction_mode === "redacted" ? "redacted" : "full" }),
      );
    return mergeBySeq(own, forwarded, limit);
  }

  /** Events with seq > after, oldest first, at most `limit`. */
  readAfter(after: number, limit = 1000): EventRecord[] {
    const id = this.identity();
    return this.sql
      .exec<EventRow>("SELECT * FROM events_log WHERE seq > ? ORDER BY seq LIMIT ?", after, limit)
      .toArray()
      .map((row) => ({
        seq: row.seq,
        run_id: id.runId,
        trace_id: id.traceId,
        span_id: row.span_id,
        timestamp: row.timestamp,
        event_type: row.event_type,
        payload: JSON.parse(row.payload) as Record<string, unknown>,
        redaction_mode: row.redaction_mode === "redacted" ? "redacted" : "full",
      }));
  }

  /** Every event, oldest first, read a page at a time. */
  *all(): Generator<EventRecord> {
    let cursor = 0;
    for (;;) {
      const page = this.readAfter(cursor, 1000);
      for (const record of page) {
        cursor = record.seq;
        yield record;
      }
      if (page.length < 1000) return;
    }
  }

  /** Every event the task's sub-agents forwarded to it (src/events/event-tree.ts), oldest first; none for most tasks. */
  *forwarded(): Generator<EventRecord> {
    if (!this.hasTree()) return;
    let cursor = 0;
    for (;;) {
      const page = this.sql
        .exec<TreeEventRow>(
          `SELECT seq, timestamp, event_type, span_id, payload, redaction_mode, task_id, parent_task_id, depth, trace_id
            FROM events_tree WHERE seq > ? ORDER BY seq LIMIT 1000`,
          cursor,
        )
        .toArray();
      for (const row of page) {
        cursor = row.seq;
        yield treeRecord(row);
      }
      if (page.length < 1000) return;
    }
  }

  /** The newest number of the log, the sub-agents' forwarded events included (one sequence for the stream). */
  lastSeq(): number {
    if (this.last === undefined) {
      const own = this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM events_log").one().seq ?? 0;
      const forwarded = this.hasTree()
        ? (this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM events_tree").one().seq ?? 0)
        : 0;
      this.last = Math.max(own, forwarded);
    }
    return this.last;
  }

  /** When the task's own newest event was appended, or null before its first. */
  lastOwnTimestamp(): string | null {
    if (this.lastTimestamp === undefined) {
      this.lastTimestamp =
        this.sql.exec<{ timestamp: string }>("SELECT timestamp FROM events_log ORDER BY seq DESC LIMIT 1").toArray()[0]
          ?.timestamp ?? null;
    }
    return this.lastTimestamp;
  }

  /** How many live readers (SSE subscribers, waiters) are attached. */
  listenerCount(): number {
    return this.listeners.size + this.treeListeners.size;
  }

  /** Registers a listener for the task's own events appended from now on; returns the unsubscribe function. */
  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Registers a listener for every event appended from now on, its sub-agents' included. */
  listenTree(listener: Listener): () => void {
    this.treeListeners.add(listener);
    return () => this.treeListeners.delete(listener);
  }

  /** The log as a stream reads it: the task's events and its sub-agents' at most `maxDepth` below it (all: undefined). */
  treeSource(maxDepth?: number): {
    readAfter(after: number, limit: number): EventRecord[];
    listen(listener: Listener): () => void;
  } {
    return {
      readAfter: (after, limit) => this.readTreeAfter(after, limit, maxDepth),
      listen:
        maxDepth === 0
          ? (listener) => this.listen(listener)
          : (listener) =>
              this.listenTree((record) => {
                if (maxDepth === undefined || record.depth === undefined || record.depth <= maxDepth) listener(record);
              }),
    };
  }

  private hasTree(): boolean {
    this.tree ??=
      this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events_tree'").toArray().length > 0;
    return this.tree;
  }
}

function notify(listeners: Set<Listener>, record: EventRecord): void {
  for (const listener of listeners) {
    try {
      listener(record);
    } catch {
      listeners.delete(listener);
    }
  }
}

/** Two runs of records, each in seq order, as one in seq order, at most `limit`. */
function mergeBySeq<T extends { seq: number }>(a: readonly T[], b: readonly T[], limit: number): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < a.length || j < b.length)) {
    const x = a[i];
    const y = b[j];
    if (y === undefined || (x !== undefined && x.seq < y.seq)) {
      out.push(x as T);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  return out;
}
