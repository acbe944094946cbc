// Google's Gemini API through the official @google/genai client: the Messages API request is translated into a
// generateContent call (gemini-request.ts); the streamed chunks are fed to a MessageBuilder so the runtime sees
// Messages API events and a final Message; the client's ApiError is mapped by HTTP status onto Outpost's errors; and
// a fetch wrapper reports every HTTP attempt and bounds silences, as for Anthropic.

import type {
  Message,
  MessageCreateParamsBase,
  RawMessageStreamEvent,
  StopReason,
} from "@anthropic-ai/sdk/resources/messages";
import { ApiError, type GenerateContentResponseUsageMetadata, GoogleGenAI } from "@google/genai";
import type { AgentMessage } from "../contracts/runtime.ts";
import {
  type AgentError,
  CanceledError,
  MalformedResponseError,
  NetworkError,
  type ProviderError,
  StreamingError,
  TimeoutError,
} from "../errors.ts";
import { BodyWatch } from "./body-watch.ts";
import { toGeminiRequest } from "./gemini-request.ts";
import { MessageBuilder, ToolUseIds, tokensOf } from "./message-builder.ts";
import { type Fetch, type ModelProvider, providerFailure, type StreamOptions } from "./provider.ts";
import { retryAfterSecondsOf } from "./retry-hint.ts";

export interface GeminiConfig {
  apiKey: string;
  /** Base URL without the API version (the client adds /v1beta); Google's own endpoint when absent. */
  endpoint?: string;
  /** The client's transport retries (408, 429, 5xx and, through the fetch wrapper, connection failures). */
  maxRetries?: number;
  /** Until the response headers arrive, per attempt. */
  timeoutMs?: number;
  /** Longest silence allowed inside a streamed response (see ProviderConfig.idleTimeoutMs in anthropic.ts). */
  idleTimeoutMs?: number;
  /** What sends the HTTP requests: the global fetch unless given (fault injection stands in front of it). */
  transport?: Fetch | undefined;
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
// Failures raised by the fetch wrapper. Plain Errors on purpose: the client's retry loop (p-retry) gives up at once on
// a TypeError, which is what fetch throws for a refused connection, so these make connection failures retryable too.
class HeadersTimeout extends Error {}
class IdleTimeout extends Error {}
class ConnectionFailed extends Error {}

interface Call {
  options: StreamOptions;
  attempts: number;
  requestId: string | null;
  watch: BodyWatch;
}

export class GeminiProvider implements ModelProvider {
  readonly name = "gemini";
  private readonly client: GoogleGenAI;
  private readonly timeoutMs: number;
  private readonly idleTimeoutMs: number;
  /** The call in progress; a provider instance serves one run, whose model calls are sequential. */
  private current: Call | null = null;
  private readonly transport: Fetch;

  constructor(config: GeminiConfig) {
    this.transport = config.transport ?? ((input, init) => fetch(input, init));
    this.timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.idleTimeoutMs = config.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    const retries = Math.max(0, config.maxRetries ?? 2);
    this.client = new GoogleGenAI({
      apiKey: config.apiKey,
      httpOptions: {
        ...(config.endpoint ? { baseUrl: config.endpoint } : {}),
        // The client retries only when given retry options; one attempt is its "no retries". Backoff as the
        // Anthropic SDK's (0.5 s doubling to 8 s); unlike it, this client ignores retry-after and RetryInfo.
        retryOptions: { attempts: retries + 1, initialDelay: 0.5, maxDelay: 8 },
        // The client's own `timeout` would stay armed for the whole streamed body; the wrapper bounds the wait for
        // headers instead, and silences inside the body, like the Anthropic provider. Workers also need fetch
        // passed as a wrapper rather than the bare global.
        fetch: (input, init) => this.observedFetch(input, init),
      },
    });
  }

