// What a task object reads back of its own writes, over its real storage: the task row is the row a write returned
// (src/tasks/task-store.ts), a step met for the first time is recorded in one statement (src/runtime/step-journal.ts),
// and a checkpoint's position recorded twice is recorded once, without using up a sequence number
// (src/runtime/checkpoints.ts), and an object that has just created its tables reads none of them back for the run
// (the log's last number and time, the state's keys, the conversation's count, calls left by an earlier instance).
// Each read saved is checked for what it returns, and a new instance over the same storage, as after an eviction,
// reads the same.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/events/event-log.ts";
import { CheckpointLog } from "../../src/runtime/checkpoints.ts";
import { MessageLog } from "../../src/runtime/conversation.ts";
import { PendingCalls } from "../../src/runtime/pending-calls.ts";
import { AWAITING_SUBAGENTS_KEY } from "../../src/runtime/run-wiring.ts";
import { StepJournal } from "../../src/runtime/step-journal.ts";
import { MIGRATIONS, migrate } from "../../src/storage/migrations.ts";
import { TaskState } from "../../src/tasks/task-state.ts";
import { TaskStore } from "../../src/tasks/task-store.ts";
import { runsStore } from "../support/runs-bucket.ts";

/** The object's SQL with every statement it is given recorded: the storage itself, counted. */
function counted(sql: SqlStorage): { sql: SqlStorage; statements: string[] } {
  const statements: string[] = [];
  const proxy = new Proxy(sql, {
    get(target, property) {
      if (property === "exec") {
        return (query: string, ...bindings: unknown[]) => {
          statements.push(query.replace(/\s+/g, " ").trim());
          return target.exec(query, ...bindings);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { sql: proxy, statements };
}

/** Runs `fn` over a fresh task object's migrated storage. */
async function inObject<T>(fn: (storage: DurableObjectStorage) => T | Promise<T>): Promise<T> {
  const stub = env.TASKS.get(env.TASKS.idFromName(`task-object-reads-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    migrate(state.storage);
    return fn(state.storage);
  });
}

const init = {
  id: "task-reads-1",
  agent: "planner",
  input: "plan",
  metadata: {},
  model: "claude-sonnet-4-5",
  retentionDays: 30,
  retentionExplicit: false,
  parentTaskId: null,
  tags: [],
  tenant: "default",
};

describe("TaskStore", () => {
  it("keeps the row each write returns, and reads the task only once", async () => {
    const result = await inObject((storage) => {
      const { sql, statements } = counted(storage.sql);
      const store = new TaskStore(sql);
      store.create(init);
      const started = store.markRunning();
      const usage = store.addUsage({
        model: "claude-sonnet-4-5",
        input_tokens: 100,
        output_tokens: 20,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cost_usd: 0.0006,
      });
      store.setMetadata({ stage: "two" });
      const crashes = store.recordCrash();
      const finished = store.finish("completed", { result: "done" });
      store.markBundleFlushed();
      const seen = store.get();
      // A fresh instance over the same storage, as after an eviction.
      const fresh = new TaskStore(storage.sql).get();
      return { started, usage, crashes, finished, seen, fresh, statements };
    });
    expect(result.started).toBe(true);
    expect(result.finished).toBe(true);
    expect(result.crashes).toBe(1);
    expect(result.usage.input_tokens).toBe(100);
    expect(result.seen).toMatchObject({
      id: "task-reads-1",
      status: "completed",
      result: "done",
      metadata: { stage: "two" },
      bundleFlushed: true,
      usage: { input_tokens: 100, output_tokens: 20 },
    });
    expect(result.seen?.started_at).toEqual(expect.any(String));
    expect(result.fresh).toEqual(result.seen);
    // The one read is create()'s look for an existing task; every later write returns its row.
    expect(result.statements.filter((s) => s.startsWith("SELECT"))).toEqual(["SELECT * FROM task LIMIT 1"]);
  });

  it("leaves the task as it was when a transition does not apply, and reads it again after invalidate()", async () => {
    const result = await inObject((storage) => {
      const store = new TaskStore(storage.sql);
      store.create(init);
      // pending → input_required is not a transition: nothing is written.
      const applied = store.awaitInput();
      const after = store.get()?.status;
      storage.sql.exec("UPDATE task SET status = 'running'");
      const cached = store.get()?.status;
      store.invalidate();
      return { applied, after, cached, reread: store.get()?.status };
    });
    expect(result).toEqual({ applied: false, after: "pending", cached: "pending", reread: "running" });
  });
});

describe("StepJournal.begin", () => {
  it("records a new step in one statement, and a replay finds it started or completed", async () => {
    const result = await inObject(async (storage) => {
      const { sql, statements } = counted(storage.sql);
      const journal = new StepJournal(sql, runsStore(), () => "runs/task-reads-1/");
      const first = await journal.begin("turn_1_model");
      const firstStatements = statements.length;
      // An eviction before the step completed: the next instance finds it started.
      const replay = await new StepJournal(storage.sql, runsStore(), () => "runs/task-reads-1/").begin("turn_1_model");
      await journal.complete("turn_1_model", { text: "answer" });
      const done = await new StepJournal(storage.sql, runsStore(), () => "runs/task-reads-1/").begin("turn_1_model");
      const attempts = storage.sql.exec("SELECT attempts FROM runtime_steps WHERE name = 'turn_1_model'").one();
      return { first, firstStatements, replay, done, attempts };
    });
    expect(result.first).toMatchObject({ state: "started", attempt: 1, interrupted: false });
    expect(result.firstStatements).toBe(1);
    expect(result.replay).toEqual({
      state: "started",
      attempt: 2,
      spanId: (result.first as { spanId: string }).spanId,
      interrupted: true,
    });
    expect(result.done).toEqual({ state: "completed", result: { text: "answer" } });
    expect(result.attempts).toEqual({ attempts: 2 });
  });
});

describe("CheckpointLog.record", () => {
  it("records a position once, in one statement, and a repeat uses up no sequence number", async () => {
    const result = await inObject((storage) => {
      const { sql, statements } = counted(storage.sql);
      const conversation = new MessageLog(storage.sql);
      const log = new CheckpointLog(sql, conversation, () => "task-reads-1");
      const state = { next_action: "model_turn" as const, current_agent: "planner", routing_key: null, metadata: {} };
      conversation.count();
      const first = log.record("after_turn_1", state);
      const writes = statements.length;
      const repeat = log.record("after_turn_1", state);
      const next = log.record("after_turn_2", state);
      return { first, writes, repeat, next, all: log.list().map((c) => c.position) };
    });
    expect(result.writes).toBe(1);
    expect(result.repeat).toBeNull();
    expect(result.next?.sequence).toBe((result.first?.sequence ?? 0) + 1);
    expect(result.all).toEqual(["after_turn_1", "after_turn_2"]);
  });
});

describe("a new task's object", () => {
  const identity = () => ({ runId: "task-reads-1", traceId: "0".repeat(32), rootSpanId: "0".repeat(16) });

  it("reads none of its new tables back: the log, the state, the conversation and the calls in flight", async () => {
    const stub = env.TASKS.get(env.TASKS.idFromName(`task-object-reads-${crypto.randomUUID()}`));
    const result = await runInDurableObject(stub, async (_instance, state) => {
      const { sql, statements } = counted(state.storage.sql);
      const events = new EventLog(sql, identity);
      const taskState = new TaskState(sql);
      const conversation = new MessageLog(sql);
      const calls = new PendingCalls(sql);
      let fresh = 0;
      migrate(state.storage, MIGRATIONS, () => {
        fresh++;
        for (const table of [events, taskState, conversation, calls]) table.knownEmpty();
      });
      const before = statements.length;
      const reads = {
        lastSeq: events.lastSeq(),
        lastAt: events.lastOwnTimestamp(),
        value: taskState.get(AWAITING_SUBAGENTS_KEY),
        count: conversation.count(),
        context: conversation.contextMessages(),
        abandoned: calls.takeAbandoned(),
      };
      taskState.delete(AWAITING_SUBAGENTS_KEY);
      const readStatements = statements.slice(before);
      // Written, and then read without a statement: what this instance wrote is what it knows.
      const appended = events.append("run_started", {
        task: "plan",
        agent: "planner",
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        dry_run: false,
        max_turns: 10,
        max_budget_usd: null,
        max_tokens: null,
      });
      taskState.agent.put("k", { a: 1 });
      const afterWrites = statements.length;
      const known = {
        lastAt: events.lastOwnTimestamp(),
        k: taskState.agent.get("k"),
        other: taskState.agent.get("other"),
      };
      const knownStatements = statements.length - afterWrites;
      // A new instance over the same storage (as after an eviction) reads what is there.
      const again = {
        lastSeq: new EventLog(state.storage.sql, identity).lastSeq(),
        lastAt: new EventLog(state.storage.sql, identity).lastOwnTimestamp(),
        k: new TaskState(state.storage.sql).agent.get("k"),
      };
      // Migrating storage that holds tables is not fresh.
      migrate(state.storage, MIGRATIONS, () => fresh++);
      return { fresh, reads, readStatements, appended, known, knownStatements, again };
    });
    expect(result.fresh).toBe(1);
    expect(result.reads).toEqual({ lastSeq: 0, lastAt: null, value: undefined, count: 0, context: [], abandoned: [] });
    expect(result.readStatements).toEqual([]);
    expect(result.known).toEqual({ lastAt: result.appended.timestamp, k: { a: 1 }, other: undefined });
    expect(result.knownStatements).toBe(0);
    expect(result.again).toEqual({ lastSeq: 1, lastAt: result.appended.timestamp, k: { a: 1 } });
  });

  it("reads the state again once a value too long to remember was written, and after invalidate()", async () => {
    const result = await inObject((storage) => {
      const { sql, statements } = counted(storage.sql);
      const taskState = new TaskState(sql);
      taskState.knownEmpty();
      // Written behind its back (as only a test does): a key it knows nothing of counts as absent while it knows all.
      storage.sql.exec("INSERT INTO task_state (key, value) VALUES ('hidden', '1')");
      const whileAllKnown = taskState.agent.get("hidden");
      taskState.agent.put("long", "x".repeat(5000));
      storage.sql.exec("INSERT INTO task_state (key, value) VALUES ('hidden2', '2')");
      const before = statements.length;
      const afterLong = { long: taskState.agent.get<string>("long")?.length, hidden2: taskState.agent.get("hidden2") };
      const readAfterLong = statements.length - before;
      taskState.invalidate();
      return { whileAllKnown, afterLong, readAfterLong, afterInvalidate: taskState.agent.get("hidden") };
    });
    expect(result.whileAllKnown).toBeUndefined();
    expect(result.afterLong).toEqual({ long: 5000, hidden2: 2 });
    expect(result.readAfterLong).toBe(2);
    expect(result.afterInvalidate).toBe(1);
  });
});
