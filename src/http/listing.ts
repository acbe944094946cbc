// GET /v1/tasks, GET /v1/sessions, GET /v1/schedules and GET /v1/agents/:name/evaluations: a page of the tenant's
// tasks, sessions, schedules or an agent's evaluations from its directory (src/tenants/directory.ts,
// schedule-directory.ts, evaluation-directory.ts), newest first, filtered by the query string and continued with an
// opaque cursor (opaqueCursor and readCursor, which the other paged listings use too).
import type { Context } from "hono";
import { z } from "zod";
import { ApiError } from "../errors.ts";
import { type DirectoryCursor, type DirectoryEntry, type DirectoryQuery, tenantStubFor } from "../tenants/directory.ts";
import type { AppEnv } from "./app-env.ts";
import type {
  EvaluationList,
  ScheduleList,
  ScheduleSummary,
  SessionList,
  SessionSummary,
  TaskList,
  TaskSummary,
} from "./responses.ts";
import { ScheduleListQuery, SessionListQuery, TaskListQuery } from "./schemas.ts";
import { parseWith } from "./validation.ts";

/** A page's continuation as the client gets it: base64url JSON of the last entry's place, opaque to clients. */
export function opaqueCursor(place: unknown): string {
  return btoa(JSON.stringify(place)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** The place a cursor from opaqueCursor holds, checked by `schema`; anything else is a 400 naming `cursor`. */
export function readCursor<S extends z.ZodType>(text: string, schema: S): z.output<S> {
  let value: unknown;
  try {
    value = JSON.parse(atob(text.replaceAll("-", "+").replaceAll("_", "/")));
  } catch {
    value = undefined;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new ApiError(
      "validation_failed",
      "Invalid cursor: pass next_cursor from the previous page as it is.",
      "cursor",
    );
  }
  return parsed.data;
}

const CursorSchema = z.tuple([z.iso.datetime(), z.uuid()]);

/** A directory's cursor is the last entry's place, [created_at, id]. */
function encodeCursor(cursor: DirectoryCursor): string {
  return opaqueCursor([cursor.created_at, cursor.id]);
}

function decodeCursor(text: string): DirectoryCursor {
  const [created_at, id] = readCursor(text, CursorSchema);
  return { created_at, id };
}

/**
 * The query string as one object: a repeated `status` (or one with commas) is a list; any other parameter given twice
 * is refused rather than one of its values silently dropped.
 */
export function queryObject(c: Context<AppEnv>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (name === "status") out[name] = values.flatMap((v) => v.split(","));
    else if (values.length > 1) {
      throw new ApiError("validation_failed", `Invalid ${name}: given more than once.`, name);
    } else if (values[0] !== undefined) out[name] = values[0];
  }
  return out;
}

function summary<E extends Pick<DirectoryEntry, "id" | "kind">>(c: Context<AppEnv>, path: string, entry: E) {
  const { kind: _kind, ...fields } = entry;
  return { ...fields, links: { self: `${new URL(c.req.url).origin}/v1/${path}/${entry.id}` } };
}

/** One page of the tenant's tasks or sessions that match the query. */
async function page(
  c: Context<AppEnv>,
  kind: DirectoryEntry["kind"],
  query: { cursor?: string | undefined; status?: string[] | undefined } & Omit<
    DirectoryQuery,
    "kind" | "statuses" | "after"
  >,
): Promise<{ entries: DirectoryEntry[]; next_cursor: string | null }> {
  const { cursor, status, ...filters } = query;
  const found = await tenantStubFor(c.env, c.get("tenant")).list({
    ...filters,
    kind,
    statuses: status ?? [],
    ...(cursor === undefined ? {} : { after: decodeCursor(cursor) }),
  });
  return { entries: found.entries, next_cursor: found.next ? encodeCursor(found.next) : null };
}

/** GET /v1/tasks. */
export async function listTasks(c: Context<AppEnv>): Promise<TaskList> {
  const { entries, next_cursor } = await page(c, "task", parseWith(TaskListQuery, queryObject(c), "(query)"));
  return { tasks: entries.map((entry) => summary(c, "tasks", entry) as TaskSummary), next_cursor };
}

/**
 * The ids of a page of the tenant's tasks of one agent, newest first, by the directory's filters: A2A's ListTasks
 * (src/http/routes/a2a-request.ts), whose cursor is this listing's.
 */
export async function taskIdPage(
  c: Context<AppEnv>,
  query: { agent: string; tag?: string | undefined; statuses: string[]; limit: number; cursor?: string | undefined },
): Promise<{ ids: string[]; nextCursor: string | null }> {
  const { statuses, ...rest } = query;
  const { entries, next_cursor } = await page(c, "task", {
    ...rest,
    status: statuses.length > 0 ? statuses : undefined,
  });
  return { ids: entries.map((entry) => entry.id), nextCursor: next_cursor };
}

/** GET /v1/sessions. */
export async function listSessions(c: Context<AppEnv>): Promise<SessionList> {
  const { entries, next_cursor } = await page(c, "session", parseWith(SessionListQuery, queryObject(c), "(query)"));
  // A session runs no workflow: its summary has no such field.
  const sessions = entries.map(({ workflow: _none, ...entry }) => summary(c, "sessions", entry) as SessionSummary);
  return { sessions, next_cursor };
}

/** GET /v1/schedules. */
export async function listSchedules(c: Context<AppEnv>): Promise<ScheduleList> {
  const { cursor, status, ...filters } = parseWith(ScheduleListQuery, queryObject(c), "(query)");
  const found = await tenantStubFor(c.env, c.get("tenant")).listSchedules({
    ...filters,
    statuses: status ?? [],
    ...(cursor === undefined ? {} : { after: decodeCursor(cursor) }),
  });
  const origin = new URL(c.req.url).origin;
  return {
    schedules: found.entries.map(
      (entry) => ({ ...entry, links: { self: `${origin}/v1/schedules/${entry.id}` } }) as ScheduleSummary,
    ),
    next_cursor: found.next ? encodeCursor(found.next) : null,
  };
}

/** One page of an agent's evaluations, newest first. */
export async function listEvaluations(
  c: Context<AppEnv>,
  agent: string,
  query: { limit: number; cursor?: string | undefined },
): Promise<EvaluationList> {
  const found = await tenantStubFor(c.env, c.get("tenant")).listEvaluations({
    agent,
    limit: query.limit,
    ...(query.cursor === undefined ? {} : { after: decodeCursor(query.cursor) }),
  });
  const origin = new URL(c.req.url).origin;
  return {
    evaluations: found.entries.map((entry) => ({
      ...entry,
      status: entry.status as EvaluationList["evaluations"][number]["status"],
      links: { self: `${origin}/v1/evaluations/${entry.id}` },
    })),
    next_cursor: found.next ? encodeCursor(found.next) : null,
  };
}
