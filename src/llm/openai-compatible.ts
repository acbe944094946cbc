// Any OpenAI-compatible Chat Completions endpoint (OpenAI, and the many servers and gateways that speak its API),
// through the official `openai` client: the Messages API request is translated into chat messages and function
// tools, the chunk stream back into Messages API events and a final Message, and the client's errors by class onto
// Outpost's hierarchy.
import type {
  ContentBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageParam,
  StopReason,
} from "@anthropic-ai/sdk/resources/messages";
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
} from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import type { AgentMessage } from "../contracts/runtime.ts";
import {
  type AgentError,
  CanceledError,
  MalformedResponseError,
  NetworkError,
  StreamingError,
  TimeoutError,
} from "../errors.ts";
import { contentText, MessageBuilder, type Tokens, ToolUseIds, tokensOf } from "./message-builder.ts";
import { promptCacheKeyOf } from "./prompt-cache.ts";
import { type Fetch, type ModelProvider, providerFailure, type StreamOptions, temperatureOf } from "./provider.ts";
import { limitResetSecondsOf, retryAfterSecondsOf } from "./retry-hint.ts";

export interface OpenAiCompatibleConfig {
  apiKey: string;
  /** Base URL, e.g. https://api.openai.com/v1. */
  endpoint: string;
  maxRetries?: number;
  timeoutMs?: number;
  /** What sends the HTTP requests: the global fetch unless given (fault injection stands in front of it). */
  transport?: Fetch | undefined;
}

export class OpenAiCompatibleProvider implements ModelProvider {
  readonly name = "openai_compatible";
  private readonly client: OpenAI;
  private current: StreamOptions | null = null;
  private attempts = 0;
  private readonly transport: Fetch;

  constructor(config: OpenAiCompatibleConfig) {
    this.transport = config.transport ?? ((input, init) => fetch(input, init));
    this.client = new OpenAI({
      apiKey: config.apiKey,
      baseURL: config.endpoint,
      maxRetries: config.maxRetries ?? 2,
      timeout: config.timeoutMs ?? 10 * 60_000,
      // Workers need fetch passed as a wrapper; the wrapper also reports each HTTP attempt.
      fetch: (input, init) => this.observedFetch(input, init),
    });
  }

