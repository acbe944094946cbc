// The durable runtime an agent runs on (implements AgentRuntime): journaled steps, model calls whose every delta,
// artifact, transcript record and token is recorded, the conversation, and cancellation.

import type { MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { costOf, type PriceTable } from "../config/prices.ts";
import type { CustomEventType, EventPayload, EventType } from "../contracts/events.ts";
import type {
  AgentMessage,
  AgentRuntime,
  ModelCallOptions,
  NextAction,
  RunLimits,
  SkillTranscriptFields,
  StepInfo,
} from "../contracts/runtime.ts";
import type { AgentUsage, CallUsage } from "../contracts/usage.ts";
import { AwaitingInputError, CanceledError, LimitExceededError, toErrorInfo } from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Redactor } from "../events/redaction.ts";
import type { ModelProvider } from "../llm/provider.ts";
import type { RunBundle } from "../run-bundle/run-bundle.ts";
import { estimateTokens, type Transcript } from "../run-bundle/transcript.ts";
import { isTerminal } from "../tasks/task.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import type { Workspace } from "../workspace/workspace.ts";
import type { CheckpointLog } from "./checkpoints.ts";
import type { MessageLog } from "./conversation.ts";
import { DeltaBatcher } from "./delta-batcher.ts";
import type { PendingCalls } from "./pending-calls.ts";
import type { StepJournal } from "./step-journal.ts";

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
}

export interface RunRuntimeDeps extends TaskStorage {
  taskId: string;
  provider: ModelProvider;
  prices: PriceTable;
  /** The budgets are checked before and after every model call. */
  limits: Pick<RunLimits, "maxBudgetUsd" | "maxTokens">;
  signal: AbortSignal;
  /** The SDK's transport retries; used to tell whether a failed attempt will be retried. */
  maxRetries: number;
  /** Holds back streamed text that could be the start of a secret (the deployment's Redactor). */
  redactor: Pick<Redactor, "releasable">;
}

/** What the SDK retries: connection errors (no status), 408, 409, 429 and 5xx. */
function sdkRetries(status: number | null): boolean {
  return status === null || status === 408 || status === 409 || status === 429 || status >= 500;
}

export class RunRuntime implements AgentRuntime {
  readonly signal: AbortSignal;
  readonly state: AgentRuntime["state"];

  private readonly deps: RunRuntimeDeps;

  constructor(deps: RunRuntimeDeps) {
    this.deps = deps;
    this.signal = deps.signal;
    this.state = deps.state;
  }

  async step<T>(name: string, fn: (info: StepInfo) => Promise<T>): Promise<T> {
    if (this.signal.aborted) throw new CanceledError();
    const lookup = await this.deps.journal.begin(name);
    if (lookup.state === "completed") return lookup.result as T;
    if (lookup.interrupted) {
      this.emit("step_resumed", { step: name, attempt: lookup.attempt }, lookup.spanId);
    }
    let result: T;
    try {
      result = await fn({ attempt: lookup.attempt, spanId: lookup.spanId });
    } catch (error) {
      if (error instanceof AwaitingInputError) this.deps.journal.release(name);
      throw error;
    }
    if (this.signal.aborted) throw new CanceledError();
    await this.deps.journal.complete(name, result);
    return result;
  }

