// The Anthropic Messages API through the official SDK: streaming calls, SDK errors mapped by class onto Outpost's
// error hierarchy, and a record of every HTTP attempt (the SDK's own transport retries become visible as events).

import Anthropic, {
  AnthropicError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  NotFoundError,
  OverloadedError,
  PermissionDeniedError,
  RateLimitError,
} from "@anthropic-ai/sdk";
import type { Message, MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages";
import type { AgentMessage } from "../contracts/runtime.ts";
import {
  type AgentError,
  CanceledError,
  MalformedResponseError,
  NetworkError,
  ProviderNotConfiguredError,
  StreamingError,
  TimeoutError,
} from "../errors.ts";
import { COMPACTION_BETA, needsCompactionBeta, withBetaHeader } from "./anthropic-compaction.ts";
import { BodyWatch } from "./body-watch.ts";
import { MessageAccumulator } from "./message-accumulator.ts";
import { type Fetch, providerFailure, type StreamOptions } from "./provider.ts";
import { limitResetSecondsOf, retryAfterSecondsOf } from "./retry-hint.ts";

/** What every client of the Anthropic SDK is built with, whichever auth provider builds it. */
export interface ClientOptions {
  maxRetries: number;
  timeout: number;
  /** The provider's fetch, which records attempts and watches the body; an auth provider wraps it. */
  fetch: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** Always off: the SDK's own spans (Outpost records its spans itself). */
  openTelemetry: false;
}

/** What the provider uses of a client: Anthropic's own, or an official platform client (Foundry's) built on it. */
export interface MessagesClient {
  messages: Pick<Anthropic["messages"], "create">;
}

/** Builds the SDK client of an auth provider other than an API key (src/llm/anthropic-auth.ts). */
export type ClientFactory = (options: ClientOptions) => MessagesClient;

/**
 * The SDK client of a cloud platform that takes no Anthropic credentials (Bedrock, Vertex): explicit nulls keep the
 * SDK from looking for them, and the omitted Authorization header tells it that `fetch` authenticates each request.
 */
export function platformClient(options: ClientOptions, baseURL: string, fetch: ClientOptions["fetch"]): MessagesClient {
  return new Anthropic({
    ...options,
    apiKey: null,
    authToken: null,
    defaultHeaders: { Authorization: null },
    baseURL,
    fetch,
  });
}

export interface ProviderConfig {
  apiKey: string | undefined;
  baseURL: string | undefined;
  /** The client of another auth provider; absent: an API key (apiKey) at baseURL. */
  client?: ClientFactory;
  /** Where to look when the provider refuses the credentials, e.g. "check the ANTHROPIC_API_KEY secret". */
  authHint?: string;
  /** The SDK's transport retries (connection errors, 408/409/429/5xx). The base layer adds none of its own. */
  maxRetries?: number;
  /** Until the response headers arrive (the SDK's own timeout). */
  timeoutMs?: number;
  /**
   * Longest silence allowed inside a streamed response. The SDK's timeout ends when the headers arrive, so without
   * this a stream that stalls after its first bytes would hold the run forever. The API sends pings while it works.
   */
  idleTimeoutMs?: number;
  /** What sends the HTTP requests: the global fetch unless given (fault injection stands in front of it). */
  transport?: Fetch | undefined;
  /**
   * Whether calls carry `diagnostics.previous_message_id`, so that the response says why the prompt cache missed.
   * Anthropic's own API only (an API key or an OAuth token): the cloud platforms do not take the field.
   */
  diagnostics?: boolean;
}

/** Default for ProviderConfig.idleTimeoutMs. */
const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

export class AnthropicProvider {
  readonly name = "anthropic";
  private readonly client: MessagesClient;
  /** The call in progress; a provider instance serves one run, whose model calls are sequential. */
  private current: {
    options: StreamOptions;
    attempts: number;
    watch: BodyWatch;
  } | null = null;
  private readonly idleTimeoutMs: number;
  private readonly authHint: string;
  private readonly transport: Fetch;
  private readonly diagnostics: boolean;
  /** The id of the last message this run's calls got, which the next call names for its cache diagnosis. */
  private previousMessageId: string | null = null;

  constructor(config: ProviderConfig) {
    if (!config.client && !config.apiKey && !config.baseURL) {
      throw new ProviderNotConfiguredError(
        "anthropic",
        "No model provider is configured: set the ANTHROPIC_API_KEY secret (wrangler secret put ANTHROPIC_API_KEY), " +
          "or ANTHROPIC_BASE_URL for a compatible endpoint such as the local emulator (npm run dev does this).",
      );
    }
    this.idleTimeoutMs = config.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.authHint = config.authHint ?? "check the ANTHROPIC_API_KEY secret";
    this.transport = config.transport ?? ((input, init) => fetch(input, init));
    this.diagnostics = config.diagnostics ?? false;
    const options: ClientOptions = {
      maxRetries: config.maxRetries ?? 2,
      timeout: config.timeoutMs ?? 10 * 60_000,
      // Workers need fetch passed as a wrapper rather than the bare global; the wrapper also records attempts.
      fetch: (input, init) => this.observedFetch(input, init),
      // Outpost records its own GenAI spans of every model call (src/telemetry/); the SDK's would be a second set
      // wherever a tracer provider is registered, and otherwise still cost work on every call.
      openTelemetry: false,
    };
    this.client = config.client
      ? config.client(options)
      : new Anthropic({
          ...options,
          // A compatible endpoint (the emulator, a gateway holding the real key) may need no key of ours.
          apiKey: config.apiKey ?? "unused-with-custom-base-url",
          baseURL: config.baseURL || null,
        });
  }

  /** Streams one Messages API call; yields every event, then the final message. Errors are Outpost errors. */
  async *stream(params: MessageCreateParamsBase, options: StreamOptions): AsyncGenerator<AgentMessage, Message> {
    if (this.current) throw new Error("AnthropicProvider serves one call at a time");
    this.current = { options, attempts: 0, watch: new BodyWatch() };
    const yielded: AgentMessage[] = [];
    try {
      // The raw event stream, not messages.stream(): the run reads every event itself and needs the message once
      // (src/llm/message-accumulator.ts).
      // The previous call's id, or null on a run's first call (or its first after an eviction): the API then
      // compares the two prompts and says in the response's diagnostics why the cache missed, if it did.
      const diagnostics = this.diagnostics ? { diagnostics: { previous_message_id: this.previousMessageId } } : {};
      // A compaction request, or a conversation that opens with the block one returned, names the compaction beta.
      const headers = needsCompactionBeta(params) ? withBetaHeader(options.headers, COMPACTION_BETA) : options.headers;
      const { data: events, request_id } = await this.client.messages
        .create(
          { ...params, ...diagnostics, stream: true },
          { signal: options.signal, ...(headers ? { headers } : {}) },
        )
        .withResponse();
      const accumulator = new MessageAccumulator();
      for await (const event of events) {
        accumulator.add(event);
        const item: AgentMessage = { type: "stream_event", event };
        yielded.push(item);
        yield item;
      }
      const message = accumulator.final();
      this.previousMessageId = message.id;
      const final: AgentMessage = { type: "assistant", message, request_id: request_id ?? null };
      yield final;
      return message;
    } catch (error) {
      const mapped = mapProviderError(error, this.rawTail(), options.signal, this.authHint);
      // FR-005: what arrived has been yielded; the error carries it too.
      if (yielded.length > 0 && !(mapped instanceof CanceledError)) {
        throw new StreamingError(`The model stream broke after ${yielded.length} events: ${mapped.message}`, yielded, {
          cause: mapped,
        });
      }
      throw mapped;
    } finally {
      this.current?.watch.stop();
      this.current = null;
    }
  }

  private async observedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const call = this.current;
    let response: Response;
    try {
      response = await this.transport(input, init);
    } catch (error) {
      // The SDK's own timeout aborts init.signal too; only the caller's abort is not an attempt worth reporting.
      if (call && !call.options.signal.aborted) {
        call.attempts += 1;
        call.options.onAttempt?.({ attempt: call.attempts, status: null, request_id: null, retry_after_seconds: null });
      }
      throw error;
    }
    if (!call) return response;
    call.attempts += 1;
    call.options.onAttempt?.({
      attempt: call.attempts,
      status: response.status,
      request_id: response.headers.get("request-id"),
      retry_after_seconds: retryAfterSecondsOf(response.headers, response.status),
      limit_reset_seconds: limitResetSecondsOf(response.headers, response.status),
    });
    // An error's body the SDK reads whole (response.text()); a stream's it iterates, and iterates what the body
    // offers as its async iterator (@anthropic-ai/sdk internal/shims.mjs): the watched chunks, with no second stream.
    if (!response.body || !response.ok) return response;
    if (!response.headers.get("content-type")?.startsWith("text/event-stream")) {
      // Another framing (Bedrock's binary event stream) is decoded from the body as a stream.
      const body = call.watch.watch(response.body, this.idleTimeoutMs, () => this.idleError());
      return new Response(body, response);
    }
    const chunks = call.watch.iterate(response.body, this.idleTimeoutMs, () => this.idleError());
    Object.defineProperty(response, "body", { value: chunks });
    return response;
  }

  private idleError(): Error {
    return new APIConnectionTimeoutError({ message: `No data from the model provider for ${this.idleTimeoutMs} ms.` });
  }

  private rawTail(): string {
    return this.current?.watch.tail() ?? "";
  }
}