  /** Streams one generateContent call; yields Messages API events, then the final message. Errors are Outpost's. */
  async *stream(params: MessageCreateParamsBase, options: StreamOptions): AsyncGenerator<AgentMessage, Message> {
    if (this.current) throw new Error("GeminiProvider serves one call at a time");
    const call: Call = { options, attempts: 0, requestId: null, watch: new BodyWatch() };
    this.current = call;
    const yielded: AgentMessage[] = [];
    let builder: MessageBuilder | null = null;
    let finishReason: string | undefined;
    let blocked = false;
    let usage: GenerateContentResponseUsageMetadata | undefined;
    let generatedIds = 0;
    const uniqueIds = new ToolUseIds(params.messages);
    try {
      if (options.signal.aborted) throw new CanceledError();
      const stream = await this.client.models.generateContentStream(toGeminiRequest(params, options));
      for await (const chunk of stream) {
        // The response id arrives with the first chunk; it names the message, as Anthropic's id does.
        builder ??= new MessageBuilder(params.model, chunk.responseId || newId("msg_gemini_"));
        const prompt = chunk.usageMetadata;
        const events = builder.start(
          (prompt?.promptTokenCount ?? 0) - (prompt?.cachedContentTokenCount ?? 0),
          prompt?.cachedContentTokenCount ?? 0,
        );
        if (chunk.usageMetadata) usage = chunk.usageMetadata;
        if (chunk.promptFeedback?.blockReason) blocked = true;
        const candidate = chunk.candidates?.[0];
        for (const part of candidate?.content?.parts ?? []) {
          if (part.functionCall) {
            // The Gemini Developer API may leave ids out (or repeat them); the runtime keys tool calls by id, so make
            // one that is unique across the run (a bare counter would repeat in every turn).
            const id = uniqueIds.claim(part.functionCall.id, `toolu_gemini_${++generatedIds}_`);
            events.push(...builder.toolStart(id, part.functionCall.name ?? "", part.functionCall.args ?? {}));
          } else if (typeof part.text === "string") {
            events.push(...(part.thought ? builder.thinking(part.text) : builder.text(part.text)));
          }
        }
        if (candidate?.finishReason) finishReason = candidate.finishReason;
        for (const event of events) yield record(yielded, event);
      }
      builder ??= new MessageBuilder(params.model, newId("msg_gemini_"));
      const tokens = tokensOf(
        usage?.promptTokenCount ?? 0,
        usage?.cachedContentTokenCount ?? 0,
        (usage?.candidatesTokenCount ?? 0) + (usage?.thoughtsTokenCount ?? 0),
      );
      const stop = blocked ? "refusal" : stopReason(finishReason, builder.hasToolUse);
      for (const event of builder.finish(stop, tokens)) yield record(yielded, event);
      const message = builder.message();
      yield { type: "assistant", message, request_id: call.requestId };
      return message;
    } catch (error) {
      const mapped = mapGeminiError(error, call.watch.tail(), options.signal, call.requestId);
      // FR-005: what arrived has been yielded; the error carries it too.
      if (yielded.length > 0 && !(mapped instanceof CanceledError)) {
        throw new StreamingError(`The model stream broke after ${yielded.length} events: ${mapped.message}`, yielded, {
          cause: mapped,
        });
      }
      throw mapped;
    } finally {
      call.watch.stop();
      this.current = null;
    }
  }

  private async observedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const call = this.current;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, deadline.signal]) : deadline.signal;
    let response: Response;
    try {
      response = await this.transport(input, { ...init, signal });
    } catch (error) {
      // The client's signal aborts only when the caller's does: that is a cancellation, not an attempt.
      if (init?.signal?.aborted) throw error;
      if (call) {
        call.attempts += 1;
        call.options.onAttempt?.({ attempt: call.attempts, status: null, request_id: null, retry_after_seconds: null });
      }
      if (deadline.signal.aborted) {
        throw new HeadersTimeout(`The model provider sent no response headers within ${this.timeoutMs} ms.`);
      }
      throw new ConnectionFailed(error instanceof Error ? error.message : String(error), { cause: error });
    } finally {
      clearTimeout(timer);
    }
    if (!call) return response;
    call.attempts += 1;
    // Google sends no request id header; a gateway in front of it (or the emulator) may.
    call.requestId = response.headers.get("request-id") ?? response.headers.get("x-request-id");
    call.options.onAttempt?.({
      attempt: call.attempts,
      status: response.status,
      request_id: call.requestId,
      retry_after_seconds: await retryAfterSeconds(response),
    });
    if (!response.body || !response.ok) return response;
    const body = call.watch.watch(
      response.body,
      this.idleTimeoutMs,
      () => new IdleTimeout(`No data from the model provider for ${this.idleTimeoutMs} ms.`),
    );
    return new Response(body, response);
  }
}