  /** Appends unless the task has ended: nothing follows the terminal event (a canceled run may still be unwinding). */
  annotateTranscript(turnIndex: number, callSite: string, fields: SkillTranscriptFields): void {
    this.deps.transcript.annotate(turnIndex, callSite, fields);
  }

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
  ): void {
    const task = this.deps.store.get();
    if (!task || isTerminal(task.status)) return;
    const saved = this.deps.checkpoints.record(
      position,
      {
        next_action: nextAction,
        current_agent: task.assigned_agent,
        routing_key: null,
        metadata,
      },
      awaitingHuman,
    );
    if (saved) {
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

  /**
   * Calls an earlier instance of the object started and never finished (an eviction or a restart cut them short):
   * the provider billed them, so their tokens and cost go into usage.recovery, each with an llm_call_abandoned event.
   */
  private countAbandonedCalls(): void {
    const { deps } = this;
    for (const call of deps.pendingCalls.takeAbandoned()) {
      const outputTokens = Math.ceil(call.output_chars / 4);
      const cost = costOf(deps.prices, call.model, {
        input_tokens: call.input_tokens,
        output_tokens: outputTokens,
        cache_creation_input_tokens: call.cache_creation_input_tokens,
        cache_read_input_tokens: call.cache_read_input_tokens,
      });
      const usage = deps.store.addRecoveredCall({
        input_tokens: call.input_tokens,
        output_tokens: outputTokens,
        cost_usd: cost,
      });
      this.emit("llm_call_abandoned", {
        call: call.key,
        model: call.model,
        input_tokens: call.input_tokens,
        output_tokens_estimated: outputTokens,
        cost_usd: cost,
        recovery: usage.recovery,
      });
    }
  }

  /** Throws LimitExceededError when the task's spending has reached one of its budgets. */
  private checkBudget(usage: AgentUsage): void {
    const { maxBudgetUsd, maxTokens } = this.deps.limits;
    if (maxBudgetUsd !== null && usage.total_cost_usd !== null && usage.total_cost_usd >= maxBudgetUsd) {
      throw new LimitExceededError(
        "max_budget_usd",
        `max_budget_usd limit reached: the task's model calls cost $${usage.total_cost_usd.toFixed(6)} of $${maxBudgetUsd}.`,
      );
    }
    if (maxTokens !== null && usage.total_tokens >= maxTokens) {
      throw new LimitExceededError(
        "max_tokens",
        `max_tokens limit reached: the task's model calls used ${usage.total_tokens} tokens of ${maxTokens}.`,
      );
    }
  }

  usage(): AgentUsage {
    const task = this.deps.store.get();
    if (!task) throw new Error("task row missing");
    return task.usage;
  }

  async *streamModel(params: MessageCreateParamsBase, options: ModelCallOptions): AsyncGenerator<AgentMessage, void> {
    const { deps } = this;
    const turn = options.turnIndex;
    const callSite = options.callSite ?? "decision_loop";
    const attempt = options.attempt ?? 1;
    const span = options.spanId;
    const artifact = `artifacts/llm/${callSite}_turn_${turn}_attempt_${attempt}`;
    this.countAbandonedCalls();
    // A resumed run that is already over budget makes no further call.
    this.checkBudget(this.usage());
    const requestText = JSON.stringify(params, null, 2);
    await deps.bundle.write(`${artifact}_request.txt`, requestText);
    const base = { turn_index: turn, call_site: callSite, attempt };
    this.emit(
      "llm_request_sent",
      { ...base, provider: deps.provider.name, model: params.model, message_count: params.messages.length },
      span,
    );
    const started = Date.now();
    let text = "";
    let outputChars = 0;
    const callKey = artifact;
    // Each delta event is redacted on its own, so no secret may be split between two of them: the batcher keeps
    // back what the redactor cannot yet tell from the start of one.
    const deltas = new DeltaBatcher(
      (kind, index, chunk) => {
        if (kind === "text") this.emit("llm_text_delta", { turn_index: turn, index, text: chunk }, span);
        else this.emit("llm_thinking_delta", { turn_index: turn, index, thinking: chunk }, span);
        outputChars += chunk.length;
        deps.pendingCalls.progress(callKey, outputChars);
      },
      (text) => deps.redactor.releasable(text),
    );
    try {
      const stream = deps.provider.stream(
        { ...params, stream: true },
        {
          signal: deps.signal,
          headers: { "x-outpost-task-id": deps.taskId },
          onAttempt: (http) => {
            if ((http.status !== null && http.status < 400) || !sdkRetries(http.status)) return;
            if (http.attempt > deps.maxRetries) return;
            deltas.flush();
            this.emit(
              "llm_retry_scheduled",
              { ...base, status: http.status, delay_seconds: http.retry_after_seconds, http_attempt: http.attempt + 1 },
              span,
            );
          },
        },
      );
      for await (const item of stream) {
        if (item.type === "stream_event" && item.event.type === "message_start") {
          // From here the provider bills this call: on record until it completes or fails.
          const u = item.event.message.usage;
          deps.pendingCalls.start({
            key: callKey,
            model: params.model,
            input_tokens: u.input_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
            cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
          });
        } else if (item.type === "stream_event" && item.event.type === "content_block_delta") {
          const delta = item.event.delta;
          if (delta.type === "text_delta") {
            text += delta.text;
            deltas.add("text", item.event.index, delta.text);
          } else if (delta.type === "thinking_delta") {
            deltas.add("thinking", item.event.index, delta.thinking);
          }
        } else if (item.type === "assistant") {
          deltas.flush();
          deps.pendingCalls.settle(callKey);
          const latency = Date.now() - started;
          const u = item.message.usage;
          const call: CallUsage = {
            model: params.model,
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
            cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
            cost_usd: null,
          };
          call.cost_usd = costOf(deps.prices, params.model, call);
          const usage = deps.store.addUsage(call);
          const responseText = JSON.stringify(item.message, null, 2);
          await deps.bundle.write(`${artifact}_response.txt`, responseText);
          deps.transcript.append({
            ...base,
            provider: deps.provider.name,
            model: params.model,
            status: "success",
            request_artifact: `${artifact}_request.txt`,
            response_text: text,
            prompt_estimated_tokens: estimateTokens(requestText),
            usage: { input_tokens: u.input_tokens, output_tokens: u.output_tokens, latency_ms: latency },
            request_id: item.request_id,
            stop_reason: item.message.stop_reason,
            error: null,
            retryable: null,
          });
          this.emit(
            "llm_response_received",
            {
              ...base,
              meta: {
                stop_reason: item.message.stop_reason,
                request_id: item.request_id,
                latency_ms: latency,
                usage: { ...call },
              },
              response_preview: text.slice(0, 200),
            },
            span,
          );
          // The call is recorded; a budget it used up ends the run here, before the tool calls it asks for run.
          // A final answer is kept: the check before any further call stops what would come after it.
          if (item.message.stop_reason === "tool_use") this.checkBudget(usage);
        }
        yield item;
      }
    } catch (error) {
      deltas.flush();
      deps.pendingCalls.settle(callKey);
      // A budget reached by a call that completed: the call is on record as a success already.
      if (error instanceof LimitExceededError) throw error;
      if (error instanceof CanceledError) {
        // A canceled call keeps what it produced, like a failed one.
        await deps.bundle.write(`${artifact}_response.txt`, `CANCELED\n--- partial text ---\n${text}`);
        throw error;
      }
      const info = toErrorInfo(error);
      await deps.bundle.write(
        `${artifact}_response.txt`,
        `REQUEST FAILED: ${info.code}: ${info.message}\n--- partial text ---\n${text}`,
      );
      deps.transcript.append({
        ...base,
        provider: deps.provider.name,
        model: params.model,
        status: "request_failed",
        request_artifact: `${artifact}_request.txt`,
        response_text: text || null,
        prompt_estimated_tokens: estimateTokens(requestText),
        usage: { input_tokens: null, output_tokens: null, latency_ms: Date.now() - started },
        request_id: typeof info.request_id === "string" ? info.request_id : null,
        stop_reason: null,
        error: `${info.code}: ${info.message}`,
        retryable: info.retryable,
      });
      this.emit("llm_request_failed", { ...base, error: info, retryable: info.retryable }, span);
      throw error;
    } finally {
      // A caller that stops reading early still gets what was received on record.
      deltas.flush();
    }
  }
}
