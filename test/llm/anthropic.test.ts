// AnthropicProvider over real HTTP against the model emulator: what a streamed call yields (FR-005), how every SDK
// failure is mapped by class onto Outpost's errors (FR-007), the record of HTTP attempts, and Agent.query() on top.
// Each test registers its own script under a unique marker, since all test files share one emulator.

import { env } from "cloudflare:workers";
import { AnthropicError, APIConnectionTimeoutError, APIUserAbortError } from "@anthropic-ai/sdk";
import type { Message, MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { type Tracer, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { Agent, type AgentDefinition } from "../../src/agents/agent.ts";
import type { AgentContext } from "../../src/agents/context.ts";
import { DEFAULT_PRICES } from "../../src/config/prices.ts";
import type { AgentMessage } from "../../src/contracts/runtime.ts";
import {
  CanceledError,
  MalformedResponseError,
  NetworkError,
  ProviderError,
  ProviderNotConfiguredError,
  StreamingError,
  TimeoutError,
} from "../../src/errors.ts";
import { Redactor } from "../../src/events/redaction.ts";
import { AnthropicProvider, mapProviderError } from "../../src/llm/anthropic.ts";
import type { HttpAttempt } from "../../src/llm/provider.ts";
import { outboundPolicy } from "../../src/net/outbound.ts";
import type { ToolDeclaration } from "../../src/tools/allowed-tools.ts";
import { Toolbox } from "../../src/tools/toolbox.ts";
import { NO_WORKSPACE, type ScriptTurn, script, uniqueMarker } from "../support/helpers.ts";

const MODEL = "claude-sonnet-5-5";

function provider(
  options: { maxRetries?: number; timeoutMs?: number; idleTimeoutMs?: number; baseURL?: string } = {},
): AnthropicProvider {
  return new AnthropicProvider({
    apiKey: "k",
    baseURL: options.baseURL ?? env.ANTHROPIC_BASE_URL,
    maxRetries: options.maxRetries ?? 0,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
  });
}

function params(marker: string): MessageCreateParamsBase {
  return { model: MODEL, max_tokens: 256, messages: [{ role: "user", content: `${marker} go` }] };
}

interface Outcome {
  items: AgentMessage[];
  attempts: HttpAttempt[];
  error: unknown;
  elapsedMs: number;
}

/** Drains a provider stream, keeping what it yielded, the HTTP attempts it reported and what it threw. */
async function drain(
  p: AnthropicProvider,
  marker: string,
  signal: AbortSignal = new AbortController().signal,
): Promise<Outcome> {
  const items: AgentMessage[] = [];
  const attempts: HttpAttempt[] = [];
  const started = Date.now();
  try {
    for await (const item of p.stream(params(marker), { signal, onAttempt: (a) => attempts.push(a) })) {
      items.push(item);
    }
    return { items, attempts, error: undefined, elapsedMs: Date.now() - started };
  } catch (error) {
    return { items, attempts, error, elapsedMs: Date.now() - started };
  }
}

/** Registers a one-turn script and drains one call to it. */
async function callWith(
  label: string,
  turn: ScriptTurn,
  options: Parameters<typeof provider>[0] = {},
): Promise<Outcome> {
  const marker = uniqueMarker(label);
  await script(marker, [turn]);
  return drain(provider(options), marker);
}

const TEXT = "one two three four";
const textTurn = (faults: Record<string, unknown>[] = []): ScriptTurn => ({
  content: [{ type: "text", text: TEXT }],
  faults,
});

function eventTypes(items: readonly unknown[]): string[] {
  return (items as AgentMessage[]).map((item) => (item.type === "stream_event" ? item.event.type : item.type));
}

function textDeltas(items: readonly unknown[]): string[] {
  const deltas: string[] = [];
  for (const item of items as AgentMessage[]) {
    if (item.type === "stream_event" && item.event.type === "content_block_delta") {
      if (item.event.delta.type === "text_delta") deltas.push(item.event.delta.text);
    }
  }
  return deltas;
}

function finalMessage(items: readonly AgentMessage[]): Message {
  const last = items.at(-1);
  if (last?.type !== "assistant") throw new Error(`the stream did not end with an assistant item: ${last?.type}`);
  return last.message;
}

describe("AnthropicProvider.stream: successful calls", () => {
  it("yields every stream event in order and then one assistant item with the final message", async () => {
    const { items, error } = await callWith("text", textTurn());
    expect(error).toBeUndefined();
    expect(eventTypes(items)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
      "assistant",
    ]);
    expect(textDeltas(items)).toEqual(["one ", "two ", "three ", "four"]);
    const message = finalMessage(items);
    expect(message.content).toEqual([{ type: "text", text: TEXT }]);
    expect(message.model).toBe(MODEL);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBe(4);
  });

  it("yields the message_start event as it arrived, not as the SDK later fills it in", async () => {
    // The emulator sends message_start with empty content and output_tokens 1 (the real API's shape).
    const { items } = await callWith("start-event", textTurn());
    expect(items[0]).toMatchObject({
      type: "stream_event",
      event: { type: "message_start", message: { content: [], stop_reason: null, usage: { output_tokens: 1 } } },
    });
  });

  it("carries the request id of the response on the assistant item", async () => {
    const { items, attempts } = await callWith("request-id", textTurn());
    const last = items.at(-1);
    expect(last?.type).toBe("assistant");
    expect(last?.type === "assistant" ? last.request_id : undefined).toBe(attempts[0]?.request_id);
    expect(attempts[0]?.request_id).toMatch(/^req_emu_\d+$/);
  });

  it("assembles a tool_use block's input from its streamed JSON pieces", async () => {
    const input = { todos: [{ content: "Write the tests", status: "in_progress" }], note: "ünïcödé ✓" };
    const { items, error } = await callWith("tool-use", {
      content: [
        { type: "text", text: "Planning." },
        { type: "tool_use", id: "toolu_fixed_1", name: "TodoWrite", input },
      ],
    });
    expect(error).toBeUndefined();
    const message = finalMessage(items);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([
      { type: "text", text: "Planning." },
      { type: "tool_use", id: "toolu_fixed_1", name: "TodoWrite", input },
    ]);
    const jsonDeltas = items.filter(
      (item) =>
        item.type === "stream_event" &&
        item.event.type === "content_block_delta" &&
        item.event.delta.type === "input_json_delta",
    );
    expect(jsonDeltas.length).toBeGreaterThan(1);
  });

  it("assembles thinking with its signature ahead of the answer", async () => {
    const { items } = await callWith("thinking", {
      content: [
        { type: "thinking", thinking: "The user wants a greeting.", signature: "sig_test_1" },
        { type: "text", text: "Hello." },
      ],
    });
    expect(finalMessage(items).content).toEqual([
      { type: "thinking", thinking: "The user wants a greeting.", signature: "sig_test_1" },
      { type: "text", text: "Hello." },
    ]);
    const thinkingDeltas = items.flatMap((item) =>
      item.type === "stream_event" &&
      item.event.type === "content_block_delta" &&
      item.event.delta.type === "thinking_delta"
        ? [item.event.delta.thinking]
        : [],
    );
    expect(thinkingDeltas).toEqual(["The ", "user ", "wants ", "a ", "greeting."]);
  });

  it("reports the scripted usage, cache tokens included, on the final message", async () => {
    const { items } = await callWith("usage", {
      content: [{ type: "text", text: "ok" }],
      usage: { input_tokens: 120, output_tokens: 7 },
    });
    expect(finalMessage(items).usage).toMatchObject({
      input_tokens: 120,
      output_tokens: 7,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });

  it("leaves the tracing of its calls to Outpost: the SDK starts no span of its own, even with a tracer registered", async () => {
    const started: string[] = [];
    const tracer = new Proxy({} as Tracer, {
      get: (_target, method) => (name: string) => {
        started.push(`${String(method)} ${name}`);
        throw new Error("no span here");
      },
    });
    trace.setGlobalTracerProvider({ getTracer: () => tracer });
    try {
      const outcome = await callWith("no-sdk-spans", textTurn());
      expect(outcome.error).toBeUndefined();
      expect(finalMessage(outcome.items).content).toEqual([{ type: "text", text: TEXT }]);
    } finally {
      trace.disable();
    }
    expect(started).toEqual([]);
  });

  it("serves a second call once the first has finished", async () => {
    const marker = uniqueMarker("sequential");
    await script(marker, [textTurn()]);
    const p = provider();
    const first = await drain(p, marker);
    const second = await drain(p, marker);
    expect([first.error, second.error]).toEqual([undefined, undefined]);
    expect(finalMessage(second.items).content).toEqual([{ type: "text", text: TEXT }]);
  });
});

describe("AnthropicProvider.stream: HTTP errors mapped by SDK error class", () => {
  it.each([
    { status: 429, code: "rate_limited", retryable: true },
    { status: 529, code: "provider_overloaded", retryable: true },
    { status: 500, code: "provider_unavailable", retryable: true },
    { status: 503, code: "provider_unavailable", retryable: true },
    { status: 400, code: "provider_rejected_request", retryable: false },
    { status: 401, code: "provider_auth_failed", retryable: false },
    { status: 403, code: "provider_auth_failed", retryable: false },
    { status: 404, code: "model_not_found", retryable: false },
  ])("maps HTTP $status to ProviderError $code (retryable: $retryable)", async ({ status, code, retryable }) => {
    const { items, attempts, error } = await callWith(`http-${status}`, textTurn([{ kind: "http", status }]));
    expect(items).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code, retryable, status, requestId: attempts[0]?.request_id });
    expect(attempts.map((a) => a.status)).toEqual([status]);
  });

  it("puts the provider's own error message into the ProviderError message", async () => {
    const { error } = await callWith("http-message", textTurn([{ kind: "http", status: 429 }]));
    expect((error as ProviderError).message).toBe(
      "The model provider is rate limiting requests: Number of request tokens has exceeded your per-minute rate limit",
    );
  });

  it("does not retry at the base layer when the transport retries are off", async () => {
    const { attempts, error } = await callWith(
      "no-retry",
      textTurn([
        { kind: "http", status: 529 },
        { kind: "http", status: 529 },
      ]),
    );
    expect(error).toMatchObject({ code: "provider_overloaded" });
    expect(attempts).toHaveLength(1);
  });
});

describe("AnthropicProvider.stream: failures after the stream started (FR-005)", () => {
  it("yields the events that arrived before a mid-stream error event, then throws StreamingError carrying them", async () => {
    const { items, error } = await callWith(
      "stream-error",
      textTurn([{ kind: "stream_error", after_deltas: 2, error_type: "overloaded_error" }]),
    );
    expect(eventTypes(items)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
    ]);
    expect(textDeltas(items)).toEqual(["one ", "two "]);
    expect(error).toBeInstanceOf(StreamingError);
    const streaming = error as StreamingError;
    expect(streaming.code).toBe("streaming_error");
    expect(streaming.partialMessages).toEqual(items);
    expect(streaming.message).toBe(
      "The model stream broke after 4 events: The model provider is overloaded: Overloaded",
    );
  });

  it("gives the StreamingError the mapped provider error as its cause", async () => {
    const { error } = await callWith(
      "stream-error-cause",
      textTurn([{ kind: "stream_error", after_deltas: 2, error_type: "overloaded_error" }]),
    );
    const cause = (error as StreamingError).cause;
    expect(cause).toBeInstanceOf(ProviderError);
    // An error event inside a 200 stream has no HTTP status of its own.
    expect(cause).toMatchObject({ code: "provider_overloaded", retryable: true, status: null });
  });

  it("maps a mid-stream api_error event to a retryable provider_error", async () => {
    const { error } = await callWith(
      "stream-api-error",
      textTurn([{ kind: "stream_error", after_deltas: 1, error_type: "api_error" }]),
    );
    expect((error as StreamingError).cause).toMatchObject({ code: "provider_error", retryable: true });
  });

  it("wraps even an error before the first delta in StreamingError, since message_start already arrived", async () => {
    const { items, error } = await callWith("stream-error-0", textTurn([{ kind: "stream_error", after_deltas: 0 }]));
    expect(eventTypes(items)).toEqual(["message_start", "content_block_start"]);
    expect(error).toBeInstanceOf(StreamingError);
    expect((error as StreamingError).partialMessages).toHaveLength(2);
  });

  it("reports an unparseable stream frame as MalformedResponseError with the raw bytes, inside StreamingError", async () => {
    // The emulator cuts a content_block_delta frame mid-object. message_start and content_block_start precede
    // it even with after_deltas 0, so the MalformedResponseError always arrives wrapped in a StreamingError.
    const { items, error } = await callWith("malformed", textTurn([{ kind: "malformed", after_deltas: 0 }]));
    expect(eventTypes(items)).toEqual(["message_start", "content_block_start"]);
    expect(error).toBeInstanceOf(StreamingError);
    const cause = (error as StreamingError).cause;
    expect(cause).toBeInstanceOf(MalformedResponseError);
    const malformed = cause as MalformedResponseError;
    expect(malformed.code).toBe("malformed_response");
    expect(malformed.message).toMatch(/^The model provider sent a response that is not valid JSON: /);
    expect(malformed.rawResponse.startsWith("event: message_start\ndata: ")).toBe(true);
    expect(malformed.rawResponse.endsWith('event: content_block_delta\ndata: {"type":"content_block_delta",\n\n')).toBe(
      true,
    );
  });

  it("cuts off a stream that stalls after it started once idleTimeoutMs passes without data", async () => {
    // The SDK arms its timeout around fetch() only, that is until the response headers arrive; a streamed
    // reply sends its headers at once, so the SDK alone would wait out the stall (3 s here). The provider's
    // idle timeout must end it with a TimeoutError (inside StreamingError, since events came first) well
    // before the stall would have ended on its own.
    const { items, error, elapsedMs } = await callWith(
      "stall-timeout",
      textTurn([{ kind: "stall", after_deltas: 1, ms: 3000 }]),
      { idleTimeoutMs: 300 },
    );
    expect(eventTypes(items)).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect(error).toBeInstanceOf(StreamingError);
    expect((error as StreamingError).cause).toBeInstanceOf(TimeoutError);
    expect((error as StreamingError).cause).toMatchObject({ code: "timeout", retryable: true });
    expect(elapsedMs).toBeLessThan(2000);
  });
});

