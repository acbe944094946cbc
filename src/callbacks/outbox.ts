// The outbox of a task's callbacks: a task with `webhook: {url, events}` reports those moments of its life to the
// URL, and each of its A2A push configs (push-configs.ts) all four of them to its own. The event log is the outbox: the object turns each matching event into a delivery (once, by its sequence
// number), and its alarm sends what is due (send.ts), retrying a failed delivery on the retry schedule
// (retry-schedule.ts). Every attempt is on record (GET /v1/tasks/:id/deliveries), and a delivery can be sent again
// on request. Its tables (callbacks_deliveries, callbacks_attempts) are in src/storage/migrations.ts.
import { z } from "zod";
import type { EventLog } from "../events/event-log.ts";
import { stateKey } from "../lib/state-key.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import type { Delivery, DeliveryAttempt, DeliveryErrorClass } from "./delivery.ts";
import { CALLBACK_EVENT_FOR, type CallbackPayload, callbackData } from "./payload.ts";
import type { CallbackPolicy } from "./policy.ts";
import { type PushConfigs, pushConfigIdOf, pushDeliveryId, pushPayload } from "./push-configs.ts";
import { sendDelivery } from "./send.ts";

/** An attempt's error text is a short explanation next to its class, not a place for whole error dumps. */
const MAX_ERROR_CHARS = 300;
/** The number of the last event turned into deliveries (0 before the first). */
const CURSOR_KEY = stateKey("callbacks_cursor", z.number().int().nonnegative());

interface DeliveryRow extends Record<string, SqlStorageValue> {
  id: string;
  event_type: string;
  event_seq: number;
  url: string;
  status: string;
  payload: string;
  attempts_left: number;
  next_attempt_at: number | null;
  created_at: string;
}

interface AttemptRow extends Record<string, SqlStorageValue> {
  delivery_id: string;
  attempt: number;
  started_at: string;
  status_code: number | null;
  error_class: string | null;
  error: string | null;
  duration_ms: number | null;
}

/** What the outbox takes from its object: the storage it shares, and the deployment's settings as read now. */
export interface CallbackDeps {
  sql: SqlStorage;
  events: EventLog;
  state: TaskState;
  task: () => TaskRecord | null;
  /** The task's A2A push configs: more targets of the same moments. */
  pushConfigs: Pick<PushConfigs, "list" | "headersFor">;
  /** The callback policy in force now: every attempt is judged by it, not only the task's creation. */
  policy: () => CallbackPolicy;
  /**
   * The deployment's redaction (secret values, credential shapes, operator patterns): applied to a payload when its
   * delivery is created and when it is sent or listed, and to every error text, so no secret leaves by a callback
   * or the delivery log whatever the task's own record holds.
   */
  redact: <T>(value: T) => T;
  /** The tenant's signing secret, or undefined when OUTPOST_WEBHOOK_SECRET is not set. */
  signingSecret: (tenant: string) => Promise<string | undefined>;
  retrySeconds: () => readonly number[];
}

export class CallbackOutbox {
  private readonly deps: CallbackDeps;

  constructor(deps: CallbackDeps) {
    this.deps = deps;
  }

  /** Turns the log's new callback events into deliveries (each event once, however often this runs). */
  sync(): void {
    // No task (an expired one's storage is gone, its tables with it): nothing to read, nothing to deliver.
    const task = this.deps.task();
    if (!task) return;
    const webhook = task.webhook;
    const pushes = this.deps.pushConfigs.list();
    if (!webhook && pushes.length === 0) return;
    let cursor = this.deps.state.get(CURSOR_KEY) ?? 0;
    for (;;) {
      const batch = this.deps.events.readAfter(cursor, 500);
      if (batch.length === 0) break;
      for (const record of batch) {
        const event = CALLBACK_EVENT_FOR[record.event_type];
        if (event) {
          // Stored redacted: the task's result and error come from its row, which this module does not trust to be.
          // What callbackData builds is a CallbackPayload's data (payload.ts).
          const payload = this.deps.redact({
            type: `task.${event}`,
            timestamp: record.timestamp,
            data: callbackData(task, event, record.payload, record.seq),
          }) as CallbackPayload;
          const id = `msg_${task.id.replaceAll("-", "")}_${record.seq}`;
          if (webhook?.events.includes(event)) this.store(id, payload, record.seq, webhook.url);
          for (const push of pushes) {
            // A config is told of the moments after it was set.
            if (record.seq > push.after_seq) {
              this.store(pushDeliveryId(id, push.id), payload, record.seq, push.url);
            }
          }
        }
        cursor = record.seq;
      }
    }
    this.deps.state.put(CURSOR_KEY, cursor);
  }

