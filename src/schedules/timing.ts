// When a schedule is due: a cron expression read in a time zone (croner, minute resolution), or one instant (`at`);
// and what one alarm does with the due times that have passed (plan): one run for them, or none for those missed
// while the runtime was down, by the schedule's policy. Pure functions of the timing and the clock.
import { Cron } from "croner";
import type { RequestErrorCode } from "../errors/codes.ts";

/** What a schedule does with due times missed while the runtime was down: one run for all of them, or none. */
export const MISSED_POLICIES = ["run_once", "skip"] as const;
export type MissedPolicy = (typeof MISSED_POLICIES)[number];

/** Repeating on a cron expression in a time zone, or once at an instant (ms since the epoch). */
export type Timing = { cron: string; timezone: string } | { at: number };

/**
 * A due time is on time while the alarm runs within this of it; an older one was missed. A minute: an alarm is
 * delivered within about a second of its time, and a failed delivery's retries (from 2 s, doubling) stay inside it.
 */
export const ON_TIME_MS = 60_000;

/**
 * Due times one alarm counts at most: a per-minute schedule down for a month has 43,200, and counting them costs CPU
 * for a number nobody needs exactly. Past this the plan still runs (or skips) for the latest.
 */
export const MAX_COUNTED_DUE_TIMES = 1_000;

/** Why a timing is refused: the code, the field at fault and a message for people. */
export interface TimingProblem {
  code: Extract<
    RequestErrorCode,
    "invalid_cron" | "invalid_timezone" | "invalid_schedule_time" | "schedule_interval_too_short"
  >;
  field: "cron" | "timezone" | "at";
  message: string;
}

/** A cron job that never runs by itself (croner's own timer stays off): only its calendar is used. */
function cronOf(cron: string, timezone: string): Cron {
  // 5-part: minute resolution, as in crontab, LangGraph and cloudflare/agents; a seconds field is refused.
  return new Cron(cron, { timezone, mode: "5-part", paused: true });
}

/** The timing a request asks for, or why it is refused: a cron expression and time zone that parse, or a future `at`. */
export function parseTiming(
  request: { cron?: string | undefined; at?: string | undefined; timezone?: string | undefined },
  now: number,
): Timing | TimingProblem {
  if (request.at !== undefined) {
    // ISO 8601 with its offset (Z or ±hh:mm): an instant, read the same in every time zone.
    const at = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/.test(request.at)
      ? Date.parse(request.at)
      : Number.NaN;
    if (Number.isNaN(at)) {
      return {
        code: "invalid_schedule_time",
        field: "at",
        message: "at must be an ISO 8601 instant with its offset, e.g. 2026-12-01T09:00:00Z.",
      };
    }
    if (at <= now) {
      return { code: "invalid_schedule_time", field: "at", message: `at (${request.at}) is not in the future.` };
    }
    return { at };
  }
  const timezone = request.timezone ?? "UTC";
  try {
    // The runtime's own list of IANA zones: a name it does not know is refused here, not at the first fire.
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    return {
      code: "invalid_timezone",
      field: "timezone",
      message: `"${timezone}" is not an IANA time zone (e.g. Europe/Paris, America/New_York, UTC).`,
    };
  }
  const cron = request.cron ?? "";
  let next: Date | null;
  try {
    next = cronOf(cron, timezone).nextRun(new Date(now));
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, "") : "it does not parse";
    return {
      code: "invalid_cron",
      field: "cron",
      message: `Not a 5-field cron expression (minute hour day-of-month month day-of-week): ${reason}`,
    };
  }
  if (!next) return { code: "invalid_cron", field: "cron", message: `"${cron}" never matches a date.` };
  return { cron, timezone };
}

export function isTimingProblem(value: Timing | TimingProblem): value is TimingProblem {
  return "code" in value;
}

/** The first due time after `after` (ms), or null: an `at` schedule has one, a cron schedule one after another. */
export function nextDue(timing: Timing, after: number): number | null {
  if ("at" in timing) return timing.at > after ? timing.at : null;
  return cronOf(timing.cron, timing.timezone).nextRun(new Date(after))?.getTime() ?? null;
}

