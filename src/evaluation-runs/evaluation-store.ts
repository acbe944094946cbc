// An evaluation's storage in its object's SQLite (tables evaluation_*, src/storage/evaluation-migrations.ts): the
// evaluation itself, its cases, and one row per run (case × repetition) moving pending → starting → running → ended
// → graded (or running → stopping → ended when the evaluation stops a run's task: run-watch.ts). Every change is a
// check-and-set on the row's status, so a repeated report, a repeated alarm or an eviction between two steps never
// counts a run twice. Rows are mapped to camelCase records here.
import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { AgentUsage } from "../contracts/usage.ts";
import type { TestCase } from "../evaluations/config.ts";
import type { CaseGrade } from "../evaluations/grade.ts";
import type {
  EvaluationStatus,
  FaultReport,
  InjectedFault,
  NewEvaluation,
  RunReport,
  StoredRunStatus,
} from "./evaluation.ts";

/** The evaluation as stored: what it was created with (less its cases) and where it is. */
export interface EvaluationRecord {
  spec: Omit<NewEvaluation, "cases">;
  status: EvaluationStatus;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  /** Counts changes, for the tenant's directory (a late report never overwrites a newer one). */
  version: number;
  reportedVersion: number;
}

/** A run to record: its case and repetition, its task's id, and whether it is a faulted case's baseline. */
export interface RunSpec {
  caseName: string;
  repetition: number;
  taskId: string;
  baseline: boolean;
}

export interface RunRecord {
  seq: number;
  caseName: string;
  repetition: number;
  taskId: string;
  /** A faulted case's run without the faults (evaluation.ts FaultReportSchema). */
  baseline: boolean;
  status: StoredRunStatus;
  result: ExecutionResult | null;
  grade: CaseGrade | null;
  usage: AgentUsage | null;
  durationMs: number | null;
  /** Start attempts that failed (the next alarm tries again). */
  attempts: number;
  /** The faults the run injected, as its task reported them; null before it ended, or from a task without faults. */
  injected: InjectedFault[] | null;
  /** A drop_client run: what a client reconnecting after the drop received (checked before grading). */
  clientCheck: ClientCheck | null;
}

export type ClientCheck = NonNullable<FaultReport["client"]>;

type SpecRow = {
  spec: string;
  status: string;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
  version: number;
  reported_version: number;
};

type RunRow = {
  seq: number;
  case_name: string;
  repetition: number;
  task_id: string;
  status: string;
  result: string | null;
  grade: string | null;
  usage: string | null;
  duration_ms: number | null;
  attempts: number;
  baseline: number;
  injected: string | null;
  client_check: string | null;
};

export class EvaluationStore {
  private readonly storage: Pick<DurableObjectStorage, "sql" | "transactionSync">;

  constructor(storage: Pick<DurableObjectStorage, "sql" | "transactionSync">) {
    this.storage = storage;
  }

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** Records the evaluation, its cases and its runs (all pending), in one transaction. */
  create(evaluation: NewEvaluation, runs: readonly RunSpec[], now: string): void {
    const { cases, ...spec } = evaluation;
    this.storage.transactionSync(() => {
      this.sql.exec(
        `INSERT INTO evaluation_spec (id, spec, status, created_at, updated_at, completed_at, version, reported_version)
         VALUES (?, ?, 'running', ?, ?, NULL, 1, 0)`,
        evaluation.id,
        JSON.stringify(spec),
        now,
        now,
      );
      cases.forEach((c, position) => {
        this.sql.exec(
          "INSERT INTO evaluation_cases (position, name, spec) VALUES (?, ?, ?)",
          position,
          c.name,
          JSON.stringify(c),
        );
      });
      for (const [seq, run] of runs.entries()) {
        this.sql.exec(
          `INSERT INTO evaluation_runs (seq, case_name, repetition, task_id, status, attempts, baseline)
           VALUES (?, ?, ?, ?, 'pending', 0, ?)`,
          seq,
          run.caseName,
          run.repetition,
          run.taskId,
          run.baseline ? 1 : 0,
        );
      }
    });
  }

  get(): EvaluationRecord | null {
    const row = this.sql.exec<SpecRow>("SELECT * FROM evaluation_spec LIMIT 1").toArray()[0];
    if (!row) return null;
    return {
      spec: JSON.parse(row.spec) as EvaluationRecord["spec"],
      status: row.status as EvaluationStatus,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      completedAt: row.completed_at,
      version: row.version,
      reportedVersion: row.reported_version,
    };
  }

  testCase(name: string): TestCase | null {
    const row = this.sql.exec<{ spec: string }>("SELECT spec FROM evaluation_cases WHERE name = ?", name).toArray()[0];
    return row ? (JSON.parse(row.spec) as TestCase) : null;
  }

