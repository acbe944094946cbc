// The storage schema of a tenant's Durable Object (durable-objects/tenant-object.ts), as one ordered list of steps
// applied by the same migrate() as a task's (migrations.ts): a step is written once and never changed; the next
// change is the next step. Tables are named after the subsystem that owns them: directory_* (src/tenants/directory.ts),
// agents_* (src/tenants/agent-versions.ts); directory_schedules is src/tenants/schedule-directory.ts.
import type { Migration } from "./migrations.ts";

export const TENANT_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    adds: "the directory of the tenant's tasks and sessions, and their tags",
    up: (sql) => {
      sql.exec(`CREATE TABLE directory_records (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        agent TEXT NOT NULL,
        status TEXT NOT NULL,
        parent_task_id TEXT,
        tags TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        ended_at TEXT,
        total_cost_usd REAL,
        version INTEGER NOT NULL
      )`);
      // Newest first within a kind, the order every listing pages in.
      sql.exec("CREATE INDEX directory_records_by_kind ON directory_records (kind, created_at DESC, id DESC)");
      sql.exec("CREATE INDEX directory_records_by_parent ON directory_records (parent_task_id, created_at DESC)");
      sql.exec(`CREATE TABLE directory_tags (
        tag TEXT NOT NULL,
        id TEXT NOT NULL REFERENCES directory_records (id) ON DELETE CASCADE,
        PRIMARY KEY (tag, id)
      )`);
    },
  },
  {
    version: 2,
    adds: "the tenant's own agents (PUT /v1/agents/:name), every version of each",
    up: (sql) => {
      sql.exec(`CREATE TABLE agents_versions (
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        source TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        definition TEXT NOT NULL,
        warnings TEXT NOT NULL,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        PRIMARY KEY (name, version)
      )`);
    },
  },
  {
    version: 3,
    adds: "the workflow a directory row's task runs (GET /v1/tasks?workflow=)",
    up: (sql) => {
      sql.exec("ALTER TABLE directory_records ADD COLUMN workflow TEXT");
      sql.exec(
        "CREATE INDEX directory_records_by_workflow ON directory_records (workflow, created_at DESC) WHERE workflow IS NOT NULL",
      );
    },
  },
  {
    version: 4,
    adds: "the directory of the tenant's schedules (GET /v1/schedules)",
    up: (sql) => {
      sql.exec(`CREATE TABLE directory_schedules (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        status TEXT NOT NULL,
        cron TEXT,
        timezone TEXT,
        at TEXT,
        next_run_at TEXT,
        last_fired_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        version INTEGER NOT NULL
      )`);
      // Newest first, the order the listing pages in.
      sql.exec("CREATE INDEX directory_schedules_by_creation ON directory_schedules (created_at DESC, id DESC)");
    },
  },
  {
    version: 5,
    adds: "the directory of the tenant's evaluation runs (GET /v1/agents/:name/evaluations)",
    up: (sql) => {
      sql.exec(`CREATE TABLE directory_evaluations (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        status TEXT NOT NULL,
        total INTEGER NOT NULL,
        graded INTEGER NOT NULL,
        passed INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        completed_at TEXT,
        version INTEGER NOT NULL
      )`);
      // An agent's, newest first: the order the listing pages in.
      sql.exec(
        "CREATE INDEX directory_evaluations_by_agent ON directory_evaluations (agent, created_at DESC, id DESC)",
      );
    },
  },
  {
    version: 6,
    adds: "what a directory row's task waits for other than a person (GET /v1/tasks' waiting_for), as JSON",
    up: (sql) => {
      // Null in every row reported before: a task that waits now is reported again (its report fingerprint changed).
      sql.exec("ALTER TABLE directory_records ADD COLUMN waiting_for TEXT");
    },
  },
];
