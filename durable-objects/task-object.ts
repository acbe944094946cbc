// One Durable Object per task (seed 003 Task). It owns the task's storage (its row, event log, step journal,
// conversation, state and run bundle) and exposes typed RPC methods; this class only wires the collaborators in
// src/ together. The run's lifecycle (start, heartbeat, cancel, crashes, bundle upload) is src/runtime/run-supervisor.
import { DurableObject } from "cloudflare:workers";
import { registry } from "../src/agents/catalog.ts";
import { type DecisionInput, pendingRequest } from "../src/approvals/requests.ts";
import type { DecisionFailure } from "../src/approvals/resume.ts";
import {
  CallbackOutbox,
  callbackPolicy,
  type Delivery,
  retrySchedule,
  tenantSigningSecret,
} from "../src/callbacks/callbacks.ts";
import { loadPriceTable } from "../src/config/prices.ts";
import { retentionPolicyOrDefault } from "../src/config/retention.ts";
import type { RpcResult } from "../src/contracts/rpc.ts";
import type { Env } from "../src/env.ts";
import { EventLog } from "../src/events/event-log.ts";
import { TERMINAL_EVENT_TYPES } from "../src/events/event-record.ts";
import { Redactor } from "../src/events/redaction.ts";
import { openEventStream } from "../src/events/sse.ts";
import type { Json, JsonObject } from "../src/lib/json.ts";
import { secretLookup } from "../src/lib/secrets.ts";
import { createProvider } from "../src/llm/providers.ts";
import { outboundPolicy } from "../src/net/outbound.ts";
import { type ArtifactEntry, RunBundle, runPrefix } from "../src/run-bundle/run-bundle.ts";
import { Transcript } from "../src/run-bundle/transcript.ts";
import { type Checkpoint, CheckpointLog, type CheckpointSummary } from "../src/runtime/checkpoints.ts";
import { MessageLog, type StoredMessage } from "../src/runtime/conversation.ts";
import { PendingCalls } from "../src/runtime/pending-calls.ts";
import { MODEL_MAX_RETRIES, RunSupervisor } from "../src/runtime/run-supervisor.ts";
import { StepJournal } from "../src/runtime/step-journal.ts";
import { BUNDLED_SKILL_FILES } from "../src/skills/bundled.generated.ts";
import { SkillCatalog } from "../src/skills/catalog.ts";
import {
  isTerminal,
  type ResumeOutcome,
  type StartOutcome,
  type TaskInit,
  type TaskView,
  type ToolCallLedger,
} from "../src/tasks/task.ts";
import { FORK_STATE_KEY, type ForkState, IDEMPOTENCY_KEY, TaskState } from "../src/tasks/task-state.ts";
import { type TaskRecord, TaskStore } from "../src/tasks/task-store.ts";
import { Workspace, type WorkspaceEntry, WorkspaceFullError, workspacePrefix } from "../src/workspace/workspace.ts";

/**
 * The storage schema. Raise it with every change to a table and add the step that brings older objects up to date:
 * objects keep their storage across deploys, and runs in flight resume on the new code.
 */
const SCHEMA_VERSION = 5;

export type Subscription = { id: string; stream: ReadableStream<Uint8Array> } | { finished: true };

