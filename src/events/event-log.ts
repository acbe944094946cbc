// The task's event log: the single source of truth for what happened. An event is appended to SQLite (getting its
// sequence number) before any listener sees it, so a reader that reconnects with Last-Event-ID never misses one.
import type { CustomEventType, EventPayload, EventType } from "../contracts/events.ts";
import { serializePayload } from "../lib/safe-json.ts";
import type { EventRecord } from "./event-record.ts";
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
  /** The newest sequence number, read from storage once per instance. */
  private last: number | undefined;

  /** Forgets what this instance remembers of storage (after a rolled-back transaction). */
  invalidate(): void {
    this.last = undefined;
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
    for (const listener of this.listeners) {
      try {
        listener(record);
      } catch {
        this.listeners.delete(listener);
      }
    }
    return record;
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

  lastSeq(): number {
    this.last ??= this.sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM events_log").one().seq ?? 0;
    return this.last;
  }

  /** How many live readers (SSE subscribers, waiters) are attached. */
  listenerCount(): number {
    return this.listeners.size;
  }

  /** Registers a listener for events appended from now on; returns the unsubscribe function. */
  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