describe("AnthropicProvider.stream: cancellation and unreachable providers", () => {
  it("throws CanceledError, not StreamingError, when the signal aborts a stalled stream", async () => {
    const marker = uniqueMarker("abort");
    await script(marker, [textTurn([{ kind: "stall", after_deltas: 1 }])]);
    const controller = new AbortController();
    const outcome = drain(provider(), marker, controller.signal);
    setTimeout(() => controller.abort(), 200);
    const { items, error } = await outcome;
    expect(eventTypes(items)).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect(error).toBeInstanceOf(CanceledError);
    expect(error).toMatchObject({ code: "canceled", message: "The task was canceled." });
  });

  it("throws CanceledError without a request when the signal is already aborted", async () => {
    const marker = uniqueMarker("pre-aborted");
    await script(marker, [textTurn()]);
    const controller = new AbortController();
    controller.abort();
    const { items, attempts, error } = await drain(provider(), marker, controller.signal);
    expect(items).toEqual([]);
    expect(attempts).toEqual([]);
    expect(error).toBeInstanceOf(CanceledError);
  });

  it("throws NetworkError when the connection is refused", async () => {
    // workerd logs the refused connection as an uncaught "Network connection lost"; that is its own logging.
    const { items, attempts, error } = await drain(provider({ baseURL: "http://127.0.0.1:1" }), "refused");
    expect(items).toEqual([]);
    // The failed connection is an attempt too, with no status (the SDK would retry it if retries were allowed).
    expect(attempts).toEqual([{ attempt: 1, status: null, request_id: null, retry_after_seconds: null }]);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({
      code: "network_error",
      retryable: true,
      message: "Could not reach the model provider: Connection error.",
    });
  });

  it("throws ProviderNotConfiguredError when given neither an API key nor a base URL", () => {
    for (const config of [
      { apiKey: undefined, baseURL: undefined },
      { apiKey: "", baseURL: "" },
    ]) {
      expect(() => new AnthropicProvider(config)).toThrow(ProviderNotConfiguredError);
    }
  });

  it("explains how to configure the provider in ProviderNotConfiguredError", () => {
    let error: unknown;
    try {
      new AnthropicProvider({ apiKey: undefined, baseURL: undefined });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "provider_not_configured", provider: "anthropic" });
    expect((error as ProviderNotConfiguredError).message).toContain("wrangler secret put ANTHROPIC_API_KEY");
  });

  it("constructs with only an API key or only a base URL", () => {
    expect(new AnthropicProvider({ apiKey: "k", baseURL: undefined }).name).toBe("anthropic");
    expect(new AnthropicProvider({ apiKey: undefined, baseURL: env.ANTHROPIC_BASE_URL }).name).toBe("anthropic");
  });
});

