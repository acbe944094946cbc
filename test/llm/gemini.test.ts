// GeminiProvider over real HTTP against the model emulator's Gemini endpoint (streamGenerateContent?alt=sse), through
// the official @google/genai client: the Messages API request it sends, the Messages API events and final message
// it makes of Gemini's chunks, how the client's failures map onto Outpost's errors, and the HTTP attempts it reports.
// Each test registers its own script under a unique marker, since all test files share one emulator.

import { env } from "cloudflare:workers";
import type { Message, MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/contracts/runtime.ts";
import {
  CanceledError,
  MalformedResponseError,
  NetworkError,
  ProviderError,
  StreamingError,
  TimeoutError,
} from "../../src/errors.ts";
import { GeminiProvider } from "../../src/llm/gemini.ts";
import { toGeminiRequest } from "../../src/llm/gemini-request.ts";
import type { HttpAttempt } from "../../src/llm/provider.ts";
import { type ScriptTurn, script, uniqueMarker } from "../support/helpers.ts";

const MODEL = "gemini-emu";
const emulatorUrl = env.ANTHROPIC_BASE_URL ?? "";

function provider(options: { maxRetries?: number; idleTimeoutMs?: number; endpoint?: string } = {}): GeminiProvider {
  return new GeminiProvider({
    apiKey: "test-gemini-key",
    endpoint: options.endpoint ?? emulatorUrl,
    maxRetries: options.maxRetries ?? 0,
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
  });
}

function params(marker: string, extra: Partial<MessageCreateParamsBase> = {}): MessageCreateParamsBase {
  return { model: MODEL, max_tokens: 256, messages: [{ role: "user", content: `${marker} go` }], ...extra };
}

interface Outcome {
  items: AgentMessage[];
  attempts: HttpAttempt[];
  error: unknown;
  elapsedMs: number;
}

/** Drains a provider stream, keeping what it yielded, the HTTP attempts it reported and what it threw. */
async function drain(
  p: GeminiProvider,
  request: MessageCreateParamsBase,
  options: { signal?: AbortSignal; headers?: Record<string, string> } = {},
): Promise<Outcome> {
  const items: AgentMessage[] = [];
  const attempts: HttpAttempt[] = [];
  const started = Date.now();
  try {
    const stream = p.stream(request, {
      signal: options.signal ?? new AbortController().signal,
      ...(options.headers ? { headers: options.headers } : {}),
      onAttempt: (a) => attempts.push(a),
    });
    for await (const item of stream) items.push(item);
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
  return drain(provider(options), params(marker));
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

interface RequestRecord {
  task_id: string | null;
  provider: string;
  stream: boolean;
  status: number;
  turn: number;
  script_match: string | null;
}

async function records(taskId: string): Promise<RequestRecord[]> {
  const response = await fetch(`${emulatorUrl}/_emulator/stats`);
  const { requests } = (await response.json()) as { requests: RequestRecord[] };
  return requests.filter((record) => record.task_id === taskId);
}

const USAGE_ZEROES = {
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation: null,
  server_tool_use: null,
  service_tier: null,
};

describe("GeminiProvider.stream: successful calls", () => {
  it("turns streamed text into Messages API events and then one assistant item with the final message", async () => {
    const { items, error } = await callWith("text", {
      content: [{ type: "text", text: TEXT }],
      usage: { input_tokens: 120, output_tokens: 7 },
    });
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
    expect(message).toEqual({
      id: expect.stringMatching(/^emu_[0-9a-f]{24}$/),
      type: "message",
      role: "assistant",
      model: MODEL,
      content: [{ type: "text", text: TEXT, citations: null }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: 120, output_tokens: 7, ...USAGE_ZEROES },
    });
    // The emulator reports usage only on the last chunk, so message_start knows no input tokens yet.
    expect(items[0]).toEqual({
      type: "stream_event",
      event: {
        type: "message_start",
        message: {
          id: message.id,
          type: "message",
          role: "assistant",
          model: MODEL,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0, ...USAGE_ZEROES },
        },
      },
    });
    expect(items.slice(1, 3)).toEqual([
      { type: "stream_event", event: { type: "content_block_start", index: 0, content_block: expect.any(Object) } },
      {
        type: "stream_event",
        event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "one " } },
      },
    ]);
    expect(items.slice(6, 9)).toEqual([
      { type: "stream_event", event: { type: "content_block_stop", index: 0 } },
      {
        type: "stream_event",
        event: {
          type: "message_delta",
          delta: { stop_reason: "end_turn", stop_sequence: null },
          usage: { output_tokens: 7, input_tokens: 120, cache_read_input_tokens: 0 },
        },
      },
      { type: "stream_event", event: { type: "message_stop" } },
    ]);
  });

  it("carries the request id of the response on the assistant item", async () => {
    const { items, attempts } = await callWith("request-id", textTurn());
    const last = items.at(-1);
    expect(attempts).toEqual([
      { attempt: 1, status: 200, request_id: expect.stringMatching(/^req_emu_\d+$/), retry_after_seconds: null },
    ]);
    expect(last?.type === "assistant" ? last.request_id : undefined).toBe(attempts[0]?.request_id);
  });

  it("sends the system prompt as the system instruction", async () => {
    // The marker is only in the system prompt, so the scripted reply proves it arrived.
    const marker = uniqueMarker("system");
    await script(marker, [{ content: [{ type: "text", text: "From the script." }] }]);
    for (const system of [`You answer. ${marker}`, [{ type: "text" as const, text: `You answer. ${marker}` }]]) {
      const { items } = await drain(provider(), {
        model: MODEL,
        max_tokens: 64,
        system,
        messages: [{ role: "user", content: "What now?" }],
      });
      expect(finalMessage(items).content).toEqual([{ type: "text", text: "From the script.", citations: null }]);
    }
  });

  it("turns a functionCall into a tool_use block with Gemini's id, its arguments in one JSON delta", async () => {
    const input = { city: "Paris", days: [1, 2, 3], note: "ünïcode ✓" };
    const { items, error } = await callWith("tool-call", {
      content: [
        { type: "text", text: "Checking." },
        { type: "tool_use", name: "get_weather", input },
      ],
    });
    expect(error).toBeUndefined();
    const message = finalMessage(items);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toEqual([
      { type: "text", text: "Checking.", citations: null },
      { type: "tool_use", id: expect.stringMatching(/^fc_emu_[0-9a-f]{24}$/), name: "get_weather", input },
    ]);
    const toolEvents = items.slice(4, 7).map((item) => (item.type === "stream_event" ? item.event : null));
    expect(toolEvents).toEqual([
      {
        type: "content_block_start",
        index: 1,
        content_block: {
          type: "tool_use",
          id: (message.content[1] as { id: string }).id,
          name: "get_weather",
          input: {},
        },
      },
      {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(input) },
      },
      { type: "content_block_stop", index: 1 },
    ]);
  });

  it("sends an assistant tool_use and the user's tool_result back as a model turn and a function response", async () => {
    // The emulator picks the script's turn by the number of model contents it receives.
    const marker = uniqueMarker("round-trip");
    await script(marker, [
      { content: [{ type: "tool_use", name: "lookup", input: { q: "x" } }] },
      { content: [{ type: "text", text: "Second turn." }] },
    ]);
    const tools = [{ name: "lookup", description: "Looks up.", input_schema: { type: "object" as const } }];
    const p = provider();
    const first = await drain(p, params(marker, { tools }));
    const reply = finalMessage(first.items);
    const call = reply.content[0];
    if (call?.type !== "tool_use") throw new Error("expected a tool call");
    const history: MessageParam[] = [
      { role: "user", content: `${marker} go` },
      { role: "assistant", content: [{ type: "tool_use", id: call.id, name: call.name, input: call.input }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "42" }] },
    ];
    const second = await drain(p, params(marker, { tools, messages: history }));
    expect(second.error).toBeUndefined();
    expect(finalMessage(second.items).content).toEqual([{ type: "text", text: "Second turn.", citations: null }]);
  });

  it("sends a tool result as the function response's output, or its error when is_error", async () => {
    // Unscripted, the emulator answers a tool result with what the function response held.
    const tools = [{ name: "lookup", input_schema: { type: "object" as const } }];
    for (const [isError, expected] of [
      [false, '{"output":"42"}'],
      [true, '{"error":"no such page"}'],
    ] as const) {
      const history: MessageParam[] = [
        { role: "user", content: `look it up ${crypto.randomUUID()}` },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I should look.", signature: "sig" },
            { type: "tool_use", id: "toolu_1", name: "lookup", input: {} },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [{ type: "text", text: isError ? "no such page" : "42" }],
              is_error: isError,
            },
          ],
        },
      ];
      const { items } = await drain(provider(), { model: MODEL, max_tokens: 64, tools, messages: history });
      expect(finalMessage(items).content).toEqual([
        { type: "text", text: `Done. The tool returned: ${expected}`, citations: null },
      ]);
    }
  });

  it("offers the tools as function declarations with their JSON schema", async () => {
    // Unscripted, the emulator calls the first tool offered with an input built from its schema.
    const prompt = `Find pages about durable objects ${crypto.randomUUID()}`;
    const input_schema = {
      type: "object" as const,
      properties: { query: { type: "string" }, limit: { type: "integer", minimum: 3 } },
      required: ["query", "limit"],
    };
    const { items } = await drain(provider(), {
      model: MODEL,
      max_tokens: 64,
      tools: [{ name: "search_docs", description: "Searches the docs.", input_schema }],
      messages: [{ role: "user", content: prompt }],
    });
    const message = finalMessage(items);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content[1]).toMatchObject({
      type: "tool_use",
      name: "search_docs",
      input: { query: prompt, limit: 3 },
    });
  });

  it("reports a MAX_TOKENS finish as stop_reason max_tokens, with the scripted usage", async () => {
    const { items } = await callWith("max-tokens", {
      content: [{ type: "text", text: "Truncated answ" }],
      stop_reason: "max_tokens",
      usage: { input_tokens: 1234, output_tokens: 77 },
    });
    const message = finalMessage(items);
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.usage).toMatchObject({ input_tokens: 1234, output_tokens: 77 });
  });

  it("reports a SAFETY finish as stop_reason refusal", async () => {
    const { items } = await callWith("safety", { content: [{ type: "text", text: "I can't" }], stop_reason: "SAFETY" });
    expect(finalMessage(items).stop_reason).toBe("refusal");
  });

  it("turns thought parts into a thinking block and counts thought tokens as output", async () => {
    const { items } = await callWith("thinking", {
      content: [
        { type: "thinking", thinking: "The user wants a greeting.", signature: "sig_test_1" },
        { type: "text", text: "Hello." },
      ],
      usage: { input_tokens: 50, output_tokens: 10 },
    });
    const message = finalMessage(items);
    // Gemini's thought signature has no place in a Messages API thinking block built from deltas.
    expect(message.content).toEqual([
      { type: "thinking", thinking: "The user wants a greeting.", signature: "" },
      { type: "text", text: "Hello.", citations: null },
    ]);
    const thinkingDeltas = items.flatMap((item) =>
      item.type === "stream_event" &&
      item.event.type === "content_block_delta" &&
      item.event.delta.type === "thinking_delta"
        ? [item.event.delta.thinking]
        : [],
    );
    expect(thinkingDeltas).toEqual(["The ", "user ", "wants ", "a ", "greeting."]);
    // The emulator counts one thought token per thought chunk: 10 answer tokens + 5 thought tokens.
    expect(message.usage).toMatchObject({ input_tokens: 50, output_tokens: 15 });
  });

  it("sends the x-outpost-task-id header with the request", async () => {
    const marker = uniqueMarker("task-header");
    const taskId = `task_${crypto.randomUUID()}`;
    await script(marker, [textTurn()]);
    const { error } = await drain(provider(), params(marker), { headers: { "x-outpost-task-id": taskId } });
    expect(error).toBeUndefined();
    expect(await records(taskId)).toEqual([
      expect.objectContaining({ provider: "gemini", stream: true, status: 200, turn: 0, script_match: marker }),
    ]);
  });

  it("serves a second call once the first has finished", async () => {
    const marker = uniqueMarker("sequential");
    await script(marker, [textTurn()]);
    const p = provider();
    const first = await drain(p, params(marker));
    const second = await drain(p, params(marker));
    expect([first.error, second.error]).toEqual([undefined, undefined]);
    expect(finalMessage(second.items).content).toEqual([{ type: "text", text: TEXT, citations: null }]);
  });
});

