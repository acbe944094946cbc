// What a running task waits for other than a person: its model provider, while a model call waits out an outage or
// a rate limit on the object's provider_wait timer (src/runtime/provider-retry.ts). The record of the failing call
// is kept in the task's state; the task, the session and their listings show it as `waiting_for`.
import { z } from "zod";
import { ErrorInfoSchema } from "../errors/error-info.ts";
import { stateKey, type TypedState } from "../lib/state-key.ts";

/** A model call's failures so far, kept until it succeeds or the run gives up on it. */
export const ProviderWaitSchema = z.strictObject({
  /** The journal step of the call (e.g. turn_3_model). */
  step: z.string(),
  /** When the call first failed (epoch ms): the horizon counts from here. */
  since: z.number(),
  failures: z.number().int().positive(),
  last_error: ErrorInfoSchema,
  /** While parked: when the next try is due (epoch ms), and when the wait began. Null while the run holds it. */
  until: z.number().nullable(),
  parked_at: z.number().nullable(),
});
export type ProviderWait = z.infer<typeof ProviderWaitSchema>;

export const PROVIDER_WAIT_KEY = stateKey("provider_wait", ProviderWaitSchema);

/** The task's `waiting_for` (a wire type, built on first use). */
export const WaitingForSchema = z.lazy(() =>
  z.strictObject({
    /** Only `provider` so far: a model call waits out its provider's outage or rate limit. */
    kind: z.literal("provider"),
    /** When the call is tried again. */
    until: z.iso.datetime(),
    /** The call's failed tries so far. */
    attempts: z.number().int().positive(),
    /** The provider's last refusal (e.g. provider_overloaded, rate_limited). */
    last_error: ErrorInfoSchema,
  }),
);
export type WaitingFor = z.infer<typeof WaitingForSchema>;

/** What a task of `status` waits for, from its state: null unless it is running with a model call parked. */
export function waitingFor(status: string, state: Pick<TypedState, "get">): WaitingFor | null {
  if (status !== "running") return null;
  const wait = state.get(PROVIDER_WAIT_KEY);
  if (!wait || wait.until === null) return null;
  return {
    kind: "provider",
    until: new Date(wait.until).toISOString(),
    attempts: wait.failures,
    last_error: wait.last_error,
  };
}