  runs(): RunRecord[] {
    return this.sql
      .exec<RunRow>("SELECT * FROM evaluation_runs ORDER BY seq")
      .toArray()
      .map((row) => ({
        seq: row.seq,
        caseName: row.case_name,
        repetition: row.repetition,
        taskId: row.task_id,
        status: row.status as StoredRunStatus,
        result: row.result === null ? null : (JSON.parse(row.result) as ExecutionResult),
        grade: row.grade === null ? null : (JSON.parse(row.grade) as CaseGrade),
        usage: row.usage === null ? null : (JSON.parse(row.usage) as AgentUsage),
        durationMs: row.duration_ms,
        attempts: row.attempts,
        baseline: row.baseline === 1,
        injected: row.injected === null ? null : (JSON.parse(row.injected) as InjectedFault[]),
        clientCheck: row.client_check === null ? null : (JSON.parse(row.client_check) as ClientCheck),
      }));
  }

  /** Moves a run from one status to the next; false when it was no longer in `from` (someone else moved it). */
  private move(
    seq: number,
    from: readonly StoredRunStatus[],
    to: StoredRunStatus,
    set = "",
    ...values: SqlStorageValue[]
  ): boolean {
    const cursor = this.sql.exec(
      `UPDATE evaluation_runs SET status = ?${set} WHERE seq = ? AND status IN (${from.map(() => "?").join(", ")})`,
      to,
      ...values,
      seq,
      ...from,
    );
    return cursor.rowsWritten > 0;
  }

  /** pending → starting: recorded before its task is started. */
  markStarting(seq: number): boolean {
    return this.move(seq, ["pending"], "starting");
  }

  /** starting → running: its task exists. */
  markRunning(seq: number): boolean {
    return this.move(seq, ["starting"], "running");
  }

  /** A failed attempt at starting a run's task: counted; the run stays starting for the next alarm. */
  startFailed(seq: number): void {
    this.sql.exec("UPDATE evaluation_runs SET attempts = attempts + 1 WHERE seq = ?", seq);
  }

  /** starting or running → ended, with what the run's task reported (once: a repeated report changes nothing). */
  recordEnd(report: RunReport): boolean {
    return this.moveWithReport(report, ["starting", "running"], "ended");
  }

  /**
   * running → stopping: the evaluation gives up on the run's task (it waits for a person, or ran past its deadline)
   * and records why, with what the task had spent, before it cancels the task. The task's own report of its end,
   * which the cancel brings, is then ignored: the run's result is this one.
   */
  markStopping(report: RunReport): boolean {
    return this.moveWithReport(report, ["running"], "stopping");
  }

  /** Moves the run of the report's task, recording the report with it. */
  private moveWithReport(report: RunReport, from: readonly StoredRunStatus[], to: StoredRunStatus): boolean {
    const row = this.sql
      .exec<{ seq: number }>("SELECT seq FROM evaluation_runs WHERE task_id = ?", report.task_id)
      .toArray()[0];
    if (!row) return false;
    const moved = this.move(
      row.seq,
      from,
      to,
      ", result = ?, usage = ?, duration_ms = ?, injected = ?",
      JSON.stringify(report.result),
      report.usage === null ? null : JSON.stringify(report.usage),
      report.duration_ms,
      report.faults_injected ? JSON.stringify(report.faults_injected) : null,
    );
    if (moved) this.touch(new Date().toISOString());
    return moved;
  }

  /** stopping → ended: the run's task has been canceled (or had ended meanwhile); the run is graded next. */
  stopped(seq: number): boolean {
    return this.move(seq, ["stopping"], "ended");
  }

  /** ended → graded, with a drop_client run's check of its client. */
  recordGrade(seq: number, grade: CaseGrade, clientCheck: ClientCheck | null = null): boolean {
    const moved = this.move(
      seq,
      ["ended"],
      "graded",
      ", grade = ?, client_check = ?",
      JSON.stringify(grade),
      clientCheck === null ? null : JSON.stringify(clientCheck),
    );
    if (moved) this.touch(new Date().toISOString());
    return moved;
  }

  complete(now: string): void {
    this.sql.exec(
      "UPDATE evaluation_spec SET status = 'completed', completed_at = ?, updated_at = ?, version = version + 1 WHERE status = 'running'",
      now,
      now,
    );
  }

  /** A change the tenant's directory should hear of. */
  private touch(now: string): void {
    this.sql.exec("UPDATE evaluation_spec SET updated_at = ?, version = version + 1", now);
  }

  reported(version: number): void {
    this.sql.exec("UPDATE evaluation_spec SET reported_version = MAX(reported_version, ?)", version);
  }
}