describe("toGeminiRequest", () => {
  it("translates a whole tool-using conversation into Gemini contents, tools and config", () => {
    const signal = new AbortController().signal;
    const request = toGeminiRequest(
      {
        model: MODEL,
        max_tokens: 512,
        system: [
          { type: "text", text: "You use tools." },
          { type: "text", text: "Be brief." },
        ],
        stop_sequences: ["END"],
        tool_choice: { type: "tool", name: "lookup" },
        tools: [{ name: "lookup", description: "Looks up.", input_schema: { type: "object", properties: {} } }],
        messages: [
          { role: "user", content: "Find x" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "Look it up.", signature: "sig" },
              { type: "text", text: "Looking." },
              { type: "tool_use", id: "toolu_a", name: "lookup", input: { q: "x" } },
              { type: "tool_use", id: "toolu_b", name: "fetch_page", input: { url: "u" } },
            ],
          },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_a", content: "found" },
              {
                type: "tool_result",
                tool_use_id: "toolu_b",
                content: [{ type: "text", text: "gone" }],
                is_error: true,
              },
              { type: "text", text: "Hurry." },
            ],
          },
        ],
      },
      { signal, headers: { "x-outpost-task-id": "task_1" } },
    );
    expect(request).toEqual({
      model: MODEL,
      contents: [
        { role: "user", parts: [{ text: "Find x" }] },
        {
          role: "model",
          parts: [
            { text: "Looking." },
            {
              functionCall: { id: "toolu_a", name: "lookup", args: { q: "x" } },
              thoughtSignature: "skip_thought_signature_validator",
            },
            { functionCall: { id: "toolu_b", name: "fetch_page", args: { url: "u" } } },
          ],
        },
        {
          role: "user",
          parts: [
            { functionResponse: { id: "toolu_a", name: "lookup", response: { output: "found" } } },
            { functionResponse: { id: "toolu_b", name: "fetch_page", response: { error: "gone" } } },
            { text: "Hurry." },
          ],
        },
      ],
      config: {
        maxOutputTokens: 512,
        abortSignal: signal,
        httpOptions: { headers: { "x-outpost-task-id": "task_1" } },
        systemInstruction: { parts: [{ text: "You use tools.\nBe brief." }] },
        stopSequences: ["END"],
        tools: [
          {
            functionDeclarations: [
              { name: "lookup", description: "Looks up.", parametersJsonSchema: { type: "object", properties: {} } },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["lookup"] } },
      },
    });
  });

  it("asks for thoughts when the request enables thinking", () => {
    const signal = new AbortController().signal;
    const base = { model: MODEL, max_tokens: 64, messages: [{ role: "user" as const, content: "hi" }] };
    expect(
      toGeminiRequest({ ...base, thinking: { type: "enabled", budget_tokens: 2048 } }, { signal }).config
        ?.thinkingConfig,
    ).toEqual({ includeThoughts: true, thinkingBudget: 2048 });
    expect(toGeminiRequest(base, { signal }).config?.thinkingConfig).toBeUndefined();
  });
});

