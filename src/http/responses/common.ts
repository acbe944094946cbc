// The parts every response schema shares: ids, times and counts; and the two bodies of no resource: the health
// check and the error answer.

import { z } from "zod";
import { HumanDecisionSchema, PendingInputSchema } from "../../approvals/requests.ts";
import { REQUEST_ERROR_CODES } from "../../errors/codes.ts";

/** A task's (or a session's, a child's) id: a version 4 UUID. */
export const TaskId = z.uuid({ version: "v4" });
export const Timestamp = z.iso.datetime();
export const Count = z.number().int().nonnegative();

// ---- GET / -------------------------------------------------------------------------------------------------------

/** The unauthenticated health check: nothing about the deployment. */
export const HealthSchema = z.strictObject({ name: z.literal("outpost"), status: z.literal("ok") });
export type Health = z.infer<typeof HealthSchema>;

// ---- Errors ------------------------------------------------------------------------------------------------------

/**
 * Every error answer (src/http/errors.ts): the registry's code, a message for people, the request id, the field at
 * fault, and for some codes further members that let a client act without another request. Those go only to a key
 * that may read the task (src/commands/decisions.ts readableRefusal).
 */
export const ErrorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(REQUEST_ERROR_CODES),
    message: z.string(),
    /** The x-request-id header's value. */
    request_id: z.uuid(),
    /** The input at fault: a body field by its path, a parameter, a query value or a header. */
    field: z.string().optional(),
    /** pending_input_changed: what the task waits for now. */
    pending_input: PendingInputSchema.optional(),
    /** already_decided: the decision on record, with the request it answered. */
    decision: HumanDecisionSchema.optional(),
    /** tool_call_in_flight: the calls the origin still runs. */
    tool_use_ids: z.array(z.string()).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
