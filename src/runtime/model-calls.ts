// The model calls of a run, each on record from start to end: its request and response files in the run bundle,
// every streamed delta as an event (held back while it could be the start of a secret), the call in flight (so an
// eviction's abandoned call is still counted), its tokens and cost in the task's usage, its transcript record, and
// the task's budgets, checked before and after it. RunRuntime.streamModel (run-runtime.ts) is this.
import type { Message, MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages";
import { costOf, type PriceTable } from "../config/prices.ts";
import type { AgentMessage, AgentRuntime, ModelCallOptions, RunLimits } from "../contracts/runtime.ts";
import type { AgentUsage, CallUsage } from "../contracts/usage.ts";
import { CanceledError, LimitExceededError, StreamingError, toErrorInfo } from "../errors.ts";
import type { Redactor } from "../events/redaction.ts";
import { billedTokens } from "../llm/anthropic-compaction.ts";
import type { HttpAttempt, ModelProvider } from "../llm/provider.ts";
import { queryOf, searchOutcome, WEB_SEARCH_TOOL_NAME, webCitations, webSearchCalls } from "../llm/web-search.ts";
import type { RunBundle } from "../run-bundle/run-bundle.ts";
import { estimateTokens, type LlmTranscriptRecord, type Transcript } from "../run-bundle/transcript.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import { DeltaBatcher } from "./delta-batcher.ts";
import type { PendingCall, PendingCalls } from "./pending-calls.ts";

/** The run's settings for its model calls (RunRuntimeDeps has them too). */
export interface ModelCallSettings {
  taskId: string;
  provider: ModelProvider;
  prices: PriceTable;
  /** The budgets are checked before and after every model call. */
  limits: Pick<RunLimits, "maxBudgetUsd" | "maxTokens">;
  /** What the task's sub-agents spent, their subtrees included: it counts against the budgets too. */
  delegated?: () => { cost_usd: number; tokens: number };
  signal: AbortSignal;
  /** How long one call may wait out its provider, from its first failure (src/runtime/provider-retry.ts). */
  providerWaitMs: number;
  /** Holds back streamed text that could be the start of a secret (the deployment's Redactor). */
  redactor: Pick<Redactor, "releasable">;
}

export interface ModelCallDeps extends ModelCallSettings {
  store: TaskStore;
  bundle: RunBundle;
  transcript: Transcript;
  pendingCalls: PendingCalls;
  /** The runtime's emit: nothing is appended once the task has ended. */
  emit: AgentRuntime["emit"];
  /** The task's usage so far. */
  usage: () => AgentUsage;
}

/** A server tool's input JSON as streamed. */
function parseJson(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return {};
  }
}

/** The transcript's record of a call's web searches and citations, when it made any. */
function transcriptSearches(content: Parameters<typeof webSearchCalls>[0]): Partial<LlmTranscriptRecord> {
  const searches = webSearchCalls(content);
  const citations = webCitations(content);
  return {
    ...(searches.length > 0 ? { web_searches: searches } : {}),
    ...(citations.length > 0 ? { citations } : {}),
  };
}

/** The provider's diagnosis of a prompt-cache miss (the response's diagnostics), as the event carries it. */
function cacheMiss(message: Message): { cache_miss_reason?: { type: string; cache_missed_input_tokens?: number } } {
  const reason = message.diagnostics?.cache_miss_reason;
  if (!reason) return {};
  const missed = "cache_missed_input_tokens" in reason ? reason.cache_missed_input_tokens : undefined;
  return {
    cache_miss_reason: {
      type: reason.type,
      ...(typeof missed === "number" ? { cache_missed_input_tokens: missed } : {}),
    },
  };
}

/** A call that failed: where it was, and what the provider's last answer said (its status, when to try again). */
export interface FailedCall {
  turn_index: number;
  call_site: NonNullable<ModelCallOptions["callSite"]>;
  attempt: number;
  status: number | null;
  retry_after_seconds: number | null;
  /** A 429's exhausted limits: seconds until they are back in full. */
  limit_reset_seconds: number | null;
}

