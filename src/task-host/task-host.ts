// What a task's Durable Object is made of: the collaborators over its SQLite storage and R2 (the task's row and
// state, event log, conversation, step journal, checkpoints, run bundle, workspace and callbacks), built once per
// instance with the deployment's environment (secrets, redaction, outbound policy, prices, model providers, skills)
// and wired to the run supervisor, which drives the runs, and to the session flow, which makes a session's messages
// runs (src/sessions/). It knows whether the object holds a task at all: the
// storage schema (src/storage/migrations.ts) exists only once a task has been created, so an object asked about an
// unknown id writes nothing. The object's class (durable-objects/task-object.ts) is the RPC surface over this.
import type { Agent } from "../agents/agent.ts";
import { registry } from "../agents/catalog.ts";
import type { BlobStore } from "../blob-store/blob-store.ts";
import { openBlobStore } from "../blob-store/open-blob-store.ts";
import { CallbackOutbox } from "../callbacks/outbox.ts";
import { callbackPolicy } from "../callbacks/policy.ts";
import { PushConfigs } from "../callbacks/push-configs.ts";
import { retrySchedule } from "../callbacks/retry-schedule.ts";
import { tenantSigningSecret } from "../callbacks/signing.ts";
import { loadPriceTable } from "../config/prices.ts";
import { retentionPolicyOrDefault } from "../config/retention.ts";
import type { ExecutionResult } from "../contracts/execution-result.ts";
import { emptyUsage } from "../contracts/usage.ts";
import type { Env } from "../env.ts";
import { type InjectedFault, type RunReport, runReport } from "../evaluation-runs/evaluation.ts";
import { EventLog } from "../events/event-log.ts";
import { Redactor } from "../events/redaction.ts";
import { FaultInjector } from "../faults/fault-injector.ts";
import { FAULT_STATE_KEY, type FaultInjected } from "../faults/faults.ts";
import { knowledgeSearchFor } from "../knowledge/knowledge-stub.ts";
import { copiedResult } from "../lib/rpc-result.ts";
import { secretLookup } from "../lib/secrets.ts";
import { createProvider, workerProviderEnvironment } from "../llm/providers.ts";
import { ReplayProvider } from "../llm/replay-provider.ts";
import { outboundPolicy } from "../net/outbound.ts";
import { RunBundle, runPrefix } from "../run-bundle/run-bundle.ts";
import { Transcript } from "../run-bundle/transcript.ts";
import { CheckpointLog } from "../runtime/checkpoints.ts";
import { MessageLog } from "../runtime/conversation.ts";
import { executionResult, type TurnOutcome } from "../runtime/execution-result.ts";
import { PendingCalls } from "../runtime/pending-calls.ts";
import { MODEL_MAX_RETRIES, RunSupervisor } from "../runtime/run-supervisor.ts";
import { taskAgent } from "../runtime/runner.ts";
import { StepJournal } from "../runtime/step-journal.ts";
import type { SessionView } from "../sessions/session.ts";
import { SessionFlow } from "../sessions/session-flow.ts";
import { sessionView } from "../sessions/session-view.ts";
import { TurnLog } from "../sessions/turns.ts";
import { BUNDLED_SKILL_FILES } from "../skills/bundled.generated.ts";
import { SkillCatalog } from "../skills/catalog.ts";
import { hasSchema, MIGRATIONS, migrate } from "../storage/migrations.ts";
import { TaskSubagents } from "../subagents/delegations.ts";
import { EventForwarder, ForwardedEventSink } from "../subagents/event-forwarding.ts";
import { ParentReporter } from "../subagents/parent-report.ts";
import { createTask } from "../tasks/creation.ts";
import { expireTask, hasTombstone, readTombstone, type Tombstone } from "../tasks/expiry.ts";
import { toolCallLedger } from "../tasks/fork.ts";
import { isTerminal, type RecordKind, type StartOutcome, type TaskInit, type TaskView } from "../tasks/task.ts";
import { runLimits } from "../tasks/task-limits.ts";
import {
  INVOCATION_STATE_KEY,
  type InvocationState,
  REPLAY_STATE_KEY,
  type ReplayState,
  TaskState,
  WORKFLOW_STATE_KEY,
  type WorkflowTaskState,
} from "../tasks/task-state.ts";
import { type TaskRecord, TaskStore } from "../tasks/task-store.ts";
import { taskView } from "../tasks/task-view.ts";
import { otelConfig } from "../telemetry/otlp-export.ts";
import { RunTelemetry } from "../telemetry/run-telemetry.ts";
import { type DirectoryEntry, tenantStubFor } from "../tenants/directory.ts";
import { workflowAgent } from "../workflows/task-agent.ts";
import { Workspace, workspacePrefix } from "../workspace/workspace.ts";
import { DirectoryReporter } from "./directory-report.ts";
import { EvaluationReporter } from "./evaluation-report.ts";

