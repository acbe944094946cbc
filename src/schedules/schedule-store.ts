// A schedule's storage in its own Durable Object: its one row (schedule_spec) and the due times that came
// (schedule_fires), tables created by src/storage/schedule-migrations.ts. A fire is a row keyed by its due time,
// written in the same transaction that moves the schedule to its next due time and before its task is started: a due
// time is recorded once, and a fire recorded but not yet started is started again under the same task id. A fire the
// key's rate had no room for is recorded `rate_limited`, and a schedule whose key is gone stops as `revoked` (its due
// time recorded `failed`, saying why), each in the same check-and-set on the due time.
import type { TaskPrincipal } from "../tasks/principal.ts";
import type { ScheduleEntry } from "../tenants/schedule-directory.ts";
import type { NewSchedule, ScheduleFire, ScheduleStatus, TaskTemplate } from "./schedule.ts";
import type { FirePlan, MissedPolicy, Timing } from "./timing.ts";

/** The schedule as stored, `deleted` being the tombstone DELETE leaves (the object then answers as if empty). */
export interface ScheduleRecord {
  id: string;
  tenant: string;
  agent: string;
  timing: Timing;
  missed: MissedPolicy;
  status: ScheduleStatus | "deleted";
  template: TaskTemplate;
  fingerprint: string | null;
  /** The key it fires as (created it, or last resumed it); null for a schedule created before keys were kept. */
  keyId: string | null;
  /** ms since the epoch; null while paused, once finished, revoked or deleted. */
  nextDueAt: number | null;
  createdAt: string;
  updatedAt: string;
  /** Counts the changes its directory row shows; reportedVersion is the last one the directory has. */
  version: number;
  reportedVersion: number;
}

/** A fire whose task is still to be started. */
export interface PendingFire {
  dueAt: number;
  dueTimes: number;
  taskId: string;
  attempts: number;
}

interface SpecRow extends Record<string, SqlStorageValue> {
  id: string;
  tenant: string;
  agent: string;
  cron: string | null;
  timezone: string | null;
  at: number | null;
  missed: string;
  status: string;
  template: string;
  fingerprint: string | null;
  key_id: string | null;
  next_due_at: number | null;
  created_at: string;
  updated_at: string;
  version: number;
  reported_version: number;
}

