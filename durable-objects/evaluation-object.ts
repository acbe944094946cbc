// One Durable Object per evaluation run (named by its tenant and id). Created with the agent's chosen test cases, it
// records one run per case and repetition before anything starts, then starts each run's child task (an invocation:
// a fresh conversation with the case's context, through startInObject, the call the API's routes make) at most
// MAX_PARALLEL_RUNS at a time, each once it has a token of the creation rate of the key that started the evaluation
// (src/commands/stored-work.ts: a run without room waits for it). A child reports its ExecutionResult here when
// it ends, from its own alarm until the report is taken (src/task-host/evaluation-report.ts), as a sub-agent reports
// to its parent: nothing polls. The report is recorded first; the alarm then grades it (src/evaluations/, which may
// call the grader model), starts the next runs, and once every run is graded writes the report to the blob store and
// completes. While runs are under way the alarm also watches their tasks (src/evaluation-runs/run-watch.ts): a lost
// report is repaired, and a run waiting for a person or past its case's deadline is canceled and failed, so an
// evaluation always ends. Each step is a check-and-set on the run's row, so an eviction at any await, a repeated alarm
// or a repeated report repeats nothing.
import { DurableObject } from "cloudflare:workers";
import { openBlobStore } from "../src/blob-store/open-blob-store.ts";
import { clearEvaluationRun } from "../src/commands/stored-work.ts";
import type { Env } from "../src/env.ts";
import {
  type EvaluationView,
  failedRun,
  MAX_PARALLEL_RUNS,
  type NewEvaluation,
  type RunReport,
  reportKeys,
  runTaskId,
} from "../src/evaluation-runs/evaluation.ts";
import {
  type ClientCheck,
  type EvaluationRecord,
  EvaluationStore,
  type RunRecord,
  type RunSpec,
} from "../src/evaluation-runs/evaluation-store.ts";
import { faultReport, resumedStreamCheck } from "../src/evaluation-runs/fault-report.ts";
import { markdownReport, runView, summarize } from "../src/evaluation-runs/report.ts";
import { WATCH_INTERVAL_MS, watchRuns } from "../src/evaluation-runs/run-watch.ts";
import { DEFAULT_CASE_TIMEOUT_SECONDS } from "../src/evaluations/config.ts";
import { gradeCase } from "../src/evaluations/grade.ts";
import { type Grader, providerGrader } from "../src/evaluations/model-grader.ts";
import { TERMINAL_EVENT_TYPES } from "../src/events/event-record.ts";
import { createProvider, workerProviderEnvironment } from "../src/llm/providers.ts";
import { EVALUATION_MIGRATIONS } from "../src/storage/evaluation-migrations.ts";
import { migrate } from "../src/storage/migrations.ts";
import { startInObject, taskStubFor } from "../src/tasks/task-ids.ts";
import { tenantStubFor } from "../src/tenants/directory.ts";

/** Attempts at starting a run's task before the run is given up as failed; the wait doubles from 2 s between them. */
const START_ATTEMPTS = 6;
/** A directory report that failed is sent again after this (the listing is behind until then; the object is not). */
const REPORT_RETRY_MS = 10_000;
/** The grader's model calls retry as a run's do. */
const GRADER_MAX_RETRIES = 2;

/** What creating an evaluation did; a repeat under the same Idempotency-Key replays, another body is refused. */
export type CreateEvaluationOutcome =
  | { outcome: "created" | "replayed"; evaluation: EvaluationView }
  | { outcome: "mismatch"; evaluation?: undefined };

