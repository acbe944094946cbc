// The storage schema's migrations (src/storage/migrations.ts) on objects deployed before the latest version: an
// object's storage built as version 5 left it, by hand, with a row in every table, is brought to the current version
// with every row kept under the new table names; an object created before the crash count and the events' redaction
// mode gets both columns; migrating again changes nothing; and a real task whose storage is put back as version 5
// left it is served whole after a reset, as a run in flight would be after a deploy.

import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isEmpty, MIGRATIONS, migrate, SCHEMA_VERSION } from "../../src/storage/migrations.ts";
import {
  api,
  defineAgent,
  done,
  events,
  script,
  startTask,
  storageAsBeforeVersion6,
  stubFor,
  TABLES_RENAMED_IN_VERSION_6,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";
import { runsBucket } from "../support/runs-bucket.ts";

/** Every table of a task object's storage as version 5 created it, under the names it had then. */
const VERSION_5_TABLES = [
  `CREATE TABLE task (id TEXT PRIMARY KEY, agent TEXT NOT NULL, input TEXT NOT NULL, metadata TEXT NOT NULL,
    status TEXT NOT NULL, model TEXT NOT NULL, result TEXT, error TEXT, usage TEXT NOT NULL, created_at TEXT NOT NULL,
    started_at TEXT, completed_at TEXT, retention_days INTEGER NOT NULL, parent_task_id TEXT, trace_id TEXT NOT NULL,
    root_span_id TEXT NOT NULL, bundle_flushed INTEGER NOT NULL DEFAULT 0, crashes INTEGER NOT NULL DEFAULT 0,
    limits TEXT NOT NULL DEFAULT '{}', tags TEXT NOT NULL DEFAULT '[]', retention_explicit INTEGER NOT NULL DEFAULT 0,
    tenant TEXT NOT NULL DEFAULT 'default', webhook TEXT, trigger TEXT, redaction_mode TEXT NOT NULL DEFAULT 'full',
    dry_run INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE events_log (seq INTEGER PRIMARY KEY, timestamp TEXT NOT NULL, event_type TEXT NOT NULL,
    span_id TEXT NOT NULL, payload TEXT NOT NULL, redaction_mode TEXT NOT NULL DEFAULT 'full')`,
  `CREATE TABLE steps_journal (name TEXT PRIMARY KEY, status TEXT NOT NULL, attempts INTEGER NOT NULL,
    span_id TEXT NOT NULL, result TEXT, result_key TEXT, started_at TEXT NOT NULL, completed_at TEXT)`,
  `CREATE TABLE conversation_messages (idx INTEGER PRIMARY KEY, role TEXT NOT NULL, content TEXT NOT NULL,
    created_at TEXT NOT NULL)`,
  "CREATE TABLE task_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  `CREATE TABLE bundle_files (path TEXT PRIMARY KEY, content TEXT, size INTEGER NOT NULL, content_type TEXT NOT NULL,
    created_at TEXT NOT NULL, uploaded INTEGER NOT NULL DEFAULT 0)`,
  "CREATE TABLE llm_transcript (id INTEGER PRIMARY KEY, record TEXT NOT NULL)",
  `CREATE TABLE workspace_files (path TEXT PRIMARY KEY, parent TEXT NOT NULL, type TEXT NOT NULL, content BLOB,
    r2_key TEXT, size INTEGER NOT NULL, mode INTEGER NOT NULL, mtime INTEGER NOT NULL)`,
  "CREATE INDEX workspace_files_parent ON workspace_files (parent)",
  "CREATE TABLE workspace_settled (key TEXT PRIMARY KEY, result TEXT NOT NULL)",
  `CREATE TABLE checkpoints (sequence INTEGER PRIMARY KEY AUTOINCREMENT, checkpoint_id TEXT NOT NULL UNIQUE,
    position TEXT NOT NULL UNIQUE, message_count INTEGER NOT NULL, next_action TEXT NOT NULL,
    current_agent TEXT NOT NULL, routing_key TEXT, metadata TEXT NOT NULL, created_at TEXT NOT NULL,
    awaiting_human INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE pending_calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, input_tokens INTEGER NOT NULL,
    cache_creation_input_tokens INTEGER NOT NULL, cache_read_input_tokens INTEGER NOT NULL,
    output_chars INTEGER NOT NULL DEFAULT 0)`,
  `CREATE TABLE deliveries (id TEXT PRIMARY KEY, event_type TEXT NOT NULL, event_seq INTEGER NOT NULL UNIQUE,
    url TEXT NOT NULL, status TEXT NOT NULL, payload TEXT NOT NULL, attempts_left INTEGER NOT NULL,
    next_attempt_at INTEGER, created_at TEXT NOT NULL)`,
  `CREATE TABLE delivery_attempts (delivery_id TEXT NOT NULL, attempt INTEGER NOT NULL, started_at TEXT NOT NULL,
    status_code INTEGER, error_class TEXT, error TEXT, duration_ms INTEGER, PRIMARY KEY (delivery_id, attempt))`,
  "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)",
];

const AT = "2026-01-02T03:04:05.000Z";
const TASK_ID = "11111111-1111-4111-8111-111111111111";

/** A row in every table of version 5, by its table's name then. */
const VERSION_5_ROWS: Readonly<Record<string, Record<string, SqlStorageValue>[]>> = {
  task: [
    {
      id: TASK_ID,
      agent: "assistant",
      input: "hello",
      metadata: "{}",
      status: "running",
      model: "claude-sonnet-5-5",
      result: null,
      error: null,
      usage: "{}",
      created_at: AT,
      started_at: AT,
      completed_at: null,
      retention_days: 7,
      parent_task_id: null,
      trace_id: "abcdefabcdefabcdefabcdefabcdefab",
      root_span_id: "abcdefabcdefabcd",
      bundle_flushed: 0,
      crashes: 1,
      limits: '{"max_turns":3}',
      tags: '["debug"]',
      retention_explicit: 0,
      tenant: "default",
      webhook: '{"url":"https://example.com/hook","events":["completed"]}',
      trigger: null,
      redaction_mode: "full",
      dry_run: 0,
    },
  ],
  events_log: [
    {
      seq: 1,
      timestamp: AT,
      event_type: "task_created",
      span_id: "aaaaaaaaaaaaaaaa",
      payload: "{}",
      redaction_mode: "full",
    },
    {
      seq: 2,
      timestamp: AT,
      event_type: "run_started",
      span_id: "bbbbbbbbbbbbbbbb",
      payload: "{}",
      redaction_mode: "full",
    },
  ],
  steps_journal: [
    {
      name: "turn_1_model",
      status: "completed",
      attempts: 1,
      span_id: "cccccccccccccccc",
      result: '{"ok":true}',
      result_key: null,
      started_at: AT,
      completed_at: AT,
    },
    {
      name: "turn_2_tool_toolu_1",
      status: "started",
      attempts: 2,
      span_id: "dddddddddddddddd",
      result: null,
      result_key: null,
      started_at: AT,
      completed_at: null,
    },
  ],
  conversation_messages: [
    { idx: 0, role: "user", content: '"hello"', created_at: AT },
    { idx: 1, role: "assistant", content: '[{"type":"text","text":"hi"}]', created_at: AT },
  ],
  task_state: [{ key: "todos", value: '[{"content":"one","status":"pending"}]' }],
  bundle_files: [
    { path: "events.jsonl", content: "{}\n", size: 3, content_type: "application/jsonl", created_at: AT, uploaded: 0 },
  ],
  llm_transcript: [{ id: 1, record: '{"turn_index":1}' }],
  workspace_files: [
    {
      path: "/notes.md",
      parent: "/",
      type: "file",
      content: new Uint8Array([107, 101, 101, 112]).buffer,
      r2_key: null,
      size: 4,
      mode: 420,
      mtime: 1_700_000_000_000,
    },
  ],
  workspace_settled: [{ key: "toolu_0", result: '{"content":"ok","is_error":false}' }],
  checkpoints: [
    {
      sequence: 7,
      checkpoint_id: "22222222-2222-4222-8222-222222222222",
      position: "turn_1",
      message_count: 2,
      next_action: "tool_calls",
      current_agent: "assistant",
      routing_key: null,
      metadata: '{"turn":1}',
      created_at: AT,
      awaiting_human: 0,
    },
  ],
  pending_calls: [
    {
      key: "turn_2_model",
      model: "claude-sonnet-5-5",
      input_tokens: 10,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_chars: 40,
    },
  ],
  deliveries: [
    {
      id: "msg_1",
      event_type: "task.completed",
      event_seq: 2,
      url: "https://example.com/hook",
      status: "pending",
      payload: "{}",
      attempts_left: 4,
      next_attempt_at: 1_700_000_000_000,
      created_at: AT,
    },
  ],
  delivery_attempts: [
    {
      delivery_id: "msg_1",
      attempt: 1,
      started_at: AT,
      status_code: 500,
      error_class: "http_status",
      error: "the receiver answered 500",
      duration_ms: 12,
    },
  ],
  schema_migrations: [{ version: 5 }],
};

/** The table names after version 6. */
const renamed = (table: string) => TABLES_RENAMED_IN_VERSION_6[table] ?? table;

/** The object's tables (SQLite's and the platform's own left out), sorted. */
function tablesOf(sql: SqlStorage): string[] {
  return sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )
    .toArray()
    .map((t) => t.name);
}

/** Every row of every table, and the indexes, as a value to compare. */
function snapshot(sql: SqlStorage): Record<string, unknown> {
  const rows = Object.fromEntries(tablesOf(sql).map((t) => [t, sql.exec(`SELECT * FROM "${t}"`).toArray()]));
  const indexes = sql
    .exec<{ name: string; tbl_name: string }>(
      "SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name",
    )
    .toArray();
  const sequences = sql.exec("SELECT name, seq FROM sqlite_sequence ORDER BY name").toArray();
  return { rows, indexes, sequences };
}

function freshObject() {
  return env.TASKS.get(env.TASKS.idFromName(`migrations-${crypto.randomUUID()}`));
}

/** Every table and index as SQLite keeps it (its CREATE statement), and the versions recorded. */
function schemaOf(sql: SqlStorage) {
  return {
    objects: sql
      .exec(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY name",
      )
      .toArray(),
    versions: sql.exec("SELECT version FROM schema_migrations ORDER BY version").toArray(),
  };
}

describe("storage migrations", () => {
  it("creates a new object's storage in one step exactly as the steps one by one would (scripts/build-schema.ts)", async () => {
    const fresh = await runInDurableObject(freshObject(), (_instance, state) => {
      const version = migrate(state.storage);
      return { version, schema: schemaOf(state.storage.sql) };
    });
    // A copy of the list is not MIGRATIONS itself, so migrate() runs each step in turn.
    const stepwise = await runInDurableObject(freshObject(), (_instance, state) => {
      const version = migrate(state.storage, [...MIGRATIONS]);
      return { version, schema: schemaOf(state.storage.sql) };
    });
    expect(fresh.version).toBe(SCHEMA_VERSION);
    expect(stepwise.version).toBe(SCHEMA_VERSION);
    expect(fresh.schema.versions).toEqual(MIGRATIONS.map((step) => ({ version: step.version })));
    expect(fresh.schema).toEqual(stepwise.schema);
    // sqlite_sequence (the checkpoints' AUTOINCREMENT) and the index are there too.
    expect((fresh.schema.objects as { name: string }[]).map((o) => o.name)).toContain("sqlite_sequence");
    expect((fresh.schema.objects as { name: string }[]).map((o) => o.name)).toContain("workspace_files_parent");
  });

  it("counts an object that holds only the platform's tables as new, as wrangler dev gives it miniflare's", async () => {
    const seen = await runInDurableObject(freshObject(), (_instance, state) => {
      const { sql } = state.storage;
      // What wrangler dev's miniflare creates in every object it names (the tests' workerd does not).
      sql.exec("CREATE TABLE __miniflare_do_name (name TEXT PRIMARY KEY)");
      state.storage.kv.put("a key", "a value");
      const before = isEmpty(sql);
      migrate(state.storage);
      return { before, after: isEmpty(sql) };
    });
    expect(seen).toEqual({ before: true, after: false });
  });

  it("brings an object at version 5 to the current version, with every row under its subsystem's table name", async () => {
    const outcome = await runInDurableObject(freshObject(), (_instance, state) => {
      const sql = state.storage.sql;
      for (const statement of VERSION_5_TABLES) sql.exec(statement);
      for (const [table, rows] of Object.entries(VERSION_5_ROWS)) {
        for (const row of rows) {
          const columns = Object.keys(row);
          sql.exec(
            `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
            ...Object.values(row),
          );
        }
      }
      const version = migrate(state.storage);
      return { version, after: snapshot(sql) };
    });
    const expectedRows = {
      ...Object.fromEntries(
        Object.entries(VERSION_5_ROWS).map(([table, rows]) => [
          renamed(table),
          table === "schema_migrations" ? [5, 6, 7, 8, 9, 10, 11, 12].map((version) => ({ version })) : rows,
        ]),
      ),
      // Version 8: every row held a task, and there are no sessions' turns yet; version 9: no structured output;
      // version 10: every bundle file is where format 1 put it, an object of its own.
      task: (VERSION_5_ROWS.task ?? []).map((row) => ({ ...row, kind: "task", busy: null, structured_output: null })),
      bundle_files: (VERSION_5_ROWS.bundle_files ?? []).map((row) => ({ ...row, archive_offset: null })),
      // Version 12: no step was retried by the runtime's choice.
      runtime_steps: (VERSION_5_ROWS.steps_journal ?? []).map((row) => ({ ...row, retries: 0 })),
      sessions_turns: [],
      // Version 11: the ledger of timers, empty until the object next starts (it reads its one alarm's duty into it).
      timers: [],
    };
    expect(outcome.after).toEqual({
      rows: expectedRows,
      indexes: [{ name: "workspace_files_parent", tbl_name: "workspace_files" }],
      // The checkpoints' AUTOINCREMENT counter goes with its table.
      sequences: [{ name: "runtime_checkpoints", seq: 7 }],
    });
    expect([outcome.version, SCHEMA_VERSION]).toEqual([12, 12]);
    expect(Object.keys(outcome.after.rows as object).sort()).toEqual([
      "bundle_files",
      "bundle_transcript",
      "callbacks_attempts",
      "callbacks_deliveries",
      "events_log",
      "runtime_checkpoints",
      "runtime_messages",
      "runtime_pending_calls",
      "runtime_steps",
      "schema_migrations",
      "sessions_turns",
      "task",
      "task_state",
      "timers",
      "workspace_files",
      "workspace_settled",
    ]);
  });

  it("adds the crash count and the events' redaction mode to an object created before either column, keeping its rows", async () => {
    const outcome = await runInDurableObject(freshObject(), (_instance, state) => {
      const sql = state.storage.sql;
      for (const statement of VERSION_5_TABLES) sql.exec(statement);
      for (const table of ["task", "events_log"]) {
        for (const row of VERSION_5_ROWS[table] ?? []) {
          const columns = Object.keys(row);
          sql.exec(
            `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
            ...Object.values(row),
          );
        }
      }
      // As the objects created before these columns hold their tables (DROP COLUMN rewrites the table without it),
      // at version 6: under the names it gave them.
      sql.exec("ALTER TABLE task DROP COLUMN crashes");
      sql.exec("ALTER TABLE events_log DROP COLUMN redaction_mode");
      for (const [old, now] of Object.entries(TABLES_RENAMED_IN_VERSION_6))
        sql.exec(`ALTER TABLE ${old} RENAME TO ${now}`);
      sql.exec("INSERT INTO schema_migrations (version) VALUES (6)");
      const version = migrate(state.storage);
      return {
        version,
        task: sql.exec("SELECT id, status, crashes FROM task").toArray(),
        events: sql.exec("SELECT seq, event_type, redaction_mode FROM events_log ORDER BY seq").toArray(),
      };
    });
    expect(outcome.version).toBe(SCHEMA_VERSION);
    expect(outcome.task).toEqual([{ id: TASK_ID, status: "running", crashes: 0 }]);
    expect(outcome.events).toEqual(
      (VERSION_5_ROWS.events_log ?? []).map((e) => ({ seq: e.seq, event_type: e.event_type, redaction_mode: "full" })),
    );
    expect(outcome.events.length).toBeGreaterThan(0);
  });

  it("changes nothing when an object at the current version is migrated again", async () => {
    const outcome = await runInDurableObject(freshObject(), (_instance, state) => {
      const first = migrate(state.storage);
      const before = snapshot(state.storage.sql);
      const again = migrate(state.storage);
      return { first, again, before, after: snapshot(state.storage.sql) };
    });
    expect([outcome.first, outcome.again]).toEqual([SCHEMA_VERSION, SCHEMA_VERSION]);
    expect(outcome.after).toEqual(outcome.before);
    expect((outcome.before.rows as Record<string, unknown>).schema_migrations).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((version) => ({ version })),
    );
  });

  it("serves a task whose object holds the tables as version 5 left them, with everything it had, after a reset", async () => {
    const agent = defineAgent({ fileSystem: { write: true } });
    const marker = uniqueMarker("migrate-v5");
    await script(marker, [
      { content: [toolUse("Write", { file_path: "notes.md", content: "kept" })], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(agent, `write ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const read = async () => ({
      task: await (await api(`/v1/tasks/${task.id}`)).json(),
      messages: await (await api(`/v1/tasks/${task.id}/messages`)).json(),
      checkpoints: await (await api(`/v1/tasks/${task.id}/checkpoints`)).json(),
      artifacts: await (await api(`/v1/tasks/${task.id}/artifacts`)).json(),
      workspace: await (await api(`/v1/tasks/${task.id}/workspace`)).json(),
      transcript: await (await api(`/v1/tasks/${task.id}/artifacts/llm_transcript.log`)).text(),
      events: await events(task.id),
    });
    const before = await read();
    await runInDurableObject(stubFor(task.id), async (_instance, state) => {
      const { sql } = state.storage;
      // Versions before 10 kept each bundle file as an object of its own (bundle format 1).
      const archived = sql
        .exec<{ path: string; archive_offset: number; size: number }>(
          "SELECT path, archive_offset, size FROM bundle_files WHERE archive_offset IS NOT NULL",
        )
        .toArray();
      expect(archived.length).toBeGreaterThan(0);
      for (const file of archived) {
        const range = { offset: file.archive_offset, length: file.size };
        const bytes = await (await runsBucket().get(`runs/${task.id}/bundle.tar`, { range }))?.arrayBuffer();
        await runsBucket().put(`runs/${task.id}/${file.path}`, bytes ?? "");
      }
      storageAsBeforeVersion6(sql);
      sql.exec("DELETE FROM schema_migrations WHERE version > 5");
    });
    // The next request meets a fresh instance, whose constructor migrates the storage it finds.
    await abortAllDurableObjects();
    expect(await read()).toEqual(before);
    const stored = await runInDurableObject(stubFor(task.id), (_instance, state) => ({
      tables: tablesOf(state.storage.sql),
      version: state.storage.sql.exec<{ v: number }>("SELECT MAX(version) AS v FROM schema_migrations").one().v,
    }));
    expect(stored.version).toBe(SCHEMA_VERSION);
    expect(stored.tables.filter((t) => t in TABLES_RENAMED_IN_VERSION_6)).toEqual([]);
    expect(stored.tables).toEqual(expect.arrayContaining(Object.values(TABLES_RENAMED_IN_VERSION_6)));
  });
});
