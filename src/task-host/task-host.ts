// What a task's Durable Object is made of: the collaborators over its SQLite storage and R2 (the task's row and
// state, event log, conversation, step journal, checkpoints, run bundle, workspace and callbacks), built once per
// instance with the deployment's environment (secrets, redaction, outbound policy, prices, model providers, skills)
// and wired to the run supervisor, which drives the runs, and to the session flow, which makes a session's messages
// runs (src/sessions/). It knows whether the object holds a task at all: the
// storage schema (src/storage/migrations.ts) exists only once a task has been created, so an object asked about an
// unknown id writes nothing. The object's class (durable-objects/task-object.ts) is the RPC surface over this.
import type { Agent } from "../agents/agent.ts";
import { registry } from "../agents/catalog.ts";
import { CallbackOutbox } from "../callbacks/outbox.ts";
import { PushConfigs } from "../callbacks/push-configs.ts";
import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { Env } from "../env.ts";
import type { RunReport } from "../evaluation-runs/evaluation.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Redactor } from "../events/redaction.ts";
import { FaultInjector } from "../faults/fault-injector.ts";
import type { Fetch, LlmConfig, ModelProvider } from "../llm/provider.ts";
import { ReplayProvider } from "../llm/replay-provider.ts";
import { type RunBundle, runPrefix } from "../run-bundle/run-bundle.ts";
import type { CheckpointLog } from "../runtime/checkpoints.ts";
import type { MessageLog } from "../runtime/conversation.ts";
import { RunSupervisor } from "../runtime/run-supervisor.ts";
import { taskAgent } from "../runtime/runner.ts";
import { StepJournal } from "../runtime/step-journal.ts";
import type { OutboxDuty, TaskTimerKind, TaskTimers } from "../runtime/timers.ts";
import type { SessionView } from "../sessions/session.ts";
import { SessionFlow } from "../sessions/session-flow.ts";
import { sessionView } from "../sessions/session-view.ts";
import type { TurnLog } from "../sessions/turns.ts";
import type { TaskSubagents } from "../subagents/delegations.ts";
import type { ForwardedEventSink } from "../subagents/event-forwarding.ts";
import type { TreePlaces } from "../subagents/tree-limits.ts";
import { createTask } from "../tasks/creation.ts";
import type { Tombstone } from "../tasks/expiry.ts";
import { toolCallLedger } from "../tasks/fork.ts";
import type { RecordKind, StartOutcome, TaskInit, TaskView } from "../tasks/task.ts";
import { REPLAY_STATE_KEY, type TaskState, WORKFLOW_STATE_KEY } from "../tasks/task-state.ts";
import type { TaskRecord, TaskStore } from "../tasks/task-store.ts";
import { taskView } from "../tasks/task-view.ts";
import { RunTelemetry } from "../telemetry/run-telemetry.ts";
import { tenantStubFor } from "../tenants/directory.ts";
import { workflowAgent } from "../workflows/task-agent.ts";
import type { Workspace } from "../workspace/workspace.ts";
import { DirectoryEntries } from "./directory-entry.ts";
import { DirectoryReporter, reportIntervalMs } from "./directory-report.ts";
import { EvaluationReporter } from "./evaluation-report.ts";
import { taskExecutionResult, taskRunReport } from "./run-results.ts";
import { TaskEnvironment } from "./task-environment.ts";
import { type ObjectStorage, openTaskStorage } from "./task-storage.ts";
import { taskTree } from "./task-tree.ts";

