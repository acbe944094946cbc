// Outbound callbacks: a task with `webhook: {url, events}` reports those moments of its life to the URL. The event
// log is the outbox: the object turns each matching event into a delivery (once, by its sequence number), signs it
// with Standard Webhooks, and retries it with exponential backoff from its alarm. Every attempt is on record
// (GET /v1/tasks/:id/deliveries), and a delivery can be sent again on request.
import { Webhook } from "standardwebhooks";
import { ApiError } from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import { FetchTimeoutError, guardedFetch } from "../net/guarded-fetch.ts";
import { checkOutboundUrl, type OutboundPolicy } from "../net/outbound.ts";
import { CALLBACK_EVENTS, type CallbackEvent, type TaskWebhook } from "../tasks/task.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/** Seconds to wait after each failed attempt: 6 attempts over about an hour (0, 10 s, 1 min, 5 min, 15 min, 40 min). */
export const DEFAULT_RETRY_SECONDS: readonly number[] = [10, 60, 300, 900, 2400];
const ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a receiver's answer is kept in the attempt log. */
const RESPONSE_EXCERPT_BYTES = 1024;
const CURSOR_KEY = "callbacks_cursor";

/** The event that marks each callback moment. */
const EVENT_FOR: Readonly<Record<string, CallbackEvent>> = {
  run_finished: "completed",
  run_failed: "failed",
  run_canceled: "canceled",
  input_requested: "input_required",
};

export interface DeliveryAttempt {
  attempt: number;
  started_at: string;
  /** The receiver's HTTP status, or null when there was no answer (see error). */
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  response_excerpt: string | null;
}

export interface Delivery {
  /** Also the webhook-id header: the same for every attempt, so a receiver can drop repeats. */
  id: string;
  event_type: `task.${CallbackEvent}`;
  event_seq: number;
  url: string;
  status: "pending" | "delivered" | "failed";
  attempts: DeliveryAttempt[];
  next_attempt_at: string | null;
  created_at: string;
  payload: unknown;
}

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
  error: string | null;
  duration_ms: number | null;
  response_excerpt: string | null;
}

/**
 * A task's callback target from the request: https only (unless OUTPOST_HTTP_CALLBACK_HOSTS names the host), and
 * never a private, loopback or link-local address unless OUTPOST_ALLOW_PRIVATE_HOSTS allows it.
 */
export function checkCallbackUrl(
  raw: string,
  policy: OutboundPolicy,
  httpHosts: string | undefined,
  field = "webhook.url",
): URL {
  let url: URL;
  try {
    url = checkOutboundUrl(raw, policy);
  } catch (error) {
    throw new ApiError(400, "invalid_callback_url", error instanceof Error ? error.message : String(error), field);
  }
  const allowed = new Set(
    (httpHosts ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
  if (url.protocol !== "https:" && !allowed.has("*") && !allowed.has(url.hostname.toLowerCase())) {
    throw new ApiError(400, "invalid_callback_url", `${url.href} is not https; callbacks are sent over https.`, field);
  }
  return url;
}

/** The operator's delays between attempts (OUTPOST_CALLBACK_RETRY_SECONDS, comma-separated), or the default. */
export function retrySchedule(configured: string | undefined): readonly number[] {
  const values = (configured ?? "")
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean)
    .map(Number);
  if (values.length === 0 || values.some((v) => !Number.isFinite(v) || v < 0 || v > 86_400)) {
    return DEFAULT_RETRY_SECONDS;
  }
  return values;
}

/**
 * The Standard Webhooks signing secret of a tenant's callbacks: derived from OUTPOST_WEBHOOK_SECRET, so each tenant
 * verifies with its own secret (GET /v1/tenant shows it to an admin) and none can sign another's callbacks.
 */
export async function tenantSigningSecret(root: string, tenant: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(root),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`outpost-callbacks:${tenant}`)),
  );
  return `whsec_${btoa(String.fromCharCode(...mac))}`;
}

