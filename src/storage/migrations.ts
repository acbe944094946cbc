// The storage schema of a task's Durable Object, as one ordered list of versioned steps. Objects keep their storage
// across deploys and runs in flight resume on the new code, so a change to a table is never made in place: it is a
// new step, which brings an object from the version before it. An object applies the steps it has not applied yet,
// each in its own transaction with its row in schema_migrations, the first time an instance opens its storage (or
// when its task is created). Tables are named after the subsystem that owns them: task*, events_*, runtime_*,
// bundle_*, workspace_*, callbacks_*, sessions_*.
//
// Versions 1 to 5 were written before this list: each ran the whole schema as idempotent statements (CREATE TABLE
// IF NOT EXISTS, column changes guarded by pragma_table_info), so their steps here are idempotent too, and each of
// them creates what an object left at the version before it may lack, in the shape version 5 gives it. From version 6
// on, a step is written once and never changed; the next change is the next step.

import { FRESH_SCHEMA, FRESH_SCHEMA_VERSION } from "./schema.generated.ts";

/** One step: `up` brings an object at `version - 1` to `version`, inside a transaction. */
export interface Migration {
  version: number;
  /** What the version adds, for the reader of this list. */
  adds: string;
  up: (sql: SqlStorage) => void;
}

/** The tables version 6 renamed to their subsystem's prefix, old name → new name. */
const RENAMED_IN_VERSION_6: Readonly<Record<string, string>> = {
  steps_journal: "runtime_steps",
  conversation_messages: "runtime_messages",
  checkpoints: "runtime_checkpoints",
  pending_calls: "runtime_pending_calls",
  llm_transcript: "bundle_transcript",
  deliveries: "callbacks_deliveries",
  delivery_attempts: "callbacks_attempts",
};

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    adds: "the task's row, its event log, step journal, conversation, run bundle and LLM transcript",
    up: (sql) => {
      // Its columns as version 5 has them: the guarded additions of versions 3 to 5 then find them there.
      sql.exec(`CREATE TABLE IF NOT EXISTS task (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        input TEXT NOT NULL,
        metadata TEXT NOT NULL,
        status TEXT NOT NULL,
        model TEXT NOT NULL,
        result TEXT,
        error TEXT,
        usage TEXT NOT NULL,
        created_at TEXT NOT NULL,
        started_at TEXT,
        completed_at TEXT,
        retention_days INTEGER NOT NULL,
        parent_task_id TEXT,
        trace_id TEXT NOT NULL,
        root_span_id TEXT NOT NULL,
        bundle_flushed INTEGER NOT NULL DEFAULT 0,
        crashes INTEGER NOT NULL DEFAULT 0,
        limits TEXT NOT NULL DEFAULT '{}',
        tags TEXT NOT NULL DEFAULT '[]',
        retention_explicit INTEGER NOT NULL DEFAULT 0,
        tenant TEXT NOT NULL DEFAULT 'default',
        webhook TEXT,
        trigger TEXT,
        redaction_mode TEXT NOT NULL DEFAULT 'full',
        dry_run INTEGER NOT NULL DEFAULT 0
      )`);
      sql.exec(`CREATE TABLE IF NOT EXISTS events_log (
        seq INTEGER PRIMARY KEY,
        timestamp TEXT NOT NULL,
        event_type TEXT NOT NULL,
        span_id TEXT NOT NULL,
        payload TEXT NOT NULL,
        redaction_mode TEXT NOT NULL DEFAULT 'full'
      )`);
      sql.exec(`CREATE TABLE IF NOT EXISTS steps_journal (
        name TEXT PRIMARY KEY,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        span_id TEXT NOT NULL,
        result TEXT,
        result_key TEXT,
        started_at TEXT NOT NULL,
        completed_at TEXT
      )`);
      sql.exec(`CREATE TABLE IF NOT EXISTS conversation_messages (
        idx INTEGER PRIMARY KEY,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL
      )`);
      sql.exec(`CREATE TABLE IF NOT EXISTS bundle_files (
        path TEXT PRIMARY KEY,
        content TEXT,
        size INTEGER NOT NULL,
        content_type TEXT NOT NULL,
        created_at TEXT NOT NULL,
        uploaded INTEGER NOT NULL DEFAULT 0
      )`);
      sql.exec(`CREATE TABLE IF NOT EXISTS llm_transcript (
        id INTEGER PRIMARY KEY,
        record TEXT NOT NULL
      )`);
    },
  },
  {
    version: 2,
    adds: "per-task state, and the task's workspace",
    up: (sql) => {
      sql.exec("CREATE TABLE IF NOT EXISTS task_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
      sql.exec(`CREATE TABLE IF NOT EXISTS workspace_files (
        path TEXT PRIMARY KEY,
        parent TEXT NOT NULL,
        type TEXT NOT NULL,
        content BLOB,
        r2_key TEXT,
        size INTEGER NOT NULL,
        mode INTEGER NOT NULL,
        mtime INTEGER NOT NULL
      )`);
      sql.exec("CREATE INDEX IF NOT EXISTS workspace_files_parent ON workspace_files (parent)");
    },
  },
  {
    version: 3,
    adds: "tool calls whose workspace changes are committed, and the task's limits, tags and retention",
    up: (sql) => {
      // With their results (see WorkspaceFs.commit).
      sql.exec("CREATE TABLE IF NOT EXISTS workspace_settled (key TEXT PRIMARY KEY, result TEXT NOT NULL)");
      addColumns(sql, "task", [
        ["limits", "TEXT NOT NULL DEFAULT '{}'"],
        ["tags", "TEXT NOT NULL DEFAULT '[]'"],
        ["retention_explicit", "INTEGER NOT NULL DEFAULT 0"],
      ]);
    },
  },
  {
    version: 4,
    adds: "checkpoints, pending model calls, the task's tenant, webhook and trigger, and callback deliveries",
    up: (sql) => {
      sql.exec(`CREATE TABLE IF NOT EXISTS checkpoints (
        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
        checkpoint_id TEXT NOT NULL UNIQUE,
        position TEXT NOT NULL UNIQUE,
        message_count INTEGER NOT NULL,
        next_action TEXT NOT NULL,
        current_agent TEXT NOT NULL,
        routing_key TEXT,
        metadata TEXT NOT NULL,
        created_at TEXT NOT NULL,
        awaiting_human INTEGER NOT NULL DEFAULT 0
      )`);
      sql.exec(`CREATE TABLE IF NOT EXISTS pending_calls (
        key TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        cache_creation_input_tokens INTEGER NOT NULL,
        cache_read_input_tokens INTEGER NOT NULL,
        output_chars INTEGER NOT NULL DEFAULT 0
      )`);
      addColumns(sql, "task", [
        ["tenant", "TEXT NOT NULL DEFAULT 'default'"],
        ["webhook", "TEXT"],
        ["trigger", "TEXT"],
      ]);
      sql.exec(`CREATE TABLE IF NOT EXISTS deliveries (
        id TEXT PRIMARY KEY,
        event_type TEXT NOT NULL,
        event_seq INTEGER NOT NULL UNIQUE,
        url TEXT NOT NULL,
        status TEXT NOT NULL,
        payload TEXT NOT NULL,
        attempts_left INTEGER NOT NULL,
        next_attempt_at INTEGER,
        created_at TEXT NOT NULL
      )`);
      sql.exec(`CREATE TABLE IF NOT EXISTS delivery_attempts (
        delivery_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        status_code INTEGER,
        error_class TEXT,
        error TEXT,
        duration_ms INTEGER,
        PRIMARY KEY (delivery_id, attempt)
      )`);
    },
  },
  {
    version: 5,
    adds: "the task's redaction mode and dry run; delivery attempts keep an error class and no longer any of the receiver's answer",
    up: (sql) => {
      addColumns(sql, "task", [
        ["redaction_mode", "TEXT NOT NULL DEFAULT 'full'"],
        ["dry_run", "INTEGER NOT NULL DEFAULT 0"],
      ]);
      const columns = columnsOf(sql, "delivery_attempts");
      // Objects from before error classes: their attempts' classes follow from the texts those versions wrote.
      if (!columns.has("error_class")) {
        sql.exec("ALTER TABLE delivery_attempts ADD COLUMN error_class TEXT");
        sql.exec(`UPDATE delivery_attempts SET error_class = CASE
            WHEN error LIKE 'the receiver answered %' THEN 'http_status'
            WHEN error LIKE 'OUTPOST_WEBHOOK_SECRET is not set%' THEN 'not_signed'
            WHEN error LIKE 'no answer within %' THEN 'timeout'
            WHEN error LIKE '% is not allowed: %' THEN 'blocked_url'
            ELSE 'connection_failed' END
          WHERE error IS NOT NULL AND error_class IS NULL`);
      }
      // Older versions kept the first KiB of each receiver's answer, which could be an internal host's reply: the
      // column goes, and DROP COLUMN rewrites the table, so none of it stays in the object's storage.
      if (columns.has("response_excerpt")) sql.exec("ALTER TABLE delivery_attempts DROP COLUMN response_excerpt");
    },
  },
  {
    version: 6,
    adds: "every table named after its subsystem (the run's tables runtime_*, the transcript bundle_*, callbacks_*)",
    up: (sql) => {
      // RENAME keeps the rows, the indexes and the AUTOINCREMENT counter (sqlite_sequence follows the name).
      for (const [from, to] of Object.entries(RENAMED_IN_VERSION_6)) sql.exec(`ALTER TABLE ${from} RENAME TO ${to}`);
    },
  },
  {
    version: 7,
    adds: "the task's crash count and each event's redaction mode on objects created before either existed",
    up: (sql) => {
      // Both columns were once added to the CREATE TABLE statements alone, so an object created before that lacks
      // them whatever its version: a crash could not be counted and its events could not be read.
      addColumns(sql, "task", [["crashes", "INTEGER NOT NULL DEFAULT 0"]]);
      addColumns(sql, "events_log", [["redaction_mode", "TEXT NOT NULL DEFAULT 'full'"]]);
    },
  },
  {
    version: 8,
    adds: "chat sessions: the row's kind and busy policy, and a session's turns",
    up: (sql) => {
      sql.exec("ALTER TABLE task ADD COLUMN kind TEXT NOT NULL DEFAULT 'task'");
      sql.exec("ALTER TABLE task ADD COLUMN busy TEXT");
      sql.exec(`CREATE TABLE sessions_turns (
        id TEXT PRIMARY KEY,
        idx INTEGER NOT NULL UNIQUE,
        message TEXT NOT NULL,
        status TEXT NOT NULL,
        streaming INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        started_at TEXT,
        ended_at TEXT,
        first_message INTEGER,
        start_model_turn INTEGER,
        usage_before TEXT,
        started_seq INTEGER,
        interrupted INTEGER NOT NULL DEFAULT 0,
        result TEXT
      )`);
    },
  },
  {
    version: 9,
    adds: "the task's structured output (seed 004 response_format)",
    up: (sql) => {
      sql.exec("ALTER TABLE task ADD COLUMN structured_output TEXT");
    },
  },
  {
    version: 10,
    adds: "run bundle format 2: where each file is in the bundle's one archive",
    up: (sql) => {
      sql.exec("ALTER TABLE bundle_files ADD COLUMN archive_offset INTEGER");
    },
  },
  {
    version: 11,
    adds: "the ledger of timers: each duty's next due time, the object's one alarm set to the earliest",
    up: (sql) => {
      // An object from before it keeps the one alarm it had; its duty is read into the ledger from its status when
      // the object next starts (src/runtime/timers.ts, adoptLegacyAlarm).
      sql.exec(
        "CREATE TABLE timers (kind TEXT PRIMARY KEY, due_at INTEGER NOT NULL, payload TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)",
      );
    },
  },
  {
    version: 12,
    adds: "a step's provider retries: the attempts the runtime chose to make, apart from those an interruption cost",
    up: (sql) => {
      sql.exec("ALTER TABLE runtime_steps ADD COLUMN retries INTEGER NOT NULL DEFAULT 0");
    },
  },
];