  async *stream(params: MessageCreateParamsBase, options: StreamOptions): AsyncGenerator<AgentMessage, Message> {
    this.current = options;
    this.attempts = 0;
    const yielded: AgentMessage[] = [];
    const builder = new MessageBuilder(params.model, `msg_oai_${crypto.randomUUID().replaceAll("-", "")}`);
    const toolIds = new Map<number, string>();
    const uniqueIds = new ToolUseIds(params.messages);
    let requestId: string | null = null;
    let finishReason: string | null = null;
    let tokens: Tokens = { input: 0, output: 0 };
    try {
      const { data: stream, response } = await this.client.chat.completions
        .create(toChatRequest(params), {
          signal: options.signal,
          ...(options.headers ? { headers: options.headers } : {}),
        })
        .withResponse();
      requestId = response.headers.get("x-request-id");
      for (const event of builder.start()) yield* emit(yielded, event);
      for await (const chunk of stream) {
        if (chunk.usage) {
          tokens = tokensOf(
            chunk.usage.prompt_tokens ?? 0,
            chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
            chunk.usage.completion_tokens ?? 0,
          );
        }
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = choice.delta ?? {};
        if (typeof delta.content === "string") for (const e of builder.text(delta.content)) yield* emit(yielded, e);
        for (const call of delta.tool_calls ?? []) {
          if (call.id && !toolIds.has(call.index)) {
            const id = uniqueIds.claim(call.id, "toolu_oai_");
            toolIds.set(call.index, id);
            for (const e of builder.toolStart(id, call.function?.name ?? "")) yield* emit(yielded, e);
          }
          const piece = call.function?.arguments;
          if (piece) for (const e of builder.toolArguments(piece)) yield* emit(yielded, e);
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
      for (const event of builder.finish(stopReason(finishReason, builder.hasToolUse), tokens)) {
        yield* emit(yielded, event);
      }
      const message = builder.message();
      yield { type: "assistant", message, request_id: requestId };
      return message;
    } catch (error) {
      const mapped = mapOpenAiError(error, options.signal);
      if (yielded.length > 0 && !(mapped instanceof CanceledError)) {
        throw new StreamingError(`The model stream broke after ${yielded.length} events: ${mapped.message}`, yielded, {
          cause: mapped,
        });
      }
      throw mapped;
    } finally {
      this.current = null;
    }
  }

  private async observedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const options = this.current;
    try {
      const response = await this.transport(input, init);
      this.attempts += 1;
      options?.onAttempt?.({
        attempt: this.attempts,
        status: response.status,
        request_id: response.headers.get("x-request-id"),
        retry_after_seconds: retryAfterSecondsOf(response.headers, response.status),
        limit_reset_seconds: limitResetSecondsOf(response.headers, response.status),
      });
      return response;
    } catch (error) {
      if (options && !options.signal.aborted) {
        this.attempts += 1;
        options.onAttempt?.({ attempt: this.attempts, status: null, request_id: null, retry_after_seconds: null });
      }
      throw error;
    }
  }
}

function* emit(
  yielded: AgentMessage[],
  event: AgentMessage extends infer T ? (T extends { type: "stream_event"; event: infer E } ? E : never) : never,
) {
  const item: AgentMessage = { type: "stream_event", event };
  yielded.push(item);
  yield item;
}

function stopReason(finish: string | null, toolUse: boolean): StopReason {
  if (toolUse || finish === "tool_calls" || finish === "function_call") return "tool_use";
  if (finish === "length") return "max_tokens";
  if (finish === "content_filter") return "refusal";
  return "end_turn";
}

/** The Messages API request as a streamed Chat Completions request. */
/** `{temperature}` when the request carries one, else nothing (the provider's default). */
function temperatureField(params: MessageCreateParamsBase): { temperature?: number } {
  const temperature = temperatureOf(params);
  return temperature === undefined ? {} : { temperature };
}

export function toChatRequest(params: MessageCreateParamsBase): OpenAI.ChatCompletionCreateParamsStreaming {
  // The agent's cache key (src/llm/prompt-cache.ts), sent to OpenAI itself or where the agent asks; Anthropic's
  // cache_control markers have no counterpart: OpenAI caches prefixes of 1,024 tokens and more by itself.
  const cacheKey = promptCacheKeyOf(params);
  const messages: ChatCompletionMessageParam[] = [];
  const system = contentText(params.system);
  if (system) messages.push({ role: "system", content: system });
  for (const message of params.messages) messages.push(...toChatMessages(message));
  const tools: ChatCompletionTool[] | undefined = params.tools?.flatMap((tool) =>
    "input_schema" in tool
      ? [
          {
            type: "function" as const,
            function: {
              name: tool.name,
              ...(tool.description ? { description: tool.description } : {}),
              parameters: tool.input_schema as Record<string, unknown>,
            },
          },
        ]
      : [],
  );
  return {
    model: params.model,
    messages,
    max_completion_tokens: params.max_tokens,
    ...temperatureField(params),
    stream: true,
    stream_options: { include_usage: true },
    ...(tools && tools.length > 0 ? { tools } : {}),
    ...(params.stop_sequences ? { stop: params.stop_sequences } : {}),
    ...(cacheKey ? { prompt_cache_key: cacheKey } : {}),
  };
}

function toChatMessages(message: MessageParam): ChatCompletionMessageParam[] {
  if (typeof message.content === "string") return [{ role: message.role, content: message.content }];
  const blocks = message.content as ContentBlockParam[];
  if (message.role === "assistant") {
    const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
    const calls = blocks.flatMap((b) =>
      b.type === "tool_use"
        ? [
            {
              id: b.id,
              type: "function" as const,
              function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
            },
          ]
        : [],
    );
    return [{ role: "assistant", content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) }];
  }
  // A user turn: tool results become tool messages (first, answering the calls), the rest one user message.
  const out: ChatCompletionMessageParam[] = [];
  for (const block of blocks) {
    if (block.type !== "tool_result") continue;
    const text = typeof block.content === "string" ? block.content : contentText(block.content ?? []);
    out.push({ role: "tool", tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${text}` : text });
  }
  const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
  if (text) out.push({ role: "user", content: text });
  return out;
}

/** Maps the client's failures by class, never by message text. */
export function mapOpenAiError(error: unknown, signal?: AbortSignal): AgentError | CanceledError {
  if (error instanceof CanceledError) return error;
  if (signal?.aborted || error instanceof APIUserAbortError) return new CanceledError();
  if (error instanceof APIConnectionTimeoutError) {
    return new TimeoutError("The model provider did not answer in time.", { cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new NetworkError(`Could not reach the model provider: ${error.message}`, { cause: error });
  }
  if (error instanceof APIError) {
    const base = { status: error.status ?? null, requestId: error.requestID ?? null, cause: error };
    const detail = error.message;
    if (error instanceof RateLimitError) return providerFailure("rate_limited", detail, base);
    if (error.status === 503 || error.status === 529) return providerFailure("provider_overloaded", detail, base);
    if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) {
      return providerFailure("provider_auth_failed", detail, base, { hint: "check the agent's API key secret" });
    }
    if (error instanceof NotFoundError) return providerFailure("model_not_found", detail, base);
    if (error instanceof BadRequestError) {
      const tooLong = error.code === "context_length_exceeded";
      return providerFailure(tooLong ? "context_window_exceeded" : "provider_rejected_request", detail, base);
    }
    if (error instanceof InternalServerError) return providerFailure("provider_unavailable", detail, base);
    // An error sent inside a 200 stream has no status.
    return providerFailure("provider_error", detail, base, { retryable: error.status === undefined });
  }
  if (error instanceof SyntaxError) {
    return new MalformedResponseError(
      `The model provider sent a response that is not valid JSON: ${error.message}`,
      "",
      {
        cause: error,
      },
    );
  }
  return new NetworkError(`Model call failed: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