export class TaskHost {
  /** What the object takes from the deployment, built once per instance (src/task-host/task-environment.ts). */
  readonly environment: TaskEnvironment;
  /** Everything the object stores, each part over its SQLite (and blobs): src/task-host/task-storage.ts. */
  readonly storage: ObjectStorage;
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
  readonly turns: TurnLog;
  readonly timers: TaskTimers;
  readonly callbacks: CallbackOutbox;
  /** The task's A2A push configs (in its key/value state): more targets of its callbacks. */
  readonly pushConfigs: PushConfigs;
  /** The object's entry in its tenant's directory (GET /v1/tasks, GET /v1/sessions). */
  readonly directory: DirectoryReporter;
  /** The task's delegations to sub-agents (the Task tool), and, in a child task, the report of its end. */
  readonly subagents: TaskSubagents;
  /** In a parent: its children's forwarded events, stored once each in its own sequence. */
  readonly forwarded: ForwardedEventSink;
  /** In a root: the places its tree of sub-agents has given (src/subagents/tree-limits.ts). */
  readonly places: TreePlaces;
  /** The run's lifecycle: start, heartbeat, cancel, crashes, a person's answers, and its timers' duties. */
  readonly supervisor: RunSupervisor;
  /** How a session's messages become turns, each an ordinary run of the supervisor. */
  readonly sessions: SessionFlow;
  /** The object's task or session as its tenant's directory lists it (src/task-host/directory-entry.ts). */
  private readonly entries: DirectoryEntries;

  private readonly ctx: DurableObjectState;

  /**
   * `clients` closes the object's client streams (its SSE subscriptions, which the Durable Object class holds): a
   * drop_client fault (src/faults/) uses it.
   */
  constructor(ctx: DurableObjectState, env: Env, clients: { drop(): number } = { drop: () => 0 }) {
    this.ctx = ctx;
    const environment = new TaskEnvironment(env);
    this.environment = environment;
    const redactor = environment.redactor;
    this.redactor = redactor;
    const storage = openTaskStorage({
      storage: ctx.storage,
      blobs: environment.blobs,
      redactor,
      retention: environment.retention,
      record: () => this.record(),
    });
    this.storage = storage;
    ({
      store: this.store,
      state: this.state,
      events: this.events,
      conversation: this.conversation,
      journal: this.journal,
      checkpoints: this.checkpoints,
      bundle: this.bundle,
      workspace: this.workspace,
      turns: this.turns,
      timers: this.timers,
    } = storage);
    this.pushConfigs = new PushConfigs(this.state);
    this.callbacks = new CallbackOutbox({
      sql: ctx.storage.sql,
      events: this.events,
      state: this.state,
      task: () => this.task(),
      pushConfigs: this.pushConfigs,
      policy: environment.callbackPolicy,
      redact: (value) => redactor.value(value),
      signingSecret: environment.signingSecret,
      retrySeconds: environment.callbackRetrySeconds,
    });
    this.entries = new DirectoryEntries({
      record: () => this.record(),
      events: this.events,
      state: this.state,
      status: (record) => (record.kind === "session" ? this.sessions.status() : this.view(record).status),
    });
    this.directory = new DirectoryReporter({
      state: this.state,
      entry: () => this.entries.entry(),
      version: () => this.events.lastSeq(),
      send: (report) => tenantStubFor(env, this.requireRecord().tenant).record(report),
      intervalMs: reportIntervalMs(env),
    });
    const tree = taskTree({
      env,
      redactor,
      state: this.state,
      events: this.events,
      timers: this.timers,
      record: () => this.record(),
      agent: (task) => this.agent(task),
      pendingInput: () => {
        const task = this.task();
        return task?.status === "input_required" ? this.view(task).pending_input : null;
      },
      transaction: (fn) => this.supervisor.transaction(fn),
      rearm: () => this.supervisor.armOutbox(),
    });
    ({ subagents: this.subagents, forwarded: this.forwarded, places: this.places } = tree);
    const { forwarder, parentReport } = tree;
    const evaluationReport = new EvaluationReporter({
      env,
      state: this.state,
      task: () => this.task(),
      report: () => this.runReport(),
    });
    const { callbacks, directory } = this;
    this.supervisor = new RunSupervisor({
      ...storage,
      environment: { ...environment, provider: (llm, transport) => this.provider(llm, transport) },
      transactionSync: (fn) => ctx.storage.transactionSync(fn),
      forget: () => storage.forget(),
      outbox: {
        sync: () => callbacks.sync(),
        duties: [
          outboxDuty("callbacks", callbacks),
          outboxDuty("directory", directory),
          outboxDuty("forwarding", forwarder),
          outboxDuty("parent_report", parentReport),
          outboxDuty("evaluation_report", evaluationReport),
        ],
      },
      alive: () => storage.holds(),
      subagents: this.subagents,
      usageRollup: () => this.subagents.usageRollup(),
      agentFor: (task) => this.workflowAgent(task),
      // Only with an endpoint configured: telemetry off builds nothing and does nothing.
      telemetry: environment.telemetryOn
        ? new RunTelemetry({
            config: environment.telemetry,
            events: this.events,
            state: this.state,
            redactor,
            waitUntil: (promise) => ctx.waitUntil(promise),
          })
        : null,
      registry,
      faults: () =>
        FaultInjector.of({
          state: this.state,
          record: (fault) => this.events.append("fault_injected", fault),
          evict: async (reason) => {
            // As an eviction leaves it: the heartbeat due (now, so the recovery is measured rather than the wait),
            // everything written durable, the instance gone.
            this.timers.set("heartbeat", Date.now());
            await this.timers.arm();
            await ctx.storage.sync();
            ctx.abort(reason);
          },
          dropClients: () => clients.drop(),
        }),
      expire: () => this.expire(),
      turnShape: () => this.sessions.shape(),
      turnCrashed: async (error) => {
        const current = this.turns.current();
        if (current) await this.sessions.finishTurn(current.id, { crashed: error });
      },
    });
    this.sessions = new SessionFlow({
      store: this.store,
      events: this.events,
      conversation: this.conversation,
      turns: this.turns,
      state: this.state,
      transaction: (fn) => this.supervisor.transaction(fn),
      settledToolCalls: async (ids) => {
        const record = this.requireRecord();
        return (await toolCallLedger(this, record, [...ids]))?.settled ?? {};
      },
    });
    // Storage from before the ledger kept one alarm for the duty its status implied: that duty is read into it.
    if (storage.fromBeforeTimers) this.supervisor.adoptLegacyAlarm();
  }

