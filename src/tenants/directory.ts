// The directory of a tenant's tasks and sessions: one row per task or session, kept in the tenant's own Durable
// Object (durable-objects/tenant-object.ts), from which GET /v1/tasks and GET /v1/sessions list them newest first.
// Each task's object reports its row (src/task-host/directory-report.ts) when its status (or what it waits for)
// changes, at most a second after, and removes it when its retention runs out; a report carries the task's newest
// event number, so a late report never overwrites a newer one. The task's own object stays the truth: the directory only finds tasks.
// Its tables (directory_records, directory_tags) are in src/storage/tenant-migrations.ts.
import type { Env } from "../env.ts";
import type { ErrorInfo } from "../errors/error-info.ts";

/** The tenant's object (durable-objects/tenant-object.ts), which holds its directory. */
export function tenantStubFor(env: Pick<Env, "TENANTS">, tenant: string) {
  return env.TENANTS.get(env.TENANTS.idFromName(tenant));
}

/** What a directory row holds: a task or a session, as its listing shows it. */
export interface DirectoryEntry {
  id: string;
  kind: "task" | "session";
  agent: string;
  /** The workflow a task runs (POST /v1/workflows/:name/tasks); null for a task of one agent, and for a session. */
  workflow: string | null;
  /** The status as the task's or session's own view shows it. */
  status: string;
  /** What it waits for other than a person, as its own view shows it (src/tasks/waiting-for.ts); null for nothing. */
  waiting_for: DirectoryWaitingFor | null;
  parent_task_id: string | null;
  tags: string[];
  created_at: string;
  /** When the status last changed (the time of the task's newest event when it was reported). */
  updated_at: string;
  /** When the task ended or the session was closed; null before. */
  ended_at: string | null;
  /** The cost of its model calls (USD) as of its last status change; null when a model it used has no price. */
  total_cost_usd: number | null;
}

/**
 * A task's `waiting_for` (WaitingFor in src/tasks/waiting-for.ts, which the directory may not import: tasks/ sits
 * above tenants/). The listing's schema (src/http/responses/listings.ts) is the task view's own.
 */
export interface DirectoryWaitingFor {
  kind: "provider";
  until: string;
  attempts: number;
  last_error: ErrorInfo;
}

/** A report: the entry and the task's newest event number when it was made (reports only move forward). */
export interface DirectoryReport {
  entry: DirectoryEntry;
  version: number;
}

/** Where a page starts: after the entry with this creation time and id (the listing's order). */
export interface DirectoryCursor {
  created_at: string;
  id: string;
}

export interface DirectoryQuery {
  kind: DirectoryEntry["kind"];
  /** Any of these statuses; every status when empty. */
  statuses: readonly string[];
  agent?: string | undefined;
  workflow?: string | undefined;
  tag?: string | undefined;
  parent_task_id?: string | undefined;
  /** Created at or after this instant (ISO 8601). */
  created_after?: string | undefined;
  /** Created before this instant (ISO 8601). */
  created_before?: string | undefined;
  after?: DirectoryCursor;
  limit: number;
}

export interface DirectoryPage {
  entries: DirectoryEntry[];
  /** Where the next page starts; null on the last page. */
  next: DirectoryCursor | null;
}

interface EntryRow extends Record<string, SqlStorageValue> {
  id: string;
  kind: string;
  agent: string;
  workflow: string | null;
  status: string;
  waiting_for: string | null;
  parent_task_id: string | null;
  tags: string;
  created_at: string;
  updated_at: string;
  ended_at: string | null;
  total_cost_usd: number | null;
}

