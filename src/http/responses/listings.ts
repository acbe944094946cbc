// The tenant's listings of its tasks and sessions (src/tenants/directory.ts): GET /v1/tasks and GET /v1/sessions.

import { z } from "zod";
import { SESSION_STATUSES } from "../../sessions/session.ts";
import { TASK_STATUSES } from "../../tasks/task.ts";
import { WaitingForSchema } from "../../tasks/waiting-for.ts";
import { TaskId, Timestamp } from "./common.ts";

// ---- Listings (src/tenants/directory.ts) -------------------------------------------------------------------------

/** What a listing shows of each task or session: enough to pick one; its own URL has the rest. */
function summarySchema<const S extends readonly [string, ...string[]]>(statuses: S) {
  return z.strictObject({
    id: TaskId,
    agent: z.string(),
    status: z.enum(statuses),
    /**
     * What it waits for other than a person, as its own view's waiting_for shows it (a model call waiting out its
     * provider: `{kind: "provider", until, attempts, last_error}`); null otherwise. As of its last report, like status.
     */
    waiting_for: WaitingForSchema.nullable(),
    parent_task_id: TaskId.nullable(),
    tags: z.array(z.string()),
    created_at: Timestamp,
    /** When the status last changed. */
    updated_at: Timestamp,
    /** When the task ended or the session was closed; null before. */
    ended_at: Timestamp.nullable(),
    /** USD as of the last status change; null when a model it used has no price. */
    total_cost_usd: z.number().nonnegative().nullable(),
    links: z.strictObject({ self: z.url() }),
  });
}

export const TaskSummarySchema = summarySchema(TASK_STATUSES).extend({
  /** The workflow the task runs (POST /v1/workflows/:name/tasks); null for a task of one agent. */
  workflow: z.string().nullable(),
});
export type TaskSummary = z.infer<typeof TaskSummarySchema>;

/** GET /v1/tasks: one page, newest first; next_cursor continues it (null on the last page). */
export const TaskListSchema = z.strictObject({ tasks: z.array(TaskSummarySchema), next_cursor: z.string().nullable() });
export type TaskList = z.infer<typeof TaskListSchema>;

export const SessionSummarySchema = summarySchema(SESSION_STATUSES);
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** GET /v1/sessions: one page, newest first. */
export const SessionListSchema = z.strictObject({
  sessions: z.array(SessionSummarySchema),
  next_cursor: z.string().nullable(),
});
export type SessionList = z.infer<typeof SessionListSchema>;
