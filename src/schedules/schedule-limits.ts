// What a tenant's schedules may cost (issue 36, stored work): how many schedules that may fire a tenant holds
// (OUTPOST_MAX_SCHEDULES_PER_TENANT), how close together a cron schedule's due times may come
// (OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS), each an operator's setting with a default; and why a schedule stopped
// revoked. What clears a fire (the key it fires as, read again, and a token of its rate) is the command of
// src/commands/stored-work.ts.
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
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
 * Why a schedule stopped `revoked` at a due time, as the fire recorded for it says (its `error`): the cause (`why`, the
 * key's; for a schedule without a key, that it was made before schedules kept theirs) and the way back, a resume,
 * after which it fires as the key that resumed it.
 */
export function revokedReason(scheduleId: string, keyId: string | null, why: string): string {
  const cause = keyId === null ? "the schedule was made before schedules kept their key" : why;
  return `Revoked: ${cause}; resume it with POST /v1/schedules/${scheduleId}/resume to fire as your key.`;
}