describe("GeminiProvider.stream: HTTP errors mapped by status", () => {
  it.each([
    { status: 429, code: "rate_limited", retryable: true },
    { status: 503, code: "provider_overloaded", retryable: true },
    { status: 500, code: "provider_unavailable", retryable: true },
    { status: 502, code: "provider_unavailable", retryable: true },
    { status: 504, code: "provider_unavailable", retryable: true },
    { status: 400, code: "provider_rejected_request", retryable: false },
    { status: 401, code: "provider_auth_failed", retryable: false },
    { status: 403, code: "provider_auth_failed", retryable: false },
    { status: 404, code: "model_not_found", retryable: false },
    { status: 409, code: "provider_error", retryable: false },
  ])("maps HTTP $status to ProviderError $code (retryable: $retryable)", async ({ status, code, retryable }) => {
    const { items, attempts, error } = await callWith(`http-${status}`, textTurn([{ kind: "http", status }]));
    expect(items).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code, retryable, status, requestId: attempts[0]?.request_id });
    expect(attempts.map((a) => a.status)).toEqual([status]);
  });

  it("puts Google's own error message into the ProviderError message", async () => {
    const { error } = await callWith("http-message", textTurn([{ kind: "http", status: 429 }]));
    expect((error as ProviderError).message).toBe(
      "The model provider is rate limiting requests: Resource has been exhausted (e.g. check quota).",
    );
  });

  it("tells to check the agent's Gemini API key secret when the credentials are rejected", async () => {
    const { error } = await callWith("http-auth-message", textTurn([{ kind: "http", status: 401 }]));
    expect((error as ProviderError).message).toBe(
      "The model provider rejected the credentials; check the agent's Gemini API key secret: " +
        "Request is missing required authentication credential.",
    );
  });

  it("reports the retry delay of a 429 on the attempt", async () => {
    const { attempts } = await callWith("retry-after", textTurn([{ kind: "http", status: 429, retry_after: 7 }]));
    expect(attempts).toEqual([
      { attempt: 1, status: 429, request_id: expect.stringMatching(/^req_emu_\d+$/), retry_after_seconds: 7 },
    ]);
  });

  it("retries through the client and reports each attempt when retries are allowed", async () => {
    const { items, attempts, error } = await callWith("retries", textTurn([{ kind: "http", status: 503 }]), {
      maxRetries: 1,
    });
    expect(error).toBeUndefined();
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 503],
      [2, 200],
    ]);
    const last = items.at(-1);
    expect(last?.type === "assistant" ? last.request_id : null).toBe(attempts[1]?.request_id);
    expect(finalMessage(items).content).toEqual([{ type: "text", text: TEXT, citations: null }]);
  });

  it("throws the last error once the retries are used up", async () => {
    const { attempts, error } = await callWith(
      "retries-exhausted",
      textTurn([
        { kind: "http", status: 429 },
        { kind: "http", status: 429 },
      ]),
      { maxRetries: 1 },
    );
    expect(attempts.map((a) => a.status)).toEqual([429, 429]);
    expect(error).toMatchObject({ code: "rate_limited", status: 429 });
  });

  it("makes one attempt when retries are off", async () => {
    const { attempts, error } = await callWith(
      "no-retry",
      textTurn([
        { kind: "http", status: 503 },
        { kind: "http", status: 503 },
      ]),
    );
    expect(error).toMatchObject({ code: "provider_overloaded" });
    expect(attempts).toHaveLength(1);
  });
});