interface FireRow extends Record<string, SqlStorageValue> {
  due_at: number;
  task_id: string | null;
  due_times: number;
  outcome: string;
  recorded_at: string;
  attempts: number;
  retry_at: number | null;
  error: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class ScheduleStore {
  private readonly sql: SqlStorage;
  private readonly transactionSync: <T>(fn: () => T) => T;

  constructor(storage: Pick<DurableObjectStorage, "sql" | "transactionSync">) {
    this.sql = storage.sql;
    this.transactionSync = (fn) => storage.transactionSync(fn);
  }

  get(): ScheduleRecord | null {
    const row = this.sql.exec<SpecRow>("SELECT * FROM schedule_spec LIMIT 1").toArray()[0];
    if (!row) return null;
    return {
      id: row.id,
      tenant: row.tenant,
      agent: row.agent,
      timing: row.at !== null ? { at: row.at } : { cron: row.cron ?? "", timezone: row.timezone ?? "UTC" },
      missed: row.missed === "skip" ? "skip" : "run_once",
      status: row.status as ScheduleRecord["status"],
      template: JSON.parse(row.template) as TaskTemplate,
      fingerprint: row.fingerprint,
      keyId: row.key_id,
      nextDueAt: row.next_due_at,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      version: row.version,
      reportedVersion: row.reported_version,
    };
  }

  create(schedule: NewSchedule, nextDueAt: number | null, now: number): void {
    const { timing } = schedule;
    this.sql.exec(
      `INSERT INTO schedule_spec (id, tenant, agent, cron, timezone, at, missed, status, template, fingerprint,
        key_id, next_due_at, created_at, updated_at, version, reported_version)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, 1, 0)`,
      schedule.id,
      schedule.tenant,
      schedule.template.agent,
      "cron" in timing ? timing.cron : null,
      "cron" in timing ? timing.timezone : null,
      "at" in timing ? timing.at : null,
      schedule.missed,
      JSON.stringify(schedule.template),
      schedule.fingerprint,
      schedule.keyId,
      nextDueAt,
      iso(now),
      iso(now),
    );
  }

  /** Pauses, resumes or finishes the schedule, with its next due time (null unless active). */
  setStatus(status: ScheduleRecord["status"], nextDueAt: number | null, now: number): void {
    this.sql.exec(
      "UPDATE schedule_spec SET status = ?, next_due_at = ?, updated_at = ?, version = version + 1",
      status,
      nextDueAt,
      iso(now),
    );
  }

  /**
   * Resumed by a key: it fires as that key from now on, and the runs it starts count against it (the template's
   * principal, src/tasks/principal.ts).
   */
  resume(principal: TaskPrincipal & { key_id: string }, nextDueAt: number | null, now: number): void {
    this.transactionSync(() => {
      const template = this.get()?.template;
      this.sql.exec(
        "UPDATE schedule_spec SET key_id = ?, template = ?",
        principal.key_id,
        JSON.stringify({ ...template, principal }),
      );
      this.setStatus("active", nextDueAt, now);
    });
  }

  /**
   * Its key is gone (or it never kept one): stopped (`revoked`), and the due time `due` recorded as a fire `failed`
   * whose error is `reason` (src/schedules/schedule-limits.ts revokedReason), no task; only if the schedule is still
   * active and still due at `due`. Returns whether it was.
   */
  revoke(due: number, now: number, reason: string): boolean {
    return this.transactionSync(() => {
      const current = this.get();
      if (current?.status !== "active" || current.nextDueAt !== due) return false;
      this.sql.exec(
        `INSERT OR IGNORE INTO schedule_fires (due_at, task_id, due_times, outcome, recorded_at, attempts, error)
         VALUES (?, NULL, 1, 'failed', ?, 0, ?)`,
        due,
        iso(now),
        reason,
      );
      this.setStatus("revoked", null, now);
      return true;
    });
  }

  /** DELETE: the tombstone keeps the id (a repeated creation under its Idempotency-Key is refused), nothing else. */
  delete(now: number): void {
    this.transactionSync(() => {
      this.sql.exec("DELETE FROM schedule_fires");
      this.sql.exec("UPDATE schedule_spec SET template = '{}'");
      this.setStatus("deleted", null, now);
    });
  }

  /**
   * Records what an alarm does with the due times that came (plan), and moves the schedule to its next due time, in
   * one transaction; only if the schedule is still active and still due at `due` (a pause, or another alarm, may
   * have come between the plan and now). A due time recorded before is never recorded again. A run refused before
   * its task (`refused`: the key's rate had no room, or the key could not be checked) is recorded with that outcome
   * and why, without a task. Returns whether the plan was recorded.
   */
  record(
    due: number,
    firePlan: FirePlan,
    runTaskId: string | null,
    now: number,
    refused: { outcome: "rate_limited" | "failed"; why: string } | null = null,
  ): boolean {
    return this.transactionSync(() => {
      const current = this.get();
      if (current?.status !== "active" || current.nextDueAt !== due) return false;
      if (firePlan.run && refused !== null) {
        this.sql.exec(
          `INSERT OR IGNORE INTO schedule_fires (due_at, task_id, due_times, outcome, recorded_at, attempts, error)
           VALUES (?, NULL, ?, ?, ?, 0, ?)`,
          firePlan.run.dueAt,
          firePlan.run.dueTimes,
          refused.outcome,
          iso(now),
          refused.why,
        );
      } else if (firePlan.run && runTaskId) {
        this.sql.exec(
          `INSERT OR IGNORE INTO schedule_fires (due_at, task_id, due_times, outcome, recorded_at, attempts)
           VALUES (?, ?, ?, 'pending', ?, 0)`,
          firePlan.run.dueAt,
          runTaskId,
          firePlan.run.dueTimes,
          iso(now),
        );
      }
      if (firePlan.skipped) {
        this.sql.exec(
          `INSERT OR IGNORE INTO schedule_fires (due_at, task_id, due_times, outcome, recorded_at, attempts)
           VALUES (?, NULL, ?, 'skipped', ?, 0)`,
          firePlan.skipped.dueAt,
          firePlan.skipped.dueTimes,
          iso(now),
        );
      }
      if (firePlan.next === null) this.setStatus("finished", null, now);
      else this.setStatus("active", firePlan.next, now);
      return true;
    });
  }

  /** The fires whose task is still to be started and whose retry time (if any) has come, oldest first. */
  pending(now: number): PendingFire[] {
    return this.sql
      .exec<FireRow>(
        `SELECT * FROM schedule_fires WHERE outcome = 'pending' AND (retry_at IS NULL OR retry_at <= ?)
         ORDER BY due_at`,
        now,
      )
      .toArray()
      .map((row) => ({
        dueAt: row.due_at,
        dueTimes: row.due_times,
        taskId: row.task_id ?? "",
        attempts: row.attempts,
      }));
  }

  /** When the next pending fire is to be tried again, or null. */
  nextRetryAt(): number | null {
    const row = this.sql
      .exec<{ at: number | null }>(
        "SELECT MIN(COALESCE(retry_at, 0)) AS at FROM schedule_fires WHERE outcome = 'pending'",
      )
      .toArray()[0];
    return row?.at ?? null;
  }

  /** The fire's task was started (or found started), or cannot be (`failed`, with why). */
  settle(dueAt: number, outcome: "started" | "failed", error: string | null): void {
    this.sql.exec(
      "UPDATE schedule_fires SET outcome = ?, error = ?, retry_at = NULL, attempts = attempts + 1 WHERE due_at = ?",
      outcome,
      error,
      dueAt,
    );
  }

  /** Starting the fire's task failed this time: tried again at `retryAt`. */
  retry(dueAt: number, retryAt: number, error: string): void {
    this.sql.exec(
      "UPDATE schedule_fires SET attempts = attempts + 1, retry_at = ?, error = ? WHERE due_at = ?",
      retryAt,
      error,
      dueAt,
    );
  }

  /** The latest fires, newest first. */
  fires(limit: number): ScheduleFire[] {
    return this.sql
      .exec<FireRow>("SELECT * FROM schedule_fires ORDER BY due_at DESC LIMIT ?", limit)
      .toArray()
      .map((row) => ({
        due_at: iso(row.due_at),
        due_times: row.due_times,
        outcome: row.outcome as ScheduleFire["outcome"],
        task_id: row.task_id,
        recorded_at: row.recorded_at,
        error: row.error,
      }));
  }

  /** The directory has the row as of `version`. */
  reported(version: number): void {
    this.sql.exec("UPDATE schedule_spec SET reported_version = MAX(reported_version, ?)", version);
  }

  /** The schedule's directory row (GET /v1/schedules). */
  entry(record: ScheduleRecord): ScheduleEntry {
    const last = this.fires(1)[0];
    const { timing } = record;
    return {
      id: record.id,
      agent: record.agent,
      status: record.status === "deleted" ? "finished" : record.status,
      cron: "cron" in timing ? timing.cron : null,
      timezone: "cron" in timing ? timing.timezone : null,
      at: "at" in timing ? iso(timing.at) : null,
      next_run_at: record.nextDueAt === null ? null : iso(record.nextDueAt),
      last_fired_at: last ? last.due_at : null,
      created_at: record.createdAt,
      updated_at: record.updatedAt,
    };
  }
}
