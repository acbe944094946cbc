// One Durable Object per task (seed 003 Task). It owns the task's state, its event log, its step journal and its
// run bundle, drives the run itself, and serves SSE subscribers. This class only wires those collaborators
// together and exposes typed RPC methods; each subsystem lives in src/.
import { DurableObject } from "cloudflare:workers";
import { registry } from "../src/agents/catalog.ts";
import { loadPriceTable } from "../src/config/prices.ts";
import type { Env } from "../src/env.ts";
import { toErrorInfo } from "../src/errors.ts";
import { EventLog } from "../src/events/event-log.ts";
import { TERMINAL_EVENT_TYPES } from "../src/events/event-record.ts";
import { openEventStream } from "../src/events/sse.ts";
import { AnthropicProvider } from "../src/llm/anthropic.ts";
import { type ArtifactEntry, RunBundle, runPrefix } from "../src/runs/run-bundle.ts";
import { Transcript } from "../src/runs/transcript.ts";
import { MessageLog, type StoredMessage } from "../src/runtime/conversation.ts";
import { RunRuntime } from "../src/runtime/run-runtime.ts";
import { runTask } from "../src/runtime/runner.ts";
import { StepJournal } from "../src/runtime/step-journal.ts";
import { isTerminal, type RpcResult, type TaskInit, type TaskView } from "../src/tasks/task.ts";
import { TaskState } from "../src/tasks/task-state.ts";
import { type TaskRecord, TaskStore } from "../src/tasks/task-store.ts";

/**
 * While a run is in flight the object keeps an alarm this far ahead. An awaited fetch does not keep an object
 * alive (it is evicted after 70–140 s without events), so each alarm both proves the run is still going and, if
 * the object was evicted or restarted, resumes the run from its journal.
 */
const HEARTBEAT_MS = 30_000;
/** The SDK's transport retries per model call; the base layer adds none (seed 001 clarification). */
const MODEL_MAX_RETRIES = 2;
/** Runs that crash outside the agent's own error handling (storage failures, bugs) are retried this often. */
const MAX_RUN_CRASHES = 3;
/** A failed bundle upload is retried after this, doubling up to MAX_UPLOAD_RETRY_MS, for as long as it takes. */
const UPLOAD_RETRY_MS = 60_000;
const MAX_UPLOAD_RETRY_MS = 60 * 60_000;
/**
 * The storage schema. Raise it with every change to a table and add the step that brings older objects up to date:
 * objects keep their storage across deploys, and runs in flight resume on the new code.
 */
const SCHEMA_VERSION = 1;

export type Subscription = { id: string; stream: ReadableStream<Uint8Array> } | { finished: true };

