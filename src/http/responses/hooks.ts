// Inbound webhooks: what a delivery to a hook is answered with.

import { z } from "zod";
import { TASK_STATUSES } from "../../tasks/task.ts";
import { TaskId } from "./common.ts";

// ---- Inbound webhooks --------------------------------------------------------------------------------------------

/**
 * POST /v1/hooks/:hook_id: the sender gets a receipt, not the task (its answers end up in places like GitHub's
 * delivery log): 202 when the delivery started a task, 200 with the first delivery's task for a repeat.
 */
export const HookReceiptSchema = z.strictObject({
  hook_id: z.string(),
  delivery_id: z.string(),
  task_id: TaskId,
  status: z.enum(TASK_STATUSES),
  /** True for a repeat (the same delivery id or, for GitHub, the same signed body). */
  duplicate: z.boolean(),
});
export type HookReceipt = z.infer<typeof HookReceiptSchema>;

/** GitHub's ping: acknowledged, nothing started. */
export const HookPongSchema = z.strictObject({ hook_id: z.string(), status: z.literal("pong") });
export type HookPong = z.infer<typeof HookPongSchema>;

/** A delivery for an event the hook does not run on: acknowledged, nothing started. */
export const HookIgnoredSchema = z.strictObject({
  hook_id: z.string(),
  status: z.literal("ignored"),
  reason: z.string(),
});
export type HookIgnored = z.infer<typeof HookIgnoredSchema>;

export const HookResponseSchema = z.union([HookReceiptSchema, HookPongSchema, HookIgnoredSchema]);
export type HookResponse = z.infer<typeof HookResponseSchema>;
