// The durable runtime an agent runs on (implements AgentRuntime): journaled steps, events that stop at the task's
// end, checkpoints, artifacts, the conversation, and cancellation. Its model calls, whose every delta, artifact,
// transcript record and token is recorded, are model-calls.ts.

import type { MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { CustomEventType, EventPayload, EventType } from "../contracts/events.ts";
import type {
  AgentMessage,
  AgentRuntime,
  CheckpointStateFields,
  ModelCallOptions,
  NextAction,
  SkillTranscriptFields,
  StepInfo,
  StepOptions,
} from "../contracts/runtime.ts";
import type { AgentUsage } from "../contracts/usage.ts";
import {
  type AgentError,
  AwaitingInputError,
  AwaitingProviderError,
  AwaitingSubagentsError,
  CanceledError,
  ProviderError,
  StreamingError,
} from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Redactor } from "../events/redaction.ts";
import type { FaultInjector } from "../faults/fault-injector.ts";
import type { RunBundle } from "../run-bundle/run-bundle.ts";
import type { Transcript } from "../run-bundle/transcript.ts";
import { isTerminal } from "../tasks/task.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import type { Workspace } from "../workspace/workspace.ts";
import type { CheckpointLog } from "./checkpoints.ts";
import type { MessageLog } from "./conversation.ts";
import { type ModelCallSettings, ModelCalls } from "./model-calls.ts";
import type { PendingCalls } from "./pending-calls.ts";
import { nextTry, ProviderWaits, retryableFailure } from "./provider-retry.ts";
import type { StepJournal, StepLookup } from "./step-journal.ts";
import type { TaskTimers } from "./timers.ts";

/** Waits `ms`, or less when `signal` aborts (the caller checks it). */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The task's storage collaborators, each over the object's SQLite (and R2 for what spills). */
export interface TaskStorage {
  store: TaskStore;
  events: EventLog;
  journal: StepJournal;
  conversation: MessageLog;
  state: TaskState;
  bundle: RunBundle;
  transcript: Transcript;
  workspace: Workspace;
  checkpoints: CheckpointLog;
  pendingCalls: PendingCalls;
  /** What the object does on its own schedule, one timer per duty (src/runtime/timers.ts). */
  timers: TaskTimers;
}

export interface RunRuntimeDeps extends TaskStorage, ModelCallSettings {
  /** Runs writes atomically (the object's transactionSync). */
  transaction: <T>(fn: () => T) => T;
  /** Also scrubs a provider's error before the task keeps it (its waiting_for shows it). */
  redactor: Pick<Redactor, "releasable" | "value">;
  /** The faults the task asked for (src/faults/): an eviction after a checkpoint happens before the next step. */
  faults?: Pick<FaultInjector, "checkpointSaved" | "beforeStep"> | null;
}

export class RunRuntime implements AgentRuntime {
  readonly signal: AbortSignal;
  readonly state: AgentRuntime["state"];
  readonly taskState: AgentRuntime["taskState"];

  private readonly deps: RunRuntimeDeps;
  private readonly models: ModelCalls;
  private readonly waits: ProviderWaits;

  constructor(deps: RunRuntimeDeps) {
    this.deps = deps;
    this.signal = deps.signal;
    this.state = deps.state.agent;
    this.taskState = deps.state;
    this.models = new ModelCalls({ ...deps, emit: this.emit.bind(this), usage: () => this.usage() });
    this.waits = new ProviderWaits(deps.state);
  }

  async step<T>(name: string, fn: (info: StepInfo) => Promise<T>, options: StepOptions = {}): Promise<T> {
    if (this.signal.aborted) throw new CanceledError();
    await this.deps.faults?.beforeStep();
    let lookup = await this.deps.journal.begin(name);
    if (lookup.state === "completed") return lookup.result as T;
    if (lookup.interrupted) {
      this.emit("step_resumed", { step: name, attempt: lookup.attempt, reason: "interrupted" }, lookup.spanId);
    }
    let result: T;
    for (;;) {
      try {
        result = await fn({ attempt: lookup.attempt, spanId: lookup.spanId });
        break;
      } catch (error) {
        // A step that stopped on purpose starts afresh when the run goes on; one whose model call waits out its
        // provider (an inner step parked) too.
        if (
          error instanceof AwaitingInputError ||
          error instanceof AwaitingSubagentsError ||
          error instanceof AwaitingProviderError
        )
          this.deps.journal.release(name);
        // A prompt past the model's window: the loop compacts the conversation and tries the call again, as the
        // step's next attempt (a chosen one, not an interruption).
        if (error instanceof ProviderError && error.code === "context_window_exceeded") this.deps.journal.park(name);
        if (!options.providerRetries || !retryableFailure(error)) {
          if (options.providerRetries) this.waits.end(name);
          throw error;
        }
        const next = await this.retryAfter(name, error);
        if (!next) throw error;
        lookup = next;
      }
      if (lookup.state === "completed") return lookup.result as T;
    }
    if (this.signal.aborted) throw new CanceledError();
    await this.deps.journal.complete(name, result);
    if (options.providerRetries) this.waits.end(name);
    return result;
  }