export class TaskObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly store: TaskStore;
  private readonly events: EventLog;
  private readonly journal: StepJournal;
  private readonly conversation: MessageLog;
  private readonly state: TaskState;
  private readonly bundle: RunBundle;
  private readonly transcript: Transcript;
  /** False until a task is created: an object asked about an unknown id writes nothing, not even its schema. */
  private ready: boolean;
  /** The run executing in this instance, if any. Only one instance of an object exists at a time. */
  private active: { promise: Promise<void>; abort: AbortController } | null = null;
  /** When a run last crashed in this instance (the heartbeat, not readers, retries it for a while). */
  private lastCrashAt: number | undefined;
  /** Consecutive failed bundle uploads in this instance, for the retry backoff. */
  private uploadFailures = 0;
  /** Open SSE subscriptions by id, so the Worker can end one when its client disconnects. */
  private readonly subscriptions = new Map<string, AbortController>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.ready = hasSchema(this.sql);
    if (this.ready) migrate(this.sql);
    this.store = new TaskStore(this.sql);
    const taskId = () => this.requireTask().id;
    this.events = new EventLog(this.sql, () => {
      const task = this.requireTask();
      return { runId: task.id, traceId: task.traceId, rootSpanId: task.rootSpanId };
    });
    this.journal = new StepJournal(this.sql, env.RUNS, () => `${runPrefix(taskId())}.journal/`);
    this.conversation = new MessageLog(this.sql);
    this.state = new TaskState(this.sql);
    this.bundle = new RunBundle(this.sql, env.RUNS, taskId);
    this.transcript = new Transcript(this.sql);
  }

  /** Creates the task and starts its run. Idempotent: a second call returns the task as it is. */
  async start(init: TaskInit): Promise<TaskView> {
    if (!this.ready) {
      migrate(this.sql);
      this.ready = true;
    }
    if (this.store.create(init)) {
      const task = this.requireTask();
      this.events.append("task_created", {
        task_id: task.id,
        agent: task.assigned_agent,
        input: task.input,
        metadata: task.metadata,
        model: task.model,
        parent_task_id: task.parent_task_id,
      });
      await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
      const accepted = this.view(this.requireTask());
      this.launch();
      return accepted;
    }
    return this.view(this.requireTask());
  }

  async get(): Promise<TaskView | null> {
    const task = this.task();
    if (!task) return null;
    this.resumeIfIdle(task);
    return this.view(task);
  }

  /** Resolves when the task has ended or after `timeoutMs`, whichever comes first. */
  async wait(timeoutMs: number): Promise<TaskView | null> {
    const task = this.task();
    if (!task) return null;
    if (isTerminal(task.status) || timeoutMs <= 0) return this.view(task);
    this.resumeIfIdle(task);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const stop = this.events.listen((record) => {
        if (TERMINAL_EVENT_TYPES.has(record.event_type)) done();
      });
      function done() {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
    return this.view(this.requireTask());
  }

  async messages(): Promise<StoredMessage[] | null> {
    return this.task() ? this.conversation.list() : null;
  }

  /**
   * SSE bytes: every event after `after`, then live events, ending after the terminal event. The caller passes
   * the id to `unsubscribe` when its client goes: cancelling an RPC stream reaches the object only at its next write.
   * `finished` means the run has ended and the cursor is at or past its last event: there is nothing left to send.
   */
  async subscribe(after: number): Promise<Subscription | null> {
    const task = this.task();
    if (!task) return null;
    if (isTerminal(task.status) && after >= this.events.lastSeq()) return { finished: true };
    this.resumeIfIdle(task);
    const id = crypto.randomUUID();
    const abort = new AbortController();
    this.subscriptions.set(id, abort);
    const stream = openEventStream(this.events, after, {
      signal: abort.signal,
      onClose: () => this.subscriptions.delete(id),
      isFinished: () => isTerminal(this.requireTask().status),
    });
    return { id, stream };
  }

  async unsubscribe(id: string): Promise<void> {
    this.subscriptions.get(id)?.abort();
  }

  /** Live readers attached to the task (SSE subscribers and ?wait= callers). */
  async subscriberCount(): Promise<number> {
    return this.events.listenerCount();
  }

  /** Cancels the run at its next safe point (the model stream is aborted at once). */
  async cancel(): Promise<RpcResult<TaskView>> {
    const task = this.task();
    if (!task) return { ok: false, error: { code: "task_not_found", message: "No such task." } };
    if (!this.store.finish("canceled", {})) {
      return {
        ok: false,
        error: { code: "task_already_finished", message: `The task has already ended with status ${task.status}.` },
      };
    }
    this.events.append("run_canceled", { reason: "canceled by client", previous_status: task.status });
    // A running loop uploads the bundle once it has unwound (afterRun); otherwise do it now.
    if (this.active) this.active.abort.abort();
    else await this.scheduleBundleUpload();
    return { ok: true, value: this.view(this.requireTask()) };
  }

  async artifacts(): Promise<ArtifactEntry[] | null> {
    if (!this.task()) return null;
    await this.completeBundle();
    return this.bundle.list();
  }

  /** A staged artifact's content, or where it is in R2. */
  async artifact(
    path: string,
  ): Promise<{ kind: "staged"; content: string; content_type: string } | { kind: "r2"; key: string } | null> {
    const task = this.task();
    if (!task) return null;
    await this.completeBundle();
    if (!this.bundle.has(path)) return null;
    const staged = this.bundle.staged(path);
    if (staged) return { kind: "staged", ...staged };
    return { kind: "r2", key: runPrefix(task.id) + path };
  }

  /** Heartbeat and recovery: resumes an interrupted run, uploads an ended run's bundle. Idempotent. */
  override async alarm(): Promise<void> {
    const task = this.task();
    if (!task) return;
    if (!isTerminal(task.status)) {
      await this.ctx.storage.setAlarm(Date.now() + HEARTBEAT_MS);
      if (!this.active) this.launch();
      return;
    }
    if (this.active || task.bundleFlushed) return;
    try {
      await this.flushBundle();
      this.uploadFailures = 0;
    } catch (error) {
      // R2 may be down for longer than the platform's own alarm retries last: keep trying, backing off to an hour.
      this.uploadFailures++;
      const delay = Math.min(UPLOAD_RETRY_MS * 2 ** (this.uploadFailures - 1), MAX_UPLOAD_RETRY_MS);
      console.error("bundle upload failed; retrying", task.id, error instanceof Error ? error.message : error);
      await this.ctx.storage.setAlarm(Date.now() + delay);
    }
  }

  private task(): TaskRecord | null {
    return this.ready ? this.store.get() : null;
  }

  /**
   * After an eviction the heartbeat alarm resumes the run; a reader arriving first resumes it sooner. Not right after
   * a crash, though: a polling client must not use up the crash allowance in a few milliseconds.
   */
  private resumeIfIdle(task: TaskRecord): void {
    if (isTerminal(task.status) || this.active) return;
    if (this.lastCrashAt !== undefined && Date.now() - this.lastCrashAt < HEARTBEAT_MS) return;
    this.launch();
  }

  /** Starts the run in this instance unless one is already executing here. */
  private launch(): void {
    if (this.active) return;
    const abort = new AbortController();
    const prices = () => loadPriceTable(this.env.OUTPOST_PRICES);
    const promise = runTask({
      store: this.store,
      events: this.events,
      registry,
      prices,
      providerName: "anthropic",
      transaction: (fn) => this.transaction(fn),
      runtime: (priceTable) =>
        new RunRuntime({
          taskId: this.requireTask().id,
          store: this.store,
          events: this.events,
          journal: this.journal,
          conversation: this.conversation,
          state: this.state,
          bundle: this.bundle,
          transcript: this.transcript,
          provider: new AnthropicProvider({
            apiKey: this.env.ANTHROPIC_API_KEY || undefined,
            baseURL: this.env.ANTHROPIC_BASE_URL || undefined,
            maxRetries: MODEL_MAX_RETRIES,
          }),
          prices: priceTable,
          signal: abort.signal,
          maxRetries: MODEL_MAX_RETRIES,
        }),
    })
      .then(() => this.afterRun())
      .catch((error: unknown) => this.afterCrash(error))
      .finally(() => {
        this.active = null;
      });
    this.active = { promise, abort };
  }

  /** Writes atomically; after a rollback, nothing this instance remembers of storage is trusted. */
  private transaction<T>(fn: () => T): T {
    try {
      return this.ctx.storage.transactionSync(fn);
    } catch (error) {
      this.store.invalidate();
      this.events.invalidate();
      throw error;
    }
  }

  private async afterRun(): Promise<void> {
    if (isTerminal(this.requireTask().status)) await this.scheduleBundleUpload();
  }

  /**
   * The run threw outside the agent's error handling (a storage failure, a bug). The heartbeat alarm retries it
   * from its journal, a few times; then the task fails rather than resuming, and paying, forever.
   */
  private async afterCrash(error: unknown): Promise<void> {
    const info = toErrorInfo(error);
    this.lastCrashAt = Date.now();
    const crashes = this.store.recordCrash();
    if (crashes < MAX_RUN_CRASHES) return;
    const reason = `The run crashed ${crashes} times and was stopped: ${info.message}`;
    const failed = this.transaction(() => {
      if (!this.store.finish("failed", { error: { ...info, message: reason } })) return false;
      this.events.append("run_failed", { reason, error: { ...info, message: reason }, errors: [info] });
      return true;
    });
    if (failed) await this.scheduleBundleUpload();
  }

  /**
   * The bundle upload runs in its own alarm invocation, after the run: awaited there it would hold back the
   * terminal event's delivery, and a failed upload is retried.
   */
  private async scheduleBundleUpload(): Promise<void> {
    await this.ctx.storage.setAlarm(Date.now());
  }

  /** A reader of an ended run's bundle gets all of it, even if the upload alarm has not run yet. */
  private async completeBundle(): Promise<void> {
    const task = this.requireTask();
    if (isTerminal(task.status) && !task.bundleFlushed && !this.active) await this.flushBundle();
  }

  private async flushBundle(): Promise<void> {
    const task = this.requireTask();
    await this.bundle.flush({ events: this.events, summary: finalSummary(task), transcript: this.transcript.render() });
    this.store.markBundleFlushed();
  }

  private requireTask(): TaskRecord {
    const task = this.task();
    if (!task) throw new Error("This object holds no task.");
    return task;
  }

  private view(task: TaskRecord): TaskView {
    const { traceId: _t, rootSpanId: _s, bundleFlushed: _b, ...rest } = task;
    return { ...rest, last_event_seq: this.events.lastSeq() };
  }
}