describe("AnthropicProvider.stream: HTTP attempts", () => {
  it("reports each transport retry through onAttempt and succeeds on the third attempt", async () => {
    const { items, attempts, error } = await callWith(
      "retries",
      textTurn([
        { kind: "http", status: 429, retry_after: 0 },
        { kind: "http", status: 429, retry_after: 0 },
      ]),
      { maxRetries: 2 },
    );
    expect(error).toBeUndefined();
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 429],
      [2, 429],
      [3, 200],
    ]);
    expect(new Set(attempts.map((a) => a.request_id)).size).toBe(3);
    const last = items.at(-1);
    expect(last?.type === "assistant" ? last.request_id : null).toBe(attempts[2]?.request_id);
    expect(finalMessage(items).content).toEqual([{ type: "text", text: TEXT }]);
  });

  it("throws the last error once the transport retries are used up", async () => {
    const { attempts, error } = await callWith(
      "retries-exhausted",
      textTurn([
        { kind: "http", status: 529, retry_after: 0 },
        { kind: "http", status: 529, retry_after: 0 },
      ]),
      { maxRetries: 1 },
    );
    expect(attempts.map((a) => a.status)).toEqual([529, 529]);
    expect(error).toMatchObject({ code: "provider_overloaded", status: 529 });
  });

  it("reports the retry-after header in seconds", async () => {
    const { attempts } = await callWith("retry-after", textTurn([{ kind: "http", status: 429, retry_after: 7 }]));
    expect(attempts).toEqual([
      {
        attempt: 1,
        status: 429,
        request_id: expect.stringMatching(/^req_emu_\d+$/),
        retry_after_seconds: 7,
        // The emulator's scripted 429 reports no exhausted limit.
        limit_reset_seconds: null,
      },
    ]);
  });

  it("reports retry_after_seconds as null when the response has no retry-after header", async () => {
    const { attempts } = await callWith("no-retry-after", textTurn());
    expect(attempts).toEqual([
      {
        attempt: 1,
        status: 200,
        request_id: expect.stringMatching(/^req_emu_\d+$/),
        retry_after_seconds: null,
        limit_reset_seconds: null,
      },
    ]);
  });
});

