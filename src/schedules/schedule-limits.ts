// What a tenant's schedules may cost (issue 36, stored work): how many schedules that may fire a tenant holds
// (OUTPOST_MAX_SCHEDULES_PER_TENANT), how close together a cron schedule's due times may come
// (OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS), each an operator's setting with a default; and what clears a fire: the key
// the schedule fires as, still listed for its tenant with the run scope, and a token of that key's creation rate.
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import { currentKey, takeCreationToken } from "../tasks/creation-rate.ts";
import { gapBelow, type Timing, type TimingProblem } from "./timing.ts";

/** Schedules that may fire (active, paused or revoked) a tenant holds, unless OUTPOST_MAX_SCHEDULES_PER_TENANT says. */
export const DEFAULT_MAX_SCHEDULES_PER_TENANT = 100;
/** The least time between two due times of a cron schedule unless OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS says: a minute. */
export const DEFAULT_SCHEDULE_MIN_INTERVAL_SECONDS = 60;

/** A setting that is a positive integer, else its default (as OUTPOST_RATE_LIMIT_PER_MINUTE is read). */
function positiveInteger(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw !== undefined && raw.trim() !== "" && Number.isInteger(value) && value > 0 ? value : fallback;
}

export function maxSchedulesPerTenant(env: Pick<Env, "OUTPOST_MAX_SCHEDULES_PER_TENANT">): number {
  return positiveInteger(env.OUTPOST_MAX_SCHEDULES_PER_TENANT, DEFAULT_MAX_SCHEDULES_PER_TENANT);
}

export function scheduleMinIntervalSeconds(env: Pick<Env, "OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS">): number {
  return positiveInteger(env.OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS, DEFAULT_SCHEDULE_MIN_INTERVAL_SECONDS);
}

/** A cron timing whose due times come closer than the deployment's floor, as the refusal naming `cron`; else null. */
export function intervalProblem(
  env: Pick<Env, "OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS">,
  timing: Timing,
): TimingProblem | null {
  if (!("cron" in timing)) return null;
  const floor = scheduleMinIntervalSeconds(env);
  const gap = gapBelow(timing.cron, floor * 1000);
  if (gap === null) return null;
  return {
    code: "schedule_interval_too_short",
    field: "cron",
    message: `"${timing.cron}" fires twice within ${gap / 1000} s; this deployment's floor is ${floor} s between fires (OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS).`,
  };
}

/** 422 schedule_limit_reached when the tenant already holds as many schedules that may fire as it may. */
export function requireScheduleRoom(env: Pick<Env, "OUTPOST_MAX_SCHEDULES_PER_TENANT">, held: number): void {
  const max = maxSchedulesPerTenant(env);
  if (held < max) return;
  throw new ApiError(
    "schedule_limit_reached",
    `This tenant has ${held} schedules that may fire, the most OUTPOST_MAX_SCHEDULES_PER_TENANT allows; delete one first.`,
  );
}

/**
 * What a due time finds: `cleared` (its run, if any, took its token), `revoked` (the key is gone: the schedule
 * stops), or `refused` (no run: the fire is recorded with this outcome and why).
 */
export type FireClearance =
  | { kind: "cleared" }
  | { kind: "revoked" }
  | { kind: "refused"; outcome: "rate_limited" | "failed"; why: string };

/**
 * Clears a fire of the schedule of `tenant` that fires as `keyId`: the key must still be listed for the tenant with
 * the run scope (a schedule without a key, made before schedules kept one, is revoked too); a fire that runs (`runs`)
 * takes a token of its creation rate, and one with no room is refused `rate_limited`.
 */
export async function fireClearance(
  env: Pick<Env, "OUTPOST_API_KEYS" | "RATE_LIMITER" | "OUTPOST_RATE_LIMIT_PER_MINUTE">,
  tenant: string,
  keyId: string | null,
  runs: boolean,
): Promise<FireClearance> {
  if (keyId === null) return { kind: "revoked" };
  let key: Awaited<ReturnType<typeof currentKey>>;
  try {
    key = await currentKey(env, tenant, keyId);
  } catch (error) {
    // Every request of the deployment is refused too; the operator's logs say why (never the keys).
    console.error("schedule fire: OUTPOST_API_KEYS is broken:", error instanceof Error ? error.message : "");
    const why = "The API keys (OUTPOST_API_KEYS) are misconfigured, so this fire could not be authorized.";
    return { kind: "refused", outcome: "failed", why };
  }
  if (!key) return { kind: "revoked" };
  if (!runs) return { kind: "cleared" };
  const token = await takeCreationToken(env, key);
  if (token.allowed) return { kind: "cleared" };
  return {
    kind: "refused",
    outcome: "rate_limited",
    why: `The API key ${key.id} may create ${token.perMinute} tasks a minute and had no room left: this fire was skipped.`,
  };
}