/** What an alarm does with the due times that have passed. */
export interface FirePlan {
  /** The due time a run starts for (the latest passed), or null when the policy skips them all. */
  run: { dueAt: number; dueTimes: number } | null;
  /** Due times skipped (the latest of them, and how many), or null. */
  skipped: { dueAt: number; dueTimes: number } | null;
  /** The next due time after now, or null: an `at` schedule is then finished. */
  next: number | null;
}

/**
 * The plan for the due times from `due` (the schedule's next due time) up to `now`, or null when none has come.
 * `run_once` starts one run for all of them, named by the latest; `skip` starts one only if the latest is on time
 * (ON_TIME_MS), and skips the rest.
 */
export function plan(timing: Timing, policy: MissedPolicy, due: number, now: number): FirePlan | null {
  if (due > now) return null;
  let latest = due;
  let count = 1;
  for (let next = nextDue(timing, latest); next !== null && next <= now; next = nextDue(timing, latest)) {
    latest = next;
    count++;
    if (count === MAX_COUNTED_DUE_TIMES && "cron" in timing) {
      // The latest due time at or before now, without walking to it.
      const last = cronOf(timing.cron, timing.timezone).previousRuns(1, new Date(now + 1))[0];
      if (last && last.getTime() > latest) latest = last.getTime();
      break;
    }
  }
  const next = nextDue(timing, now);
  if (policy === "run_once") return { run: { dueAt: latest, dueTimes: count }, skipped: null, next };
  if (now - latest <= ON_TIME_MS) {
    const skipped = count > 1 ? { dueAt: previousDue(timing, latest), dueTimes: count - 1 } : null;
    return { run: { dueAt: latest, dueTimes: 1 }, skipped, next };
  }
  return { run: null, skipped: { dueAt: latest, dueTimes: count }, next };
}

/** The due time before `dueAt` (a cron schedule's; an `at` schedule has only one). */
function previousDue(timing: Timing, dueAt: number): number {
  if ("at" in timing) return dueAt;
  return cronOf(timing.cron, timing.timezone).previousRuns(1, new Date(dueAt))[0]?.getTime() ?? dueAt;
}

/** Allowed days a cron's day fields are searched for two in a row before none are taken to follow one another. */
const DAYS_SEARCHED = 60;
const DAY_MS = 86_400_000;

/**
 * How close together the due times of `cron` come, if closer than `floorMs`: the shortest gap found, else null.
 * Read on the wall clock (a change of daylight saving time may bring two due times an hour closer, once). The times
 * of one day (the minute and hour fields) are walked in UTC, where croner is quick, stopping at the first gap under
 * the floor; the gap from a day's last time to the next day's first counts only when two allowed days can follow one
 * another. Minute resolution: with a floor of a minute or less, nothing is refused.
 */
export function gapBelow(cron: string, floorMs: number): number | null {
  if (floorMs <= 60_000) return null;
  // A nickname (@daily) as its five fields.
  const fields = (cronOf(cron, "UTC").getPattern() ?? cron).trim().split(/\s+/);
  const [minute = "*", hour = "*", dom = "*", month = "*", dow = "*"] = fields;
  const times = new Cron(`${minute} ${hour} * * *`, { mode: "5-part", paused: true, utcOffset: 0 });
  const dayStart = Date.UTC(2001, 0, 1);
  let at = times.nextRun(new Date(dayStart - 1))?.getTime() ?? dayStart;
  for (;;) {
    const next = times.nextRun(new Date(at))?.getTime();
    if (next === undefined) return null;
    const gap = next - at;
    if (next >= dayStart + DAY_MS) return gap < floorMs && daysFollowOneAnother(dom, month, dow) ? gap : null;
    if (gap < floorMs) return gap;
    at = next;
  }
}

/** Whether two days the day fields allow come one after the other (searched over the next DAYS_SEARCHED allowed days). */
function daysFollowOneAnother(dom: string, month: string, dow: string): boolean {
  const days = new Cron(`0 0 ${dom} ${month} ${dow}`, { mode: "5-part", paused: true, utcOffset: 0 });
  let previous: number | null = null;
  for (const day of days.nextRuns(DAYS_SEARCHED, new Date())) {
    if (previous !== null && day.getTime() - previous === DAY_MS) return true;
    previous = day.getTime();
  }
  return false;
}
