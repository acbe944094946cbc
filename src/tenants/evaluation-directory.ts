// The directory of a tenant's evaluations: one row per evaluation run, kept in the tenant's own Durable Object
// (durable-objects/tenant-object.ts), from which GET /v1/agents/:name/evaluations lists an agent's newest first. Each
// evaluation's object reports its row when it changes (created, a run graded, completed); a report carries the
// evaluation's change count, so a late report never overwrites a newer one. The evaluation's own object stays the
// truth. Its table (directory_evaluations) is in src/storage/tenant-migrations.ts.
import { type DirectoryCursor, pageOf } from "./directory.ts";

/** An evaluation as its agent's listing shows it. */
export interface EvaluationEntry {
  id: string;
  agent: string;
  /** running or completed (src/evaluation-runs/evaluation.ts EVALUATION_STATUSES). */
  status: string;
  /** Runs in all (cases × repetitions), graded so far, and passed of those. */
  total: number;
  graded: number;
  passed: number;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

export interface EvaluationQuery {
  agent: string;
  after?: DirectoryCursor;
  limit: number;
}

export interface EvaluationPage {
  entries: EvaluationEntry[];
  next: DirectoryCursor | null;
}

type EvaluationRow = EvaluationEntry & Record<string, SqlStorageValue>;

export class EvaluationDirectory {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** Stores a report unless the directory holds a newer one for the same evaluation. Safe to repeat. */
  record(entry: EvaluationEntry, version: number): void {
    this.sql.exec(
      `INSERT INTO directory_evaluations (id, agent, status, total, graded, passed, created_at, updated_at, completed_at,
        version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, graded = excluded.graded, passed = excluded.passed,
        updated_at = excluded.updated_at, completed_at = excluded.completed_at, version = excluded.version
       WHERE excluded.version > directory_evaluations.version`,
      entry.id,
      entry.agent,
      entry.status,
      entry.total,
      entry.graded,
      entry.passed,
      entry.created_at,
      entry.updated_at,
      entry.completed_at,
      version,
    );
  }

  /** One page of an agent's evaluations, newest first (by creation, then id). */
  list(query: EvaluationQuery): EvaluationPage {
    const params: SqlStorageValue[] = [query.agent];
    let after = "";
    if (query.after !== undefined) {
      after = " AND (created_at < ? OR (created_at = ? AND id < ?))";
      params.push(query.after.created_at, query.after.created_at, query.after.id);
    }
    const rows = this.sql
      .exec<EvaluationRow>(
        `SELECT id, agent, status, total, graded, passed, created_at, updated_at, completed_at
         FROM directory_evaluations WHERE agent = ?${after} ORDER BY created_at DESC, id DESC LIMIT ?`,
        ...params,
        // One more than the page: whether a next page exists.
        query.limit + 1,
      )
      .toArray();
    return pageOf(
      rows.map((row): EvaluationEntry => ({ ...row })),
      query.limit,
    );
  }
}
