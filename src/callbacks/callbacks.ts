// Outbound callbacks: a task with `webhook: {url, events}` reports those moments of its life to the URL. The event
// log is the outbox: the object turns each matching event into a delivery (once, by its sequence number), signs it
// with Standard Webhooks, and retries it with exponential backoff from its alarm. Every attempt is on record
// (GET /v1/tasks/:id/deliveries), and a delivery can be sent again on request.
//
// Callbacks have a network policy of their own (OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS), never the tools' one: a
// caller chooses a callback URL, so a host the operator opened to agents' tools must not become reachable by naming
// it as a callback. The receiver's answer is never read: the log keeps its status, the timing and an error class.
//
// A delivery and the callback's payload are wire types (GET /v1/tasks/:id/deliveries, the POST a receiver gets): zod
// schemas, built on first use (z.lazy) like every wire schema.
import { Webhook } from "standardwebhooks";
import { z } from "zod";
import { EVENT_CATALOG, type EventType } from "../contracts/events.ts";
import { AgentUsageSchema } from "../contracts/usage.ts";
import type { Env } from "../env.ts";
import { ErrorInfoSchema } from "../errors/error-info.ts";
import { ApiError, BlockedUrlError } from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import { checkOutboundUrl, type OutboundPolicy, outboundPolicy } from "../net/outbound.ts";
import { CALLBACK_EVENTS, type CallbackEvent, TaskMetadataSchema, type TaskWebhook } from "../tasks/task.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/** Seconds to wait after each failed attempt: 6 attempts over about an hour (0, 10 s, 1 min, 5 min, 15 min, 40 min). */
export const DEFAULT_RETRY_SECONDS: readonly number[] = [10, 60, 300, 900, 2400];
const ATTEMPT_TIMEOUT_MS = 10_000;
/** An attempt's error text is a short explanation next to its class, not a place for whole error dumps. */
const MAX_ERROR_CHARS = 300;
const CURSOR_KEY = "callbacks_cursor";

/**
 * Why an attempt failed, as a stable vocabulary clients may branch on (the `error` text next to it is for people):
 * timeout (no answer within 10 s), connection_failed (the receiver could not be reached), blocked_url (the URL is
 * not allowed by the callback policy in force at the attempt), http_status (the receiver answered something other
 * than 2xx, a redirect included), not_signed (the deployment has no OUTPOST_WEBHOOK_SECRET to sign with).
 */
export const DELIVERY_ERROR_CLASSES = [
  "timeout",
  "connection_failed",
  "blocked_url",
  "http_status",
  "not_signed",
] as const;
export type DeliveryErrorClass = (typeof DELIVERY_ERROR_CLASSES)[number];

/** The event that marks each callback moment (the catalog's types: a misspelt one does not compile). */
const EVENT_FOR: Readonly<Record<string, CallbackEvent>> = {
  run_finished: "completed",
  run_failed: "failed",
  run_canceled: "canceled",
  input_requested: "input_required",
} satisfies Partial<Record<EventType, CallbackEvent>>;

/** What every callback's data says: which task, in which status, as of which event. */
const callbackBase = () => ({
  task_id: z.uuid({ version: "v4" }),
  agent: z.string(),
  event_seq: z.number().int().positive(),
  metadata: TaskMetadataSchema,
  created_at: z.iso.datetime(),
});

/** An ended task's callback data: its outcome, usage and end. */
const outcome = <S extends string, R extends z.ZodType, E extends z.ZodType>(status: S, result: R, error: E) =>
  z.strictObject({
    ...callbackBase(),
    status: z.literal(status),
    result,
    error,
    usage: AgentUsageSchema,
    completed_at: z.iso.datetime(),
  });

/**
 * What a callback POSTs (Standard Webhooks): `{type, timestamp, data}`, the type being `task.<status>`, the timestamp
 * the event's, and the data the task's outcome (or what it waits for) as of that event. Redacted like the task.
 */
export const CallbackPayloadSchema = z.lazy(() =>
  z.discriminatedUnion("type", [
    z.strictObject({
      type: z.literal("task.completed"),
      timestamp: z.iso.datetime(),
      data: outcome("completed", z.string().nullable(), z.null()),
    }),
    z.strictObject({
      type: z.literal("task.failed"),
      timestamp: z.iso.datetime(),
      data: outcome("failed", z.null(), ErrorInfoSchema.nullable()),
    }),
    z.strictObject({
      type: z.literal("task.canceled"),
      timestamp: z.iso.datetime(),
      data: outcome("canceled", z.null(), z.null()),
    }),
    z.strictObject({
      type: z.literal("task.input_required"),
      timestamp: z.iso.datetime(),
      data: z.strictObject({
        ...callbackBase(),
        status: z.literal("input_required"),
        /** The input_requested event's payload (the task's pending_input, src/approvals/requests.ts). */
        pending_input: EVENT_CATALOG.input_requested.payload,
      }),
    }),
  ]),
);
export type CallbackPayload = z.infer<typeof CallbackPayloadSchema>;