describe("mapProviderError: failures the emulator cannot produce over HTTP", () => {
  it("maps the SDK's connection timeout (no response headers in time) to TimeoutError", () => {
    const sdkError = new APIConnectionTimeoutError();
    const mapped = mapProviderError(sdkError, "");
    expect(mapped).toBeInstanceOf(TimeoutError);
    expect(mapped).toMatchObject({ code: "timeout", message: "The model provider did not answer in time." });
    expect(mapped.cause).toBe(sdkError);
  });

  it("maps the SDK's user abort to CanceledError", () => {
    expect(mapProviderError(new APIUserAbortError(), "")).toBeInstanceOf(CanceledError);
  });

  it("treats any failure after the signal aborted as a cancellation", () => {
    const controller = new AbortController();
    controller.abort();
    expect(mapProviderError(new APIConnectionTimeoutError(), "", controller.signal)).toBeInstanceOf(CanceledError);
  });

  it("maps a JSON SyntaxError to MalformedResponseError carrying the raw text", () => {
    const mapped = mapProviderError(new SyntaxError("Unexpected end of JSON input"), '{"type":');
    expect(mapped).toBeInstanceOf(MalformedResponseError);
    expect((mapped as MalformedResponseError).rawResponse).toBe('{"type":');
  });

  it("looks through the AnthropicError the SDK stream wraps a parse error in", () => {
    const parseError = new SyntaxError("Unexpected end of JSON input");
    const mapped = mapProviderError(new AnthropicError(parseError.message, { cause: parseError }), '{"type":');
    expect(mapped).toBeInstanceOf(MalformedResponseError);
    expect(mapped.cause).toBe(parseError);
  });

  it("passes a CanceledError through unchanged", () => {
    const canceled = new CanceledError();
    expect(mapProviderError(canceled, "")).toBe(canceled);
  });
});

