// Work stored under a key and run later, a schedule's fire and an evaluation's run, acts as that key each time it
// runs: the key is read again from OUTPOST_API_KEYS (stored work holds its id, never the key), must still be listed for
// the tenant and have the `run` scope, and takes a token of its creation rate like a request of the key would. A key
// the operator removed, moved to another tenant or stripped of `run` revokes the work it left behind. What no room
// means is each way's own: a schedule's fire is skipped and recorded rate_limited, an evaluation's run waits.
import type { Env } from "../env.ts";
import { hasScope, loadKeyRing } from "../tenants/api-keys.ts";
import { type Adapter, keyPrincipal, type Principal } from "./principal.ts";
import { takeCreationToken } from "./rate.ts";

type StoredWorkEnv = Pick<Env, "OUTPOST_API_KEYS" | "RATE_LIMITER" | "OUTPOST_RATE_LIMIT_PER_MINUTE">;

/** The key stored work runs as, read now: its principal, `revoked` and why, or `broken` (OUTPOST_API_KEYS unreadable). */
export type StoredPrincipal =
  | { kind: "found"; principal: Principal }
  | { kind: "revoked"; why: string }
  | { kind: "broken" };

/** The principal of the key `keyId` of `tenant` as OUTPOST_API_KEYS lists it now, for work run through `adapter`. */
export async function storedPrincipal(
  env: StoredWorkEnv,
  tenant: string,
  keyId: string,
  adapter: Extract<Adapter, "schedule" | "evaluation">,
): Promise<StoredPrincipal> {
  let keys: Awaited<ReturnType<typeof loadKeyRing>>["keys"];
  try {
    keys = (await loadKeyRing(env.OUTPOST_API_KEYS)).keys;
  } catch (error) {
    // Every request of the deployment is refused too; the operator's logs say why (never the keys).
    console.error(`${adapter}: OUTPOST_API_KEYS is broken:`, error instanceof Error ? error.message : "");
    return { kind: "broken" };
  }
  const key = keys.find((k) => k.id === keyId);
  if (!key || key.tenant !== tenant) return { kind: "revoked", why: `the API key ${keyId} is no longer listed` };
  if (!hasScope(key.scopes, "run")) {
    return { kind: "revoked", why: `the API key ${keyId} no longer has the run scope` };
  }
  return { kind: "found", principal: keyPrincipal(env, key, adapter) };
}

/**
 * What a schedule's due time finds: `cleared` (its run, if any, took its token), `revoked` (the key is gone: the
 * schedule stops), or `refused` (no run: the fire is recorded with this outcome and why).
 */
export type FireClearance =
  | { kind: "cleared" }
  | { kind: "revoked"; why: string }
  | { kind: "refused"; outcome: "rate_limited" | "failed"; why: string };

/**
 * Clears a fire of a schedule of `tenant` that fires as `keyId` (null: one made before schedules kept their key,
 * which is revoked until a key resumes it); a fire that starts a run (`runs`) takes a token of the key's rate.
 */
export async function clearFire(
  env: StoredWorkEnv,
  tenant: string,
  keyId: string | null,
  runs: boolean,
): Promise<FireClearance> {
  if (keyId === null) {
    return { kind: "revoked", why: "the schedule was made before schedules kept their key" };
  }
  const found = await storedPrincipal(env, tenant, keyId, "schedule");
  if (found.kind === "broken") {
    const why = "The API keys (OUTPOST_API_KEYS) are misconfigured, so this fire could not be authorized.";
    return { kind: "refused", outcome: "failed", why };
  }
  if (found.kind === "revoked") return found;
  if (!runs) return { kind: "cleared" };
  const token = await takeCreationToken(env, found.principal);
  if (token.allowed) return { kind: "cleared" };
  return {
    kind: "refused",
    outcome: "rate_limited",
    why: `The API key ${keyId} may create ${token.perMinute} tasks a minute and had no room left: this fire was skipped.`,
  };
}

/** How long an evaluation's run waits before trying again when OUTPOST_API_KEYS cannot be read. */
const BROKEN_KEYS_RETRY_MS = 60_000;

/** `cleared`: the token is taken; `wait`: no room until `until` (ms); `revoked`: the key is gone, and why. */
export type RunClearance = { kind: "cleared" } | { kind: "wait"; until: number } | { kind: "revoked"; why: string };

/** Clears one run of the evaluation `keyId` (of `tenant`) started; null or absent: one made before keys were kept. */
export async function clearEvaluationRun(
  env: StoredWorkEnv,
  tenant: string,
  keyId: string | null | undefined,
): Promise<RunClearance> {
  if (keyId === null || keyId === undefined) return { kind: "cleared" };
  const found = await storedPrincipal(env, tenant, keyId, "evaluation");
  if (found.kind === "broken") return { kind: "wait", until: Date.now() + BROKEN_KEYS_RETRY_MS };
  if (found.kind === "revoked") {
    return { kind: "revoked", why: `the API key that started the evaluation (${keyId}) is no longer listed` };
  }
  const token = await takeCreationToken(env, found.principal);
  if (token.allowed) return { kind: "cleared" };
  return { kind: "wait", until: Date.now() + token.retryAfterSeconds * 1000 };
}