export class Directory {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** Stores a report unless the directory already holds a newer one for the same task. Safe to repeat. */
  record(report: DirectoryReport): void {
    const { entry, version } = report;
    this.sql.exec(
      `INSERT INTO directory_records (id, kind, agent, workflow, status, waiting_for, parent_task_id, tags, created_at,
        updated_at, ended_at, total_cost_usd, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, waiting_for = excluded.waiting_for,
        updated_at = excluded.updated_at, ended_at = excluded.ended_at, total_cost_usd = excluded.total_cost_usd,
        version = excluded.version
       WHERE excluded.version > directory_records.version`,
      entry.id,
      entry.kind,
      entry.agent,
      entry.workflow,
      entry.status,
      // A report from an object still on the code before the field has none: it waits for nothing the listing knows.
      entry.waiting_for ? JSON.stringify(entry.waiting_for) : null,
      entry.parent_task_id,
      JSON.stringify(entry.tags),
      entry.created_at,
      entry.updated_at,
      entry.ended_at,
      entry.total_cost_usd,
      version,
    );
    // A task's tags are fixed at its creation.
    for (const tag of entry.tags) {
      this.sql.exec("INSERT OR IGNORE INTO directory_tags (tag, id) VALUES (?, ?)", tag, entry.id);
    }
  }

  /** Removes a task that has expired. */
  forget(id: string): void {
    this.sql.exec("DELETE FROM directory_tags WHERE id = ?", id);
    this.sql.exec("DELETE FROM directory_records WHERE id = ?", id);
  }

  /** One page of the kind's entries that match, newest first (by creation, then id). */
  list(query: DirectoryQuery): DirectoryPage {
    const where = ["r.kind = ?"];
    const params: SqlStorageValue[] = [query.kind];
    if (query.statuses.length > 0) {
      where.push(`r.status IN (${query.statuses.map(() => "?").join(", ")})`);
      params.push(...query.statuses);
    }
    if (query.agent !== undefined) {
      where.push("r.agent = ?");
      params.push(query.agent);
    }
    if (query.workflow !== undefined) {
      where.push("r.workflow = ?");
      params.push(query.workflow);
    }
    if (query.parent_task_id !== undefined) {
      where.push("r.parent_task_id = ?");
      params.push(query.parent_task_id);
    }
    if (query.tag !== undefined) {
      where.push("EXISTS (SELECT 1 FROM directory_tags t WHERE t.tag = ? AND t.id = r.id)");
      params.push(query.tag);
    }
    if (query.created_after !== undefined) {
      where.push("r.created_at >= ?");
      params.push(query.created_after);
    }
    if (query.created_before !== undefined) {
      where.push("r.created_at < ?");
      params.push(query.created_before);
    }
    if (query.after !== undefined) {
      where.push("(r.created_at < ? OR (r.created_at = ? AND r.id < ?))");
      params.push(query.after.created_at, query.after.created_at, query.after.id);
    }
    const rows = this.sql
      .exec<EntryRow>(
        `SELECT r.id, r.kind, r.agent, r.workflow, r.status, r.waiting_for, r.parent_task_id, r.tags, r.created_at,
          r.updated_at, r.ended_at, r.total_cost_usd FROM directory_records r WHERE ${where.join(" AND ")}
         ORDER BY r.created_at DESC, r.id DESC LIMIT ?`,
        ...params,
        // One more than the page: whether a next page exists.
        query.limit + 1,
      )
      .toArray();
    return pageOf(rows.map(fromRow), query.limit);
  }
}

/**
 * A page of a listing read newest first with LIMIT `limit + 1` (one more than the page, to know whether a next page
 * exists): its first `limit` entries, and where the next page starts (null on the last page).
 */
export function pageOf<E extends DirectoryCursor>(
  rows: E[],
  limit: number,
): { entries: E[]; next: DirectoryCursor | null } {
  const entries = rows.slice(0, limit);
  const last = entries.at(-1);
  return { entries, next: rows.length > limit && last ? { created_at: last.created_at, id: last.id } : null };
}

function fromRow(row: EntryRow): DirectoryEntry {
  return {
    id: row.id,
    kind: row.kind === "session" ? "session" : "task",
    agent: row.agent,
    workflow: row.workflow,
    status: row.status,
    waiting_for: row.waiting_for === null ? null : (JSON.parse(row.waiting_for) as DirectoryWaitingFor),
    parent_task_id: row.parent_task_id,
    tags: JSON.parse(row.tags) as string[],
    created_at: row.created_at,
    updated_at: row.updated_at,
    ended_at: row.ended_at,
    total_cost_usd: row.total_cost_usd,
  };
}
