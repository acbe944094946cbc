// When a task calls back and what the callback says: the events that mark the callback moments, the events a task's
// webhook asks for, and the payload a receiver gets (Standard Webhooks' `{type, timestamp, data}`), as a wire type
// (a zod schema, built on first use like every wire schema) and as the outbox builds it from the task's record.
import { z } from "zod";
import { EVENT_CATALOG, type EventType } from "../contracts/events.ts";
import { AgentUsageSchema } from "../contracts/usage.ts";
import { ErrorInfoSchema } from "../errors/error-info.ts";
import { CALLBACK_EVENTS, type CallbackEvent, TaskMetadataSchema, type TaskWebhook } from "../tasks/task.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/** The event that marks each callback moment (the catalog's types: a misspelt one does not compile). */
export const CALLBACK_EVENT_FOR: Readonly<Record<string, CallbackEvent>> = {
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

/** What a callback says: the task's outcome (or what it waits for), as of the event. */
export function callbackData(
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
