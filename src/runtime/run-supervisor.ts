// The life of a task's run (or a session turn's) inside its Durable Object: starting it in this instance, the heartbeat that resumes it
// after an eviction, cancelling it, and what happens when it crashes or ends. A person's answers and approval deadlines
// go on through it, by the rules of src/approvals. What the object does on its own schedule is a timer of its ledger
// (src/runtime/timers.ts), each with one handler; the alarm hands due ones to them. The object delegates to this; it
// owns no storage of its own, only what this instance is doing right now.

import type { Agent } from "../agents/agent.ts";
import { approvalDeadline, approvalDueAt } from "../approvals/deadline.ts";
import type { DecisionInput } from "../approvals/requests.ts";
import { applyDecision, type ResumeResult } from "../approvals/resume.ts";
import type { RpcFailure } from "../contracts/rpc.ts";
import type { SubagentReport } from "../contracts/subagents.ts";
import { toErrorInfo } from "../errors.ts";
import { isTerminal } from "../tasks/task.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { BundleUpload } from "./bundle-upload.ts";
import { EndedRun, HEARTBEAT_MS } from "./ended-run.ts";
import { ProviderWaits } from "./provider-retry.ts";
import { AWAITING_SUBAGENTS_KEY, runnerDeps, type SupervisorDeps } from "./run-wiring.ts";
import { runTask, taskAgent } from "./runner.ts";
import { TaskAlarm } from "./task-alarm.ts";
import { adoptLegacyAlarm } from "./timers.ts";

/**
 * While a run is in flight its heartbeat timer is this far ahead. An awaited fetch does not keep an object alive (it
 * is evicted after 70–140 s without events), so each heartbeat both proves the run is still going and, if the object
 * was evicted or restarted, resumes the run from its journal. A run that stops to wait (for a person, for its
 * sub-agents) clears it: nothing relaunches a run that has no heartbeat.
 */
export { HEARTBEAT_MS, type SupervisorDeps };

/** Runs that crash outside the agent's own error handling (storage failures, bugs) are retried this often. */
const MAX_RUN_CRASHES = 3;

export class RunSupervisor {
  private readonly deps: SupervisorDeps;
  /** The run executing in this instance, if any. Only one instance of an object exists at a time. */
  private active: { promise: Promise<void>; abort: AbortController } | null = null;
  /** A launch asked for while a run was still unwinding in this instance. */
  private relaunch = false;
  /** When a run last crashed in this instance (the heartbeat, not readers, retries it for a while). */
  private lastCrashAt: number | undefined;
  /** The ended run's duties: its bundle upload and its expiry. */
  private readonly ended: EndedRun;
  /** The ledger's timers, each with its handler, and the alarm set to the earliest (src/runtime/task-alarm.ts). */
  private readonly schedule: TaskAlarm;

  constructor(deps: SupervisorDeps) {
    this.deps = deps;
    this.ended = new EndedRun({
      timers: deps.timers,
      upload: new BundleUpload({ ...deps, redactor: deps.environment.redactor }),
      store: deps.store,
      telemetry: deps.telemetry,
      expire: deps.expire,
      unwinding: () => this.active !== null,
    });
    this.schedule = new TaskAlarm({
      timers: deps.timers,
      outbox: deps.outbox,
      alive: deps.alive,
      duties: {
        heartbeat: () => this.heartbeat(),
        approval_deadline: () => this.approvalDeadline(),
        provider_wait: () => this.providerWait(),
        bundle_upload: () => this.ended.upload(),
        expiry: () => this.ended.expiry(),
      },
    });
  }

  /**
   * An object whose storage came from before the ledger of timers: the duty its one alarm was for, read from the
   * task's status into the ledger.
   */
  adoptLegacyAlarm(): void {
    const task = this.deps.store.get();
    if (task) adoptLegacyAlarm(this.deps.timers, task, this.deps.state, this.awaitingSubagents());
  }