  /**
   * A delivery of a moment to one target, once (a repeated sync finds it stored). What is stored is the callback; a
   * push config's delivery sends it inside an A2A status update (attempt()).
   */
  private store(id: string, callback: CallbackPayload, seq: number, url: string): void {
    this.deps.sql.exec(
      `INSERT OR IGNORE INTO callbacks_deliveries (id, event_type, event_seq, url, status, payload, attempts_left,
        next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
      id,
      callback.type,
      seq,
      url,
      JSON.stringify(callback),
      this.deps.retrySeconds().length + 1,
      Date.now(),
      new Date().toISOString(),
    );
  }

  /** A push config was deleted: what it has not been sent yet is not sent (it stays on record, failed). */
  dropPending(configId: string): void {
    const suffix = pushDeliveryId("", configId);
    this.deps.sql.exec(
      "UPDATE callbacks_deliveries SET status = 'failed', next_attempt_at = NULL WHERE status = 'pending' AND substr(id, -?) = ?",
      suffix.length,
      suffix,
    );
  }

  /** When the next attempt is due (ms since the epoch), or null when nothing waits. */
  nextDueAt(): number | null {
    if (!this.deps.task()) return null;
    return (
      this.deps.sql
        .exec<{ at: number | null }>(
          "SELECT MIN(next_attempt_at) AS at FROM callbacks_deliveries WHERE status = 'pending'",
        )
        .one().at ?? null
    );
  }

  /** Sends every delivery that is due. Called from the alarm; safe to repeat. */
  async deliverDue(): Promise<void> {
    this.sync();
    const task = this.deps.task();
    if (!task) return;
    const due = this.deps.sql
      .exec<DeliveryRow>(
        "SELECT * FROM callbacks_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY event_seq",
        Date.now(),
      )
      .toArray();
    if (due.length === 0) return;
    const secret = await this.deps.signingSecret(task.tenant);
    for (const row of due) await this.attempt(row, secret, task);
  }

  private async attempt(row: DeliveryRow, secret: string | undefined, task: TaskRecord): Promise<void> {
    const { sql } = this.deps;
    const attempt =
      (sql
        .exec<{ n: number | null }>("SELECT MAX(attempt) AS n FROM callbacks_attempts WHERE delivery_id = ?", row.id)
        .one().n ?? 0) + 1;
    const startedAt = new Date();
    // The attempt is on record before it is made: an eviction during it costs an attempt, never a silent resend.
    sql.exec(
      "INSERT INTO callbacks_attempts (delivery_id, attempt, started_at) VALUES (?, ?, ?)",
      row.id,
      attempt,
      startedAt.toISOString(),
    );
    sql.exec("UPDATE callbacks_deliveries SET attempts_left = attempts_left - 1 WHERE id = ?", row.id);
    const pushId = pushConfigIdOf(row.id);
    const sendable =
      pushId === undefined
        ? row
        : {
            ...row,
            // What sync() stored: a callback it built.
            payload: JSON.stringify(pushPayload(task, JSON.parse(row.payload) as CallbackPayload)),
            headers: this.deps.pushConfigs.headersFor(pushId),
          };
    const outcome = await sendDelivery(sendable, secret, startedAt, this.deps);
    const duration = Date.now() - startedAt.getTime();
    const delivered = outcome.errorClass === null;
    const left = sql
      .exec<{ left: number }>("SELECT attempts_left AS left FROM callbacks_deliveries WHERE id = ?", row.id)
      .one().left;
    const schedule = this.deps.retrySeconds();
    const delay = schedule[Math.min(Math.max(schedule.length - left, 0), schedule.length - 1)] ?? 60;
    this.deps.sql.exec(
      "UPDATE callbacks_attempts SET status_code = ?, error_class = ?, error = ?, duration_ms = ? WHERE delivery_id = ? AND attempt = ?",
      outcome.statusCode,
      outcome.errorClass,
      outcome.error === null ? null : this.deps.redact(outcome.error).slice(0, MAX_ERROR_CHARS),
      duration,
      row.id,
      attempt,
    );
    this.deps.sql.exec(
      "UPDATE callbacks_deliveries SET status = ?, next_attempt_at = ? WHERE id = ?",
      delivered ? "delivered" : left > 0 ? "pending" : "failed",
      delivered || left <= 0 ? null : Date.now() + delay * 1000,
      row.id,
    );
  }

  /** Every delivery with its attempts, oldest event first (GET /v1/tasks/:id/deliveries). */
  list(): Delivery[] {
    const attempts = new Map<string, DeliveryAttempt[]>();
    for (const row of this.deps.sql
      .exec<AttemptRow>(
        "SELECT delivery_id, attempt, started_at, status_code, error_class, error, duration_ms FROM callbacks_attempts ORDER BY delivery_id, attempt",
      )
      .toArray()) {
      const attempt: DeliveryAttempt = {
        attempt: row.attempt,
        started_at: row.started_at,
        status_code: row.status_code,
        error_class: row.error_class as DeliveryErrorClass | null,
        // Texts stored before they were redacted are redacted on the way out.
        error: row.error === null ? null : this.deps.redact(row.error),
        duration_ms: row.duration_ms,
      };
      attempts.set(row.delivery_id, [...(attempts.get(row.delivery_id) ?? []), attempt]);
    }
    return this.deps.sql
      .exec<DeliveryRow>("SELECT * FROM callbacks_deliveries ORDER BY event_seq")
      .toArray()
      .map((row) => ({
        id: row.id,
        event_type: row.event_type as Delivery["event_type"],
        event_seq: row.event_seq,
        url: row.url,
        status: row.status as Delivery["status"],
        attempts: attempts.get(row.id) ?? [],
        next_attempt_at: row.next_attempt_at === null ? null : new Date(row.next_attempt_at).toISOString(),
        created_at: row.created_at,
        // What sync() stored: a payload it built (callbackData).
        payload: this.deps.redact(JSON.parse(row.payload) as CallbackPayload),
      }));
  }

  /** Sends a delivery again now, with a fresh set of attempts. Returns false for an unknown id. */
  redeliver(id: string): boolean {
    const cursor = this.deps.sql.exec(
      "UPDATE callbacks_deliveries SET status = 'pending', attempts_left = ?, next_attempt_at = ? WHERE id = ?",
      this.deps.retrySeconds().length + 1,
      Date.now(),
      id,
    );
    return cursor.rowsWritten > 0;
  }
}