describe("GeminiProvider.stream: failures after the stream started (FR-005)", () => {
  it("yields the events that arrived before an error chunk, then throws StreamingError carrying them", async () => {
    const { items, error } = await callWith("stream-error", textTurn([{ kind: "stream_error", after_deltas: 2 }]));
    expect(eventTypes(items)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
    ]);
    expect(textDeltas(items)).toEqual(["one ", "two "]);
    expect(error).toBeInstanceOf(StreamingError);
    const streaming = error as StreamingError;
    expect(streaming.partialMessages).toEqual(items);
    expect(streaming.message).toBe(
      "The model stream broke after 4 events: The model provider is overloaded: The model is overloaded. Please try again later.",
    );
    expect(streaming.cause).toBeInstanceOf(ProviderError);
    expect(streaming.cause).toMatchObject({ code: "provider_overloaded", status: 503, retryable: true });
  });

  it("throws the ProviderError itself when the error chunk comes before any content", async () => {
    const { items, error } = await callWith("stream-error-0", textTurn([{ kind: "stream_error", after_deltas: 0 }]));
    expect(items).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "provider_overloaded", status: 503 });
  });

  it("reports an unparseable chunk as MalformedResponseError with the raw bytes, inside StreamingError", async () => {
    const { items, error } = await callWith("malformed", textTurn([{ kind: "malformed", after_deltas: 1 }]));
    expect(eventTypes(items)).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect(error).toBeInstanceOf(StreamingError);
    const cause = (error as StreamingError).cause;
    expect(cause).toBeInstanceOf(MalformedResponseError);
    const malformed = cause as MalformedResponseError;
    expect(malformed.message).toMatch(/^The model provider sent a response that is not valid JSON: /);
    expect(malformed.rawResponse.startsWith('data: {"candidates":')).toBe(true);
    expect(malformed.rawResponse.endsWith('data: {"candidates": [{"content": {"parts": [{"text": \n\n')).toBe(true);
  });

  it("cuts off a stream that stalls after it started once idleTimeoutMs passes without data", async () => {
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

describe("GeminiProvider.stream: cancellation and unreachable providers", () => {
  it("throws CanceledError, not StreamingError, when the signal aborts a stalled stream", async () => {
    const marker = uniqueMarker("abort");
    await script(marker, [textTurn([{ kind: "stall", after_deltas: 1 }])]);
    const controller = new AbortController();
    const outcome = drain(provider(), params(marker), { signal: controller.signal });
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
    const { items, attempts, error } = await drain(provider(), params(marker), { signal: controller.signal });
    expect(items).toEqual([]);
    expect(attempts).toEqual([]);
    expect(error).toBeInstanceOf(CanceledError);
  });

  it("throws NetworkError when the connection is refused", async () => {
    // workerd logs the refused connection as an uncaught "Network connection lost"; that is its own logging.
    const { items, attempts, error } = await drain(provider({ endpoint: "http://127.0.0.1:1" }), params("refused"));
    expect(items).toEqual([]);
    expect(attempts).toEqual([{ attempt: 1, status: null, request_id: null, retry_after_seconds: null }]);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: "network_error", retryable: true });
    expect((error as NetworkError).message).toMatch(/^Could not reach the model provider: /);
  });

  it("retries a refused connection when retries are allowed", async () => {
    const { attempts, error } = await drain(provider({ endpoint: "http://127.0.0.1:1", maxRetries: 1 }), params("x"));
    expect(attempts.map((a) => a.status)).toEqual([null, null]);
    expect(error).toBeInstanceOf(NetworkError);
  });
});