function record(yielded: AgentMessage[], event: RawMessageStreamEvent): AgentMessage {
  const item: AgentMessage = { type: "stream_event", event };
  yielded.push(item);
  return item;
}

function newId(prefix: string): string {
  return `${prefix}${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

/** The retry-after header, else the delay of Google's RetryInfo detail in an error body (e.g. "37s"). */
async function retryAfterSeconds(response: Response): Promise<number | null> {
  const header = retryAfterSecondsOf(response.headers, response.status);
  if (header !== null) return header;
  if (response.ok || !response.headers.get("content-type")?.includes("application/json")) return null;
  try {
    const body = (await response.clone().json()) as {
      error?: { details?: { "@type"?: string; retryDelay?: string }[] };
    };
    const info = body.error?.details?.find((d) => d["@type"]?.endsWith("google.rpc.RetryInfo"));
    const seconds = Number.parseFloat(info?.retryDelay ?? "");
    return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
  } catch {
    return null;
  }
}

/** Content-policy finish reasons: the model declined or was stopped, which the Messages API calls a refusal. */
function stopReason(finish: string | undefined, toolUse: boolean): StopReason {
  switch (finish) {
    case undefined:
    case "STOP":
    case "FINISH_REASON_UNSPECIFIED":
      return toolUse ? "tool_use" : "end_turn";
    case "MAX_TOKENS":
    // Output cut short and not continued (automatic continuation off or given up): incomplete, like max_tokens.
    case "CONTINUATION":
      return "max_tokens";
    default:
      // SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, MALFORMED_FUNCTION_CALL, OTHER, …
      return "refusal";
  }
}

/** Maps the client's failures: ApiError by HTTP status, the fetch wrapper's by class, never by message text. */
export function mapGeminiError(
  error: unknown,
  rawTail: string,
  signal?: AbortSignal,
  requestId: string | null = null,
): AgentError | CanceledError {
  if (error instanceof CanceledError) return error;
  if (signal?.aborted) return new CanceledError();
  if (error instanceof HeadersTimeout || error instanceof IdleTimeout) {
    return new TimeoutError(`The model provider did not answer in time: ${error.message}`, { cause: error });
  }
  if (error instanceof ConnectionFailed) {
    return new NetworkError(`Could not reach the model provider: ${error.message}`, { cause: error });
  }
  if (error instanceof ApiError) return providerError(error, requestId);
  if (error instanceof SyntaxError) {
    return new MalformedResponseError(
      `The model provider sent a response that is not valid JSON: ${error.message}`,
      rawTail,
      { cause: error },
    );
  }
  return new NetworkError(`Model call failed: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}

interface GoogleErrorBody {
  error?: { message?: string; status?: string; details?: { reason?: string }[] };
}

function providerError(error: ApiError, requestId: string | null): ProviderError {
  // The client puts Google's JSON error body into the message ("got status: X. {…}" when it came inside a stream).
  let body: GoogleErrorBody = {};
  try {
    body = JSON.parse(error.message.slice(error.message.indexOf("{"))) as GoogleErrorBody;
  } catch {
    // Not JSON (a proxy's HTML page, say): the message as it is.
  }
  const detail = body.error?.message ?? error.message;
  const base = { status: error.status, requestId, cause: error };
  // Google answers a bad API key with 400 INVALID_ARGUMENT and the reason API_KEY_INVALID.
  const badKey = body.error?.details?.some((d) => d.reason === "API_KEY_INVALID") ?? false;
  if (error.status === 401 || error.status === 403 || badKey) {
    return providerFailure("provider_auth_failed", detail, base, { hint: "check the agent's Gemini API key secret" });
  }
  switch (error.status) {
    case 429:
      return providerFailure("rate_limited", detail, base);
    case 503:
      return providerFailure("provider_overloaded", detail, base);
    case 500:
    case 502:
    case 504:
      return providerFailure("provider_unavailable", detail, base);
    case 404:
      return providerFailure("model_not_found", detail, base);
    case 400: {
      // Google's INVALID_ARGUMENT for a prompt past the window has no reason of its own: its text tells.
      const tooLong = /input token count .* exceeds the maximum/i.test(detail);
      return providerFailure(tooLong ? "context_window_exceeded" : "provider_rejected_request", detail, base);
    }
    default:
      return providerFailure("provider_error", detail, base, { retryable: error.status >= 500 });
  }
}