describe("Agent.query (FR-005)", () => {
  class QueryAgent extends Agent {}

  /**
   * A minimal AgentContext whose runtime streams through a real AnthropicProvider and nothing else: query() uses
   * only runtime.streamModel, and the durable runtime around it is covered by the HTTP API tests.
   */
  function contextFor(
    p: AnthropicProvider,
    model = MODEL,
    declaration: ToolDeclaration = new QueryAgent({ name: "query_agent", systemPrompt: "x" }).toolDeclaration(),
  ): AgentContext {
    const unused = (what: string) => (): never => {
      throw new Error(`query() must not use runtime.${what}`);
    };
    const runtime: AgentContext["runtime"] = {
      signal: new AbortController().signal,
      step: unused("step"),
      recordMessage: unused("recordMessage"),
      annotateTranscript: unused("annotateTranscript"),
      emit: unused("emit"),
      usage: unused("usage"),
      artifact: unused("artifact"),
      checkpoint: unused("checkpoint"),
      state: { get: unused("state.get"), put: unused("state.put") },
      taskState: { get: unused("taskState.get"), put: unused("taskState.put") },
      async *streamModel(modelParams) {
        yield* p.stream(modelParams, { signal: this.signal });
      },
    };
    return {
      taskId: "task_query_test",
      input: "",
      workspace: "/workspace",
      branch: undefined,
      config: {
        model,
        prices: DEFAULT_PRICES,
        limits: { maxTurns: 10, maxBudgetUsd: null, maxTokens: null },
        cacheKey: "outpost-test",
      },
      extra: {},
      skills: unused("skills"),
      dryRun: false,
      runtime,
      tools: new Toolbox(declaration, {
        taskId: "task_query_test",
        runtime,
        secret: () => undefined,
        outbound: outboundPolicy(""),
        workspace: NO_WORKSPACE,
        redactor: new Redactor([]),
      }),
    };
  }

  function agent(definition: Partial<AgentDefinition> = {}): QueryAgent {
    return new QueryAgent({ name: "query_agent", systemPrompt: "You answer questions.", ...definition });
  }

  async function collect(
    stream: AsyncGenerator<AgentMessage, void>,
  ): Promise<{ items: AgentMessage[]; error: unknown }> {
    const items: AgentMessage[] = [];
    try {
      for await (const item of stream) items.push(item);
      return { items, error: undefined };
    } catch (error) {
      return { items, error };
    }
  }

  it("streams a reply to the agent's system prompt, yielding the events and then the assistant message", async () => {
    // The marker is only in the system prompt, so the scripted reply proves the system prompt was sent.
    const marker = uniqueMarker("query-system");
    await script(marker, [{ content: [{ type: "text", text: "From the script." }] }]);
    const { items, error } = await collect(
      agent({ systemPrompt: `You answer questions. ${marker}` }).query("What now?", contextFor(provider())),
    );
    expect(error).toBeUndefined();
    expect(eventTypes(items)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
      "assistant",
    ]);
    expect(finalMessage(items).content).toEqual([{ type: "text", text: "From the script." }]);
  });

  it("calls the model the context names", async () => {
    const marker = uniqueMarker("query-model");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const { items } = await collect(agent().query(`${marker} hi`, contextFor(provider(), "claude-haiku-4-5")));
    expect(finalMessage(items).model).toBe("claude-haiku-4-5");
  });

  it("offers the model the agent's tools", async () => {
    // Unscripted, the emulator calls the first tool it is offered and otherwise echoes the prompt.
    const prompt = `plan my day ${crypto.randomUUID()}`;
    const planner = agent({ allowedTools: ["TodoWrite"] });
    const { items } = await collect(planner.query(prompt, contextFor(provider(), MODEL, planner.toolDeclaration())));
    const message = finalMessage(items);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toMatchObject([
      { type: "text", text: "I'll use the TodoWrite tool." },
      { type: "tool_use", name: "TodoWrite", input: { todos: [{ content: prompt, status: "pending" }] } },
    ]);
  });

  it("sends no tools for an agent without tools", async () => {
    const prompt = `just talk ${crypto.randomUUID()}`;
    const { items } = await collect(agent().query(prompt, contextFor(provider())));
    expect(finalMessage(items).content).toEqual([{ type: "text", text: `(emulator) You said: ${prompt}` }]);
  });

  it("accepts a whole conversation instead of a prompt", async () => {
    const marker = uniqueMarker("query-conversation");
    await script(marker, [
      { content: [{ type: "text", text: "first answer" }] },
      { content: [{ type: "text", text: "second answer" }] },
    ]);
    const conversation: MessageParam[] = [
      { role: "user", content: `${marker} first` },
      { role: "assistant", content: "first answer" },
      { role: "user", content: "and then?" },
    ];
    const { items } = await collect(agent().query(conversation, contextFor(provider())));
    expect(finalMessage(items).content).toEqual([{ type: "text", text: "second answer" }]);
  });

  it("yields the partial stream and then throws StreamingError when the stream breaks", async () => {
    const marker = uniqueMarker("query-broken");
    await script(marker, [textTurn([{ kind: "stream_error", after_deltas: 3 }])]);
    const { items, error } = await collect(agent().query(`${marker} go`, contextFor(provider())));
    expect(textDeltas(items)).toEqual(["one ", "two ", "three "]);
    expect(error).toBeInstanceOf(StreamingError);
    expect((error as StreamingError).partialMessages).toEqual(items);
  });
});
