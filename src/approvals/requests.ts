// What a run asks a person for and what the person answers (seed 003 human feedback): the pending request, the
// decision, and where both are kept in the task's key/value state. The request waits under PENDING_INPUT_KEY while
// the task is input_required; each decision is kept per request for good, so a replay and a repeated answer agree.
import { z } from "zod";
import { EVENT_CATALOG } from "../contracts/events.ts";
import { type StateKey, stateKey, stateKeyFamily, type TypedState } from "../lib/state-key.ts";

/**
 * A request for a person (seed 003 human feedback): approve a tool call, or answer the agent's question. What the
 * task's pending_input, the input_requested event and an input_required callback carry; its schema is that event's
 * payload (src/contracts/events.ts), built on first use like every wire schema.
 */
export const PendingInputSchema = z.lazy(() => EVENT_CATALOG.input_requested.payload);
export type PendingInput = z.infer<typeof PendingInputSchema>;

/**
 * What a task shows it waits for (its pending_input): its own request, or a sub-agent's, which names the child task
 * that holds it (`task_id`). A decision for either is sent to this task's resume.
 */
export const ShownPendingInputSchema = z.lazy(() =>
  EVENT_CATALOG.input_requested.payload.extend({
    task_id: z
      .string()
      .optional()
      .describe("the sub-agent task whose request this is; absent for the task's own (docs/subagents.md)"),
  }),
);

/**
 * A person's answer (POST /v1/tasks/:id/resume), kept per request (the tool_use id): the human_decision event's
 * payload without the call it answers, which the request names.
 */
export const HumanDecisionSchema = z.lazy(() =>
  EVENT_CATALOG.human_decision.payload.omit({ tool_use_id: true, tool_name: true, kind: true }),
);
export type HumanDecision = z.infer<typeof HumanDecisionSchema>;

/** A decision as sent: it names its request, and the time it is recorded at is the runtime's. */
export type DecisionInput = Omit<HumanDecision, "decided_at" | "request_id"> & { request_id: string };

/** What a task waiting for a person waits for (PendingInput), while its status is input_required. */
export const PENDING_INPUT_KEY: StateKey<PendingInput> = stateKey("pending_input", PendingInputSchema);
/** A person's decision on a tool call: `decision:<tool_use_id>` → HumanDecision. */
export const decisionKey: (toolUseId: string) => StateKey<HumanDecision> = stateKeyFamily(
  "decision:",
  HumanDecisionSchema,
);

/** The request id of a stored request; requests stored before request ids existed are named by their call. */
export function requestIdOf(pending: Omit<PendingInput, "request_id"> & { request_id?: string }): string {
  return pending.request_id ?? pending.tool_use_id;
}

/** The request the task waits for, named by its request id; undefined when it waits for none. */
export function pendingRequest(state: Pick<TypedState, "get">): PendingInput | undefined {
  const stored = state.get(PENDING_INPUT_KEY);
  return stored ? { ...stored, request_id: requestIdOf(stored) } : undefined;
}