  /** A run that goes on (a resumed wait, a session's turn): arm the heartbeat, then start it. */
  async begin(): Promise<void> {
    this.deps.timers.clear("approval_deadline");
    this.endProviderWait();
    await this.armHeartbeat();
    this.launch();
    await this.armOutbox();
  }

  /**
   * The heartbeat alone. A new task arms it before it is committed, so that no moment leaves a task without one: an
   * object reset between the commit and the launch is launched by the heartbeat (which finds no task, or an ended
   * one, and does nothing).
   */
  async armHeartbeat(): Promise<void> {
    this.deps.timers.set("heartbeat", Date.now() + HEARTBEAT_MS);
    await this.deps.timers.arm();
  }

  /**
   * After an eviction the heartbeat resumes the run; a reader arriving first resumes it sooner. Only a run that has a
   * heartbeat (none waits for a person, its sub-agents or its next message), and not right after a crash: a polling
   * client must not use up the crash allowance in a few milliseconds.
   */
  resumeIfIdle(task: TaskRecord): void {
    if (isTerminal(task.status) || task.status === "input_required" || task.status === "ready" || this.active) return;
    if (!this.deps.timers.has("heartbeat") || this.awaitingSubagents()) return;
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
    this.ended.schedule();
    await this.armOutbox();
  }

  /** Cancels the run at its next safe point (the model stream is aborted at once). */
  async cancel(task: TaskRecord): Promise<RpcFailure<"task_already_finished"> | null> {
    const { store, events } = this.deps;
    if (!store.finish("canceled", {})) {
      return { code: "task_already_finished", message: `The task has already ended with status ${task.status}.` };
    }
    events.append("run_canceled", { reason: "canceled by client", previous_status: task.status });
    // A run still unwinding here is stopped; its upload waits until it has (EndedRun).
    this.active?.abort.abort();
    this.ended.schedule();
    await this.armOutbox();
    return null;
  }

  /** Brings the ledger in line with what is to be sent and sets the alarm; called after every status change. */
  armOutbox(): Promise<void> {
    return this.schedule.arm();
  }

  /** The alarm: each timer that is due, through its handler. Idempotent. */
  alarm(): Promise<void> {
    return this.schedule.fire();
  }

  /**
   * The heartbeat timer: sets itself again and relaunches the run if none executes here. A run that has stopped to
   * wait keeps none; an ended one leaves its upload.
   */
  private async heartbeat(): Promise<void> {
    const { timers } = this.deps;
    const task = this.task();
    if (isTerminal(task.status)) {
      if (!task.bundleFlushed && !timers.has("bundle_upload") && !this.active) this.ended.schedule();
      return;
    }
    if (task.status === "input_required") {
      timers.setOrClear("approval_deadline", approvalDueAt(this.deps.state));
      return;
    }
    if (task.status === "ready" || this.awaitingSubagents() || timers.has("provider_wait")) return;
    timers.set("heartbeat", Date.now() + HEARTBEAT_MS);
    // A pending task is one whose object was reset after its creation and before its first launch: nothing else
    // would ever start it.
    if (!this.active) this.launch();
  }

  /** A reader of an ended run's bundle gets all of it, even if the upload timer has not come yet. */
  async completeBundle(task: TaskRecord): Promise<void> {
    if (isTerminal(task.status) && !task.bundleFlushed && !this.active) await this.ended.flush(task);
  }

