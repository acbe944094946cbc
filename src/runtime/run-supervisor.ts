// The life of a task's run inside its Durable Object: starting it in this instance, the heartbeat that resumes it
// after an eviction, cancelling it, what happens when it crashes, and uploading its bundle once it has ended. The
// object delegates to this; it owns no storage of its own, only what this instance is doing right now.

import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { AgentRegistry } from "../agents/registry.ts";
import type { PriceTable } from "../config/prices.ts";
import { toErrorInfo } from "../errors.ts";
import type { Redactor } from "../events/redaction.ts";
import type { LlmConfig, ModelProvider } from "../llm/provider.ts";
import type { OutboundPolicy } from "../net/outbound.ts";
import { finalSummary } from "../runs/final-summary.ts";
import type { SkillCatalog } from "../skills/catalog.ts";
import { type HumanDecision, isTerminal, type PendingInput, type RpcFailure, requestIdOf } from "../tasks/task.ts";
import { decisionKey, FORK_STATE_KEY, PENDING_INPUT_KEY } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import type { CallbackOutbox } from "../webhooks/callbacks.ts";
import { RunRuntime, type TaskStorage } from "./run-runtime.ts";
import { runTask } from "./runner.ts";

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
/** A failed bundle upload is retried after this, doubling up to MAX_UPLOAD_RETRY_MS, for as long as it takes. */
const UPLOAD_RETRY_MS = 60_000;
const MAX_UPLOAD_RETRY_MS = 60 * 60_000;

export interface SupervisorDeps extends TaskStorage {
  /** The deployment's redactor: streamed text is held back by it, and tool error text passes through it. */
  redactor: Redactor;
  /** The task's outbound callbacks: sent from the alarm, armed whenever the run reaches a moment they report. */
  callbacks: Pick<CallbackOutbox, "sync" | "nextDueAt" | "deliverDue">;
  registry: AgentRegistry;
  storage: Pick<DurableObjectStorage, "setAlarm" | "getAlarm" | "deleteAlarm" | "transactionSync">;
  /** The provider for one run: the agent's llmConfig, or Anthropic (its configuration comes from the Worker's env). */
  provider: (llm: LlmConfig | null) => Promise<ModelProvider>;
  prices: () => PriceTable;
  /** Deletes everything the task has (storage and R2), leaving a tombstone. */
  expire: () => Promise<void>;
  secret: (name: string) => string | undefined;
  outbound: () => OutboundPolicy;
  skills: () => Promise<SkillCatalog>;
}

export class RunSupervisor {
  private readonly deps: SupervisorDeps;
  /** The run executing in this instance, if any. Only one instance of an object exists at a time. */
  private active: { promise: Promise<void>; abort: AbortController } | null = null;
  /** A launch asked for while a run was still unwinding in this instance. */
  private relaunch = false;
  /** When a run last crashed in this instance (the heartbeat, not readers, retries it for a while). */
  private lastCrashAt: number | undefined;
  /** Consecutive failed bundle uploads in this instance, for the retry backoff. */
  private uploadFailures = 0;

  constructor(deps: SupervisorDeps) {
    this.deps = deps;
  }

  /** A run that goes on (a resumed wait): arm the heartbeat, then start it. */
  async begin(): Promise<void> {
    await this.armHeartbeat();
    this.launch();
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
    if (isTerminal(task.status) || task.status === "input_required" || this.active) return;
    if (this.lastCrashAt !== undefined && Date.now() - this.lastCrashAt < HEARTBEAT_MS) return;
    this.launch();
  }

  /** Cancels the run at its next safe point (the model stream is aborted at once). */
  async cancel(task: TaskRecord): Promise<RpcFailure | null> {
    const { store, events } = this.deps;
    if (!store.finish("canceled", {})) {
      return { code: "task_already_finished", message: `The task has already ended with status ${task.status}.` };
    }
    events.append("run_canceled", { reason: "canceled by client", previous_status: task.status });
    // A running loop uploads the bundle once it has unwound (afterRun); otherwise do it now.
    if (this.active) this.active.abort.abort();
    else await this.scheduleBundleUpload();
    await this.armCallbacks();
    return null;
  }

  /** Turns new callback events into deliveries and makes sure the alarm comes when the next one is due. */
  async armCallbacks(): Promise<void> {
    this.deps.callbacks.sync();
    const due = this.deps.callbacks.nextDueAt();
    if (due === null) return;
    const current = await this.deps.storage.getAlarm();
    if (current === null || current > due) await this.deps.storage.setAlarm(due);
  }

  /**
   * The heartbeat and recovery alarm: resumes an interrupted run, uploads an ended run's bundle, and when the
   * retention period has passed, deletes the task. Idempotent.
   */
  async alarm(task: TaskRecord): Promise<void> {
    // Callbacks first: a slow receiver must not hold back a run's recovery, and the next alarm is armed after.
    await this.deps.callbacks.deliverDue();
    try {
      await this.onAlarm(task);
    } finally {
      // Retention may have deleted the task: then there is nothing left to deliver (the outbox knows).
      await this.armCallbacks();
    }
  }