export class TaskObject extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly store: TaskStore;
  private readonly events: EventLog;
  private readonly conversation: MessageLog;
  private readonly bundle: RunBundle;
  private readonly workspace: Workspace;
  private readonly checkpoints: CheckpointLog;
  private readonly state: TaskState;
  private readonly journal: StepJournal;
  private readonly supervisor: RunSupervisor;
  private readonly callbacks: CallbackOutbox;
  /** The deployment's secrets and credential shapes: nothing leaves this object without passing it. */
  private readonly redactor: Redactor;
  /** False until a task is created: an object asked about an unknown id writes nothing, not even its schema. */
  private ready: boolean;
  /** Open SSE subscriptions by id, so the Worker can end one when its client disconnects. */
  private readonly subscriptions = new Map<string, AbortController>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.ready = hasSchema(this.sql);
    if (this.ready) migrate(this.sql);
    const redactor = Redactor.fromEnv(env);
    this.redactor = redactor;
    this.store = new TaskStore(this.sql, () => retentionPolicyOrDefault(env.OUTPOST_RETENTION), redactor);
    const taskId = () => this.requireTask().id;
    this.events = new EventLog(
      this.sql,
      () => {
        const task = this.requireTask();
        return { runId: task.id, traceId: task.traceId, rootSpanId: task.rootSpanId };
      },
      () => ({ redactor, mode: this.task()?.redaction_mode ?? "full" }),
    );
    this.conversation = new MessageLog(this.sql);
    this.state = new TaskState(this.sql);
    this.journal = new StepJournal(this.sql, env.RUNS, () => `${runPrefix(taskId())}.journal/`);
    this.checkpoints = new CheckpointLog(this.sql, this.conversation, taskId);
    this.bundle = new RunBundle(this.sql, env.RUNS, taskId, (text) => redactor.text(text));
    this.workspace = new Workspace(
      this.sql,
      env.RUNS,
      () => workspacePrefix(taskId()),
      (fn) => ctx.storage.transactionSync(fn),
    );
    this.callbacks = new CallbackOutbox({
      sql: this.sql,
      events: this.events,
      state: this.state,
      task: () => this.task(),
      // The callbacks' own policy, never the tools' OUTPOST_ALLOW_PRIVATE_HOSTS, at every attempt.
      policy: () => callbackPolicy(env),
      redact: (value) => redactor.value(value),
      signingSecret: async (tenant) =>
        env.OUTPOST_WEBHOOK_SECRET ? tenantSigningSecret(env.OUTPOST_WEBHOOK_SECRET, tenant) : undefined,
      retrySeconds: () => retrySchedule(env.OUTPOST_CALLBACK_RETRY_SECONDS),
    });
    this.supervisor = new RunSupervisor({
      redactor,
      callbacks: this.callbacks,
      store: this.store,
      events: this.events,
      journal: this.journal,
      conversation: this.conversation,
      state: this.state,
      bundle: this.bundle,
      transcript: new Transcript(this.sql),
      workspace: this.workspace,
      checkpoints: this.checkpoints,
      pendingCalls: new PendingCalls(this.sql),
      registry,
      storage: ctx.storage,
      provider: (llm) =>
        createProvider(llm, {
          secret: secretLookup(env),
          anthropic: { apiKey: env.ANTHROPIC_API_KEY || undefined, baseURL: env.ANTHROPIC_BASE_URL || undefined },
          outbound: outboundPolicy(env.OUTPOST_ALLOW_PRIVATE_HOSTS),
          maxRetries: MODEL_MAX_RETRIES,
        }),
      prices: () => loadPriceTable(env.OUTPOST_PRICES),
      secret: secretLookup(env),
      outbound: () => outboundPolicy(env.OUTPOST_ALLOW_PRIVATE_HOSTS),
      skills: () => SkillCatalog.load(BUNDLED_SKILL_FILES, env.RUNS),
      expire: () => this.expire(),
    });
  }

  /** Creates the task and starts its run. Idempotent: a second call returns the task as it is. */
  /**
   * Creates the task, once, and starts its run: a repeat of the request that created it (the same idempotency key or
   * webhook delivery, hence the same id) gets the original response back, and a different request under that id a
   * mismatch.
   */
  async start(init: TaskInit): Promise<StartOutcome> {
    const outcome = await this.create(init);
    if (outcome.outcome === "created") this.supervisor.launch();
    return outcome;
  }

  /**
   * The durable half of start(): the task, its seeded files, its first event and its heartbeat alarm. The run is
   * launched by start(), or, when the object is reset before that, by the heartbeat.
   */
  private async create(init: TaskInit): Promise<StartOutcome> {
    if (!this.ready) {
      // An id derived from a key or delivery whose task has expired cannot be given to a new task.
      if (hasTable(this.sql, "tombstone")) return { outcome: "expired" };
      migrate(this.sql);
      this.ready = true;
    }
    const files = Object.entries(init.files ?? {});
    const existing = this.store.get();
    if (existing) {
      const original = this.state.get<{ fingerprint: string; response: TaskView }>(IDEMPOTENCY_KEY);
      if (init.fingerprint !== undefined && original?.fingerprint !== init.fingerprint) return { outcome: "mismatch" };
      return { outcome: "replayed", task: original?.response ?? this.view(existing) };
    }
    // Inherited results over the row limit go to R2 first (under this task's id), so the transaction stays synchronous.
    const fork = init.fork;
    const settled = fork
      ? await Promise.all(
          Object.entries(fork.settled).map(async ([id, result]) => {
            const name = `turn_${fork.turn}_tool_${id}`;
            return [name, await this.journalFor(init.id).store(name, result)] as const;
          }),
        )
      : [];
    // The task, its seeded files and its first event commit together, or not at all.
    // The heartbeat comes first: from the commit on, the task is never without one (an alarm that finds no task,
    // because the commit did not happen, does nothing).
    await this.supervisor.armHeartbeat();
    // Seed files that do not fit the workspace (the Worker checks them first) are refused as a value: an exception
    // would reach the client as a 500.
    let created: boolean;
    try {
      created = this.supervisor.transaction(() => {
        if (!this.store.create(init)) return false;
        const task = this.requireTask();
        this.workspace.seed(files);
        if (init.fork) {
          for (const [index, message] of init.fork.messages.entries()) this.conversation.record(index, message);
          // The ledger of settled tool calls carries over: the fork replays these results instead of running the calls.
          for (const [name, stored] of settled) this.journal.seedCompleted(name, stored);
          const origin: ForkState = {
            task_id: init.fork.task_id,
            checkpoint_id: init.fork.checkpoint_id,
            turn: init.fork.turn,
            // The fork point: a resumed fork replays its own steps on top of these messages, never past them.
            message_count: init.fork.messages.length,
            ...(init.fork.uncertain && Object.keys(init.fork.uncertain).length > 0
              ? { uncertain: init.fork.uncertain }
              : {}),
          };
          this.state.put(FORK_STATE_KEY, origin);
        }
        this.events.append("task_created", {
          task_id: task.id,
          agent: task.assigned_agent,
          input: task.input,
          metadata: task.metadata,
          model: task.model,
          parent_task_id: task.parent_task_id,
          files: files.map(([path]) => path.slice(1)),
          ...(init.trigger ? { trigger: init.trigger } : {}),
          ...(init.fork
            ? {
                forked_from: { task_id: init.fork.task_id, checkpoint_id: init.fork.checkpoint_id },
                settled_tool_calls: Object.keys(init.fork.settled),
                uncertain_tool_calls: Object.keys(init.fork.uncertain ?? {}),
              }
            : {}),
        });
        if (init.fingerprint !== undefined) {
          this.state.put(IDEMPOTENCY_KEY, { fingerprint: init.fingerprint, response: this.view(this.requireTask()) });
        }
        return true;
      });
    } catch (error) {
      if (error instanceof WorkspaceFullError) return { outcome: "workspace_full", message: error.message };
      throw error;
    }
    const task = this.requireTask();
    if (!created) return { outcome: "replayed", task: this.view(task) };
    return { outcome: "created", task: this.view(task) };
  }

  async get(): Promise<TaskView | null> {
    const task = this.task();
    if (!task) return null;
    this.supervisor.resumeIfIdle(task);
    return this.view(task);
  }

  /** Resolves when the task has ended or after `timeoutMs`, whichever comes first. */
  async wait(timeoutMs: number): Promise<TaskView | null> {
    const task = this.task();
    if (!task) return null;
    // A task that waits for a person is answered at once too: the client has something to do.
    if (isTerminal(task.status) || task.status === "input_required" || timeoutMs <= 0) return this.view(task);
    this.supervisor.resumeIfIdle(task);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      const stop = this.events.listen((record) => {
        if (TERMINAL_EVENT_TYPES.has(record.event_type) || record.event_type === "input_requested") done();
      });
      function done() {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
    return this.view(this.requireTask());
  }

  /**
   * The conversation as a client may see it: redacted, since tool results hold what tools read (the model's own
   * context keeps them as they were).
   */
  async messages(): Promise<StoredMessage[] | null> {
    return this.task() ? this.redactor.value(this.conversation.list()) : null;
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
    this.supervisor.resumeIfIdle(task);
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
  async cancel(): Promise<RpcResult<TaskView, "task_not_found" | "task_already_finished">> {
    const task = this.task();
    if (!task) return { ok: false, error: { code: "task_not_found", message: "No such task." } };
    const refused = await this.supervisor.cancel(task);
    if (refused) return { ok: false, error: refused };
    return { ok: true, value: this.view(this.requireTask()) };
  }

  /** A person's answer to the request named by its request_id (POST /v1/tasks/:id/resume). */
  async resume(decision: DecisionInput): Promise<RpcResult<ResumeOutcome, "task_not_found" | DecisionFailure>> {
    if (!this.task()) return { ok: false, error: { code: "task_not_found", message: "No such task." } };
    const outcome = await this.supervisor.resume(decision);
    if (!outcome.ok) return { ok: false, error: outcome.error };
    return {
      ok: true,
      value: { task: this.view(this.requireTask()), decision: outcome.decision, replayed: outcome.replayed },
    };
  }

  async artifacts(): Promise<ArtifactEntry[] | null> {
    const task = this.task();
    if (!task) return null;
    await this.supervisor.completeBundle(task);
    return this.bundle.list();
  }

  /** A staged artifact's content, or where it is in R2. */
  async artifact(
    path: string,
  ): Promise<{ kind: "staged"; content: string; content_type: string } | { kind: "r2"; key: string } | null> {
    const task = this.task();
    if (!task) return null;
    await this.supervisor.completeBundle(task);
    if (!this.bundle.has(path)) return null;
    const staged = this.bundle.staged(path);
    if (staged) return { kind: "staged", ...staged };
    return { kind: "r2", key: runPrefix(task.id) + path };
  }

  /**
   * What this task knows of these tool calls, for a fork of one of its checkpoints (ToolCallLedger); null for an
   * unknown task. A call is settled when its step completed, or when its workspace changes and result committed
   * before an eviction cut the step short. While the task runs, an unsettled call is in flight: it runs now or will
   * (the heartbeat resumes it), and a fork must not run it too. Once the task has stopped, a call that started and
   * never finished has an unknown outcome.
   */
  async toolCallLedger(toolUseIds: string[]): Promise<ToolCallLedger | null> {
    const task = this.task();
    if (!task) return null;
    let journal: Awaited<ReturnType<StepJournal["settledToolCalls"]>>;
    try {
      journal = await this.journal.settledToolCalls(toolUseIds);
    } catch (error) {
      // A spilled result gone from R2 means the task is being deleted (retention): never guess it did not run.
      console.error("settled tool calls unreadable:", error instanceof Error ? error.message : error);
      return null;
    }
    const settled: JsonObject = { ...journal.settled };
    for (const id of toolUseIds) {
      // A tool's result as its step committed it (JSON, like the journal's).
      const committed = id in settled ? undefined : this.workspace.settled<{ content: Json; is_error: boolean }>(id);
      if (committed) settled[id] = { content: committed.content, is_error: committed.is_error };
    }
    const running = task.status === "pending" || task.status === "running";
    const inherited = this.state.get<ForkState>(FORK_STATE_KEY)?.uncertain ?? {};
    const ledger: ToolCallLedger = { settled, in_flight: [], uncertain: {} };
    for (const id of toolUseIds) {
      if (id in settled) continue;
      if (running) ledger.in_flight.push(id);
      else if (journal.started.includes(id)) ledger.uncertain[id] = inherited[id] ?? task.id;
      // Inherited as uncertain and not run here either (this task stopped before it, or waits for its approval).
      else if (inherited[id]) ledger.uncertain[id] = inherited[id];
    }
    return ledger;
  }

  /** The journal of the task this object is about to hold (its id is not stored yet). */
  private journalFor(taskId: string): StepJournal {
    return new StepJournal(this.sql, this.env.RUNS, () => `${runPrefix(taskId)}.journal/`);
  }

  /** The task's checkpoints, oldest first, or null for an unknown task. */
  async checkpointList(): Promise<CheckpointSummary[] | null> {
    return this.task() ? this.checkpoints.list() : null;
  }

  /** One checkpoint with its state (messages included); null if the task or the checkpoint is unknown. */
  async checkpoint(checkpointId: string): Promise<Checkpoint | null> {
    if (!this.task()) return null;
    // As a client reads it: the conversation redacted (a fork takes the state as it is, through forkPoint).
    const checkpoint = this.checkpoints.get(checkpointId);
    return (
      checkpoint && {
        ...checkpoint,
        state: { ...checkpoint.state, messages: this.redactor.value(checkpoint.state.messages) },
      }
    );
  }
  /**
   * A checkpoint as a fork continues from it: the conversation as the model had it, unredacted, since it goes from
   * this object to the fork's and is shown to clients by neither without redaction. Null as for checkpoint().
   */
  async forkPoint(checkpointId: string): Promise<Checkpoint | null> {
    return this.task() ? this.checkpoints.get(checkpointId) : null;
  }

  /** The workspace's files and folders, or null for an unknown task. */
  async workspaceList(): Promise<WorkspaceEntry[] | null> {
    return this.task() ? this.workspace.list() : null;
  }

  /**
   * One workspace file: its bytes as a stream when they are in a row, or its R2 key (the Worker streams it from R2,
   * so a large file never passes through this object's memory); "directory" for a folder; null when there is none.
   */
  async workspaceFile(
    path: string,
  ): Promise<
    | { size: number; modified_at: string; body: ReadableStream<Uint8Array>; r2Key?: undefined }
    | { size: number; modified_at: string; r2Key: string; body?: undefined }
    | "directory"
    | null
  > {
    if (!this.task()) return null;
    const meta = this.workspace.stat(path);
    if (!meta) return null;
    if (meta.type === "directory") return "directory";
    const where = this.workspace.locate(path);
    if (!where) return null;
    const modified_at = new Date(meta.mtime).toISOString();
    if ("r2Key" in where) return { size: meta.size, modified_at, r2Key: where.r2Key };
    return { size: meta.size, modified_at, body: new Blob([where.inline]).stream() };
  }

  /** The task's callback deliveries with every attempt; null for an unknown task. */
  async deliveries(): Promise<Delivery[] | null> {
    return this.task() ? this.callbacks.list() : null;
  }

  /** Sends a delivery again now. */
  async redeliver(deliveryId: string): Promise<RpcResult<Delivery, "task_not_found" | "delivery_not_found">> {
    if (!this.task()) return { ok: false, error: { code: "task_not_found", message: "No such task." } };
    if (!this.callbacks.redeliver(deliveryId)) {
      return { ok: false, error: { code: "delivery_not_found", message: `No delivery "${deliveryId}".` } };
    }
    await this.supervisor.armCallbacks();
    const delivery = this.callbacks.list().find((d) => d.id === deliveryId);
    if (!delivery) return { ok: false, error: { code: "delivery_not_found", message: `No delivery "${deliveryId}".` } };
    return { ok: true, value: delivery };
  }

  /** When the task expired (seed 003 retention), or null if it did not (unknown or still kept). */
  async expired(): Promise<{ task_id: string; expired_at: string } | null> {
    if (this.ready) return null;
    if (!hasTable(this.sql, "tombstone")) return null;
    return (
      this.sql
        .exec<{ task_id: string; expired_at: string }>("SELECT task_id, expired_at FROM tombstone")
        .toArray()[0] ?? null
    );
  }

  /**
   * Retention has run out: the task's R2 objects (run bundle, journal spills, workspace files) go first, then all of
   * its storage; a tombstone row is all that is left, so requests get 410 rather than 404. Safe to repeat.
   */
  private async expire(): Promise<void> {
    const task = this.requireTask();
    for (const prefix of [runPrefix(task.id), workspacePrefix(task.id)]) {
      let cursor: string | undefined;
      do {
        const page = await this.env.RUNS.list({ prefix, ...(cursor ? { cursor } : {}) });
        if (page.objects.length > 0) await this.env.RUNS.delete(page.objects.map((o) => o.key));
        cursor = page.truncated ? page.cursor : undefined;
      } while (cursor);
    }
    // The tombstone and the removal of every table commit together: no moment leaves an empty object, which would
    // answer 404 instead of 410 and could let a reused idempotency key or delivery id start a task here again.
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("CREATE TABLE IF NOT EXISTS tombstone (task_id TEXT NOT NULL, expired_at TEXT NOT NULL)");
      this.sql.exec("INSERT INTO tombstone (task_id, expired_at) VALUES (?, ?)", task.id, new Date().toISOString());
      const tables = this.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'tombstone' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        )
        .toArray()
        .map((t) => t.name);
      for (const name of tables) this.sql.exec(`DROP TABLE "${name.replaceAll('"', '""')}"`);
    });
    this.ready = false;
    await this.ctx.storage.deleteAlarm();
    this.store.invalidate();
    this.events.invalidate();
  }

  override async alarm(): Promise<void> {
    const task = this.task();
    if (task) await this.supervisor.alarm(task);
  }

  private task(): TaskRecord | null {
    return this.ready ? this.store.get() : null;
  }

  private requireTask(): TaskRecord {
    const task = this.task();
    if (!task) throw new Error("This object holds no task.");
    return task;
  }

  private view(task: TaskRecord): TaskView {
    const { traceId: _t, rootSpanId: _s, bundleFlushed: _b, retentionExplicit: _r, tenant: _n, ...rest } = task;
    const stored = rest.status === "input_required" ? pendingRequest(this.state) : undefined;
    // What the model asked for (a command, a tool's arguments) may hold a secret, like any text the runtime did not
    // write; the input_requested event and callbacks show it redacted too.
    const pending = stored ? this.redactor.value(stored) : null;
    return { ...rest, pending_input: pending, last_event_seq: this.events.lastSeq() };
  }
}

function hasSchema(sql: SqlStorage): boolean {
  return hasTable(sql, "schema_migrations");
}

function hasTable(sql: SqlStorage, name: string): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
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
  // Version 2: the task's workspace. Version 3: task limits, tags and retention (TaskStore.migrate adds the
  // columns), checkpoints and pending model calls. Version 4: the task's tenant, webhook and trigger (columns), and
  // callback deliveries. Version 5: delivery attempts keep an error class and no longer any of the receiver's answer
  // (CallbackOutbox.migrate drops the column that held it).
  Workspace.migrate(sql);
  CheckpointLog.migrate(sql);
  PendingCalls.migrate(sql);
  CallbackOutbox.migrate(sql);
  sql.exec("INSERT INTO schema_migrations (version) VALUES (?)", SCHEMA_VERSION);
}