function hasSchema(sql: SqlStorage): boolean {
  return (
    sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").toArray().length > 0
  );
}

function migrate(sql: SqlStorage): void {
  sql.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)");
  const current = sql.exec<{ v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations").one().v ?? 0;
  if (current >= SCHEMA_VERSION) return;
  TaskStore.migrate(sql);
  EventLog.migrate(sql);
  StepJournal.migrate(sql);
  MessageLog.migrate(sql);
  TaskState.migrate(sql);
  RunBundle.migrate(sql);
  Transcript.migrate(sql);
  sql.exec("INSERT INTO schema_migrations (version) VALUES (?)", SCHEMA_VERSION);
}

function finalSummary(task: TaskRecord): string {
  const lines = [`# Task ${task.id}`, "", `- Agent: ${task.assigned_agent}`, `- Status: ${task.status}`];
  lines.push(`- Model: ${task.model}`, `- Tokens: ${task.usage.total_tokens}`);
  lines.push(`- Cost: ${task.usage.total_cost_usd === null ? "unknown" : `$${task.usage.total_cost_usd}`}`, "");
  if (task.result) lines.push("## Result", "", task.result, "");
  if (task.error) lines.push("## Error", "", `${task.error.code}: ${task.error.message}`, "");
  return lines.join("\n");
}
