// The storage schema of a schedule's Durable Object (durable-objects/schedule-object.ts), as one ordered list of steps
// applied by the same migrate() as a task's (migrations.ts): a step is written once and never changed; the next
// change is the next step. Its tables are schedule_* (src/schedules/schedule-store.ts).
import type { Migration } from "./migrations.ts";

export const SCHEDULE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    adds: "the schedule (its timing, policy, status and the task each fire starts) and its fires",
    up: (sql) => {
      // One row: the schedule this object is. Times are ms since the epoch; `template` is the TaskInit each fire
      // starts, without its id and trigger.
      sql.exec(`CREATE TABLE schedule_spec (
        id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        agent TEXT NOT NULL,
        cron TEXT,
        timezone TEXT,
        at INTEGER,
        missed TEXT NOT NULL,
        status TEXT NOT NULL,
        template TEXT NOT NULL,
        fingerprint TEXT,
        next_due_at INTEGER,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL,
        reported_version INTEGER NOT NULL
      )`);
      // One row per due time that came: recorded before its task is started, so that a due time fires once.
      sql.exec(`CREATE TABLE schedule_fires (
        due_at INTEGER PRIMARY KEY,
        task_id TEXT,
        due_times INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        retry_at INTEGER,
        error TEXT
      )`);
    },
  },
  {
    version: 2,
    adds: "the key a schedule fires as (its fires take that key's creation tokens; its removal stops the schedule)",
    up: (sql) => {
      // Null for a schedule created before: it stops (revoked) at its next due time, until a key resumes it.
      sql.exec("ALTER TABLE schedule_spec ADD COLUMN key_id TEXT");
    },
  },
];
