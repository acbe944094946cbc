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
import { AwaitingInputError, AwaitingSubagentsError, CanceledError, StreamingError } from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
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
import { MAX_STEP_ATTEMPTS, type StepJournal } from "./step-journal.ts";
import type { TaskTimers } from "./timers.ts";

/** The pause before a model turn whose stream broke runs again; doubled for each further attempt. */
export const BROKEN_STREAM_RETRY_MS = 500;

/**
 * A model stream that broke after it started, for a reason that may pass (the provider overloaded or failing, the
 * connection lost or silent): the SDK retries only before a response starts, so the step is what can try again.
 */
function brokenStream(error: unknown): boolean {
  return error instanceof StreamingError && error.retryable;
}

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
  /** The faults the task asked for (src/faults/): an eviction after a checkpoint happens before the next step. */
  faults?: Pick<FaultInjector, "checkpointSaved" | "beforeStep"> | null;
}

export class RunRuntime implements AgentRuntime {
  readonly signal: AbortSignal;
  readonly state: AgentRuntime["state"];
  readonly taskState: AgentRuntime["taskState"];

  private readonly deps: RunRuntimeDeps;
  private readonly models: ModelCalls;

  constructor(deps: RunRuntimeDeps) {
    this.deps = deps;
    this.signal = deps.signal;
    this.state = deps.state.agent;
    this.taskState = deps.state;
    this.models = new ModelCalls({ ...deps, emit: this.emit.bind(this), usage: () => this.usage() });
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
        if (error instanceof AwaitingInputError || error instanceof AwaitingSubagentsError)
          this.deps.journal.release(name);
        if (!options.retryBrokenStream || !brokenStream(error) || lookup.attempt >= MAX_STEP_ATTEMPTS) throw error;
      }
      // A broken stream: its failure is on record (llm_request_failed). The next attempt is counted before the pause,
      // so an eviction during it resumes the step with the attempts it has left, as any interrupted step.
      const delayMs = BROKEN_STREAM_RETRY_MS * 2 ** (lookup.attempt - 1);
      lookup = await this.deps.journal.begin(name);
      if (lookup.state === "completed") return lookup.result as T;
      this.emit(
        "step_resumed",
        { step: name, attempt: lookup.attempt, reason: "stream_broken", delay_ms: delayMs },
        lookup.spanId,
      );
      await abortableSleep(delayMs, this.signal);
      if (this.signal.aborted) throw new CanceledError();
    }
    if (this.signal.aborted) throw new CanceledError();
    await this.deps.journal.complete(name, result);
    return result;
  }

  annotateTranscript(turnIndex: number, callSite: string, fields: SkillTranscriptFields): void {
    this.deps.transcript.annotate(turnIndex, callSite, fields);
  }

  /** Appends unless the task has ended: nothing follows the terminal event (a canceled run may still be unwinding). */
  emit<T extends EventType | CustomEventType>(eventType: T, payload: EventPayload<T>, spanId?: string): void {
    const task = this.deps.store.get();
    if (task && isTerminal(task.status)) return;
    this.deps.events.append(eventType, payload, spanId);
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