/** The run's model calls: one RunRuntime has one, and its streamModel is stream. */
export class ModelCalls {
  private readonly deps: ModelCallDeps;
  /** The last call that failed, for the runtime's decision to try it again (src/runtime/provider-retry.ts). */
  private failed: FailedCall | null = null;

  constructor(deps: ModelCallDeps) {
    this.deps = deps;
  }

  /** One model call, streamed: what it yields is on record before the caller sees it. */
  async *stream(params: MessageCreateParamsBase, options: ModelCallOptions): AsyncGenerator<AgentMessage, void> {
    const { deps } = this;
    const turn = options.turnIndex;
    const callSite = options.callSite ?? "decision_loop";
    const attempt = options.attempt ?? 1;
    const span = options.spanId;
    const part = options.part === undefined ? "" : `_part_${options.part}`;
    const artifact = `artifacts/llm/${callSite}_turn_${turn}${part}_attempt_${attempt}`;
    this.countAbandonedCalls();
    // A resumed run that is already over budget makes no further call.
    this.checkBudget(deps.usage());
    const requestText = JSON.stringify(params, null, 2);
    await deps.bundle.write(`${artifact}_request.txt`, requestText);
    const base = { turn_index: turn, call_site: callSite, attempt };
    deps.emit(
      "llm_request_sent",
      { ...base, provider: deps.provider.name, model: params.model, message_count: params.messages.length },
      span,
    );
    const started = Date.now();
    let text = "";
    let outputChars = 0;
    let answered: HttpAttempt | null = null;
    this.failed = null;
    const callKey = artifact;
    // The call's web searches by content block: the server_tool_use's id and input JSON, and its query once whole.
    const searches = new Map<number, { id: string; start: unknown; json: string; query?: string }>();
    // Each delta event is redacted on its own, so no secret may be split between two of them: the batcher keeps
    // back what the redactor cannot yet tell from the start of one.
    const deltas = new DeltaBatcher(
      (kind, index, chunk) => {
        if (kind === "text") deps.emit("llm_text_delta", { turn_index: turn, index, text: chunk }, span);
        else deps.emit("llm_thinking_delta", { turn_index: turn, index, thinking: chunk }, span);
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
          // The provider's clients make no retries of their own: the runtime decides, from what the answer said.
          onAttempt: (http) => {
            answered = http;
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
        } else if (item.type === "stream_event" && item.event.type === "content_block_start") {
          const { index, content_block: block } = item.event;
          if (block.type === "server_tool_use" && block.name === WEB_SEARCH_TOOL_NAME) {
            searches.set(index, { id: block.id, start: block.input, json: "" });
          } else if (block.type === "web_search_tool_result") {
            // The API ran the search inside this call: the result block arrives whole.
            deltas.flush();
            const query = [...searches.values()].find((s) => s.id === block.tool_use_id)?.query ?? "";
            const outcome = searchOutcome(block.content);
            deps.emit(
              "web_search_completed",
              { turn_index: turn, index, tool_use_id: block.tool_use_id, query, ...outcome },
              span,
            );
          }
        } else if (item.type === "stream_event" && item.event.type === "content_block_delta") {
          const delta = item.event.delta;
          if (delta.type === "text_delta") {
            text += delta.text;
            deltas.add("text", item.event.index, delta.text);
          } else if (delta.type === "thinking_delta") {
            deltas.add("thinking", item.event.index, delta.thinking);
          } else if (delta.type === "input_json_delta") {
            const search = searches.get(item.event.index);
            if (search) search.json += delta.partial_json;
          } else if (delta.type === "citations_delta" && delta.citation.type === "web_search_result_location") {
            deltas.flush();
            const { url, title, cited_text } = delta.citation;
            deps.emit("llm_citation", { turn_index: turn, index: item.event.index, url, title, cited_text }, span);
          }
        } else if (item.type === "stream_event" && item.event.type === "content_block_stop") {
          const search = searches.get(item.event.index);
          if (search && search.query === undefined) {
            deltas.flush();
            // The API streams the input as JSON deltas after an empty start; one sent whole needs none.
            search.query = queryOf(search.json.trim() ? parseJson(search.json) : search.start);
            const payload = { turn_index: turn, index: item.event.index, tool_use_id: search.id, query: search.query };
            deps.emit("web_search_started", payload, span);
          }
        } else if (item.type === "assistant") {
          deltas.flush();
          deps.pendingCalls.settle(callKey);
          const latency = Date.now() - started;
          // Billed: the reported usage and any compaction the call made beside it (src/llm/anthropic-compaction.ts).
          const u = billedTokens(item.message.usage);
          const searched = item.message.usage.server_tool_use?.web_search_requests ?? 0;
          const hour = u.cache_creation_1h_input_tokens;
          const call: CallUsage = {
            model: params.model,
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            ...(hour > 0 ? { cache_creation_1h_input_tokens: hour } : {}),
            cache_read_input_tokens: u.cache_read_input_tokens,
            ...(searched > 0 ? { web_search_requests: searched } : {}),
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
            ...transcriptSearches(item.message.content),
          });
          deps.emit(
            "llm_response_received",
            {
              ...base,
              meta: {
                stop_reason: item.message.stop_reason,
                request_id: item.request_id,
                latency_ms: latency,
                usage: { ...call },
                ...cacheMiss(item.message),
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
      // A stream that broke after the provider started billing: what it cost is waste, counted like an abandoned call.
      const broken = error instanceof StreamingError ? deps.pendingCalls.take(callKey) : null;
      if (!broken) deps.pendingCalls.settle(callKey);
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
      deps.emit("llm_request_failed", { ...base, error: info, retryable: info.retryable }, span);
      const last = answered as HttpAttempt | null;
      this.failed = {
        ...base,
        // A stream that broke after a 200 has no failing status: like a lost connection, null.
        status: typeof info.status === "number" ? info.status : last?.status && last.status >= 400 ? last.status : null,
        retry_after_seconds: last?.retry_after_seconds ?? null,
        limit_reset_seconds: last?.limit_reset_seconds ?? null,
      };
      if (broken) this.countWasted(broken);
      throw error;
    } finally {
      // A caller that stops reading early still gets what was received on record.
      deltas.flush();
    }
  }

  /** The last call, if it failed: what the runtime's retry of it is decided from. */
  lastFailure(): FailedCall | null {
    return this.failed;
  }

  /**
   * Calls an earlier instance of the object started and never finished (an eviction or a restart cut them short):
   * the provider billed them, so their tokens and cost go into usage.recovery, each with an llm_call_abandoned event.
   */
  private countAbandonedCalls(): void {
    for (const call of this.deps.pendingCalls.takeAbandoned()) this.countWasted(call);
  }

  /** A billed call that came to nothing: its tokens and cost into usage.recovery, with an llm_call_abandoned event. */
  private countWasted(call: PendingCall): void {
    const { deps } = this;
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
    deps.emit("llm_call_abandoned", {
      call: call.key,
      model: call.model,
      input_tokens: call.input_tokens,
      output_tokens_estimated: outputTokens,
      cost_usd: cost,
      recovery: usage.recovery,
    });
  }

  /** Throws LimitExceededError when the task's spending has reached one of its budgets. */
  private checkBudget(usage: AgentUsage): void {
    const { maxBudgetUsd, maxTokens } = this.deps.limits;
    if (maxBudgetUsd === null && maxTokens === null) return;
    const delegated = this.deps.delegated?.() ?? { cost_usd: 0, tokens: 0 };
    const whose =
      delegated.cost_usd > 0 || delegated.tokens > 0
        ? "the task's model calls and its sub-agents'"
        : "the task's model calls";
    if (maxBudgetUsd !== null && usage.total_cost_usd !== null) {
      const cost = usage.total_cost_usd + delegated.cost_usd;
      if (cost >= maxBudgetUsd) {
        throw new LimitExceededError(
          "max_budget_usd",
          `max_budget_usd limit reached: ${whose} cost $${cost.toFixed(6)} of $${maxBudgetUsd}.`,
        );
      }
    }
    const tokens = usage.total_tokens + delegated.tokens;
    if (maxTokens !== null && tokens >= maxTokens) {
      throw new LimitExceededError(
        "max_tokens",
        `max_tokens limit reached: ${whose} used ${tokens} tokens of ${maxTokens}.`,
      );
    }
  }
}