  /**
   * A model call failed in a way a later try may not repeat: the runtime's decision (src/runtime/provider-retry.ts).
   * A short wait is made here and the step's next attempt returned; a longer one parks the step on the object's
   * provider_wait timer and stops the run (AwaitingProviderError); null when the call is not to be tried again.
   */
  private async retryAfter(name: string, error: AgentError): Promise<StepLookup | null> {
    const { deps } = this;
    const failure = this.models.lastFailure();
    const now = Date.now();
    // A provider's error text may echo what it was sent: kept, and shown, as any stored text is, redacted.
    const wait = this.waits.failed(name, deps.redactor.value(error.toJSON()), now);
    const hint = failure?.retry_after_seconds ?? null;
    const refill = failure?.limit_reset_seconds ?? null;
    const decision = nextTry({
      failures: wait.failures,
      sinceMs: wait.since,
      nowMs: now,
      hintMs: hint === null ? null : hint * 1000,
      refillMs: refill === null ? null : refill * 1000,
      horizonMs: deps.providerWaitMs,
      random: Math.random,
    });
    if (decision.kind === "fail") {
      this.waits.end(name);
      return null;
    }
    if (decision.kind === "park") {
      // On record before the run stops: the timer, the step's state and the wait commit together.
      deps.transaction(() => {
        const parked = this.waits.park(wait, decision.untilMs, now);
        deps.journal.park(name);
        deps.timers.set("provider_wait", decision.untilMs);
        this.emit("provider_wait_started", {
          step: name,
          failures: parked.failures,
          until: new Date(decision.untilMs).toISOString(),
          delay_ms: decision.untilMs - now,
          horizon_at: new Date(parked.since + deps.providerWaitMs).toISOString(),
          last_error: parked.last_error,
        });
      });
      throw new AwaitingProviderError(`The model provider is refusing calls; ${name} is tried again at its timer.`);
    }
    // Counted before the pause, so an eviction during it resumes the step with its attempts on record.
    const lookup = await deps.journal.retry(name);
    if (lookup.state === "completed") return lookup;
    if (failure) {
      this.emit(
        "llm_retry_scheduled",
        {
          turn_index: failure.turn_index,
          call_site: failure.call_site,
          attempt: failure.attempt,
          status: failure.status,
          delay_seconds: decision.delayMs / 1000,
          http_attempt: wait.failures + 1,
        },
        lookup.spanId,
      );
    }
    const reason = error instanceof StreamingError ? "stream_broken" : "provider_retry";
    this.emit(
      "step_resumed",
      { step: name, attempt: lookup.attempt, reason, delay_ms: decision.delayMs },
      lookup.spanId,
    );
    await abortableSleep(decision.delayMs, this.signal);
    if (this.signal.aborted) throw new CanceledError();
    return lookup;
  }

  annotateTranscript(turnIndex: number, callSite: string, fields: SkillTranscriptFields): void {
    this.deps.transcript.annotate(turnIndex, callSite, fields);
  }

  /** Appends unless the task has ended: nothing follows the terminal event (a canceled run may still be unwinding). */
  emit<T extends EventType | CustomEventType>(eventType: T, payload: EventPayload<T>, spanId?: string): void {
    const task = this.deps.store.get();
    if (task && isTerminal(task.status)) return;
    this.deps.events.append(eventType, payload, spanId);
    // The transcript marks where the conversation was compacted, between the calls before and after it.
    if (eventType === "context_compacted") this.deps.transcript.mark(compactionMark(payload as CompactedPayload));
  }

  checkpoint(
    position: string,
    nextAction: NextAction,
    metadata: Record<string, unknown> = {},
    awaitingHuman = false,
    fields?: CheckpointStateFields,
  ): void {
    const task = this.deps.store.get();
    if (!task || isTerminal(task.status)) return;
    const saved = this.deps.checkpoints.record(
      position,
      {
        next_action: nextAction,
        current_agent: fields?.current_agent ?? task.assigned_agent,
        routing_key: fields?.routing_key ?? null,
        metadata,
      },
      awaitingHuman,
    );
    if (saved) {
      this.deps.faults?.checkpointSaved(saved.sequence);
      this.emit("checkpoint_saved", {
        checkpoint_id: saved.checkpoint_id,
        position: saved.position,
        sequence: saved.sequence,
        next_action: saved.next_action,
        message_count: saved.message_count,
        awaiting_human: saved.awaiting_human,
      });
    }
  }

  artifact(path: string, content: string): Promise<void> {
    return this.deps.bundle.write(path, content);
  }

  recordMessage(index: number, message: MessageParam): void {
    this.deps.conversation.record(index, message);
  }

  usage(): AgentUsage {
    const task = this.deps.store.get();
    if (!task) throw new Error("task row missing");
    return task.usage;
  }

  /** A model call on record from start to end (model-calls.ts). */
  streamModel(params: MessageCreateParamsBase, options: ModelCallOptions): AsyncGenerator<AgentMessage, void> {
    return this.models.stream(params, options);
  }
}

type CompactedPayload = EventPayload<"context_compacted">;

/** The transcript's line for a compaction (its context_compacted event). */
function compactionMark(p: CompactedPayload): string {
  return (
    `context compacted before turn ${p.turn_index} (${p.strategy}, ${p.reason}): about ${p.tokens_before} → ` +
    `${p.tokens_after} tokens; the first ${p.messages_compacted} messages are sent in a shorter form from here`
  );
}