export class TaskHost {
  /** The deployment's secrets and credential shapes: nothing leaves the object without passing it. */
  readonly redactor: Redactor;
  readonly store: TaskStore;
  readonly state: TaskState;
  readonly events: EventLog;
  readonly conversation: MessageLog;
  readonly journal: StepJournal;
  readonly checkpoints: CheckpointLog;
  readonly bundle: RunBundle;
  readonly workspace: Workspace;
  readonly callbacks: CallbackOutbox;
  /** The task's A2A push configs (in its key/value state): more targets of its callbacks. */
  readonly pushConfigs: PushConfigs;
  /** The object's entry in its tenant's directory (GET /v1/tasks, GET /v1/sessions). */
  readonly directory: DirectoryReporter;
  /** The task's delegations to sub-agents (the Task tool), and, in a child task, the report of its end. */
  readonly subagents: TaskSubagents;
  private readonly parentReport: ParentReporter;
  /** In a run of an evaluation: its end, reported to the evaluation's object. */
  private readonly evaluationReport: EvaluationReporter;
  /** directoryEntry's last answer, and what it depended on. */
  private entryMemo: { key: string; entry: DirectoryEntry } | null = null;
  /** In a sub-agent's child task: its log, forwarded to its parent's as it grows (one stream for the tree). */
  private readonly forwarder: EventForwarder;
  /** In a parent: its children's forwarded events, stored once each in its own sequence. */
  readonly forwarded: ForwardedEventSink;
  /** The run's lifecycle: start, heartbeat, cancel, crashes, a person's answers, bundle upload and expiry. */
  readonly supervisor: RunSupervisor;
  /** A session's turns (src/sessions/): unused by a task. */
  readonly turns: TurnLog;
  /** How a session's messages become turns, each an ordinary run of the supervisor. */
  readonly sessions: SessionFlow;

  private readonly ctx: DurableObjectState;
  private readonly env: Env;
  private readonly sql: SqlStorage;
  /** Run bundles, spilled steps, large workspace files, uploaded skills: R2, or a directory when self-hosted. */
  private readonly blobs: BlobStore;
  /** False until a task is created: an object asked about an unknown id writes nothing, not even its schema. */
  private ready: boolean;
  /** The run's model calls in flight, on record (src/runtime/pending-calls.ts). */
  private readonly pendingCalls: PendingCalls;