export interface CallbackDeps {
  sql: SqlStorage;
  events: EventLog;
  state: TaskState;
  task: () => TaskRecord | null;
  policy: () => OutboundPolicy;
  /** The tenant's signing secret, or undefined when OUTPOST_WEBHOOK_SECRET is not set. */
  signingSecret: (tenant: string) => Promise<string | undefined>;
  retrySeconds: () => readonly number[];
}

export class CallbackOutbox {
  private readonly deps: CallbackDeps;

  constructor(deps: CallbackDeps) {
    this.deps = deps;
  }

  static migrate(sql: SqlStorage): void {
    sql.exec(`CREATE TABLE IF NOT EXISTS deliveries (
      id TEXT PRIMARY KEY,
      event_type TEXT NOT NULL,
      event_seq INTEGER NOT NULL UNIQUE,
      url TEXT NOT NULL,
      status TEXT NOT NULL,
      payload TEXT NOT NULL,
      attempts_left INTEGER NOT NULL,
      next_attempt_at INTEGER,
      created_at TEXT NOT NULL
    )`);
    sql.exec(`CREATE TABLE IF NOT EXISTS delivery_attempts (
      delivery_id TEXT NOT NULL,
      attempt INTEGER NOT NULL,
      started_at TEXT NOT NULL,
      status_code INTEGER,
      error TEXT,
      duration_ms INTEGER,
      response_excerpt TEXT,
      PRIMARY KEY (delivery_id, attempt)
    )`);
  }

