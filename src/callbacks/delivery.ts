// A callback delivery as the delivery log shows it (GET /v1/tasks/:id/deliveries): the delivery, every attempt at
// it, and the stable vocabulary of why an attempt failed. Wire types: zod schemas, built on first use (z.lazy) like
// every wire schema; the outbox (outbox.ts) stores deliveries and maps its rows to these.
import { z } from "zod";
import { CALLBACK_EVENTS } from "../tasks/task.ts";
import { CallbackPayloadSchema } from "./payload.ts";

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