  /**
   * `clients` closes the object's client streams (its SSE subscriptions, which the Durable Object class holds): a
   * drop_client fault (src/faults/) uses it.
   */
  constructor(ctx: DurableObjectState, env: Env, clients: { drop(): number } = { drop: () => 0 }) {
    this.ctx = ctx;
    this.env = env;
    this.sql = ctx.storage.sql;
    // An object that holds a task brings its storage up to the code's schema before anything reads it.
    this.ready = hasSchema(this.sql);
    if (this.ready) migrate(ctx.storage);
    const redactor = Redactor.fromEnv(env);
    this.redactor = redactor;
    this.store = new TaskStore(this.sql, () => retentionPolicyOrDefault(env.OUTPOST_RETENTION), redactor);
    const taskId = () => this.requireRecord().id;
    this.events = new EventLog(
      this.sql,
      () => {
        const task = this.requireRecord();
        return { runId: task.id, traceId: task.traceId, rootSpanId: task.rootSpanId };
      },
      () => ({ redactor, mode: this.record()?.redaction_mode ?? "full" }),
    );
    this.conversation = new MessageLog(this.sql);
    this.pendingCalls = new PendingCalls(this.sql);
    this.state = new TaskState(this.sql);
    const blobs = openBlobStore(env);
    this.blobs = blobs;
    this.journal = new StepJournal(this.sql, blobs, () => `${runPrefix(taskId())}.journal/`);
    this.checkpoints = new CheckpointLog(this.sql, this.conversation, taskId);
    this.bundle = new RunBundle(
      this.sql,
      blobs,
      taskId,
      (text) => redactor.text(text),
      (fn) => ctx.storage.transactionSync(fn),
    );
    this.workspace = new Workspace(
      this.sql,
      blobs,
      () => workspacePrefix(taskId()),
      (fn) => ctx.storage.transactionSync(fn),
    );
    this.pushConfigs = new PushConfigs(this.state);
    this.callbacks = new CallbackOutbox({
      sql: this.sql,
      events: this.events,
      state: this.state,
      task: () => this.task(),
      pushConfigs: this.pushConfigs,
      // The callbacks' own policy, never the tools' OUTPOST_ALLOW_PRIVATE_HOSTS, at every attempt.
      policy: () => callbackPolicy(env),
      redact: (value) => redactor.value(value),
      signingSecret: async (tenant) =>
        env.OUTPOST_WEBHOOK_SECRET ? tenantSigningSecret(env.OUTPOST_WEBHOOK_SECRET, tenant) : undefined,
      retrySeconds: () => retrySchedule(env.OUTPOST_CALLBACK_RETRY_SECONDS),
    });
    this.directory = new DirectoryReporter({
      state: this.state,
      entry: () => this.directoryEntry(),
      version: () => this.events.lastSeq(),
      send: (report) => tenantStubFor(env, this.requireRecord().tenant).record(report),
    });
    this.subagents = new TaskSubagents({
      env,
      registry,
      state: this.state,
      events: this.events,
      task: () => this.requireRecord(),
      allowedAgents: () => this.agent(this.requireRecord()).settings.subagents.agents,
      maxParallel: () => this.agent(this.requireRecord()).settings.subagents.max_parallel,
      budgets: () => {
        const task = this.requireRecord();
        return runLimits(task.limits, this.agent(task));
      },
      tenantAgent: async (name, version) => {
        const tenant = tenantStubFor(env, this.requireRecord().tenant);
        const result = version === null ? await tenant.agent(name) : await tenant.agentAt(name, version);
        if (!result) return null;
        const { version: stored, definition, warnings } = copiedResult(result);
        return { version: stored, definition, warnings };
      },
      transaction: (fn) => this.supervisor.transaction(fn),
    });
    this.forwarder = new EventForwarder({
      env,
      state: this.state,
      events: this.events,
      task: () => this.record(),
      wake: async (at) => {
        const current = await ctx.storage.getAlarm();
        if (current === null || current > at) await ctx.storage.setAlarm(at);
      },
    });
    this.events.onAppended(() => this.forwarder.poke());
    this.forwarded = new ForwardedEventSink({
      events: this.events,
      record: () => this.record(),
      delegations: () => this.subagents.list(),
      transaction: (fn) => this.supervisor.transaction(fn),
    });
    this.parentReport = new ParentReporter({
      env,
      state: this.state,
      task: () => this.record(),
      forwarded: () => this.forwarder.caughtUp(),
      usageRollup: () => this.subagents.usageRollup(),
      pending: () => {
        const task = this.task();
        return task?.status === "input_required" ? this.view(task).pending_input : null;
      },
    });
    this.evaluationReport = new EvaluationReporter({
      env,
      state: this.state,
      task: () => this.task(),
      report: () => this.runReport(),
    });
    const { callbacks, directory, forwarder, parentReport, evaluationReport } = this;
    this.supervisor = new RunSupervisor({
      redactor,
      outbox: {
        sync: () => callbacks.sync(),
        nextDueAt: () =>
          [
            callbacks.nextDueAt(),
            directory.nextDueAt(),
            forwarder.nextDueAt(),
            parentReport.nextDueAt(),
            evaluationReport.nextDueAt(),
          ].reduce(earliest, null),
        deliverDue: async () => {
          await callbacks.deliverDue();
          await directory.deliverDue();
          // A child's events reach its parent before its end does: the parent's stream has them before its
          // subagent_finished.
          await forwarder.deliverDue();
          await parentReport.deliverDue();
          await evaluationReport.deliverDue();
        },
      },
      subagents: this.subagents,
      usageRollup: () => this.subagents.usageRollup(),
      agentFor: (task) => this.workflowAgent(task),
      // Only with an endpoint configured: telemetry off builds nothing and does nothing.
      telemetry: env.OUTPOST_OTEL_ENDPOINT
        ? new RunTelemetry({
            config: () => otelConfig(env),
            events: this.events,
            state: this.state,
            redactor,
            waitUntil: (promise) => ctx.waitUntil(promise),
          })
        : null,
      store: this.store,
      events: this.events,
      journal: this.journal,
      conversation: this.conversation,
      state: this.state,
      bundle: this.bundle,
      transcript: new Transcript(this.sql),
      workspace: this.workspace,
      checkpoints: this.checkpoints,
      pendingCalls: this.pendingCalls,
      registry,
      storage: ctx.storage,
      provider: (llm, transport) => {
        // A replay's model calls answer with the recorded task's responses (src/tasks/replay.ts).
        const replay = this.state.get<ReplayState>(REPLAY_STATE_KEY);
        if (replay) {
          const name = llm?.provider ?? "anthropic";
          return Promise.resolve(
            new ReplayProvider({ name, recordedTask: replay.task_id, responses: replay.responses }),
          );
        }
        return createProvider(llm, { ...workerProviderEnvironment(env, MODEL_MAX_RETRIES), transport });
      },
      faults: () =>
        FaultInjector.of({
          state: this.state,
          record: (fault) => this.events.append("fault_injected", fault),
          evict: async (reason) => {
            // As an eviction leaves it: the heartbeat due (now, so the recovery is measured rather than the wait),
            // everything written durable, the instance gone.
            await ctx.storage.setAlarm(Date.now());
            await ctx.storage.sync();
            ctx.abort(reason);
          },
          dropClients: () => clients.drop(),
        }),
      prices: () => loadPriceTable(env.OUTPOST_PRICES),
      secret: secretLookup(env),
      outbound: () => outboundPolicy(env.OUTPOST_ALLOW_PRIVATE_HOSTS),
      skills: () => SkillCatalog.load(BUNDLED_SKILL_FILES, blobs),
      knowledge: (tenant) => knowledgeSearchFor(env, tenant),
      expire: () => this.expire(),
      turnShape: () => this.sessions.shape(),
      turnCrashed: async (error) => {
        const current = this.turns.current();
        if (current) await this.sessions.finishTurn(current.id, { crashed: error });
      },
    });
    this.turns = new TurnLog(this.sql);
    this.sessions = new SessionFlow({
      store: this.store,
      events: this.events,
      conversation: this.conversation,
      turns: this.turns,
      state: this.state,
      transaction: (fn) => {
        try {
          return this.supervisor.transaction(fn);
        } catch (error) {
          this.turns.invalidate();
          throw error;
        }
      },
      settledToolCalls: async (ids) => {
        const record = this.requireRecord();
        return (await toolCallLedger(this, record, [...ids]))?.settled ?? {};
      },
    });
  }

