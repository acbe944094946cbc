// The model emulator seen through the official Anthropic SDK from inside workerd: wire format, scripted
// turns, fault injection, stats and the default reply policy. Every test owns a unique `match` string
// because all test files share one emulator (so nothing here may reset or delete its state).

import { env } from "cloudflare:workers";
import Anthropic, {
  AnthropicError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  BadRequestError,
  InternalServerError,
  OverloadedError,
  RateLimitError,
  ServiceUnavailableError,
} from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";

const baseURL = env.ANTHROPIC_BASE_URL ?? "";

const client = new Anthropic({
  apiKey: "test",
  baseURL,
  fetch: (input, init) => fetch(input, init),
  maxRetries: 0,
});

/** For the malformed-frame test, where the SDK's own parse-error logging is expected noise. */
const silentClient = new Anthropic({
  apiKey: "test",
  baseURL,
  fetch: (input, init) => fetch(input, init),
  maxRetries: 0,
  logLevel: "off",
});

interface RequestRecord {
  request_id: string;
  task_id: string | null;
  model: string | null;
  stream: boolean;
  turn: number;
  script_match: string | null;
  status: number;
  fault: string | null;
  started_at_ms: number;
  ended_at_ms: number;
  service_ms: number;
}

function uniqueMatch(label: string): string {
  return `emu-${label}-${crypto.randomUUID()}`;
}

async function registerScript(script: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${baseURL}/_emulator/scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(script),
  });
  expect(response.status).toBe(201);
  const body = (await response.json()) as { id: string };
  expect(body.id).toMatch(/^script_\d+$/);
  return body.id;
}

async function stats(): Promise<RequestRecord[]> {
  const response = await fetch(`${baseURL}/_emulator/stats`);
  expect(response.status).toBe(200);
  return ((await response.json()) as { requests: RequestRecord[] }).requests;
}

function ask(match: string, extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) {
  return {
    model: "emu-model",
    max_tokens: 256,
    messages: [{ role: "user" as const, content: `${match} go` }],
    ...extra,
  };
}