/** One try at a delivery. */
export const DeliveryAttemptSchema = z.lazy(() =>
  z.strictObject({
    attempt: z.number().int().positive(),
    started_at: z.iso.datetime(),
    /** The receiver's HTTP status, or null when there was no answer (see error_class). */
    status_code: z.number().int().nullable(),
    /** Null for a delivered attempt (and for one still under way, or cut short by an eviction). */
    error_class: z.enum(DELIVERY_ERROR_CLASSES).nullable(),
    /** A short explanation of error_class, redacted. */
    error: z.string().nullable(),
    duration_ms: z.number().int().nonnegative().nullable(),
  }),
);
export type DeliveryAttempt = z.infer<typeof DeliveryAttemptSchema>;

/** A callback delivery with every attempt at it (GET /v1/tasks/:id/deliveries). */
export const DeliverySchema = z.lazy(() =>
  z.strictObject({
    /** Also the webhook-id header: the same for every attempt, so a receiver can drop repeats. */
    id: z.string(),
    event_type: z.enum(CALLBACK_EVENTS.map((event) => `task.${event}` as const)),
    /** The sequence number of the event it reports. */
    event_seq: z.number().int().positive(),
    url: z.url(),
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.array(DeliveryAttemptSchema),
    next_attempt_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    payload: CallbackPayloadSchema,
  }),
);
export type Delivery = z.infer<typeof DeliverySchema>;

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

/** Where callbacks may go: the deployment's callback settings, apart from the tools' outbound policy. */
export interface CallbackPolicy {
  /** OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS: private, loopback or link-local hosts callbacks may reach. */
  privateHosts: OutboundPolicy;
  /** OUTPOST_HTTP_CALLBACK_HOSTS: hosts callbacks may reach over plain http ("*": all). */
  httpHosts: ReadonlySet<string>;
}

export function callbackPolicy(
  env: Pick<Env, "OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS" | "OUTPOST_HTTP_CALLBACK_HOSTS">,
): CallbackPolicy {
  return {
    // Same syntax as the tools' OUTPOST_ALLOW_PRIVATE_HOSTS, read from the callbacks' own variable only.
    privateHosts: outboundPolicy(env.OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS),
    httpHosts: outboundPolicy(env.OUTPOST_HTTP_CALLBACK_HOSTS).allowPrivateHosts,
  };
}

/**
 * Whether callbacks may go to `raw`: https only (unless OUTPOST_HTTP_CALLBACK_HOSTS names the host), and never a
 * private, loopback or link-local address unless OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS allows it. `problem` says why
 * not, without the URL (an attempt's log shows it next to the delivery's URL).
 */
export function judgeCallbackUrl(
  raw: string,
  policy: CallbackPolicy,
): { url: URL; problem?: undefined } | { problem: string; url?: undefined } {
  let url: URL;
  try {
    url = checkOutboundUrl(raw, policy.privateHosts);
  } catch (error) {
    if (!(error instanceof BlockedUrlError)) throw error;
    const hint = error.privateHost
      ? "; callbacks to private, loopback and link-local hosts need OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS"
      : "";
    return { problem: `${error.reason}${hint}` };
  }
  const http = policy.httpHosts;
  if (url.protocol !== "https:" && !http.has("*") && !http.has(url.hostname.toLowerCase())) {
    return { problem: "it is not https; callbacks are sent over https (OUTPOST_HTTP_CALLBACK_HOSTS may allow a host)" };
  }
  return { url };
}