  /** What this object holds, a task or a session, or null. */
  record(): TaskRecord | null {
    return this.ready ? this.store.get() : null;
  }

  /** The task this object holds, or null (also when it holds a session: the task routes do not see sessions). */
  task(): TaskRecord | null {
    return this.recordOf("task");
  }

  /** The session this object holds, or null. */
  session(): TaskRecord | null {
    return this.recordOf("session");
  }

  /** What the object holds if it is of this kind, else null (a task's routes do not see a session, nor the reverse). */
  recordOf(kind: RecordKind): TaskRecord | null {
    const record = this.record();
    return record?.kind === kind ? record : null;
  }

  requireRecord(): TaskRecord {
    const record = this.record();
    if (!record) throw new Error("This object holds no task.");
    return record;
  }

  requireTask(): TaskRecord {
    const task = this.task();
    if (!task) throw new Error("This object holds no task.");
    return task;
  }

  /** The agent a run of `task` runs: its workflow's agent (src/workflows/), or its own. */
  agent(task: TaskRecord): Agent {
    return this.workflowAgent(task) ?? taskAgent(task, this.state, registry);
  }

  private workflowAgent(task: TaskRecord): Agent | null {
    const workflow = this.state.get<WorkflowTaskState>(WORKFLOW_STATE_KEY);
    return workflow ? workflowAgent(workflow.name, task.tenant, workflow.from) : null;
  }

