// One Durable Object per schedule (named by its tenant and id), driven by its own alarm: no cron job of the deployment
// scans tenants. At each due time the alarm records the fire (the due time and the task id derived from it) in the
// object's SQLite, together with the next due time, and only then starts the task, an ordinary one, through the same
// call the API's routes make (startInObject). A repeated alarm or an eviction between the record and the start finds
// the fire recorded and starts the same task id again, which its object answers with the task it already has: each
// due time runs at most once. A due time first clears the key the schedule fires as (src/schedules/schedule-limits.ts):
// a key gone from OUTPOST_API_KEYS stops the schedule (`revoked`), and a run takes a token of the key's creation rate,
// or is recorded `rate_limited` and not run. The rules of due times and missed fires are src/schedules/timing.ts.
import { DurableObject } from "cloudflare:workers";
import { clearFire } from "../src/commands/stored-work.ts";
import type { Env } from "../src/env.ts";
import { fireTaskId, type NewSchedule, type ScheduleView } from "../src/schedules/schedule.ts";
import { revokedReason } from "../src/schedules/schedule-limits.ts";
import { type ScheduleRecord, ScheduleStore } from "../src/schedules/schedule-store.ts";
import { nextDue, plan } from "../src/schedules/timing.ts";
import { migrate } from "../src/storage/migrations.ts";
import { SCHEDULE_MIGRATIONS } from "../src/storage/schedule-migrations.ts";
import type { TaskPrincipal } from "../src/tasks/principal.ts";
import type { TaskInit } from "../src/tasks/task.ts";
import { startInObject } from "../src/tasks/task-ids.ts";
import { tenantStubFor } from "../src/tenants/directory.ts";

/** Fires a view lists. */
const RECENT_FIRES = 20;
/**
 * Attempts at starting a fire's task before the fire is given up as failed, and the wait before each next one: the
 * task's object may be briefly unreachable (a deploy, an overloaded isolate); after about half an hour it is not brief.
 */
const START_ATTEMPTS = 6;
const START_RETRY_MS = [2_000, 10_000, 60_000, 300_000, 1_200_000];
/** A directory report that failed is sent again after this (the listing is behind until then; the object is not). */
const REPORT_RETRY_MS = 10_000;

/** What creating a schedule did; a repeat under the same Idempotency-Key replays, another body is refused. */
export type CreateScheduleOutcome =
  | { outcome: "created" | "replayed"; schedule: ScheduleView }
  | { outcome: "mismatch" | "deleted"; schedule?: undefined };

/** What pausing or resuming did: the schedule, or why not (none here, or finished). Pausing leaves a revoked one so. */
export type ScheduleChange =
  | { schedule: ScheduleView; error?: undefined }
  | { schedule?: undefined; error: "schedule_not_found" | "schedule_finished" };