  /** Writes atomically; after a rollback, nothing this instance remembers of storage is trusted. */
  transaction<T>(fn: () => T): T {
    try {
      return this.deps.transactionSync(fn);
    } catch (error) {
      this.deps.forget();
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
    const promise = runTask(
      runnerDeps(deps, {
        transaction: (fn) => this.transaction(fn),
        agent: (task) => this.agentOf(task),
        taskId: () => this.task().id,
        signal: abort.signal,
        faults,
      }),
    )
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

  private async afterRun(): Promise<void> {
    // A session's ended turns go to the collector in the background (the next turn does not wait for them).
    this.deps.telemetry?.runStopped(this.task());
    this.afterRunTimers();
    await this.armOutbox();
  }

  /** The timers a run leaves as it stops: none when it waits for its next message or its sub-agents. */
  private afterRunTimers(): void {
    const { timers } = this.deps;
    const task = this.task();
    if (isTerminal(task.status)) this.ended.schedule();
    // A session between turns, or a run waiting for its sub-agents (their reports wake the object): no heartbeat.
    else if (task.status === "ready") timers.clear("heartbeat");
    else if (task.status === "running" && this.awaitingSubagents() && !this.relaunch) timers.clear("heartbeat");
    // A model call parked until its provider may answer: its provider_wait timer alone starts the run again.
    else if (task.status === "running" && timers.has("provider_wait") && !this.relaunch) timers.clear("heartbeat");
    else if (task.status === "input_required") {
      // A waiting task keeps no heartbeat: its object can sleep for days. Only an approval deadline wakes it.
      timers.clear("heartbeat");
      timers.setOrClear("approval_deadline", approvalDueAt(this.deps.state));
    }
  }

  /**
   * A person's answer to one request of the run (seed 003 human feedback), named by its request_id: checked and
   * recorded by the rules in src/approvals/resume.ts, then the run goes on from its journal.
   */
  async resume(decision: DecisionInput): Promise<ResumeResult> {
    const { store, events, state, environment } = this.deps;
    const redactor = environment.redactor;
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
    return this.deps.state.get(AWAITING_SUBAGENTS_KEY) === true;
  }

  /** The provider_wait timer: the parked model call is tried again, as the run goes on from its journal. */
  private async providerWait(): Promise<void> {
    if (!new ProviderWaits(this.deps.state).parked()) return;
    if (this.task().status === "running") await this.begin();
    else this.endProviderWait();
  }

  /**
   * The run goes on (its timer came, or something else started it): a parked model call's wait ends, on record, and
   * the call is tried as the run reaches it.
   */
  private endProviderWait(): void {
    const waits = new ProviderWaits(this.deps.state);
    const wait = waits.parked();
    this.deps.timers.clear("provider_wait");
    if (!wait) return;
    const running = this.task().status === "running";
    this.transaction(() => {
      if (!running) return waits.end();
      waits.woke(wait);
      const waited = Date.now() - (wait.parked_at ?? Date.now());
      this.deps.events.append("provider_wait_ended", { step: wait.step, failures: wait.failures, waited_ms: waited });
    });
  }

  /** The approval_deadline timer (src/approvals/deadline.ts): the call is rejected, or the run fails. */
  private async approvalDeadline(): Promise<void> {
    const { store, events, state, timers } = this.deps;
    const task = this.task();
    if (task.status !== "input_required") return;
    const outcome = await approvalDeadline({
      state,
      store,
      events,
      transaction: (fn) => this.transaction(fn),
      onTimeout: () => this.agentOf(task).permissions.onTimeout,
      resume: (decision) => this.resume(decision),
      wakeAt: async (at) => timers.set("approval_deadline", at),
      failTurn: task.kind === "session" ? this.deps.turnCrashed : undefined,
    });
    if (outcome.kind !== "run_failed") return;
    if (outcome.ended) this.ended.schedule();
    // A session's next queued turn may have started as the failed one ended; else it is ready, with no alarm.
    if (task.kind === "session") {
      if (this.task().status === "pending") await this.begin();
      else this.afterRunTimers();
    }
    await this.armOutbox();
  }

  /**
   * The run threw outside the agent's error handling (a storage failure, a bug). The heartbeat retries it from
   * its journal, a few times; then the task fails rather than resuming, and paying, forever.
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
      this.afterRunTimers();
      await this.armOutbox();
      return;
    }
    const failed = this.transaction(() => {
      if (!store.finish("failed", { error: { ...info, message: reason } })) return false;
      events.append("run_failed", { reason, error: { ...info, message: reason }, errors: [info] });
      return true;
    });
    if (failed) this.ended.schedule();
    await this.armOutbox();
  }

  private task(): TaskRecord {
    const task = this.deps.store.get();
    if (!task) throw new Error("The supervisor's object holds no task.");
    return task;
  }
}