export class EvaluationObject extends DurableObject<Env> {
  private readonly store: EvaluationStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, EVALUATION_MIGRATIONS);
    this.store = new EvaluationStore(ctx.storage);
  }

  /** Records the evaluation and its runs, then starts the first runs. */
  async create(evaluation: NewEvaluation): Promise<CreateEvaluationOutcome> {
    const existing = this.store.get();
    if (existing) {
      if (existing.spec.fingerprint !== evaluation.fingerprint) return { outcome: "mismatch" };
      return { outcome: "replayed", evaluation: this.view(existing) };
    }
    const runs: RunSpec[] = [];
    for (const c of evaluation.cases) {
      for (let repetition = 1; repetition <= evaluation.repeat; repetition++) {
        const run = { caseName: c.name, repetition };
        runs.push({
          ...run,
          taskId: await runTaskId(evaluation.tenant, evaluation.id, c.name, repetition),
          baseline: false,
        });
        // A faulted case's repetition also runs without its faults: the report compares the two.
        if (c.faults) {
          const taskId = await runTaskId(evaluation.tenant, evaluation.id, c.name, repetition, true);
          runs.push({ ...run, taskId, baseline: true });
        }
      }
    }
    // A create that raced this one during the awaits above has recorded it: that one wins.
    if (this.store.get()) return this.create(evaluation);
    this.store.create(evaluation, runs, new Date().toISOString());
    await this.startFirstRuns();
    return { outcome: "created", evaluation: this.view(this.require()) };
  }

  async get(): Promise<EvaluationView | null> {
    const record = this.store.get();
    return record ? this.view(record) : null;
  }

  /** A run's task reports its end (repeats are ignored); it is graded by the alarm, outside the caller's request. */
  async runEnded(report: RunReport): Promise<void> {
    if (this.store.recordEnd(report)) await this.ctx.storage.setAlarm(Date.now());
  }

  override async alarm(): Promise<void> {
    await this.advance();
  }

  /**
   * The create's part: starts the first runs, so that its answer names running tasks; their watch and grades come
   * from the alarm, outside the creating request (a judge's grade takes a model call), even for a run whose task
   * reported its end during the start.
   */
  private async startFirstRuns(): Promise<void> {
    const record = this.require();
    // The first look comes by the runs' deadline at the latest (the watch then arms for each task's own).
    const timeout = (record.spec.evaluations?.case_timeout_seconds ?? DEFAULT_CASE_TIMEOUT_SECONDS) * 1000;
    const look = Date.now() + Math.min(WATCH_INTERVAL_MS, timeout);
    // Armed first, so an eviction at any await below still comes back to advance().
    await this.ctx.storage.setAlarm(look);
    const { retryAt: retryStart } = await this.startRuns(record);
    if (this.store.runs().some((r) => r.status === "ended")) await this.ctx.storage.setAlarm(Date.now());
    else if (retryStart !== null) await this.ctx.storage.setAlarm(Math.min(retryStart, look));
  }

  /** Starts what may start, grades what has ended, completes when all is graded; then reports and re-arms. */
  private async advance(): Promise<void> {
    const record = this.store.get();
    if (!record) return;
    // Armed before anything is started or looked at, so an eviction at any await below still comes back here.
    if (record.status === "running") await this.ctx.storage.setAlarm(Date.now() + WATCH_INTERVAL_MS);
    const { retryAt: retryStart, waiting } = await this.startRuns(record);
    const watchAt = await watchRuns({
      env: this.env,
      tenant: record.spec.tenant,
      evaluationId: record.spec.id,
      store: this.store,
      caseTimeoutSeconds: record.spec.evaluations?.case_timeout_seconds ?? DEFAULT_CASE_TIMEOUT_SECONDS,
    });
    await this.gradeEnded(record);
    if (record.status === "running" && this.store.runs().every((r) => r.status === "graded")) {
      // The report is the evaluation as it completes; written before the status says so, so that a completed
      // evaluation always has its report (an alarm that fails in between writes it again).
      const now = new Date().toISOString();
      await this.writeReport({ ...this.require(), status: "completed", completedAt: now });
      this.store.complete(now);
    }
    const reportFailed = await this.reportToDirectory();
    const times: number[] = [];
    if (retryStart !== null) times.push(retryStart);
    if (watchAt !== null) times.push(watchAt);
    const runs = this.store.runs();
    // Runs recorded as ended during this alarm (by the watch, or by their reports meanwhile) and graded in it left room:
    // the pending ones start now, not at the next look, WATCH_INTERVAL_MS away (unless they wait for the key's rate:
    // then at retryStart).
    const startable = runs.some((r) => r.status === "pending") && roomFor(runs) > 0 && !waiting;
    if (runs.some((r) => r.status === "ended") || startable) {
      times.push(Date.now());
    }
    if (reportFailed) times.push(Date.now() + REPORT_RETRY_MS);
    if (times.length === 0) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(Math.min(...times));
  }

  /**
   * Starts the runs recorded as starting (an eviction came between the record and the start) and the pending ones
   * while fewer than MAX_PARALLEL_RUNS are under way, each with a token of its key's creation rate. Returns when to
   * try a failed start again, or when the key will have room (`waiting`: pending runs wait for it), or null.
   */
  private async startRuns(record: EvaluationRecord): Promise<{ retryAt: number | null; waiting: boolean }> {
    let retryAt: number | null = null;
    let waiting = false;
    const runs = this.store.runs();
    const pending = runs.filter((r) => r.status === "pending");
    // Recorded as starting before any start: a run is started under its own id, however often this repeats.
    for (const run of pending.slice(0, roomFor(runs))) {
      const cleared = await clearEvaluationRun(this.env, record.spec.tenant, record.spec.keyId);
      if (cleared.kind === "wait") {
        waiting = true;
        retryAt = cleared.until;
        break;
      }
      if (cleared.kind === "revoked") {
        const why = `The run's task could not be started: ${cleared.why}.`;
        for (const gone of pending) {
          // Ended as a run that could not start is (pending → starting → ended), never started.
          this.store.markStarting(gone.seq);
          this.store.recordEnd(failedRun(gone.taskId, why));
        }
        break;
      }
      this.store.markStarting(run.seq);
    }
    const starting = this.store.runs().filter((r) => r.status === "starting");
    for (const run of starting) {
      const failed = await this.start(record, run);
      if (failed === null) continue;
      const attempt = run.attempts + 1;
      if (attempt >= START_ATTEMPTS) {
        this.store.recordEnd(failedRun(run.taskId, `The run's task could not be started: ${failed}.`));
      } else {
        this.store.startFailed(run.seq);
        const at = Date.now() + 2_000 * 2 ** (attempt - 1);
        retryAt = retryAt === null ? at : Math.min(retryAt, at);
      }
    }
    return { retryAt, waiting };
  }

  /** Starts a run's task; null when it exists, else why not (a failure to retry). */
  private async start(record: EvaluationRecord, run: RunRecord): Promise<string | null> {
    const { spec } = record;
    const testCase = this.store.testCase(run.caseName);
    if (!testCase) return "its case is missing";
    try {
      const started = await startInObject(this.env, spec.tenant, {
        ...spec.template,
        id: run.taskId,
        tenant: spec.tenant,
        input: testCase.input,
        // With context the run is an invocation (it continues the conversation); without, an ordinary task, which
        // any agent can run (a skill agent cannot continue a conversation).
        ...(testCase.context?.length
          ? { context: testCase.context.map((turn) => ({ role: turn.role, content: turn.content })) }
          : {}),
        ...(testCase.files ? { files: testCase.files } : {}),
        ...(testCase.faults && !run.baseline ? { faults: testCase.faults } : {}),
        trigger: { kind: "evaluation", evaluation_id: spec.id, case: run.caseName, repetition: run.repetition },
      });
      if (started.outcome === "created" || started.outcome === "replayed") {
        this.store.markRunning(run.seq);
        return null;
      }
      // The task cannot be: its outcome is the run's (a retry would meet the same).
      const why =
        started.outcome === "workspace_full"
          ? `the case's files do not fit the workspace (${started.message})`
          : started.outcome === "expired"
            ? "the run's task has expired under the retention policy"
            : "another request holds the run's task id";
      this.store.recordEnd(failedRun(run.taskId, `The run's task could not be started: ${why}.`));
      return null;
    } catch (error) {
      // Not the error's text: it comes from another object and is shown to whoever reads the evaluation.
      console.error(`evaluation ${spec.id}: starting task ${run.taskId} failed`, error);
      return "its task's object could not be reached";
    }
  }

  /** Grades each ended run, one at a time, recording each grade as soon as it is made. */
  private async gradeEnded(record: EvaluationRecord): Promise<void> {
    const { spec } = record;
    let grader: Grader | null | undefined;
    for (const run of this.store.runs()) {
      if (run.status !== "ended" || run.result === null) continue;
      const testCase = this.store.testCase(run.caseName);
      if (!testCase) continue;
      if (grader === undefined) grader = await this.grader(record);
      const grade = await gradeCase(testCase, spec.evaluations, run.result, {
        maxTurns: spec.maxTurns,
        responseFormat: spec.responseFormat,
        grader,
      });
      const clientCheck = testCase.faults?.drop_client && !run.baseline ? await this.clientCheck(run) : null;
      this.store.recordGrade(run.seq, grade, clientCheck);
    }
  }

  /**
   * A drop_client run: reconnects to its event stream as a client would after the drop (from the event that recorded
   * it) and checks what comes. Null when no drop was injected (the report says so).
   */
  private async clientCheck(run: RunRecord): Promise<ClientCheck | null> {
    const drop = run.injected?.find((f) => f.fault === "drop_client");
    if (!drop) return null;
    const { spec } = this.require();
    const subscription = await taskStubFor(this.env, spec.tenant, run.taskId).subscribe(drop.seq, 0);
    const stream = subscription && "stream" in subscription ? subscription.stream : null;
    return resumedStreamCheck(stream, drop.seq, (type) => TERMINAL_EVENT_TYPES.has(type));
  }

  /** The grader of g_eval metrics, or null when the agent has none or its provider cannot be built. */
  private async grader(record: EvaluationRecord): Promise<Grader | null> {
    const { spec } = record;
    if (!spec.evaluations?.metrics.some((m) => m.type === "g_eval")) return null;
    try {
      const provider = await createProvider(spec.grader.llm, workerProviderEnvironment(this.env, GRADER_MAX_RETRIES));
      return providerGrader(provider, spec.grader.model);
    } catch (error) {
      console.error(`evaluation ${spec.id}: the grader's provider could not be built`, error);
      return null;
    }
  }

  /** The JSON and Markdown reports, in the blob store (rewritten whole if this repeats). */
  private async writeReport(record: EvaluationRecord): Promise<void> {
    const view = this.view(record);
    const keys = reportKeys(record.spec.tenant, record.spec.id);
    const blobs = openBlobStore(this.env);
    await blobs.put(keys.json, JSON.stringify(view, null, 2), { contentType: "application/json" });
    await blobs.put(keys.markdown, markdownReport(view), { contentType: "text/markdown; charset=utf-8" });
  }

  /** Reports the evaluation to its tenant's directory if it changed; true when that failed (retried later). */
  private async reportToDirectory(): Promise<boolean> {
    const record = this.require();
    if (record.version <= record.reportedVersion) return false;
    const runs = this.store.runs();
    try {
      await tenantStubFor(this.env, record.spec.tenant).recordEvaluation(
        {
          id: record.spec.id,
          agent: record.spec.agent,
          status: record.status,
          total: runs.length,
          graded: runs.filter((r) => r.status === "graded").length,
          passed: runs.filter((r) => r.grade?.passed).length,
          created_at: record.createdAt,
          updated_at: record.updatedAt,
          completed_at: record.completedAt,
        },
        record.version,
      );
      this.store.reported(record.version);
      return false;
    } catch (error) {
      console.error(`evaluation ${record.spec.id}: the directory report failed`, error);
      return true;
    }
  }

  private require(): EvaluationRecord {
    const record = this.store.get();
    if (!record) throw new Error("This object holds no evaluation.");
    return record;
  }

  private view(record: EvaluationRecord): EvaluationView {
    const runs = this.store.runs();
    const { spec } = record;
    const end = record.completedAt === null ? Date.now() : Date.parse(record.completedAt);
    const graded = runs.filter((r) => r.status === "graded");
    const faultsOf = (name: string) => this.store.testCase(name)?.faults;
    return {
      id: spec.id,
      agent: spec.agent,
      agent_version: spec.agentVersion,
      status: record.status,
      selection: spec.selection,
      repeat: spec.repeat,
      passed: graded.every((r) => r.baseline || r.grade?.passed === true),
      progress: {
        total: runs.length,
        pending: runs.filter((r) => r.status === "pending").length,
        running: runs.length - graded.length - runs.filter((r) => r.status === "pending").length,
        graded: graded.length,
      },
      summary: summarize(runs, end - Date.parse(record.createdAt)),
      runs: runs.map((run) => {
        const faults = run.baseline ? undefined : faultsOf(run.caseName);
        if (!faults) return runView(run);
        const baseline = runs.find((r) => r.baseline && r.caseName === run.caseName && r.repetition === run.repetition);
        return runView(run, faultReport(run, baseline, faults));
      }),
      created_at: record.createdAt,
      completed_at: record.completedAt,
    };
  }
}

/** How many more runs may start: MAX_PARALLEL_RUNS less those under way (starting, running or stopping). */
function roomFor(runs: readonly RunRecord[]): number {
  const underWay = runs.filter((r) => r.status === "starting" || r.status === "running" || r.status === "stopping");
  return Math.max(0, MAX_PARALLEL_RUNS - underWay.length);
}