/** A task's callback target from the request: 400 invalid_callback_url naming `field` unless judgeCallbackUrl allows it. */
export function checkCallbackUrl(raw: string, policy: CallbackPolicy, field = "webhook.url"): URL {
  const judged = judgeCallbackUrl(raw, policy);
  if (judged.problem !== undefined) {
    throw new ApiError("invalid_callback_url", `${raw} is not allowed: ${judged.problem}.`, field);
  }
  return judged.url;
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
      error_class TEXT,
      error TEXT,
      duration_ms INTEGER,
      PRIMARY KEY (delivery_id, attempt)
    )`);
    const columns = new Set(
      sql
        .exec<{ name: string }>("SELECT name FROM pragma_table_info('delivery_attempts')")
        .toArray()
        .map((c) => c.name),
    );
    // Objects from before error classes: their attempts' classes follow from the texts those versions wrote.
    if (!columns.has("error_class")) {
      sql.exec("ALTER TABLE delivery_attempts ADD COLUMN error_class TEXT");
      sql.exec(`UPDATE delivery_attempts SET error_class = CASE
          WHEN error LIKE 'the receiver answered %' THEN 'http_status'
          WHEN error LIKE 'OUTPOST_WEBHOOK_SECRET is not set%' THEN 'not_signed'
          WHEN error LIKE 'no answer within %' THEN 'timeout'
          WHEN error LIKE '% is not allowed: %' THEN 'blocked_url'
          ELSE 'connection_failed' END
        WHERE error IS NOT NULL AND error_class IS NULL`);
    }
    // Older versions kept the first KiB of each receiver's answer, which could be an internal host's reply: the
    // column goes, and DROP COLUMN rewrites the table, so none of it stays in the object's storage.
    if (columns.has("response_excerpt")) sql.exec("ALTER TABLE delivery_attempts DROP COLUMN response_excerpt");
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
          // Stored redacted: the task's result and error come from its row, which this module does not trust to be.
          const payload = this.deps.redact({
            type: `task.${event}`,
            timestamp: record.timestamp,
            data: callbackData(task, event, record.payload, record.seq),
          });
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
    const outcome = await this.send(row, secret, startedAt);
    const duration = Date.now() - startedAt.getTime();
    const delivered = outcome.errorClass === null;
    const left = sql
      .exec<{ left: number }>("SELECT attempts_left AS left FROM deliveries WHERE id = ?", row.id)
      .one().left;
    const schedule = this.deps.retrySeconds();
    const delay = schedule[Math.min(Math.max(schedule.length - left, 0), schedule.length - 1)] ?? 60;
    this.deps.sql.exec(
      "UPDATE delivery_attempts SET status_code = ?, error_class = ?, error = ?, duration_ms = ? WHERE delivery_id = ? AND attempt = ?",
      outcome.statusCode,
      outcome.errorClass,
      outcome.error === null ? null : this.deps.redact(outcome.error).slice(0, MAX_ERROR_CHARS),
      duration,
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

  /**
   * One POST of the delivery, judged by the callback policy in force now. Only the status of the answer counts:
   * its body is cancelled unread, so nothing a receiver (or an internal host) says can reach the log.
   */
  private async send(
    row: DeliveryRow,
    secret: string | undefined,
    startedAt: Date,
  ): Promise<{ statusCode: number | null; errorClass: DeliveryErrorClass | null; error: string | null }> {
    const failed = (errorClass: DeliveryErrorClass, error: string) => ({ statusCode: null, errorClass, error });
    if (!secret) return failed("not_signed", "OUTPOST_WEBHOOK_SECRET is not set, so the callback cannot be signed.");
    const judged = judgeCallbackUrl(row.url, this.deps.policy());
    if (judged.problem !== undefined)
      return failed("blocked_url", `the callback URL is not allowed: ${judged.problem}`);
    // Redacted again as it leaves: deliveries stored before payloads were redacted are sent clean too.
    const body = JSON.stringify(this.deps.redact(JSON.parse(row.payload) as unknown));
    const deadline = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
    let response: Response;
    try {
      response = await fetch(judged.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "Outpost/0.1",
          "webhook-id": row.id,
          "webhook-timestamp": String(Math.floor(startedAt.getTime() / 1000)),
          "webhook-signature": new Webhook(secret).sign(row.id, startedAt, body),
        },
        body,
        // A redirect is an answer, not a delivery: receivers give their final URL.
        redirect: "manual",
        signal: deadline,
      });
    } catch (caught) {
      if (deadline.aborted) return failed("timeout", `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`);
      return failed("connection_failed", caught instanceof Error ? caught.message : String(caught));
    }
    await response.body?.cancel().catch(() => undefined);
    const status = response.status;
    if (status >= 200 && status < 300) return { statusCode: status, errorClass: null, error: null };
    const redirect = status >= 300 && status < 400 ? "; redirects are not followed" : "";
    return { statusCode: status, errorClass: "http_status", error: `the receiver answered ${status}${redirect}` };
  }

  list(): Delivery[] {
    const attempts = new Map<string, DeliveryAttempt[]>();
    for (const row of this.deps.sql
      .exec<AttemptRow>(
        "SELECT delivery_id, attempt, started_at, status_code, error_class, error, duration_ms FROM delivery_attempts ORDER BY delivery_id, attempt",
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
        // What sync() stored: a payload it built (callbackData).
        payload: this.deps.redact(JSON.parse(row.payload) as CallbackPayload),
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