/** Raw SSE frames, so events the SDK hides (ping) and exact frame syntax can be asserted. */
async function rawStream(body: Record<string, unknown>): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const response = await fetch(`${baseURL}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "whatever" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  expect(response.headers.get("request-id")).toMatch(/^req_emu_\d+$/);
  const text = await response.text();
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      const [eventLine, dataLine, ...rest] = frame.split("\n");
      expect(rest).toEqual([]);
      expect(eventLine).toMatch(/^event: /);
      expect(dataLine).toMatch(/^data: /);
      const event = (eventLine ?? "").slice("event: ".length);
      const data = JSON.parse((dataLine ?? "").slice("data: ".length)) as Record<string, unknown>;
      expect(data.type).toBe(event);
      return { event, data };
    });
}

describe("emulator: scripted replies", () => {
  it("streams scripted text word by word in the real event order", async () => {
    const match = uniqueMatch("stream-text");
    const text = "The quick brown fox jumps over the lazy dog.";
    await registerScript({ match, turns: [{ content: [{ type: "text", text }] }] });

    const stream = client.messages.stream(ask(match));
    const types: string[] = [];
    const deltas: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") deltas.push(event.delta.text);
    }
    const message = await stream.finalMessage();
    expect(message.content).toEqual([{ type: "text", text }]);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.id).toMatch(/^msg_emu_/);
    expect(deltas).toEqual(["The ", "quick ", "brown ", "fox ", "jumps ", "over ", "the ", "lazy ", "dog."]);
    expect(types).toEqual([
      "message_start",
      "content_block_start",
      ...Array<string>(9).fill("content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);

    const frames = await rawStream(ask(match));
    expect(frames.map((frame) => frame.event)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      ...Array<string>(9).fill("content_block_delta"),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const start = frames[0]?.data.message as Record<string, unknown>;
    expect(start.content).toEqual([]);
    expect(start.stop_reason).toBeNull();
    expect((start.usage as Record<string, unknown>).output_tokens).toBe(1);
    expect(frames[2]?.data).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });
    expect(frames.at(-2)?.data).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 9 },
    });
  });

  it("streams tool_use input as partial JSON that parses to the exact object, with stable ids", async () => {
    const match = uniqueMatch("tool-use");
    const input = { city: "Paris", days: [1, 2, 3], options: { units: "metric", detailed: true }, note: "ünïcode ✓" };
    await registerScript({
      match,
      turns: [
        {
          content: [
            { type: "text", text: "Checking." },
            { type: "tool_use", name: "get_weather", input },
          ],
        },
      ],
    });

    const stream = client.messages.stream(ask(match));
    const partials: string[] = [];
    stream.on("inputJson", (partial) => partials.push(partial));
    const message = await stream.finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toHaveLength(2);
    const toolUse = message.content[1];
    if (toolUse?.type !== "tool_use") throw new Error(`expected a tool_use block, got ${toolUse?.type}`);
    expect(toolUse.name).toBe("get_weather");
    expect(toolUse.input).toEqual(input);
    expect(toolUse.id).toMatch(/^toolu_emu_[0-9a-f]{24}$/);
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.join("")).toBe(JSON.stringify(input));

    // A re-issued call (same conversation) must get the very same ids, streamed or not.
    const again = await client.messages.create(ask(match));
    expect(again.id).toBe(message.id);
    expect(again.content[1]).toEqual(toolUse);
  });

  it("streams thinking blocks with their signature", async () => {
    const match = uniqueMatch("thinking");
    await registerScript({
      match,
      turns: [
        {
          content: [
            { type: "thinking", thinking: "Let me weigh the options.", signature: "sig-explicit-123" },
            { type: "thinking", thinking: "Second thought." },
            { type: "text", text: "Answer." },
          ],
        },
      ],
    });
    const message = await client.messages.stream(ask(match)).finalMessage();
    expect(message.content[0]).toEqual({
      type: "thinking",
      thinking: "Let me weigh the options.",
      signature: "sig-explicit-123",
    });
    const second = message.content[1];
    if (second?.type !== "thinking") throw new Error("expected a thinking block");
    expect(second.thinking).toBe("Second thought.");
    expect(second.signature).toMatch(/^sig_emu_/);
    expect(message.content[2]).toEqual({ type: "text", text: "Answer." });

    const frames = await rawStream(ask(match));
    const firstBlockDeltas = frames
      .filter((frame) => frame.event === "content_block_delta" && frame.data.index === 0)
      .map((frame) => frame.data.delta);
    expect(firstBlockDeltas).toEqual([
      { type: "thinking_delta", thinking: "Let " },
      { type: "thinking_delta", thinking: "me " },
      { type: "thinking_delta", thinking: "weigh " },
      { type: "thinking_delta", thinking: "the " },
      { type: "thinking_delta", thinking: "options." },
      { type: "signature_delta", signature: "sig-explicit-123" },
    ]);
  });

  it("answers non-streaming calls with a full Message and computed usage", async () => {
    const match = uniqueMatch("non-stream");
    await registerScript({ match, turns: [{ content: [{ type: "text", text: "one two three" }] }] });
    const system = "You are terse.";
    const messages = [{ role: "user" as const, content: `${match} count` }];
    const message = await client.messages.create({ model: "emu-model", max_tokens: 64, system, messages });
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_emu_/),
      type: "message",
      role: "assistant",
      model: "emu-model",
      content: [{ type: "text", text: "one two three" }],
      stop_reason: "end_turn",
      stop_sequence: null,
      diagnostics: null,
      usage: {
        input_tokens: Math.ceil(JSON.stringify({ system, messages }).length / 4),
        output_tokens: 3,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it("applies usage and stop_reason overrides in both modes", async () => {
    const match = uniqueMatch("overrides");
    await registerScript({
      match,
      turns: [
        {
          content: [{ type: "text", text: "Truncated answ" }],
          stop_reason: "max_tokens",
          usage: { input_tokens: 1234, output_tokens: 77, cache_read_input_tokens: 1000 },
        },
      ],
    });
    for (const message of [
      await client.messages.create(ask(match)),
      await client.messages.stream(ask(match)).finalMessage(),
    ]) {
      expect(message.stop_reason).toBe("max_tokens");
      expect(message.usage).toMatchObject({
        input_tokens: 1234,
        output_tokens: 77,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 1000,
      });
    }
  });

  it("selects the turn by the number of assistant messages, and matches on the system prompt", async () => {
    const match = uniqueMatch("turns");
    await registerScript({
      match,
      turns: [
        { content: [{ type: "tool_use", name: "lookup", input: { q: "x" } }] },
        { content: [{ type: "text", text: "Second turn." }] },
      ],
    });
    const first = await client.messages.create({
      model: "emu-model",
      max_tokens: 64,
      system: [{ type: "text", text: `Agent ${match}` }],
      messages: [{ role: "user", content: "no marker here" }],
    });
    const toolUse = first.content[0];
    if (toolUse?.type !== "tool_use") throw new Error("expected tool_use");
    const second = await client.messages.create({
      model: "emu-model",
      max_tokens: 64,
      system: `Agent ${match}`,
      messages: [
        { role: "user", content: "no marker here" },
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "42" }] },
      ],
    });
    expect(second.content).toEqual([{ type: "text", text: "Second turn." }]);
    expect(second.stop_reason).toBe("end_turn");

    const third = client.messages.create({
      model: "emu-model",
      max_tokens: 64,
      system: `Agent ${match}`,
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
        { role: "user", content: "c" },
        { role: "assistant", content: "d" },
        { role: "user", content: "e" },
      ],
    });
    const error = await third.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).apiMessage).toBe(`emulator script "${match}" has no turn 2 (it has 2)`);
  });
});

describe("emulator: faults", () => {
  it("returns 429 with retry-after as RateLimitError, consuming faults in order before succeeding", async () => {
    const match = uniqueMatch("rate-limit");
    await registerScript({
      match,
      turns: [
        {
          content: [{ type: "text", text: "Finally." }],
          faults: [
            { kind: "http", status: 429, retry_after: 7 },
            { kind: "http", status: 500 },
          ],
        },
      ],
    });
    const first = await client.messages.create(ask(match)).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(RateLimitError);
    const rateLimited = first as RateLimitError;
    expect(rateLimited.status).toBe(429);
    expect(rateLimited.headers.get("retry-after")).toBe("7");
    expect(rateLimited.type).toBe("rate_limit_error");
    expect(rateLimited.requestID).toMatch(/^req_emu_\d+$/);
    expect(rateLimited.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });

    const second = await client.messages
      .stream(ask(match))
      .finalMessage()
      .catch((e: unknown) => e);
    expect(second).toBeInstanceOf(InternalServerError);
    expect((second as InternalServerError).status).toBe(500);
    expect((second as InternalServerError).type).toBe("api_error");
    expect((second as InternalServerError).headers.get("retry-after")).toBeNull();

    const third = await client.messages.create(ask(match));
    expect(third.content).toEqual([{ type: "text", text: "Finally." }]);
  });

  it("returns 529 as the SDK's OverloadedError (an InternalServerError)", async () => {
    const match = uniqueMatch("overloaded");
    await registerScript({
      match,
      turns: [{ content: [{ type: "text", text: "ok" }], faults: [{ kind: "http", status: 529 }] }],
    });
    const error = await client.messages.create(ask(match)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OverloadedError);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as OverloadedError).status).toBe(529);
    expect((error as OverloadedError).type).toBe("overloaded_error");
  });

  it("fails a stream with an APIError after the scripted number of deltas", async () => {
    const match = uniqueMatch("stream-error");
    await registerScript({
      match,
      turns: [
        {
          content: [{ type: "text", text: "alpha beta gamma delta" }],
          faults: [{ kind: "stream_error", after_deltas: 2 }],
        },
      ],
    });
    const stream = client.messages.stream(ask(match));
    let received = "";
    stream.on("text", (delta) => {
      received += delta;
    });
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBeUndefined();
    expect((error as APIError).type).toBe("overloaded_error");
    expect((error as APIError).error).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    });
    expect(received).toBe("alpha beta ");

    // The fault was consumed: the retry streams the whole reply.
    const retry = await client.messages.stream(ask(match)).finalText();
    expect(retry).toBe("alpha beta gamma delta");
  });

  it("makes the SDK throw on a malformed stream frame and on a malformed JSON body", async () => {
    const match = uniqueMatch("malformed");
    await registerScript({
      match,
      turns: [
        {
          content: [{ type: "text", text: "never parsed whole" }],
          faults: [{ kind: "malformed", after_deltas: 1 }, { kind: "malformed" }],
        },
      ],
    });
    const stream = silentClient.messages.stream(ask(match));
    let received = "";
    stream.on("text", (delta) => {
      received += delta;
    });
    const streamError = await stream.finalMessage().catch((e: unknown) => e);
    expect(streamError).toBeInstanceOf(AnthropicError);
    expect(streamError).not.toBeInstanceOf(APIError);
    expect((streamError as Error).cause).toBeInstanceOf(SyntaxError);
    expect(received).toBe("never ");

    const bodyError = await silentClient.messages.create(ask(match)).catch((e: unknown) => e);
    expect(bodyError).toBeInstanceOf(SyntaxError);

    const healthy = await silentClient.messages.create(ask(match));
    expect(healthy.content).toEqual([{ type: "text", text: "never parsed whole" }]);
  });

  it("stalls a stream mid-reply, then ends it unfinished", async () => {
    const match = uniqueMatch("stall-stream");
    await registerScript({
      match,
      turns: [
        { content: [{ type: "text", text: "slow and steady" }], faults: [{ kind: "stall", after_deltas: 1, ms: 300 }] },
      ],
    });
    const startedAt = Date.now();
    const stream = client.messages.stream(ask(match));
    let received = "";
    stream.on("text", (delta) => {
      received += delta;
    });
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(300);
    expect(error).toBeInstanceOf(AnthropicError);
    expect((error as Error).message).toContain("stream ended without producing a Message");
    expect(received).toBe("slow ");
  });

  it("lets a client abort a stalled stream, and times out a stalled non-streaming call", async () => {
    const match = uniqueMatch("stall-abort");
    const taskId = `task_${crypto.randomUUID()}`;
    await registerScript({
      match,
      turns: [
        { content: [{ type: "text", text: "never" }], faults: [{ kind: "stall" }, { kind: "stall", ms: 5_000 }] },
      ],
    });
    const controller = new AbortController();
    const stream = client.messages.stream(ask(match), {
      signal: controller.signal,
      headers: { "x-outpost-task-id": taskId },
    });
    setTimeout(() => controller.abort(), 100);
    const aborted = await stream.finalMessage().catch((e: unknown) => e);
    expect(aborted).toBeInstanceOf(APIUserAbortError);

    const startedAt = Date.now();
    const timedOut = await client.messages.create(ask(match), { timeout: 150 }).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(APIConnectionTimeoutError);
    expect(Date.now() - startedAt).toBeLessThan(4_000);

    // The stall without `ms` holds only until the client goes away; the emulator then records it as 499.
    let record: RequestRecord | undefined;
    for (let i = 0; i < 50 && !record; i++) {
      record = (await stats()).find((r) => r.task_id === taskId);
      if (!record) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(record).toMatchObject({ fault: "stall", status: 200, stream: true, script_match: match });
    expect(record?.service_ms).toBeLessThan(4_000);
  });
});

describe("emulator: stats", () => {
  it("records task id, turn, script, status and service time including configured latency", async () => {
    const match = uniqueMatch("stats");
    const taskId = `task_${crypto.randomUUID()}`;
    await registerScript({
      match,
      ttft_ms: 120,
      token_delay_ms: 30,
      turns: [{ content: [{ type: "text", text: "one two three four" }], faults: [{ kind: "http", status: 503 }] }],
    });
    const failed = await client.messages
      .create(ask(match), { headers: { "x-outpost-task-id": taskId } })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(ServiceUnavailableError);

    const startedAt = Date.now();
    const { data, request_id, response } = await client.messages
      .create(ask(match), { headers: { "x-outpost-task-id": taskId } })
      .withResponse();
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(240);
    expect(data.content).toEqual([{ type: "text", text: "one two three four" }]);
    expect(Number(response.headers.get("x-emulator-service-time-ms"))).toBeGreaterThanOrEqual(240);
    expect(request_id).toMatch(/^req_emu_\d+$/);

    const streamed = client.messages.stream(ask(match), { headers: { "x-outpost-task-id": taskId } });
    await streamed.finalMessage();
    const { request_id: streamRequestId } = await streamed.withResponse();

    const records = (await stats()).filter((r) => r.task_id === taskId);
    expect(records).toHaveLength(3);
    const [faulted, plain, stream] = records;
    expect(faulted).toMatchObject({ status: 503, fault: "http", turn: 0, script_match: match, stream: false });
    expect(plain).toMatchObject({
      request_id,
      task_id: taskId,
      model: "emu-model",
      stream: false,
      turn: 0,
      script_match: match,
      status: 200,
      fault: null,
    });
    expect(plain?.service_ms).toBeGreaterThanOrEqual(240);
    expect((plain?.ended_at_ms ?? 0) - (plain?.started_at_ms ?? 0)).toBeGreaterThanOrEqual(240);
    expect(stream).toMatchObject({ request_id: streamRequestId, stream: true, status: 200, fault: null });
    // Streaming pays the ttft once and the token delay between consecutive deltas: 120 + 3 × 30.
    expect(stream?.service_ms).toBeGreaterThanOrEqual(210);
  });
});

describe("emulator: default replies", () => {
  const tool: Anthropic.Tool = {
    name: "search_docs",
    description: "Search the docs",
    input_schema: {
      type: "object",
      properties: {
        query: { type: "string" },
        mode: { type: "string", enum: ["fast", "deep"] },
        limit: { type: "integer", minimum: 3 },
        weight: { type: "number" },
        exact: { type: "boolean" },
        tags: { type: "array", items: { type: "string", maxLength: 4 }, minItems: 2 },
        filter: {
          type: "object",
          properties: { lang: { type: "string" }, skip: { type: "string" } },
          required: ["lang"],
        },
        optional: { type: "string" },
      },
      required: ["query", "mode", "limit", "weight", "exact", "tags", "filter"],
    },
  };
  const prompt = `Find pages about durable objects ${crypto.randomUUID()} and summarise how they persist state`;

  it("calls the first offered tool with an input derived from its schema, deterministically", async () => {
    const request = {
      model: "emu-model",
      max_tokens: 128,
      tools: [tool, { name: "other", input_schema: { type: "object" as const } }],
      messages: [{ role: "user" as const, content: prompt }],
    };
    const message = await client.messages.create(request);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content).toHaveLength(2);
    expect(message.content[0]).toEqual({ type: "text", text: "I'll use the search_docs tool." });
    const toolUse = message.content[1];
    if (toolUse?.type !== "tool_use") throw new Error("expected tool_use");
    const derived = prompt.slice(0, 80);
    expect(toolUse.name).toBe("search_docs");
    expect(toolUse.input).toEqual({
      query: derived,
      mode: "fast",
      limit: 3,
      weight: 1,
      exact: true,
      tags: [derived.slice(0, 4), derived.slice(0, 4)],
      filter: { lang: derived },
    });
    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed.content).toEqual(message.content);
    expect(streamed.id).toBe(message.id);
  });

  it("summarises a tool result, and echoes plain prompts", async () => {
    const result = `${"r".repeat(190)}-0123456789-TAIL`;
    const afterTool = await client.messages.create({
      model: "emu-model",
      max_tokens: 128,
      tools: [tool],
      messages: [
        { role: "user", content: prompt },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "search_docs", input: {} }] },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_x", content: [{ type: "text", text: result }] }],
        },
      ],
    });
    expect(afterTool.content).toEqual([{ type: "text", text: `Done. The tool returned: ${result.slice(0, 200)}` }]);
    expect(afterTool.stop_reason).toBe("end_turn");

    const echoed = await client.messages
      .stream({
        model: "emu-model",
        max_tokens: 128,
        messages: [{ role: "user", content: [{ type: "text", text: `${prompt} ${"y".repeat(600)}` }] }],
      })
      .finalText();
    expect(echoed).toBe(`(emulator) You said: ${`${prompt} ${"y".repeat(600)}`.slice(0, 500)}`);
  });
});

describe("emulator: errors", () => {
  it("rejects invalid bodies with 400 invalid_request_error", async () => {
    const invalid: Record<string, unknown>[] = [
      { max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
      { model: "emu-model", max_tokens: 0, messages: [{ role: "user", content: "hi" }] },
      { model: "emu-model", max_tokens: 1.5, messages: [{ role: "user", content: "hi" }] },
      { model: "emu-model", max_tokens: 10, messages: [] },
      { model: "emu-model", max_tokens: 10, messages: [{ role: "system", content: "hi" }] },
      // The current API version takes no sampling parameters, whatever their value.
      { model: "emu-model", max_tokens: 10, messages: [{ role: "user", content: "hi" }], temperature: 1 },
      { model: "emu-model", max_tokens: 10, messages: [{ role: "user", content: "hi" }], top_p: 0.5 },
      // A thinking budget of at least 1,024 tokens, below max_tokens.
      {
        model: "emu-model",
        max_tokens: 2000,
        messages: [{ role: "user", content: "hi" }],
        thinking: { type: "enabled", budget_tokens: 2000 },
      },
      {
        model: "emu-model",
        max_tokens: 4000,
        messages: [{ role: "user", content: "hi" }],
        thinking: { type: "enabled", budget_tokens: 1000 },
      },
      // A tool call must be answered in the next message.
      {
        model: "emu-model",
        max_tokens: 10,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "t", input: {} }] },
          { role: "user", content: "and?" },
        ],
      },
    ];
    for (const body of invalid) {
      const error = await client.messages
        .create(body as unknown as Anthropic.MessageCreateParamsNonStreaming)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).type).toBe("invalid_request_error");
      expect((error as BadRequestError).requestID).toMatch(/^req_emu_\d+$/);
    }

    const raw = await fetch(`${baseURL}/v1/messages`, { method: "POST", body: "{not json" });
    expect(raw.status).toBe(400);
    expect(raw.headers.get("content-type")).toBe("application/json");
    expect(raw.headers.get("request-id")).toMatch(/^req_emu_\d+$/);
    expect(await raw.json()).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "request body is not valid JSON" },
    });
  });

  it("rejects malformed scripts and answers unknown paths with not_found_error", async () => {
    const badScript = await fetch(`${baseURL}/_emulator/scripts`, {
      method: "POST",
      body: JSON.stringify({ match: "x", turns: [{ content: [{ type: "image" }] }] }),
    });
    expect(badScript.status).toBe(400);
    expect(await badScript.json()).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });

    const missing = await fetch(`${baseURL}/v1/nothing-here`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("request-id")).toMatch(/^req_emu_\d+$/);
    expect(await missing.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });

    const health = await fetch(`${baseURL}/_emulator/health`);
    expect(await health.json()).toEqual({ ok: true });
  });

  it("collects OTLP/HTTP JSON traces by trace id, with their headers, and refuses a malformed export", async () => {
    const traceId = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join(
      "",
    );
    const span = {
      traceId,
      spanId: "00f067aa0ba902b7",
      name: "chat test-model",
      kind: 3,
      startTimeUnixNano: "1",
      endTimeUnixNano: "2",
      attributes: [{ key: "outpost.task.id", value: { stringValue: `task-${traceId}` } }],
    };
    const body = {
      resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: "t" }, spans: [span] }] }],
    };
    const sent = await fetch(`${baseURL}/v1/traces`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-token": "t1" },
      body: JSON.stringify(body),
    });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toEqual({});
    const bad = await fetch(`${baseURL}/v1/traces`, {
      method: "POST",
      body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ ...span, spanId: "xyz" }] }] }] }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ code: 3, message: "a spanId is not 8 hex bytes" });
    const byTrace = (await (await fetch(`${baseURL}/_emulator/traces?trace_id=${traceId}`)).json()) as {
      spans: { span: unknown; headers: Record<string, string>; scope: unknown }[];
    };
    expect(byTrace.spans.map((r) => [r.span, r.headers["x-token"], r.scope])).toEqual([[span, "t1", { name: "t" }]]);
    const byTask = (await (await fetch(`${baseURL}/_emulator/traces?task_id=task-${traceId}`)).json()) as {
      spans: { span: unknown }[];
    };
    expect(byTask.spans.map((r) => r.span)).toEqual([span]);
  });
});
