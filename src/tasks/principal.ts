// Who a task's work counts against: the principal that started its tree. A root task remembers the key (or hook) that
// created it and the rate that key's creations are held to; each child of its tree carries the same principal, so a
// sub-agent takes its creation token from the bucket of the key that started the root (src/subagents/tree-limits.ts),
// and a schedule's or an evaluation's runs carry the principal of the request that made them (their task templates
// are built by the same call). Kept in the task's state, never shown: a key's id is no secret, but no view needs it.
import { z } from "zod";
import { type StateKey, stateKey } from "../lib/state-key.ts";

export interface TaskPrincipal {
  tenant: string;
  /** The API key's id (a key listed without one is known as key_<digest prefix>); null for a hook's delivery. */
  key_id: string | null;
  /** The token bucket its task creations take from: `key:<key id>`, or `hook:<hook id>` for a hook's delivery. */
  rate_bucket: string;
  /** The bucket's tokens a minute, as they were when the root was created (the key's own, else the deployment's). */
  rate_limit_per_minute: number;
}

export const TaskPrincipalSchema = z.lazy(() =>
  z.object({
    tenant: z.string(),
    key_id: z.string().nullable(),
    rate_bucket: z.string().min(1),
    rate_limit_per_minute: z.number().int().positive(),
  }),
) satisfies z.ZodType<TaskPrincipal, unknown>;

/** The principal of the task's tree (TaskInit.principal), from its creation. */
export const PRINCIPAL_STATE_KEY: StateKey<TaskPrincipal> = stateKey("task_principal", TaskPrincipalSchema);

/** The rate-limit bucket of an API key's task creations (RateLimiter, durable-objects/rate-limiter.ts). */
export function keyBucket(keyId: string): string {
  return `key:${keyId}`;
}

/** The rate-limit bucket of a hook's runs. */
export function hookBucket(hookId: string): string {
  return `hook:${hookId}`;
}
