// The life of a task's run (or a session turn's) inside its Durable Object: starting it in this instance, the heartbeat that resumes it
// after an eviction, cancelling it, what happens when it crashes, and uploading its bundle once it has ended. A
// person's answers and approval deadlines go on through it, by the rules of src/approvals. The object delegates to
// this; it owns no storage of its own, only what this instance is doing right now.

import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { Agent } from "../agents/agent.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { approvalDeadline, approvalDueAt } from "../approvals/deadline.ts";
import { type DecisionInput, PENDING_INPUT_KEY } from "../approvals/requests.ts";
import { applyDecision, type ResumeResult } from "../approvals/resume.ts";
import type { PriceTable } from "../config/prices.ts";
import type { RpcFailure } from "../contracts/rpc.ts";
import type { SubagentHost, SubagentReport } from "../contracts/subagents.ts";
import { emptyUsage, type UsageRollup } from "../contracts/usage.ts";
import { type ErrorInfo, toErrorInfo } from "../errors.ts";
import type { Redactor } from "../events/redaction.ts";
import type { FaultInjector } from "../faults/fault-injector.ts";
import type { KnowledgeSearch } from "../knowledge/collection.ts";
import type { Fetch, LlmConfig, ModelProvider } from "../llm/provider.ts";
import type { OutboundPolicy } from "../net/outbound.ts";
import type { SkillCatalog } from "../skills/catalog.ts";
import { isTerminal } from "../tasks/task.ts";
import { FORK_STATE_KEY, INVOCATION_STATE_KEY, type InvocationState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { BundleUpload } from "./bundle-upload.ts";
import { executionResult, runOutcome } from "./execution-result.ts";
import { RunRuntime, type TaskStorage } from "./run-runtime.ts";
import { type RunShape, runTask, structuredOutputOf, taskAgent, taskRunShape } from "./runner.ts";

/**
 * While a run is in flight the object keeps an alarm this far ahead. An awaited fetch does not keep an object
 * alive (it is evicted after 70–140 s without events), so each alarm both proves the run is still going and, if
 * the object was evicted or restarted, resumes the run from its journal.
 */
export const HEARTBEAT_MS = 30_000;
/** The SDK's transport retries per model call; the base layer adds none (seed 001 clarification). */
export const MODEL_MAX_RETRIES = 2;
/** Runs that crash outside the agent's own error handling (storage failures, bugs) are retried this often. */
const MAX_RUN_CRASHES = 3;

/** What the object sends on its own schedule, from its alarm. */
export interface Outbox {
  /** Takes note of what has happened since it last looked (the callbacks turn new events into deliveries). */
  sync(): void;
  /** When something is next due (ms since the epoch), or null when nothing waits. */
  nextDueAt(): number | null;
  /** Sends what is due; safe to repeat. */
  deliverDue(): Promise<void>;
}

export interface SupervisorDeps extends TaskStorage {
  /** The deployment's redactor: streamed text is held back by it, and tool error text passes through it. */
  redactor: Redactor;
  /**
   * What leaves the object on its own schedule, from the alarm: the task's callbacks (src/callbacks/outbox.ts) and its
   * entry in the tenant's directory (src/task-host/directory-report.ts). Armed whenever the task changes status.
   */
  outbox: Outbox;
  registry: AgentRegistry;
  storage: Pick<DurableObjectStorage, "setAlarm" | "getAlarm" | "deleteAlarm" | "transactionSync">;
  /**
   * The provider for one run: the agent's llmConfig, or Anthropic (its configuration comes from the Worker's env),
   * sending its requests through `transport` when given.
   */
  provider: (llm: LlmConfig | null, transport?: Fetch) => Promise<ModelProvider>;
  /** The faults the task asked for, injected into each of its runs (src/faults/); null when it asked for none. */
  faults?: () => FaultInjector | null;
  prices: () => PriceTable;
  /** Deletes everything the task has (storage and R2), leaving a tombstone. */
  expire: () => Promise<void>;
  secret: (name: string) => string | undefined;
  outbound: () => OutboundPolicy;
  skills: () => Promise<SkillCatalog>;
  /** A tenant's collections, for the knowledge tools (src/knowledge/). */
  knowledge?: (tenant: string) => KnowledgeSearch;
  /** A session's run: its current turn (src/sessions/), or null when no turn is under way. */
  turnShape?: () => Promise<RunShape | null>;
  /** A session's turn kept crashing, or its approval wait ran out: it fails, and the session goes on. */
  turnCrashed?: (error: ErrorInfo) => Promise<void>;
  /** The task's sub-agents (the Task tool): child tasks in their own objects, which report their end here. */
  subagents?: SubagentHost;
  /** The task's usage with its sub-agents' (null when it delegated nothing): its terminal event and bundle show it. */
  usageRollup?: () => UsageRollup | null;
  /** The agent a run of the task runs, when it is not taskAgent()'s (a workflow's task runs its workflow agent). */
  agentFor?: (task: TaskRecord) => Agent | null;
  /** OpenTelemetry spans (src/telemetry/): a task's beside its bundle, a session's turn by turn; absent when off. */
  telemetry?: { runEnded(task: TaskRecord): Promise<void>; runStopped(task: TaskRecord): void } | null;
}

/** Set while the run has stopped until a sub-agent ends: no heartbeat resumes it meanwhile, only the child's report. */
const AWAITING_SUBAGENTS_KEY = "awaiting_subagents";

export class RunSupervisor {
  private readonly deps: SupervisorDeps;
  /** The run executing in this instance, if any. Only one instance of an object exists at a time. */
  private active: { promise: Promise<void>; abort: AbortController } | null = null;
  /** A launch asked for while a run was still unwinding in this instance. */
  private relaunch = false;
  /** When a run last crashed in this instance (the heartbeat, not readers, retries it for a while). */
  private lastCrashAt: number | undefined;
  /** The ended run's bundle and its upload retries. */
  private readonly upload: BundleUpload;

  constructor(deps: SupervisorDeps) {
    this.deps = deps;
    this.upload = new BundleUpload(deps);
  }

  /** A run that goes on (a resumed wait, a session's turn): arm the heartbeat, then start it. */
  async begin(): Promise<void> {
    await this.armHeartbeat();
    this.launch();
    await this.armOutbox();
  }

  /**
   * The heartbeat alone. A new task arms it before it is committed, so that no moment leaves a task without one: an
   * object reset between the commit and the launch is launched by the alarm (an alarm that finds no task does
   * nothing).
   */
  async armHeartbeat(): Promise<void> {
    await this.deps.storage.setAlarm(Date.now() + HEARTBEAT_MS);
  }

  /**
   * After an eviction the heartbeat alarm resumes the run; a reader arriving first resumes it sooner. Not right after
   * a crash, though: a polling client must not use up the crash allowance in a few milliseconds.
   */
  resumeIfIdle(task: TaskRecord): void {
    if (isTerminal(task.status) || task.status === "input_required" || task.status === "ready" || this.active) return;
    if (this.awaitingSubagents()) return;
    if (this.lastCrashAt !== undefined && Date.now() - this.lastCrashAt < HEARTBEAT_MS) return;
    this.launch();
  }

  /**
   * Stops the run executing in this instance, if any, at its next safe point, and resolves once it has unwound.
   * Returns false when none runs here.
   */
  async stopActive(): Promise<boolean> {
    const active = this.active;
    if (!active) return false;
    active.abort.abort();
    await active.promise;
    return true;
  }

  /** A session was closed: its bundle is uploaded and its retention runs, as after a task's end. */
  async afterClose(): Promise<void> {
    await this.scheduleBundleUpload();
    await this.armOutbox();
  }

  /** Cancels the run at its next safe point (the model stream is aborted at once). */
  async cancel(task: TaskRecord): Promise<RpcFailure<"task_already_finished"> | null> {
    const { store, events } = this.deps;
    if (!store.finish("canceled", {})) {
      return { code: "task_already_finished", message: `The task has already ended with status ${task.status}.` };
    }
    events.append("run_canceled", { reason: "canceled by client", previous_status: task.status });
    // A running loop uploads the bundle once it has unwound (afterRun); otherwise do it now.
    if (this.active) this.active.abort.abort();
    else await this.scheduleBundleUpload();
    await this.armOutbox();
    return null;
  }

  /**
   * Turns new callback events into deliveries and makes sure the alarm comes when the next delivery or directory
   * report is due. Called after every status change.
   */
  async armOutbox(): Promise<void> {
    this.deps.outbox.sync();
    const due = this.deps.outbox.nextDueAt();
    if (due === null) return;
    const current = await this.deps.storage.getAlarm();
    if (current === null || current > due) await this.deps.storage.setAlarm(due);
  }

  /**
   * The heartbeat and recovery alarm: resumes an interrupted run, uploads an ended run's bundle, and when the
   * retention period has passed, deletes the task. Idempotent.
   */
  async alarm(task: TaskRecord): Promise<void> {
    // The outbox first: a slow receiver must not hold back a run's recovery, and the next alarm is armed after.
    await this.deps.outbox.deliverDue();
    try {
      await this.onAlarm(task);
    } finally {
      // Retention may have deleted the task: then there is nothing left to deliver (the outbox knows).
      await this.armOutbox();
    }
  }

  private async onAlarm(task: TaskRecord): Promise<void> {
    if (task.status === "input_required") {
      await this.approvalDeadline(task);
      return;
    }
    // A session between turns keeps no alarm: it costs nothing until its next message.
    if (task.status === "ready") return;
    // A run waiting for its sub-agents holds nothing and keeps no heartbeat: a child's report wakes it.
    if (!isTerminal(task.status) && this.awaitingSubagents()) return;
    if (!isTerminal(task.status)) {
      await this.deps.storage.setAlarm(Date.now() + HEARTBEAT_MS);
      // Re-read: the run may have stopped to wait for a person while the alarm was being set. A pending task is one
      // whose object was reset after its creation and before its first launch: nothing else would ever start it.
      const status = this.task().status;
      if (!this.active && (status === "running" || status === "pending")) this.launch();
      return;
    }
    if (this.active) {
      // A canceled run still unwinding: keep an alarm, so its bundle upload and expiry are not lost with the object.
      await this.deps.storage.setAlarm(Date.now() + HEARTBEAT_MS);
      return;
    }
    if (task.bundleFlushed) {
      await this.expireWhenDue(task);
      return;
    }
    const [retryAt] = await Promise.all([this.upload.attempt(task), this.deps.telemetry?.runEnded(task)]);
    if (retryAt === null) await this.expireWhenDue(this.task());
    else await this.deps.storage.setAlarm(retryAt);
  }

  /** A reader of an ended run's bundle gets all of it, even if the upload alarm has not run yet. */
  async completeBundle(task: TaskRecord): Promise<void> {
    if (isTerminal(task.status) && !task.bundleFlushed && !this.active) await this.upload.flush(task);
  }

  /** Deletes the task once its retention has run out; until then the alarm waits for that moment. */
  private async expireWhenDue(task: TaskRecord): Promise<void> {
    if (!task.expires_at) return;
    const due = Date.parse(task.expires_at);
    if (Date.now() >= due) await this.deps.expire();
    else await this.deps.storage.setAlarm(due);
  }

  /** Writes atomically; after a rollback, nothing this instance remembers of storage is trusted. */
  transaction<T>(fn: () => T): T {
    try {
      return this.deps.storage.transactionSync(fn);
    } catch (error) {
      this.deps.store.invalidate();
      this.deps.events.invalidate();
      this.deps.conversation.invalidate();
      this.deps.state.invalidate();
      throw error;
    }
  }

  /** Starts the run in this instance; if one is still unwinding here, starts it again as soon as that one is done. */
  launch(): void {
    if (this.active) {
      this.relaunch = true;
      return;
    }
    const { deps } = this;
    deps.state.delete(AWAITING_SUBAGENTS_KEY);
    const abort = new AbortController();
    let crashed = false;
    const faults = deps.faults?.() ?? null;
    const promise = runTask({
      store: deps.store,
      events: deps.events,
      redactor: deps.redactor,
      agent: (task) => this.agentOf(task),
      prices: deps.prices,
      provider: async (llm) =>
        faults ? faults.provider(await deps.provider(llm, faults.transport)) : deps.provider(llm),
      ...(faults ? { mcpTransport: (server: string) => faults.mcpTransport(server) } : {}),
      transaction: (fn) => this.transaction(fn),
      secret: deps.secret,
      outbound: deps.outbound(),
      workspace: deps.workspace,
      pendingInput: (pending) => deps.state.put(PENDING_INPUT_KEY, pending),
      skills: deps.skills,
      ...(deps.knowledge ? { knowledge: deps.knowledge } : {}),
      ...(deps.subagents
        ? { subagents: deps.subagents, awaitSubagents: () => deps.state.put(AWAITING_SUBAGENTS_KEY, true) }
        : {}),
      shape: async (task) => {
        if (task.kind === "task") return this.taskShape(task);
        return deps.turnShape ? deps.turnShape() : null;
      },
      runtime: (prices, limits, provider) =>
        new RunRuntime({
          ...deps,
          taskId: this.task().id,
          provider,
          prices,
          limits,
          ...(deps.subagents ? { delegated: () => deps.subagents?.spent() ?? { cost_usd: 0, tokens: 0 } } : {}),
          signal: abort.signal,
          maxRetries: MODEL_MAX_RETRIES,
          faults,
        }),
    })
      .then(() => this.afterRun())
      .catch((error: unknown) => {
        crashed = true;
        return this.afterCrash(error);
      })
      .finally(() => {
        this.active = null;
        const status = this.deps.store.get()?.status;
        // A resume that came while the previous run was unwinding (e.g. a second approval in the same turn), or a
        // session's next turn, started as the last one ended. After a crash only the heartbeat tries again.
        const again = this.relaunch || (!crashed && status === "pending");
        this.relaunch = false;
        if (again && (status === "running" || status === "pending")) this.launch();
      });
    this.active = { promise, abort };
  }

  /** A task's run: its input, a fork's conversation up to the fork point, or an invocation's context. */
  private taskShape(task: TaskRecord): RunShape {
    const { deps } = this;
    const writes = {
      store: deps.store,
      events: deps.events,
      transaction: <T>(fn: () => T) => this.transaction(fn),
      ...(deps.usageRollup ? { usageRollup: deps.usageRollup } : {}),
    };
    const invocation = deps.state.get<InvocationState>(INVOCATION_STATE_KEY);
    if (invocation) {
      const first = invocation.context_messages;
      const messages = deps.conversation.contextMessages().slice(0, first + 1);
      return taskRunShape(writes, task, { messages, turn: 0 }, (result) =>
        executionResult(
          deps.conversation.from(first),
          emptyUsage(),
          deps.store.get()?.usage ?? emptyUsage(),
          runOutcome(result),
          structuredOutputOf(result),
        ),
      );
    }
    const origin = deps.state.get<{ turn: number; message_count: number }>(FORK_STATE_KEY);
    // The fork point only: a resumed fork replays its own steps on top of it, as any run does.
    const startFrom = origin
      ? {
          messages: deps.conversation
            .list()
            .slice(0, origin.message_count)
            .map((m): MessageParam => ({ role: m.role, content: m.content })),
          turn: origin.turn,
        }
      : undefined;
    return taskRunShape(writes, task, startFrom);
  }

  private async afterRun(): Promise<void> {
    // A session's ended turns go to the collector in the background (the next turn does not wait for them).
    this.deps.telemetry?.runStopped(this.task());
    await this.afterRunAlarms();
    await this.armOutbox();
  }

  private async afterRunAlarms(): Promise<void> {
    const task = this.task();
    if (isTerminal(task.status)) await this.scheduleBundleUpload();
    // A session between turns: no heartbeat (callbacks re-arm the alarm if they need it).
    else if (task.status === "ready") await this.deps.storage.deleteAlarm();
    // Waiting for sub-agents: no heartbeat (their reports wake the object; callbacks re-arm the alarm if they need it).
    else if (task.status === "running" && this.awaitingSubagents() && !this.relaunch)
      await this.deps.storage.deleteAlarm();
    else if (task.status === "input_required") {
      // A waiting task keeps no heartbeat: its object can sleep for days. Only an approval deadline wakes it.
      const due = approvalDueAt(this.deps.state);
      if (due !== null) await this.deps.storage.setAlarm(due);
      else await this.deps.storage.deleteAlarm();
    }
  }

  /**
   * A person's answer to one request of the run (seed 003 human feedback), named by its request_id: checked and
   * recorded by the rules in src/approvals/resume.ts, then the run goes on from its journal.
   */
  async resume(decision: DecisionInput): Promise<ResumeResult> {
    const { store, events, state, redactor } = this.deps;
    const outcome = applyDecision(
      { status: () => this.task().status, store, state, events, redactor, transaction: (fn) => this.transaction(fn) },
      decision,
    );
    if (outcome.ok && !outcome.replayed) await this.begin();
    return outcome;
  }

  /**
   * A sub-agent's child task ended (its report, sent until acknowledged): its outcome is recorded once under the
   * Task call it answers, and a run waiting for it goes on from its journal. A report for a task that has ended, or
   * one already recorded, changes nothing.
   */
  async subagentEnded(report: SubagentReport, record: (report: SubagentReport) => boolean): Promise<void> {
    const recorded = this.transaction(() => record(report));
    if (!recorded) return;
    const status = this.task().status;
    if (status === "running" && (this.awaitingSubagents() || this.active)) await this.begin();
  }

  /** The agent a run of `task` runs: a workflow's agent for a workflow's task, else taskAgent()'s. */
  private agentOf(task: TaskRecord): Agent {
    return this.deps.agentFor?.(task) ?? taskAgent(task, this.deps.state, this.deps.registry);
  }

  private awaitingSubagents(): boolean {
    return this.deps.state.get<boolean>(AWAITING_SUBAGENTS_KEY) === true;
  }

  /** The approval wait ran out (src/approvals/deadline.ts): the call is rejected, or the run fails. */
  private async approvalDeadline(task: TaskRecord): Promise<void> {
    const { store, events, state } = this.deps;
    const outcome = await approvalDeadline({
      state,
      store,
      events,
      transaction: (fn) => this.transaction(fn),
      onTimeout: () => this.agentOf(task).permissions.onTimeout,
      resume: (decision) => this.resume(decision),
      wakeAt: (at) => this.deps.storage.setAlarm(at),
      failTurn: task.kind === "session" ? this.deps.turnCrashed : undefined,
    });
    if (outcome.kind !== "run_failed") return;
    if (outcome.ended) await this.scheduleBundleUpload();
    // A session's next queued turn may have started as the failed one ended; else it is ready, with no alarm.
    if (task.kind === "session") {
      if (this.task().status === "pending") await this.begin();
      else await this.afterRunAlarms();
    }
    await this.armOutbox();
  }

  /**
   * The run threw outside the agent's error handling (a storage failure, a bug). The heartbeat alarm retries it
   * from its journal, a few times; then the task fails rather than resuming, and paying, forever.
   */
  private async afterCrash(error: unknown): Promise<void> {
    const { store, events } = this.deps;
    const info = toErrorInfo(error);
    this.lastCrashAt = Date.now();
    const crashes = store.recordCrash();
    if (crashes < MAX_RUN_CRASHES) return;
    const reason = `The run crashed ${crashes} times and was stopped: ${info.message}`;
    // A session's turn fails, not the session: its next message starts afresh (the count starts again with it).
    if (this.task().kind === "session" && this.deps.turnCrashed) {
      await this.deps.turnCrashed({ ...info, message: reason });
      this.relaunch = true;
      await this.afterRunAlarms();
      await this.armOutbox();
      return;
    }
    const failed = this.transaction(() => {
      if (!store.finish("failed", { error: { ...info, message: reason } })) return false;
      events.append("run_failed", { reason, error: { ...info, message: reason }, errors: [info] });
      return true;
    });
    if (failed) await this.scheduleBundleUpload();
    await this.armOutbox();
  }

  /**
   * The bundle upload runs in its own alarm invocation, after the run: awaited there it would hold back the
   * terminal event's delivery, and a failed upload is retried.
   */
  private async scheduleBundleUpload(): Promise<void> {
    await this.deps.storage.setAlarm(Date.now());
  }

  private task(): TaskRecord {
    const task = this.deps.store.get();
    if (!task) throw new Error("The supervisor's object holds no task.");
    return task;
  }
}