  /**
   * The task's ExecutionResult (seed 004) once it has ended: its run read off its messages (an invocation's, seed 004
   * invoke_once, from its input on, after the context it was given), redacted as any answer is; null for an unknown
   * task or one that has not ended. POST /v1/agents/:name/invoke answers with it, the MCP server's agent tools, and
   * a run of an evaluation reports it.
   */
  executionResult(): ExecutionResult | null {
    const task = this.task();
    if (!task || !isTerminal(task.status)) return null;
    const invocation = this.state.get<InvocationState>(INVOCATION_STATE_KEY);
    const outcome: TurnOutcome =
      task.status === "completed"
        ? { ok: true, response: task.result ?? "" }
        : {
            ok: false,
            reason: task.error?.message ?? "canceled by client",
            ...(task.result ? { response: task.result } : {}),
          };
    const messages = this.conversation.from(invocation?.context_messages ?? 0);
    return this.redactor.value(executionResult(messages, emptyUsage(), task.usage, outcome, task.structured_output));
  }
  /**
   * The report of the task's run to its evaluation once it has ended: its ExecutionResult, usage and duration, and
   * for a task that asked for faults the faults it injected (its fault_injected events). The task sends it from its
   * alarm (EvaluationReporter); the evaluation reads it back when that report was lost (run-watch.ts).
   */
  runReport(): RunReport | null {
    const task = this.task();
    const result = this.executionResult();
    if (!task || !result) return null;
    if (!this.state.get(FAULT_STATE_KEY)) return runReport(task, result);
    const injected: InjectedFault[] = [];
    for (const e of this.events.all()) {
      if (e.event_type === "fault_injected") injected.push({ ...(e.payload as unknown as FaultInjected), seq: e.seq });
    }
    return runReport(task, result, injected);
  }

  /** The task as the object returns it. */
  view(task: TaskRecord): TaskView {
    return taskView(task, {
      state: this.state,
      redactor: this.redactor,
      lastEventSeq: this.events.lastSeq(),
      waitingChild: task.status === "running" ? (this.subagents.waitingChildren()[0] ?? null) : null,
    });
  }

  /** The session as the object returns it. */
  sessionView(session: TaskRecord): SessionView {
    return sessionView(session, {
      status: this.sessions.status(),
      turns: this.turns.list(),
      messages: this.conversation.list(),
      state: this.state,
      redactor: this.redactor,
      lastEventSeq: this.events.lastSeq(),
    });
  }