  private async onAlarm(task: TaskRecord): Promise<void> {
    if (task.status === "input_required") {
      await this.approvalDeadline(task);
      return;
    }
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
    try {
      await this.flushBundle(task);
      this.uploadFailures = 0;
      await this.expireWhenDue(this.task());
    } catch (error) {
      // R2 may be down for longer than the platform's own alarm retries last: keep trying, backing off to an hour.
      this.uploadFailures++;
      const delay = Math.min(UPLOAD_RETRY_MS * 2 ** (this.uploadFailures - 1), MAX_UPLOAD_RETRY_MS);
      console.error("bundle upload failed; retrying", task.id, error instanceof Error ? error.message : error);
      await this.deps.storage.setAlarm(Date.now() + delay);
    }
  }

  /** A reader of an ended run's bundle gets all of it, even if the upload alarm has not run yet. */
  async completeBundle(task: TaskRecord): Promise<void> {
    if (isTerminal(task.status) && !task.bundleFlushed && !this.active) await this.flushBundle(task);
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
    const abort = new AbortController();
    const promise = runTask({
      store: deps.store,
      events: deps.events,
      redactor: deps.redactor,
      registry: deps.registry,
      prices: deps.prices,
      provider: (llm) => deps.provider(llm),
      transaction: (fn) => this.transaction(fn),
      secret: deps.secret,
      outbound: deps.outbound(),
      workspace: deps.workspace,
      pendingInput: (pending) => deps.state.put(PENDING_INPUT_KEY, pending),
      skills: deps.skills,
      startFrom: () => {
        const origin = deps.state.get<{ turn: number; message_count: number }>(FORK_STATE_KEY);
        if (!origin) return undefined;
        // The fork point only: a resumed fork replays its own steps on top of it, as any run does.
        const messages = deps.conversation
          .list()
          .slice(0, origin.message_count)
          .map((m): MessageParam => ({ role: m.role, content: m.content }));
        return { messages, turn: origin.turn };
      },
      runtime: (prices, limits, provider) =>
        new RunRuntime({
          ...deps,
          taskId: this.task().id,
          provider,
          prices,
          limits,
          signal: abort.signal,
          maxRetries: MODEL_MAX_RETRIES,
        }),
    })
      .then(() => this.afterRun())
      .catch((error: unknown) => this.afterCrash(error))
      .finally(() => {
        this.active = null;
        // A resume that came while the previous run was unwinding (e.g. a second approval in the same turn).
        if (this.relaunch) {
          this.relaunch = false;
          const status = this.deps.store.get()?.status;
          if (status === "running" || status === "pending") this.launch();
        }
      });
    this.active = { promise, abort };
  }

  private async afterRun(): Promise<void> {
    await this.afterRunAlarms();
    await this.armCallbacks();
  }

  private async afterRunAlarms(): Promise<void> {
    const task = this.task();
    if (isTerminal(task.status)) await this.scheduleBundleUpload();
    else if (task.status === "input_required") {
      // A waiting task keeps no heartbeat: its object can sleep for days. Only an approval deadline wakes it.
      const pending = this.deps.state.get<PendingInput>(PENDING_INPUT_KEY);
      if (pending?.expires_at) await this.deps.storage.setAlarm(Date.parse(pending.expires_at));
      else await this.deps.storage.deleteAlarm();
    }
  }

  /**
   * A person's answer to one request of the run (seed 003 human feedback), named by its request_id: recorded with
   * who gave it and when, then the run goes on from its journal. A decision names what it decides: another request
   * than the one waiting is pending_input_changed (the reviewer saw something else), an answered request replays
   * the recorded decision when it is the same and is already_decided when it is not, and a task that waits for
   * nothing is task_not_waiting. Everything is checked and written synchronously, so concurrent answers to one
   * request cannot both be taken.
   */
  async resume(
    decision: Omit<HumanDecision, "decided_at" | "request_id"> & { request_id: string },
  ): Promise<{ ok: true; decision: HumanDecision; replayed: boolean } | { ok: false; error: RpcFailure }> {
    const { store, events, state } = this.deps;
    const fail = (code: string, message: string, details?: Record<string, object>) =>
      ({ ok: false, error: { code, message, ...(details ? { details } : {}) } }) as const;
    const answered = state.get<HumanDecision>(decisionKey(decision.request_id));
    if (answered) {
      if (sameDecision(answered, decision)) return { ok: true, decision: answered, replayed: true };
      return fail(
        "already_decided",
        `Request ${decision.request_id} was already answered: ${answered.action} by ${answered.decided_by} at ${answered.decided_at}.`,
        { decision: { request_id: decision.request_id, ...answered } },
      );
    }
    const task = this.task();
    const pending = state.get<PendingInput>(PENDING_INPUT_KEY);
    if (task.status !== "input_required" || !pending) {
      return fail("task_not_waiting", `The task is ${task.status}, not waiting for input.`);
    }
    const current = { ...pending, request_id: requestIdOf(pending) };
    if (current.request_id !== decision.request_id) {
      return fail(
        "pending_input_changed",
        `The task waits for request ${current.request_id} (${current.tool_name}), not ${decision.request_id}: review what it waits for now.`,
        { pending_input: this.deps.redactor.value(current) },
      );
    }
    if (pending.kind === "question" && decision.action !== "reject" && !decision.message) {
      return fail("message_required", "An answer to the agent's question needs message: the answer.");
    }
    if (
      decision.action === "modify" &&
      pending.kind === "approval" &&
      !decision.tool_input &&
      !decision.state_updates
    ) {
      return fail(
        "tool_input_required",
        "modify needs tool_input (the arguments to run the call with), state_updates, or both.",
      );
    }
    const recorded: HumanDecision = { ...decision, decided_at: new Date().toISOString() };
    const resumed = this.transaction(() => {
      if (!store.resumeInput()) return false;
      // Seed 003: metadata replaces; messages are appended by the run, after this turn's tool results.
      if (decision.state_updates?.metadata) store.setMetadata(decision.state_updates.metadata);
      state.put(decisionKey(pending.tool_use_id), recorded);
      state.delete(PENDING_INPUT_KEY);
      events.append("human_decision", {
        tool_use_id: pending.tool_use_id,
        tool_name: pending.tool_name,
        kind: pending.kind,
        ...recorded,
      });
      return true;
    });
    if (!resumed) return fail("task_not_waiting", "The task is no longer waiting for input.");
    await this.begin();
    return { ok: true, decision: recorded, replayed: false };
  }

