// Schedules (src/schedules/): the resource, its receipt and the listing.

import { z } from "zod";
import { SCHEDULE_STATUSES, ScheduleViewSchema } from "../../schedules/schedule.ts";
import { TaskId, Timestamp } from "./common.ts";

// ---- Schedules (src/schedules/) ----------------------------------------------------------------------------------

export const ScheduleLinksSchema = z.strictObject({
  self: z.url(),
  pause: z.url(),
  resume: z.url(),
  /** The tenant's tasks (each run is one); a run's trigger names the schedule. */
  tasks: z.url(),
});
export type ScheduleLinks = z.infer<typeof ScheduleLinksSchema>;

/** A schedule as GET /v1/schedules/:id answers (and POST, pause and resume, to a key that may read). */
export const ScheduleResourceSchema = ScheduleViewSchema.unwrap().extend({ links: ScheduleLinksSchema });
export type ScheduleResource = z.infer<typeof ScheduleResourceSchema>;

/**
 * What POST /v1/schedules, pause and resume answer a key that may act but not read: when it runs, never what (the
 * input, metadata, files and callbacks are the runs' content).
 */
export const ScheduleReceiptSchema = z.strictObject({
  id: TaskId,
  agent: z.string(),
  status: z.enum(SCHEDULE_STATUSES),
  cron: z.string().nullable(),
  timezone: z.string().nullable(),
  at: Timestamp.nullable(),
  next_run_at: Timestamp.nullable(),
  links: ScheduleLinksSchema,
});
export type ScheduleReceipt = z.infer<typeof ScheduleReceiptSchema>;

export const ScheduleResponseSchema = z.union([ScheduleResourceSchema, ScheduleReceiptSchema]);
export type ScheduleResponse = z.infer<typeof ScheduleResponseSchema>;

/** What GET /v1/schedules shows of each schedule (src/tenants/schedule-directory.ts); its own URL has the rest. */
export const ScheduleSummarySchema = ScheduleReceiptSchema.omit({ links: true }).extend({
  last_fired_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  links: z.strictObject({ self: z.url() }),
});
export type ScheduleSummary = z.infer<typeof ScheduleSummarySchema>;

/** GET /v1/schedules: one page, newest first; next_cursor continues it (null on the last page). */
export const ScheduleListSchema = z.strictObject({
  schedules: z.array(ScheduleSummarySchema),
  next_cursor: z.string().nullable(),
});
export type ScheduleList = z.infer<typeof ScheduleListSchema>;
