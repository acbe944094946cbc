// The directory of a tenant's schedules: one row per schedule, kept in the tenant's own Durable Object
// (durable-objects/tenant-object.ts), from which GET /v1/schedules lists them newest first. Each schedule's object
// reports its row when it changes (created, paused, resumed, fired, finished) and removes it when deleted; a report
// carries the schedule's change count, so a late report never overwrites a newer one. The schedule's own object
// stays the truth. Its table (directory_schedules) is in src/storage/tenant-migrations.ts.
import { type DirectoryCursor, pageOf } from "./directory.ts";

/** A schedule as its listing shows it. */
export interface ScheduleEntry {
  id: string;
  agent: string;
  /** active, paused, finished or revoked (src/schedules/schedule.ts SCHEDULE_STATUSES). */
  status: string;
  cron: string | null;
  timezone: string | null;
  at: string | null;
  next_run_at: string | null;
  last_fired_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ScheduleQuery {
  /** Any of these statuses; every status when empty. */
  statuses: readonly string[];
  agent?: string | undefined;
  after?: DirectoryCursor;
  limit: number;
}

export interface SchedulePage {
  entries: ScheduleEntry[];
  next: DirectoryCursor | null;
}

type ScheduleRow = ScheduleEntry & Record<string, SqlStorageValue>;

export class ScheduleDirectory {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** Stores a report unless the directory holds a newer one for the same schedule. Safe to repeat. */
  record(entry: ScheduleEntry, version: number): void {
    this.sql.exec(
      `INSERT INTO directory_schedules (id, agent, status, cron, timezone, at, next_run_at, last_fired_at, created_at,
        updated_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, next_run_at = excluded.next_run_at,
        last_fired_at = excluded.last_fired_at, updated_at = excluded.updated_at, version = excluded.version
       WHERE excluded.version > directory_schedules.version`,
      entry.id,
      entry.agent,
      entry.status,
      entry.cron,
      entry.timezone,
      entry.at,
      entry.next_run_at,
      entry.last_fired_at,
      entry.created_at,
      entry.updated_at,
      version,
    );
  }

  /**
   * The tenant's schedules that may fire (active, paused, or revoked until resumed), `except` one (a creation repeated
   * under its Idempotency-Key is not one more): what OUTPOST_MAX_SCHEDULES_PER_TENANT bounds.
   */
  countThatMayFire(except: string): number {
    return this.sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM directory_schedules WHERE status IN ('active', 'paused', 'revoked') AND id != ?",
        except,
      )
      .one().n;
  }

  /** A deleted schedule leaves the directory. */
  forget(id: string): void {
    this.sql.exec("DELETE FROM directory_schedules WHERE id = ?", id);
  }

  /** One page of the schedules that match, newest first (by creation, then id). */
  list(query: ScheduleQuery): SchedulePage {
    const where = ["1 = 1"];
    const params: SqlStorageValue[] = [];
    if (query.statuses.length > 0) {
      where.push(`status IN (${query.statuses.map(() => "?").join(", ")})`);
      params.push(...query.statuses);
    }
    if (query.agent !== undefined) {
      where.push("agent = ?");
      params.push(query.agent);
    }
    if (query.after !== undefined) {
      where.push("(created_at < ? OR (created_at = ? AND id < ?))");
      params.push(query.after.created_at, query.after.created_at, query.after.id);
    }
    const rows = this.sql
      .exec<ScheduleRow>(
        `SELECT id, agent, status, cron, timezone, at, next_run_at, last_fired_at, created_at, updated_at
         FROM directory_schedules WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`,
        ...params,
        // One more than the page: whether a next page exists.
        query.limit + 1,
      )
      .toArray();
    return pageOf(
      rows.map((row): ScheduleEntry => ({ ...row })),
      query.limit,
    );
  }
}