  /** Turns the log's new callback events into deliveries (each event once, however often this runs). */
  sync(): void {
    const task = this.deps.task();
    const webhook = task?.webhook;
    if (!task || !webhook) return;
    let cursor = this.deps.state.get<number>(CURSOR_KEY) ?? 0;
    const { sql } = this.deps;
    for (;;) {
      const batch = this.deps.events.readAfter(cursor, 500);
      if (batch.length === 0) break;
      for (const record of batch) {
        const event = EVENT_FOR[record.event_type];
        if (event && webhook.events.includes(event)) {
          const payload = {
            type: `task.${event}`,
            timestamp: record.timestamp,
            data: callbackData(task, event, record.payload, record.seq),
          };
          sql.exec(
            `INSERT OR IGNORE INTO deliveries (id, event_type, event_seq, url, status, payload, attempts_left,
              next_attempt_at, created_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
            `msg_${task.id.replaceAll("-", "")}_${record.seq}`,
            `task.${event}`,
            record.seq,
            webhook.url,
            JSON.stringify(payload),
            this.deps.retrySeconds().length + 1,
            Date.now(),
            new Date().toISOString(),
          );
        }
        cursor = record.seq;
      }
    }
    this.deps.state.put(CURSOR_KEY, cursor);
  }

  /** When the next attempt is due (ms since the epoch), or null when nothing waits. */
  nextDueAt(): number | null {
    if (!this.deps.task()) return null;
    return (
      this.deps.sql
        .exec<{ at: number | null }>("SELECT MIN(next_attempt_at) AS at FROM deliveries WHERE status = 'pending'")
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
        "SELECT * FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY event_seq",
        Date.now(),
      )
      .toArray();
    if (due.length === 0) return;
    const secret = await this.deps.signingSecret(task.tenant);
    for (const row of due) await this.attempt(row, secret);
  }

  private async attempt(row: DeliveryRow, secret: string | undefined): Promise<void> {
    const { sql } = this.deps;
    const attempt =
      (sql
        .exec<{ n: number | null }>("SELECT MAX(attempt) AS n FROM delivery_attempts WHERE delivery_id = ?", row.id)
        .one().n ?? 0) + 1;
    const startedAt = new Date();
    // The attempt is on record before it is made: an eviction during it costs an attempt, never a silent resend.
    sql.exec(
      "INSERT INTO delivery_attempts (delivery_id, attempt, started_at) VALUES (?, ?, ?)",
      row.id,
      attempt,
      startedAt.toISOString(),
    );
    sql.exec("UPDATE deliveries SET attempts_left = attempts_left - 1 WHERE id = ?", row.id);
    let statusCode: number | null = null;
    let error: string | null = null;
    let excerpt: string | null = null;
    if (!secret) {
      error = "OUTPOST_WEBHOOK_SECRET is not set, so the callback cannot be signed.";
    } else {
      try {
        const signature = new Webhook(secret).sign(row.id, startedAt, row.payload);
        const response = await guardedFetch(row.url, {
          policy: this.deps.policy(),
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": row.id,
            "webhook-timestamp": String(Math.floor(startedAt.getTime() / 1000)),
            "webhook-signature": signature,
          },
          body: row.payload,
          maxBytes: RESPONSE_EXCERPT_BYTES,
          timeoutMs: ATTEMPT_TIMEOUT_MS,
          // A redirect is an answer, not a delivery: receivers give their final URL.
          maxRedirects: 0,
        });
        statusCode = response.status;
        excerpt = new TextDecoder().decode(response.body);
      } catch (caught) {
        error =
          caught instanceof FetchTimeoutError
            ? `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`
            : caught instanceof Error
              ? caught.message
              : String(caught);
      }
    }
    const duration = Date.now() - startedAt.getTime();
    const delivered = statusCode !== null && statusCode >= 200 && statusCode < 300;
    if (!delivered && statusCode !== null) error = `the receiver answered ${statusCode}`;
    const left = sql
      .exec<{ left: number }>("SELECT attempts_left AS left FROM deliveries WHERE id = ?", row.id)
      .one().left;
    const schedule = this.deps.retrySeconds();
    const delay = schedule[Math.min(Math.max(schedule.length - left, 0), schedule.length - 1)] ?? 60;
    this.deps.sql.exec(
      "UPDATE delivery_attempts SET status_code = ?, error = ?, duration_ms = ?, response_excerpt = ? WHERE delivery_id = ? AND attempt = ?",
      statusCode,
      error,
      duration,
      excerpt,
      row.id,
      attempt,
    );
    this.deps.sql.exec(
      "UPDATE deliveries SET status = ?, next_attempt_at = ? WHERE id = ?",
      delivered ? "delivered" : left > 0 ? "pending" : "failed",
      delivered || left <= 0 ? null : Date.now() + delay * 1000,
      row.id,
    );
  }

  list(): Delivery[] {
    const attempts = new Map<string, DeliveryAttempt[]>();
    for (const row of this.deps.sql
      .exec<AttemptRow>("SELECT * FROM delivery_attempts ORDER BY delivery_id, attempt")
      .toArray()) {
      const { delivery_id, ...attempt } = row;
      attempts.set(delivery_id, [...(attempts.get(delivery_id) ?? []), attempt]);
    }
    return this.deps.sql
      .exec<DeliveryRow>("SELECT * FROM deliveries ORDER BY event_seq")
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
        payload: JSON.parse(row.payload),
      }));
  }

  /** Sends a delivery again now, with a fresh set of attempts. Returns false for an unknown id. */
  redeliver(id: string): boolean {
    const cursor = this.deps.sql.exec(
      "UPDATE deliveries SET status = 'pending', attempts_left = ?, next_attempt_at = ? WHERE id = ?",
      this.deps.retrySeconds().length + 1,
      Date.now(),
      id,
    );
    return cursor.rowsWritten > 0;
  }
}

/** What a callback says: the task's outcome (or what it waits for), as of the event. */
function callbackData(
  task: TaskRecord,
  event: CallbackEvent,
  payload: Record<string, unknown>,
  seq: number,
): Record<string, unknown> {
  const base = {
    task_id: task.id,
    agent: task.assigned_agent,
    status: event,
    event_seq: seq,
    metadata: task.metadata,
    created_at: task.created_at,
  };
  if (event === "input_required") return { ...base, pending_input: payload };
  return {
    ...base,
    result: event === "completed" ? task.result : null,
    error: event === "failed" ? task.error : null,
    usage: task.usage,
    completed_at: task.completed_at,
  };
}

/** The callback's events from the request; all four unless it names some. */
export function callbackWebhook(url: URL, events: readonly CallbackEvent[] | undefined): TaskWebhook {
  return { url: url.href, events: events?.length ? [...new Set(events)] : [...CALLBACK_EVENTS] };
}
