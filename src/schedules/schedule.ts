// A schedule (POST /v1/schedules) as its object keeps it and as the API shows it: the agent and the task options each
// run gets, its timing, its policy for missed fires, its status, and its recent fires. A wire type like the task's
// view (src/tasks/task.ts): a zod schema built on first use, its type inferred.
import { z } from "zod";
import type { Env } from "../env.ts";
import { REDACTION_MODES } from "../events/redaction.ts";
import type { TaskInit } from "../tasks/task.ts";
import { TaskLimitsSchema, TaskMetadataSchema, TaskWebhookSchema } from "../tasks/task.ts";
import { derivedTaskId } from "../tasks/task-ids.ts";
import { MISSED_POLICIES, type MissedPolicy, type Timing } from "./timing.ts";

/**
 * `finished`: an `at` schedule after its one fire. `revoked`: stopped at a due time because the key it fires as is no
 * longer in OUTPOST_API_KEYS (or is another tenant's, or may no longer run tasks), or because it was made before
 * schedules kept their key; that due time's fire is recorded `failed`, its error saying which (revokedReason,
 * src/schedules/schedule-limits.ts). Resuming it with a key of the tenant makes it fire as that key. A deleted
 * schedule is gone (404).
 */
export const SCHEDULE_STATUSES = ["active", "paused", "finished", "revoked"] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];

/**
 * `pending`: recorded, its task not started yet (the next alarm starts it, under the same id). `rate_limited`: not run,
 * because the key the schedule fires as had no room left in its creation rate.
 */
export const FIRE_OUTCOMES = ["pending", "started", "skipped", "rate_limited", "failed"] as const;
export type FireOutcome = (typeof FIRE_OUTCOMES)[number];

/** The task each fire starts: a TaskInit as a task creation builds it, without the id and trigger the fire gives it. */
export type TaskTemplate = Omit<TaskInit, "id" | "tenant" | "fingerprint" | "trigger">;

/** What creating a schedule gives its object. */
export interface NewSchedule {
  id: string;
  tenant: string;
  /** For a schedule created under an Idempotency-Key: the request's fingerprint (a repeat replays, another body is refused). */
  fingerprint: string | null;
  /** The id of the key that creates it: each fire takes a token of its creation rate, and its removal stops it. */
  keyId: string;
  timing: Timing;
  missed: MissedPolicy;
  template: TaskTemplate;
}

/** One due time that came: the run it started (or why none), newest first in the view. */
export const ScheduleFireSchema = z.lazy(() =>
  z.strictObject({
    /** The due time (with missed fires run once or skipped, the latest of them). */
    due_at: z.iso.datetime(),
    /** How many due times this fire stands for (more than 1 for missed ones run once or skipped together). */
    due_times: z.number().int().positive(),
    outcome: z.enum(FIRE_OUTCOMES),
    /** The task the fire starts (derived from the schedule's id and the due time); null when skipped or rate limited. */
    task_id: z.uuid({ version: "v4" }).nullable(),
    /** When the fire was recorded, before its task was started. */
    recorded_at: z.iso.datetime(),
    /**
     * Why the task could not be started (`failed`; for the due time a schedule was revoked at, why it was and how to
     * resume it), or the last attempt's failure (`pending`), or why it was not run (`rate_limited`); else null.
     */
    error: z.string().nullable(),
  }),
);
export type ScheduleFire = z.infer<typeof ScheduleFireSchema>;

/** The schedule as its object returns it: what GET /v1/schedules/:id shows, without its links. */
export const ScheduleViewSchema = z.lazy(() =>
  z.strictObject({
    id: z.uuid({ version: "v4" }),
    agent: z.string(),
    /** The version of a tenant's own agent every run uses (the one current when the schedule was created). */
    agent_version: z.number().int().positive().nullable(),
    /** The input of every run. */
    input: z.string(),
    /** A 5-field cron expression, read in `timezone`; null for an `at` schedule. */
    cron: z.string().nullable(),
    /** The IANA time zone the cron expression is read in; null for an `at` schedule. */
    timezone: z.string().nullable(),
    /** The one instant an `at` schedule fires; null for a cron schedule. */
    at: z.iso.datetime().nullable(),
    missed: z.enum(MISSED_POLICIES),
    status: z.enum(SCHEDULE_STATUSES),
    /**
     * The API key the schedule fires as (its id, never the key): the key that created it or last resumed it. Each fire
     * takes a token of its creation rate; once it is gone, the schedule stops (`revoked`). Null for a schedule created
     * before schedules kept their key: it stops at its next due time, until resumed.
     */
    key_id: z.string().nullable(),
    /** The next due time; null while paused, once finished and once revoked. */
    next_run_at: z.iso.datetime().nullable(),
    /** The latest due time that came (run, pending or skipped); null before the first. */
    last_fired_at: z.iso.datetime().nullable(),
    /** The latest fires, newest first (at most 20). */
    recent_fires: z.array(ScheduleFireSchema),
    // What every run gets, as a task creation takes it.
    metadata: TaskMetadataSchema,
    tags: z.array(z.string()),
    limits: TaskLimitsSchema,
    retention_days: z.number().int().positive(),
    redaction_mode: z.enum(REDACTION_MODES),
    dry_run: z.boolean(),
    webhook: TaskWebhookSchema.nullable(),
    /** The workspace paths every run is seeded with. */
    files: z.array(z.string()),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  }),
);
export type ScheduleView = z.infer<typeof ScheduleViewSchema>;

/**
 * The id of the task a schedule starts for a due time: a version 4 UUID derived from the tenant, the schedule and the
 * due time, so that a second attempt at the same fire reaches the same task's object and finds the task there.
 */
export function fireTaskId(tenant: string, scheduleId: string, dueAt: number): Promise<string> {
  return derivedTaskId("schedule", tenant, scheduleId, new Date(dueAt).toISOString());
}

/** The object name of a schedule: its tenant and id, so another tenant's request reaches an empty object (404). */
export function scheduleObjectName(tenant: string, scheduleId: string): string {
  return `${tenant}/${scheduleId}`;
}

/** The schedule's object (durable-objects/schedule-object.ts). */
export function scheduleStubFor(env: Pick<Env, "SCHEDULES">, tenant: string, scheduleId: string) {
  return env.SCHEDULES.get(env.SCHEDULES.idFromName(scheduleObjectName(tenant, scheduleId)));
}
