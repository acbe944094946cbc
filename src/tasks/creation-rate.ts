// A key's task-creation rate: the tasks a minute it may create (its own rate_limit_per_minute, else
// OUTPOST_RATE_LIMIT_PER_MINUTE, else 60), for requests and for the work stored under a key that runs later. The
// tokens are taken by the commands (src/commands/rate.ts), from the key's RateLimiter bucket `key:<key id>`.
import type { Env } from "../env.ts";

/** Tasks a key may create per minute unless it or OUTPOST_RATE_LIMIT_PER_MINUTE says otherwise. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 60;

/** The tasks a minute a key may create: its own limit (`own`), else the deployment's. */
export function creationRatePerMinute(env: Pick<Env, "OUTPOST_RATE_LIMIT_PER_MINUTE">, own: number | null): number {
  if (own) return own;
  const configured = Number(env.OUTPOST_RATE_LIMIT_PER_MINUTE);
  return Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_RATE_LIMIT_PER_MINUTE;
}
