// A key's task-creation rate, for requests and for the work stored under a key that runs later (a schedule's fires,
// an evaluation's runs): the key as OUTPOST_API_KEYS lists it now, the tasks a minute it may create (its own
// rate_limit_per_minute, else OUTPOST_RATE_LIMIT_PER_MINUTE, else 60), and one token taken from its bucket, the
// RateLimiter object `key:<key id>` (durable-objects/rate-limiter.ts). Stored work holds the key's id, never the key:
// a key listed without an id is known by the id its hash gives it (src/tenants/api-keys.ts), and a key the operator
// removed is no longer found, which stops the work it left behind.
import type { Env } from "../env.ts";
import { type ApiKey, hasScope, loadKeyRing } from "../tenants/api-keys.ts";
import { keyBucket } from "./principal.ts";

/** Tasks a key may create per minute unless it or OUTPOST_RATE_LIMIT_PER_MINUTE says otherwise. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 60;

/** The tasks a minute a key may create: its own limit (`own`), else the deployment's. */
export function creationRatePerMinute(env: Pick<Env, "OUTPOST_RATE_LIMIT_PER_MINUTE">, own: number | null): number {
  if (own) return own;
  const configured = Number(env.OUTPOST_RATE_LIMIT_PER_MINUTE);
  return Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_RATE_LIMIT_PER_MINUTE;
}

/**
 * The key `keyId` of `tenant` as OUTPOST_API_KEYS lists it now, if it may still start tasks there; null when it is
 * gone, listed for another tenant, or no longer has the run scope. A broken OUTPOST_API_KEYS throws its ConfigError.
 */
export async function currentKey(
  env: Pick<Env, "OUTPOST_API_KEYS">,
  tenant: string,
  keyId: string,
): Promise<ApiKey | null> {
  const ring = await loadKeyRing(env.OUTPOST_API_KEYS);
  const key = ring.keys.find((k) => k.id === keyId);
  return key && key.tenant === tenant && hasScope(key.scopes, "run") ? key : null;
}

/** One token taken (or not) from a key's creation bucket. */
export interface CreationToken {
  allowed: boolean;
  /** The key's tasks a minute. */
  perMinute: number;
  remaining: number;
  /** Seconds until a token is there (0 when allowed). */
  retryAfterSeconds: number;
}

/** Takes one token from the creation bucket of `key` (a request's, or the key stored work acts as). */
export async function takeCreationToken(
  env: Pick<Env, "RATE_LIMITER" | "OUTPOST_RATE_LIMIT_PER_MINUTE">,
  key: Pick<ApiKey, "id" | "rateLimitPerMinute">,
): Promise<CreationToken> {
  const perMinute = creationRatePerMinute(env, key.rateLimitPerMinute);
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(keyBucket(key.id)));
  const decision = await limiter.take(perMinute);
  return { perMinute, ...decision };
}