  /** A run's model provider: a replay's answers with the recorded task's responses (src/tasks/replay.ts). */
  private provider(llm: LlmConfig | null, transport?: Fetch): Promise<ModelProvider> {
    const replay = this.state.get(REPLAY_STATE_KEY);
    if (!replay) return this.environment.provider(llm, transport);
    const name = llm?.provider ?? "anthropic";
    return Promise.resolve(new ReplayProvider({ name, recordedTask: replay.task_id, responses: replay.responses }));
  }

  /** What this object holds, a task or a session, or null. */
  record(): TaskRecord | null {
    return this.storage.holds() ? this.store.get() : null;
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
    const workflow = this.state.get(WORKFLOW_STATE_KEY);
    return workflow ? workflowAgent(workflow.name, task.tenant, workflow.from) : null;
  }

  /**
   * The task's ExecutionResult (seed 004) once it has ended, redacted (src/task-host/run-results.ts); null for an
   * unknown task or one that has not ended.
   */
  executionResult(): ExecutionResult | null {
    return taskExecutionResult(this.task(), this);
  }

  /** The report of the task's run to its evaluation once it has ended (src/task-host/run-results.ts); else null. */
  runReport(): RunReport | null {
    return taskRunReport(this.task(), this.executionResult(), this);
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
    const journal = new StepJournal(
      this.ctx.storage.sql,
      this.environment.blobs,
      () => `${runPrefix(init.id)}.journal/`,
    );
    return {
      open: () => this.storage.open(),
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
    return this.storage.tombstone();
  }

  /** Retention has run out: everything the task has goes, its tombstone stays (src/tasks/expiry.ts). */
  private expire(): Promise<void> {
    const task = this.requireRecord();
    return this.storage.expire(task, () => tenantStubFor(this.environment.env, task.tenant).forget(task.id));
  }
}

/** One of the things the object sends on its own schedule, as a timer of its ledger. */
function outboxDuty(
  kind: TaskTimerKind,
  sender: { nextDueAt(): number | null; deliverDue(): Promise<void> },
): OutboxDuty {
  return { kind, nextDueAt: () => sender.nextDueAt(), deliverDue: () => sender.deliverDue() };
}