/** Maps an SDK failure onto the hierarchy by class, never by message text. */
export function mapProviderError(
  error: unknown,
  rawTail: string,
  signal?: AbortSignal,
  authHint = "check the ANTHROPIC_API_KEY secret",
): AgentError | CanceledError {
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
    const detail = error.apiMessage ?? error.message;
    if (error instanceof RateLimitError) return providerFailure("rate_limited", detail, base);
    if (error instanceof OverloadedError || error.type === "overloaded_error") {
      return providerFailure("provider_overloaded", detail, base);
    }
    if (error instanceof AuthenticationError || error instanceof PermissionDeniedError) {
      return providerFailure("provider_auth_failed", detail, base, { hint: authHint });
    }
    if (error instanceof NotFoundError) return providerFailure("model_not_found", detail, base);
    if (error instanceof BadRequestError) {
      // The one refusal told apart by its text: the Messages API gives a prompt past the window no type of its own.
      const tooLong = /prompt is too long|exceed context limit/i.test(detail);
      return providerFailure(tooLong ? "context_window_exceeded" : "provider_rejected_request", detail, base);
    }
    if (error instanceof InternalServerError) return providerFailure("provider_unavailable", detail, base);
    // An `error` event inside a 200 stream has no status: it is the provider's error type that tells.
    return providerFailure("provider_error", detail, base, { retryable: error.type === "api_error" });
  }
  // The SDK's stream wraps errors that are not its own (a JSON parse failure, say) in a bare AnthropicError.
  if (error instanceof AnthropicError && !(error instanceof APIError) && error.cause !== undefined) {
    return mapProviderError(error.cause, rawTail, signal, authHint);
  }
  if (error instanceof SyntaxError) {
    return new MalformedResponseError(
      `The model provider sent a response that is not valid JSON: ${error.message}`,
      rawTail,
      {
        cause: error,
      },
    );
  }
  return new NetworkError(`Model call failed: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
  });
}
