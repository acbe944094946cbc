// The storage schema of an evaluation's Durable Object (durable-objects/evaluation-object.ts), as one ordered list of
// steps applied by the same migrate() as a task's (migrations.ts): a step is written once and never changed; the next
// change is the next step. Its tables are evaluation_* (src/evaluation-runs/evaluation-store.ts).
import type { Migration } from "./migrations.ts";

export const EVALUATION_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    adds: "the evaluation (what it runs, its status), its test cases, and one row per run of a case",
    up: (sql) => {
      // One row: the evaluation this object is; `spec` is what it was created with, less its cases.
      sql.exec(`CREATE TABLE evaluation_spec (
        id TEXT PRIMARY KEY,
        spec TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        completed_at TEXT,
        version INTEGER NOT NULL,
        reported_version INTEGER NOT NULL
      )`);
      sql.exec(`CREATE TABLE evaluation_cases (
        position INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        spec TEXT NOT NULL
      )`);
      // One row per case and repetition; its task's id is derived, so a second start reaches the same task.
      sql.exec(`CREATE TABLE evaluation_runs (
        seq INTEGER PRIMARY KEY,
        case_name TEXT NOT NULL,
        repetition INTEGER NOT NULL,
        task_id TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL,
        result TEXT,
        grade TEXT,
        usage TEXT,
        duration_ms INTEGER,
        attempts INTEGER NOT NULL
      )`);
    },
  },
  {
    version: 2,
    adds: "fault injection: a faulted case's baseline runs, the faults each run injected, and the dropped client's check",
    up: (sql) => {
      sql.exec("ALTER TABLE evaluation_runs ADD COLUMN baseline INTEGER NOT NULL DEFAULT 0");
      sql.exec("ALTER TABLE evaluation_runs ADD COLUMN injected TEXT");
      sql.exec("ALTER TABLE evaluation_runs ADD COLUMN client_check TEXT");
    },
  },
];