  /** The approval wait ran out: the call is rejected and the run goes on, or the run fails (onApprovalTimeout). */
  private async approvalDeadline(task: TaskRecord): Promise<void> {
    const pending = this.deps.state.get<PendingInput>(PENDING_INPUT_KEY);
    if (!pending?.expires_at) return;
    const due = Date.parse(pending.expires_at);
    if (Date.now() < due) {
      await this.deps.storage.setAlarm(due);
      return;
    }
    // An agent removed by a deploy cannot say; a rejection lets the run end through its own loop.
    let onTimeout: "reject" | "fail" = "reject";
    try {
      onTimeout = this.deps.registry.create(task.assigned_agent).permissions.onTimeout;
    } catch {
      // keep "reject"
    }
    if (onTimeout === "reject") {
      await this.resume({
        request_id: requestIdOf(pending),
        action: "reject",
        message: "No one answered before the approval timeout.",
        tool_input: null,
        state_updates: null,
        decided_by: "timeout",
      });
      return;
    }
    const { store, events } = this.deps;
    const error = {
      code: "approval_timeout",
      message: `No one answered ${pending.tool_name}'s request before its deadline (${pending.expires_at}).`,
      type: "LimitExceededError",
      retryable: false,
    };
    const failed = this.transaction(() => {
      if (!store.finish("failed", { error })) return false;
      // The timeout decided: on record like any decision (a late answer to the request gets already_decided), then
      // the run's end.
      const decision: HumanDecision = {
        request_id: requestIdOf(pending),
        action: "fail",
        message: error.message,
        tool_input: null,
        state_updates: null,
        decided_by: "timeout",
        decided_at: new Date().toISOString(),
      };
      this.deps.state.put(decisionKey(pending.tool_use_id), decision);
      events.append("human_decision", {
        tool_use_id: pending.tool_use_id,
        tool_name: pending.tool_name,
        kind: pending.kind,
        ...decision,
      });
      events.append("run_failed", { reason: error.message, error, errors: [error], usage: store.get()?.usage });
      return true;
    });
    if (failed) await this.scheduleBundleUpload();
    await this.armCallbacks();
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
    const failed = this.transaction(() => {
      if (!store.finish("failed", { error: { ...info, message: reason } })) return false;
      events.append("run_failed", { reason, error: { ...info, message: reason }, errors: [info] });
      return true;
    });
    if (failed) await this.scheduleBundleUpload();
    await this.armCallbacks();
  }

  /**
   * The bundle upload runs in its own alarm invocation, after the run: awaited there it would hold back the
   * terminal event's delivery, and a failed upload is retried.
   */
  private async scheduleBundleUpload(): Promise<void> {
    await this.deps.storage.setAlarm(Date.now());
  }

  private async flushBundle(task: TaskRecord): Promise<void> {
    const { bundle, events, transcript, store } = this.deps;
    await bundle.flush({ events, summary: finalSummary(task), transcript: transcript.render() });
    store.markBundleFlushed();
  }

  private task(): TaskRecord {
    const task = this.deps.store.get();
    if (!task) throw new Error("The supervisor's object holds no task.");
    return task;
  }
}

/** Whether a decision sent again is the recorded one: the same answer, whoever sends it and whenever. */
function sameDecision(
  recorded: HumanDecision,
  sent: Pick<HumanDecision, "action" | "message" | "tool_input" | "state_updates">,
): boolean {
  const answer = (d: Pick<HumanDecision, "action" | "message" | "tool_input" | "state_updates">) =>
    canonicalJson([d.action, d.message ?? null, d.tool_input ?? null, d.state_updates ?? null]);
  return answer(recorded) === answer(sent);
}

/** JSON with object keys sorted at every level, so two spellings of one value compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