  /** The object's task or session as its tenant's directory lists it; null when it holds neither. */
  private directoryEntry(): DirectoryEntry | null {
    const record = this.record();
    if (!record) return null;
    // The outbox asks for the entry after every step (to see whether a report is due), and building it reads the
    // task's view; what it shows changes only with the task's row or a new event, so the last one is kept until then.
    const key = `${this.events.lastSeq()}\u0000${record.status}\u0000${record.completed_at}\u0000${record.usage.total_cost_usd}\u0000${record.tags.join("\u0000")}`;
    if (this.entryMemo?.key === key) return this.entryMemo.entry;
    const entry = this.buildDirectoryEntry(record);
    this.entryMemo = { key, entry };
    return entry;
  }

  private buildDirectoryEntry(record: TaskRecord): DirectoryEntry {
    const lastAt = this.events.lastOwnTimestamp();
    return {
      id: record.id,
      kind: record.kind,
      agent: record.assigned_agent,
      workflow: this.state.get<WorkflowTaskState>(WORKFLOW_STATE_KEY)?.name ?? null,
      status: record.kind === "session" ? this.sessions.status() : this.view(record).status,
      parent_task_id: record.parent_task_id,
      tags: record.tags,
      created_at: record.created_at,
      updated_at: lastAt ?? record.created_at,
      ended_at: record.completed_at,
      total_cost_usd: record.usage.total_cost_usd,
    };
  }

  /** Creates a session (src/tasks/creation.ts, init.session): ready, with no run and no alarm until a message. */
  createSession(init: TaskInit): Promise<StartOutcome<SessionView>> {
    return createTask(
      this.creationDeps(init, (record) => this.sessionView(record)),
      init,
    );
  }

  /** The durable half of start() (src/tasks/creation.ts); the object launches the run. */
  create(init: TaskInit): Promise<StartOutcome> {
    return createTask(
      this.creationDeps(init, (task) => this.view(task)),
      init,
    );
  }

  private creationDeps<View>(init: TaskInit, view: (record: TaskRecord) => View) {
    // The journal of the task this object is about to hold (its id is not stored yet).
    const journal = new StepJournal(this.sql, this.blobs, () => `${runPrefix(init.id)}.journal/`);
    return {
      open: () => this.open(),
      store: this.store,
      state: this.state,
      events: this.events,
      workspace: this.workspace,
      conversation: this.conversation,
      journal: this.journal,
      storeResult: (name: string, result: unknown) => journal.store(name, result),
      armHeartbeat: () => this.supervisor.armHeartbeat(),
      transaction: <T>(fn: () => T) => this.supervisor.transaction(fn),
      view,
    };
  }

  /** When the task expired (seed 003 retention), or null if it did not (unknown or still kept). */
  expired(): Tombstone | null {
    return this.ready ? null : readTombstone(this.sql);
  }

  /** Retention has run out: everything the task has goes, its tombstone stays (src/tasks/expiry.ts). */
  private async expire(): Promise<void> {
    const task = this.requireRecord();
    // Out of the listings first: a failure here fails the alarm, which tries the whole expiry again.
    await tenantStubFor(this.env, task.tenant).forget(task.id);
    await expireTask({
      taskId: task.id,
      bucket: this.blobs,
      prefixes: [runPrefix(task.id), workspacePrefix(task.id)],
      storage: this.ctx.storage,
      forget: () => {
        this.ready = false;
        this.store.invalidate();
        this.events.invalidate();
        this.conversation.invalidate();
        this.turns.invalidate();
        this.state.invalidate();
      },
    });
  }

  /** Makes the storage ready for a new task: false when the object's task has expired (its tombstone holds the id). */
  private open(): boolean {
    if (this.ready) return true;
    if (hasTombstone(this.sql)) return false;
    // New tables hold nothing: what reads them back for the run (the log's last number, the state's keys, the
    // conversation's count, calls an earlier instance left) knows so without a statement each.
    migrate(this.ctx.storage, MIGRATIONS, () => {
      this.events.knownEmpty();
      this.state.knownEmpty();
      this.conversation.knownEmpty();
      this.pendingCalls.knownEmpty();
    });
    this.ready = true;
    return true;
  }
}

/** The earlier of two due times, either of which may be absent. */
function earliest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