export class ScheduleObject extends DurableObject<Env> {
  private readonly store: ScheduleStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, SCHEDULE_MIGRATIONS);
    this.store = new ScheduleStore(ctx.storage);
  }

  /** Creates the schedule, once, and arms its alarm for its first due time. */
  async create(schedule: NewSchedule): Promise<CreateScheduleOutcome> {
    const existing = this.store.get();
    if (existing) {
      if (existing.status === "deleted") return { outcome: "deleted" };
      if (existing.fingerprint !== schedule.fingerprint) return { outcome: "mismatch" };
      return { outcome: "replayed", schedule: this.view(existing) };
    }
    const now = Date.now();
    // An `at` checked as future by the Worker may have passed since: its alarm then fires at once, on time.
    const { timing } = schedule;
    this.store.create(schedule, "at" in timing ? timing.at : nextDue(timing, now), now);
    await this.settle();
    return { outcome: "created", schedule: this.view(this.require()) };
  }

  async get(): Promise<ScheduleView | null> {
    const record = this.live();
    return record ? this.view(record) : null;
  }

  /** Stops firing: due times that pass while paused are not run (pausing twice is pausing once). */
  async pause(): Promise<ScheduleChange> {
    const record = this.live();
    if (!record) return { error: "schedule_not_found" };
    if (record.status === "finished") return { error: "schedule_finished" };
    if (record.status === "active") this.store.setStatus("paused", null, Date.now());
    await this.settle();
    return { schedule: this.view(this.require()) };
  }

  /**
   * Fires again from now on, as the key that resumes it (`principal`: its id, and the rate its runs' sub-agents count
   * against): a cron schedule at its next due time after now; an `at` schedule at its instant, which, if it passed
   * while paused or revoked, the missed-fire policy treats like a fire missed while the runtime was down.
   */
  async resume(principal: TaskPrincipal & { key_id: string }): Promise<ScheduleChange> {
    const record = this.live();
    if (!record) return { error: "schedule_not_found" };
    if (record.status === "finished") return { error: "schedule_finished" };
    if (record.status === "paused" || record.status === "revoked") {
      const now = Date.now();
      const next = "at" in record.timing ? record.timing.at : nextDue(record.timing, now);
      this.store.resume(principal, next, now);
    }
    await this.settle();
    return { schedule: this.view(this.require()) };
  }

  /** Deletes the schedule (its tasks stay); false when there was none. */
  async delete(): Promise<boolean> {
    if (!this.live()) return false;
    this.store.delete(Date.now());
    await this.settle();
    return true;
  }

  /**
   * Each due time: record, then start. Safe to run any number of times: a due time is recorded once, and a fire
   * recorded before is started under its own task id, which creates the task only once.
   */
  override async alarm(): Promise<void> {
    await this.recordDue(Date.now());
    await this.startPending();
    await this.settle();
  }

  /**
   * Records the fires for the due times that have come (src/schedules/timing.ts plan), before any task is started,
   * once the key the schedule fires as has cleared them: gone, it stops the schedule; out of room, the run is
   * recorded `rate_limited` instead.
   */
  private async recordDue(now: number): Promise<void> {
    const record = this.store.get();
    if (record?.status !== "active" || record.nextDueAt === null) return;
    const firePlan = plan(record.timing, record.missed, record.nextDueAt, now);
    if (!firePlan) return;
    const clearance = await clearFire(this.env, record.tenant, record.keyId, firePlan.run !== null);
    // Each a check-and-set on the due time it planned from: a pause that came during the awaits wins.
    if (clearance.kind === "revoked") {
      this.store.revoke(record.nextDueAt, now, revokedReason(record.id, record.keyId, clearance.why));
      return;
    }
    const taskId = firePlan.run ? await fireTaskId(record.tenant, record.id, firePlan.run.dueAt) : null;
    this.store.record(record.nextDueAt, firePlan, taskId, now, clearance.kind === "refused" ? clearance : null);
  }

  /** Starts the task of each recorded fire not started yet, as an ordinary task with the schedule as its trigger. */
  private async startPending(): Promise<void> {
    const record = this.store.get();
    if (!record || record.status === "deleted") return;
    for (const fire of this.store.pending(Date.now())) {
      const init: TaskInit = {
        ...record.template,
        id: fire.taskId,
        tenant: record.tenant,
        trigger: {
          kind: "schedule",
          schedule_id: record.id,
          due_at: new Date(fire.dueAt).toISOString(),
          due_times: fire.dueTimes,
        },
      };
      try {
        const started = await startInObject(this.env, record.tenant, init);
        if (started.outcome === "created" || started.outcome === "replayed") {
          this.store.settle(fire.dueAt, "started", null);
        } else if (started.outcome === "expired") {
          // The task was created by an earlier attempt, ran, and has since expired under the retention policy.
          this.store.settle(fire.dueAt, "started", null);
        } else if (started.outcome === "workspace_full") {
          this.store.settle(fire.dueAt, "failed", `The seed files do not fit the workspace: ${started.message}.`);
        } else {
          this.store.settle(fire.dueAt, "failed", "Another request holds the task id this fire derives.");
        }
      } catch (error) {
        // Not the error's text: it comes from another object and is shown to whoever reads the schedule.
        const attempt = fire.attempts + 1;
        console.error(`schedule ${record.id}: starting task ${fire.taskId} failed (attempt ${attempt})`, error);
        const wait = START_RETRY_MS[attempt - 1];
        if (attempt >= START_ATTEMPTS || wait === undefined) {
          this.store.settle(fire.dueAt, "failed", `The task could not be started after ${attempt} attempts.`);
        } else {
          this.store.retry(fire.dueAt, Date.now() + wait, `Attempt ${attempt} to start the task failed; retrying.`);
        }
      }
    }
  }

  /** Reports the schedule to its tenant's directory if it changed, then sets the alarm for what comes next. */
  private async settle(): Promise<void> {
    const record = this.store.get();
    let reportFailed = false;
    if (record && record.version > record.reportedVersion) {
      try {
        const directory = tenantStubFor(this.env, record.tenant);
        if (record.status === "deleted") await directory.forgetSchedule(record.id);
        else await directory.recordSchedule(this.store.entry(record), record.version);
        this.store.reported(record.version);
      } catch (error) {
        console.error(`schedule ${record.id}: the directory report failed`, error);
        reportFailed = true;
      }
    }
    const times: number[] = [];
    if (record?.status === "active" && record.nextDueAt !== null) times.push(record.nextDueAt);
    const retry = this.store.nextRetryAt();
    if (retry !== null) times.push(retry);
    if (reportFailed) times.push(Date.now() + REPORT_RETRY_MS);
    if (times.length === 0) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.min(...times));
  }

  /** The schedule unless there is none or it was deleted. */
  private live(): ScheduleRecord | null {
    const record = this.store.get();
    return record && record.status !== "deleted" ? record : null;
  }

  private require(): ScheduleRecord {
    const record = this.store.get();
    if (!record) throw new Error("This object holds no schedule.");
    return record;
  }

  private view(record: ScheduleRecord): ScheduleView {
    const { timing, template } = record;
    const fires = this.store.fires(RECENT_FIRES);
    return {
      id: record.id,
      agent: record.agent,
      agent_version: template.runtimeAgent?.version ?? null,
      input: template.input,
      cron: "cron" in timing ? timing.cron : null,
      timezone: "cron" in timing ? timing.timezone : null,
      at: "at" in timing ? new Date(timing.at).toISOString() : null,
      missed: record.missed,
      status: record.status === "deleted" ? "finished" : record.status,
      key_id: record.keyId,
      next_run_at: record.nextDueAt === null ? null : new Date(record.nextDueAt).toISOString(),
      last_fired_at: fires[0]?.due_at ?? null,
      recent_fires: fires,
      metadata: template.metadata as ScheduleView["metadata"],
      tags: template.tags,
      limits: template.limits ?? {},
      retention_days: template.retentionDays,
      redaction_mode: template.redactionMode ?? "full",
      dry_run: template.dryRun === true,
      webhook: template.webhook ?? null,
      files: Object.keys(template.files ?? {}).map((path) => path.slice(1)),
      created_at: record.createdAt,
      updated_at: record.updatedAt,
    };
  }
}