/** The version that brought the ledger of timers (src/storage/timer-ledger.ts). */
export const TIMERS_VERSION = 11;

/** The version the code expects: the last step's. */
export const SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;

/** A new object's schema as one script: FRESH_SCHEMA's statements, then every step recorded as applied. */
const FRESH_SCRIPT = [
  ...FRESH_SCHEMA,
  `INSERT INTO schema_migrations (version) VALUES ${MIGRATIONS.map((step) => `(${step.version})`).join(", ")}`,
].join(";\n");

/** Whether the object's storage has a schema at all (it held a task; an unknown id's object writes nothing). */
export function hasSchema(sql: SqlStorage): boolean {
  return hasTable(sql, "schema_migrations");
}

export function hasTable(sql: SqlStorage, name: string): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
}

/** The version the object's storage is at: 0 when it has none. */
export function schemaVersion(sql: SqlStorage): number {
  if (!hasSchema(sql)) return 0;
  return sql.exec<{ v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").one().v ?? 0;
}

/**
 * Applies the steps the object has not applied yet, in order, each in one transaction with its schema_migrations row,
 * so a step is either done and recorded or not started. Returns the version the storage is at. `onFresh` is called
 * when the storage was empty and now holds the tables and nothing else (its collaborators need not read it back);
 * `onStep` after each step applied to storage that held an older version.
 */
export function migrate(
  storage: Pick<DurableObjectStorage, "sql" | "transactionSync">,
  steps: readonly Migration[] = MIGRATIONS,
  onFresh?: () => void,
  onStep?: (version: number) => void,
): number {
  const { sql } = storage;
  // A new object: the tables as the steps would leave them, in one transaction (scripts/build-schema.ts).
  if (steps === MIGRATIONS && FRESH_SCHEMA_VERSION === SCHEMA_VERSION && isEmpty(sql)) {
    // One exec of every statement: a new object is created for each task, and a call per table cost more than the
    // tables themselves.
    storage.transactionSync(() => sql.exec(FRESH_SCRIPT));
    onFresh?.();
    return SCHEMA_VERSION;
  }
  sql.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)");
  let current = schemaVersion(sql);
  for (const step of steps) {
    if (step.version <= current) continue;
    storage.transactionSync(() => {
      step.up(sql);
      sql.exec("INSERT INTO schema_migrations (version) VALUES (?)", step.version);
    });
    current = step.version;
    onStep?.(step.version);
  }
  return current;
}

/**
 * No table of ours yet: only the platform's own, which our names never look like (workerd's `_cf_*`, SQLite's
 * `sqlite_*`, and miniflare's `__miniflare_do_name`, which `wrangler dev` and the tests' workerd add to every object).
 */
export function isEmpty(sql: SqlStorage): boolean {
  return (
    sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_\\_%' ESCAPE '\\'",
      )
      .one().n === 0
  );
}

function columnsOf(sql: SqlStorage, table: string): Set<string> {
  return new Set(
    sql
      .exec<{ name: string }>("SELECT name FROM pragma_table_info(?)", table)
      .toArray()
      .map((c) => c.name),
  );
}

/** Adds the columns `table` does not have yet, to objects that predate them. */
function addColumns(sql: SqlStorage, table: string, columns: readonly (readonly [string, string])[]): void {
  const existing = columnsOf(sql, table);
  for (const [name, type] of columns) {
    if (!existing.has(name)) sql.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
  }
}
