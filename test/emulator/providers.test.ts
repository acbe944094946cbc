// The model emulator's OpenAI Chat Completions and Gemini generateContent endpoints, seen through the official
// `openai` and `@google/genai` clients, unchanged, from inside workerd: the same scripts, faults and stats as the
// Anthropic endpoint. Every test owns a unique marker because all test files share one emulator.
import { env } from "cloudflare:workers";
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, Type } from "@google/genai";
import OpenAI, { APIError, AuthenticationError, InternalServerError, RateLimitError } from "openai";
import { describe, expect, it } from "vitest";
import { script, uniqueMarker } from "../support/helpers.ts";

const emulatorUrl = env.ANTHROPIC_BASE_URL ?? "";

const openai = new OpenAI({
  apiKey: "test",
  baseURL: `${emulatorUrl}/v1`,
  fetch: (input, init) => fetch(input, init),
  maxRetries: 0,
});

/** The bodies the Gemini client sent, so token estimates can be checked against exactly what went over the wire. */
const geminiBodies: Record<string, unknown>[] = [];

const gemini = new GoogleGenAI({
  apiKey: "test",
  httpOptions: {
    baseUrl: emulatorUrl,
    fetch: (input, init) => {
      if (typeof init?.body === "string") geminiBodies.push(JSON.parse(init.body) as Record<string, unknown>);
      return fetch(input, init);
    },
    // The client retries only when given retry options; one attempt is the explicit "no retries".
    retryOptions: { attempts: 1 },
  },
});

interface RequestRecord {
  request_id: string;
  provider: string;
  task_id: string | null;
  model: string | null;
  stream: boolean;
  turn: number;
  script_match: string | null;
  status: number;
  fault: string | null;
  service_ms: number;
}

async function records(taskId: string): Promise<RequestRecord[]> {
  const response = await fetch(`${emulatorUrl}/_emulator/stats`);
  const { requests } = (await response.json()) as { requests: RequestRecord[] };
  return requests.filter((record) => record.task_id === taskId);
}

function userMessage(marker: string): OpenAI.Chat.ChatCompletionMessageParam[] {
  return [{ role: "user", content: `${marker} go` }];
}

/** The raw `data:` payloads of an SSE response, to assert frames the clients hide (the [DONE] line). */
async function sseData(response: Response): Promise<string[]> {
  const text = await response.text();
  expect(text.endsWith("\n\n")).toBe(true);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      expect(frame.startsWith("data: ")).toBe(true);
      return frame.slice("data: ".length);
    });
}

/** What a promise rejected with; fails the test when it resolved. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

describe("emulator: OpenAI Chat Completions", () => {
  it("streams scripted text as content deltas, then finish_reason stop and [DONE]", async () => {
    const marker = uniqueMarker("oa-text");
    await script(marker, [{ content: [{ type: "text", text: "The quick brown fox." }] }]);

    const stream = await openai.chat.completions.create({
      model: "emu-gpt",
      messages: userMessage(marker),
      stream: true,
    });
    const deltas: string[] = [];
    const finishes: (string | null)[] = [];
    let id = "";
    for await (const chunk of stream) {
      id = chunk.id;
      expect(chunk.object).toBe("chat.completion.chunk");
      expect(chunk.model).toBe("emu-gpt");
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      finishes.push(choice?.finish_reason ?? null);
    }
    expect(deltas).toEqual(["The ", "quick ", "brown ", "fox."]);
    expect(finishes.at(-1)).toBe("stop");
    expect(finishes.slice(0, -1).every((finish) => finish === null)).toBe(true);
    expect(id).toMatch(/^chatcmpl-emu_[0-9a-f]{24}$/);

    const raw = await fetch(`${emulatorUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer any", "content-type": "application/json" },
      body: JSON.stringify({ model: "emu-gpt", messages: userMessage(marker), stream: true }),
    });
    expect(raw.status).toBe(200);
    expect(raw.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(raw.headers.get("x-request-id")).toMatch(/^req_emu_\d+$/);
    const data = await sseData(raw);
    expect(data.at(-1)).toBe("[DONE]");
    // Without stream_options.include_usage there is no usage chunk and no usage field.
    expect(data.slice(0, -1).every((line) => !("usage" in (JSON.parse(line) as object)))).toBe(true);
  });

  it("streams a scripted tool call whose arguments arrive in pieces and parse to the scripted input", async () => {
    const marker = uniqueMarker("oa-tool");
    const input = { city: "Paris", days: [1, 2, 3], options: { units: "metric" }, note: "ünïcode ✓" };
    await script(marker, [
      {
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", name: "get_weather", input },
        ],
      },
    ]);
    const request = {
      model: "emu-gpt",
      messages: userMessage(marker),
      tools: [
        {
          type: "function" as const,
          function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
        },
      ],
    };

    const pieces: string[] = [];
    const stream = await openai.chat.completions.create({ ...request, stream: true });
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (call.function?.arguments) pieces.push(call.function.arguments);
      }
    }
    expect(pieces.length).toBeGreaterThan(1);
    expect(JSON.parse(pieces.join(""))).toEqual(input);

    // The client's own accumulator assembles the same call.
    const completion = await openai.chat.completions.stream(request).finalChatCompletion();
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBe("Checking.");
    const call = choice?.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error(`expected a function tool call, got ${call?.type}`);
    expect(call.id).toMatch(/^call_emu_[0-9a-f]{24}$/);
    expect(call.function.name).toBe("get_weather");
    expect(JSON.parse(call.function.arguments)).toEqual(input);

    // A re-issued call gets the very same ids, streamed or not.
    const again = await openai.chat.completions.create(request);
    expect(again.id).toBe(completion.id);
    expect(again.choices[0]?.message.tool_calls).toEqual([
      { id: call.id, type: "function", function: { name: "get_weather", arguments: JSON.stringify(input) } },
    ]);
  });

  it("answers a non-streaming call with a full chat.completion and computed usage", async () => {
    const marker = uniqueMarker("oa-plain");
    await script(marker, [{ content: [{ type: "text", text: "one two three" }] }]);
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: "system", content: "You are terse." },
      { role: "user", content: `${marker} count` },
    ];
    const { data, request_id } = await openai.chat.completions
      .create({ model: "emu-gpt", messages, max_completion_tokens: 64 })
      .withResponse();
    const promptTokens = Math.ceil(JSON.stringify({ messages }).length / 4);
    expect(data).toEqual({
      id: expect.stringMatching(/^chatcmpl-emu_/),
      object: "chat.completion",
      created: 1_767_225_600,
      model: "emu-gpt",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "one two three", refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: 3,
        total_tokens: promptTokens + 3,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
      system_fingerprint: null,
    });
    expect(request_id).toMatch(/^req_emu_\d+$/);
  });

  it("reports scripted usage in a final usage chunk when include_usage is set, and max_tokens as length", async () => {
    const marker = uniqueMarker("oa-usage");
    await script(marker, [
      {
        content: [{ type: "text", text: "Truncated answ" }],
        stop_reason: "max_tokens",
        usage: { input_tokens: 1234, output_tokens: 77 },
      },
    ]);
    const stream = await openai.chat.completions.create({
      model: "emu-gpt",
      messages: userMessage(marker),
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toEqual({
      prompt_tokens: 1234,
      completion_tokens: 77,
      total_tokens: 1311,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("length");

    const plain = await openai.chat.completions.create({ model: "emu-gpt", messages: userMessage(marker) });
    expect(plain.usage).toMatchObject({ prompt_tokens: 1234, completion_tokens: 77, total_tokens: 1311 });
    expect(plain.choices[0]?.finish_reason).toBe("length");
  });

  it("surfaces a 429 fault as RateLimitError with retry-after, and 529 as a 503 InternalServerError", async () => {
    const marker = uniqueMarker("oa-429");
    await script(marker, [
      {
        content: [{ type: "text", text: "Finally." }],
        faults: [
          { kind: "http", status: 429, retry_after: 7 },
          { kind: "http", status: 529 },
        ],
      },
    ]);
    const limited = await rejection(
      openai.chat.completions.create({ model: "emu-gpt", messages: userMessage(marker) }),
    );
    expect(limited).toBeInstanceOf(RateLimitError);
    const error = limited as RateLimitError;
    expect(error.status).toBe(429);
    expect(error.headers.get("retry-after")).toBe("7");
    expect(error.type).toBe("requests");
    expect(error.code).toBe("rate_limit_exceeded");
    expect(error.requestID).toMatch(/^req_emu_\d+$/);
    expect(error.error).toEqual({
      message: "Rate limit reached for requests per min (RPM). Please try again later.",
      type: "requests",
      param: null,
      code: "rate_limit_exceeded",
    });

    const overloaded = await rejection(
      openai.chat.completions.create({ model: "emu-gpt", messages: userMessage(marker), stream: true }),
    );
    expect(overloaded).toBeInstanceOf(InternalServerError);
    expect((overloaded as InternalServerError).status).toBe(503);
    expect((overloaded as InternalServerError).type).toBe("server_error");

    const third = await openai.chat.completions.create({ model: "emu-gpt", messages: userMessage(marker) });
    expect(third.choices[0]?.message.content).toBe("Finally.");
  });

  it("breaks a stream off with an error the client throws as APIError, after the scripted deltas", async () => {
    const marker = uniqueMarker("oa-stream-error");
    await script(marker, [
      {
        content: [{ type: "text", text: "alpha beta gamma delta" }],
        faults: [{ kind: "stream_error", after_deltas: 2 }],
      },
    ]);
    const stream = await openai.chat.completions.create({
      model: "emu-gpt",
      messages: userMessage(marker),
      stream: true,
    });
    let received = "";
    const error = await rejection(
      (async () => {
        for await (const chunk of stream) received += chunk.choices[0]?.delta.content ?? "";
      })(),
    );
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBeUndefined();
    expect((error as APIError).type).toBe("server_error");
    expect((error as APIError).message).toBe("The server is overloaded or not ready yet.");
    expect(received).toBe("alpha beta ");

    // The fault was consumed: the retry streams the whole reply.
    const retry = await openai.chat.completions
      .stream({ model: "emu-gpt", messages: userMessage(marker) })
      .finalContent();
    expect(retry).toBe("alpha beta gamma delta");
  });

  it("picks the turn by the number of assistant messages and matches the marker in the system prompt", async () => {
    const marker = uniqueMarker("oa-turns");
    await script(marker, [
      { content: [{ type: "tool_use", name: "lookup", input: { q: "x" } }] },
      { content: [{ type: "text", text: "Second turn." }] },
    ]);
    const system = { role: "developer" as const, content: `Agent ${marker}` };
    const first = await openai.chat.completions.create({
      model: "emu-gpt",
      messages: [system, { role: "user", content: "no marker here" }],
    });
    const message = first.choices[0]?.message;
    const call = message?.tool_calls?.[0];
    if (!message || call?.type !== "function") throw new Error("expected a function tool call");
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(message.content).toBeNull();

    const second = await openai.chat.completions.create({
      model: "emu-gpt",
      messages: [
        system,
        { role: "user", content: "no marker here" },
        { role: "assistant", content: null, tool_calls: message.tool_calls ?? [] },
        { role: "tool", tool_call_id: call.id, content: "42" },
      ],
    });
    expect(second.choices[0]?.message.content).toBe("Second turn.");
    expect(second.choices[0]?.finish_reason).toBe("stop");
  });

  it("answers a request without a key with 401 in OpenAI's shape, and records the provider in stats", async () => {
    const marker = uniqueMarker("oa-auth");
    const taskId = `task_${crypto.randomUUID()}`;
    const body = JSON.stringify({ model: "emu-gpt", messages: userMessage(marker) });
    const anonymous = await fetch(`${emulatorUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-outpost-task-id": taskId },
      body,
    });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({
      error: {
        message: expect.stringContaining("You didn't provide an API key."),
        type: "invalid_request_error",
        param: null,
        code: "invalid_api_key",
      },
    });
    // A base URL without /v1 reaches /chat/completions; with the key header removed the client gets the same 401.
    const unversioned = new OpenAI({
      apiKey: "test",
      baseURL: emulatorUrl,
      fetch: (input, init) => fetch(input, init),
      maxRetries: 0,
    });
    const request = { model: "emu-gpt", messages: userMessage(marker) };
    const refused = await rejection(unversioned.chat.completions.create(request, { headers: { authorization: null } }));
    expect(refused).toBeInstanceOf(AuthenticationError);
    expect((refused as AuthenticationError).status).toBe(401);

    await unversioned.chat.completions.create(request, { headers: { "x-outpost-task-id": taskId } });
    expect(await records(taskId)).toEqual([
      expect.objectContaining({ provider: "openai", status: 401, model: "emu-gpt", turn: 0 }),
      expect.objectContaining({ provider: "openai", status: 200, stream: false, script_match: null }),
    ]);
  });
});

function ask(marker: string): string {
  return `${marker} go`;
}

describe("emulator: Gemini generateContent", () => {
  it("streams scripted text chunk by chunk, the last chunk carrying finishReason and usage", async () => {
    const marker = uniqueMarker("gm-text");
    await script(marker, [{ content: [{ type: "text", text: "The quick brown fox." }] }]);
    const stream = await gemini.models.generateContentStream({ model: "gemini-emu", contents: ask(marker) });
    const texts: string[] = [];
    const chunks = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      if (chunk.text) texts.push(chunk.text);
    }
    expect(texts).toEqual(["The ", "quick ", "brown ", "fox."]);
    const last = chunks.at(-1);
    expect(last?.candidates?.[0]?.finishReason).toBe("STOP");
    expect(last?.modelVersion).toBe("gemini-emu");
    expect(last?.responseId).toMatch(/^emu_[0-9a-f]{24}$/);
    expect(last?.usageMetadata?.candidatesTokenCount).toBe(4);
  });

  it("streams a scripted tool call as a functionCall with an id, name and args", async () => {
    const marker = uniqueMarker("gm-tool");
    const input = { city: "Paris", days: [1, 2, 3], note: "ünïcode ✓" };
    await script(marker, [
      {
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", name: "get_weather", input },
        ],
      },
    ]);
    const request = {
      model: "gemini-emu",
      contents: ask(marker),
      config: {
        tools: [{ functionDeclarations: [{ name: "get_weather", parametersJsonSchema: { type: "object" } }] }],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.AUTO } },
      },
    };
    const calls = [];
    let text = "";
    for await (const chunk of await gemini.models.generateContentStream(request)) {
      for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
        if (part.functionCall) calls.push(part.functionCall);
        text += part.text ?? "";
      }
    }
    expect(text).toBe("Checking.");
    expect(calls).toEqual([{ id: expect.stringMatching(/^fc_emu_[0-9a-f]{24}$/), name: "get_weather", args: input }]);

    const again = await gemini.models.generateContent(request);
    expect(again.candidates?.[0]?.content?.parts).toEqual([{ text: "Checking." }, { functionCall: calls[0] }]);
    expect(again.candidates?.[0]?.finishReason).toBe("STOP");
  });

  it("answers a non-streaming call with a full GenerateContentResponse and computed usage", async () => {
    const marker = uniqueMarker("gm-plain");
    await script(marker, [{ content: [{ type: "text", text: "one two three" }] }]);
    const response = await gemini.models.generateContent({
      model: "gemini-emu",
      contents: `${marker} count`,
      config: { systemInstruction: "You are terse.", maxOutputTokens: 64 },
    });
    const sent = geminiBodies.findLast((body) => JSON.stringify(body).includes(marker)) ?? {};
    const promptTokens = Math.ceil(
      JSON.stringify({ system: sent.systemInstruction, messages: sent.contents, tools: sent.tools }).length / 4,
    );
    expect(response.text).toBe("one two three");
    expect(response.candidates).toEqual([
      { content: { parts: [{ text: "one two three" }], role: "model" }, finishReason: "STOP", index: 0 },
    ]);
    expect(response.usageMetadata).toEqual({
      promptTokenCount: promptTokens,
      candidatesTokenCount: 3,
      totalTokenCount: promptTokens + 3,
    });
    expect(response.modelVersion).toBe("gemini-emu");
  });

  it("reports scripted usage and a max_tokens stop as MAX_TOKENS", async () => {
    const marker = uniqueMarker("gm-usage");
    await script(marker, [
      {
        content: [{ type: "text", text: "Truncated answ" }],
        stop_reason: "max_tokens",
        usage: { input_tokens: 1234, output_tokens: 77 },
      },
    ]);
    const plain = await gemini.models.generateContent({ model: "gemini-emu", contents: ask(marker) });
    const chunks = [];
    for await (const chunk of await gemini.models.generateContentStream({ model: "gemini-emu", contents: ask(marker) }))
      chunks.push(chunk);
    for (const response of [plain, chunks.at(-1)]) {
      expect(response?.candidates?.[0]?.finishReason).toBe("MAX_TOKENS");
      expect(response?.usageMetadata).toEqual({
        promptTokenCount: 1234,
        candidatesTokenCount: 77,
        totalTokenCount: 1311,
      });
    }
  });

  it("surfaces a 429 fault as ApiError 429 RESOURCE_EXHAUSTED, with retry-after and RetryInfo", async () => {
    const marker = uniqueMarker("gm-429");
    await script(marker, [
      {
        content: [{ type: "text", text: "Finally." }],
        faults: [
          { kind: "http", status: 429, retry_after: 7 },
          { kind: "http", status: 429, retry_after: 3 },
          { kind: "http", status: 529 },
        ],
      },
    ]);
    const limited = await rejection(gemini.models.generateContent({ model: "gemini-emu", contents: ask(marker) }));
    expect(limited).toBeInstanceOf(ApiError);
    expect((limited as ApiError).status).toBe(429);
    expect(JSON.parse((limited as ApiError).message)).toEqual({
      error: {
        code: 429,
        message: "Resource has been exhausted (e.g. check quota).",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "7s" }],
      },
    });

    const raw = await fetch(`${emulatorUrl}/v1beta/models/gemini-emu:generateContent?key=any`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: ask(marker) }] }] }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get("retry-after")).toBe("3");

    const overloaded = await rejection(
      gemini.models.generateContentStream({ model: "gemini-emu", contents: ask(marker) }),
    );
    expect(overloaded).toBeInstanceOf(ApiError);
    expect((overloaded as ApiError).status).toBe(503);
    expect((overloaded as ApiError).message).toContain('"status":"UNAVAILABLE"');

    const fourth = await gemini.models.generateContent({ model: "gemini-emu", contents: ask(marker) });
    expect(fourth.text).toBe("Finally.");
  });

  it("breaks a stream off with an error chunk the client throws as ApiError, after the scripted deltas", async () => {
    const marker = uniqueMarker("gm-stream-error");
    await script(marker, [
      {
        content: [{ type: "text", text: "alpha beta gamma delta" }],
        faults: [{ kind: "stream_error", after_deltas: 2 }],
      },
    ]);
    const stream = await gemini.models.generateContentStream({ model: "gemini-emu", contents: ask(marker) });
    let received = "";
    const error = await rejection(
      (async () => {
        for await (const chunk of stream) received += chunk.text ?? "";
      })(),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    expect((error as ApiError).message).toContain("The model is overloaded. Please try again later.");
    expect(received).toBe("alpha beta ");

    let retry = "";
    for await (const chunk of await gemini.models.generateContentStream({ model: "gemini-emu", contents: ask(marker) }))
      retry += chunk.text ?? "";
    expect(retry).toBe("alpha beta gamma delta");
  });

  it("picks the turn by the number of model contents and matches the marker in the system instruction", async () => {
    const marker = uniqueMarker("gm-turns");
    await script(marker, [
      { content: [{ type: "tool_use", name: "lookup", input: { q: "x" } }] },
      { content: [{ type: "text", text: "Second turn." }] },
    ]);
    const config = { systemInstruction: `Agent ${marker}` };
    const first = await gemini.models.generateContent({ model: "gemini-emu", contents: "no marker here", config });
    const call = first.functionCalls?.[0];
    if (!call) throw new Error("expected a function call");
    const second = await gemini.models.generateContent({
      model: "gemini-emu",
      config,
      contents: [
        { role: "user", parts: [{ text: "no marker here" }] },
        { role: "model", parts: [{ functionCall: call }] },
        { role: "user", parts: [{ functionResponse: { id: call.id ?? "", name: "lookup", response: { value: 42 } } }] },
      ],
    });
    expect(second.text).toBe("Second turn.");
  });

  it("answers a request without a key with 401 in Google's shape, and records the provider in stats", async () => {
    const marker = uniqueMarker("gm-auth");
    const taskId = `task_${crypto.randomUUID()}`;
    const anonymous = await fetch(`${emulatorUrl}/v1beta/models/gemini-emu:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-outpost-task-id": taskId },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: ask(marker) }] }] }),
    });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({
      error: { code: 401, message: expect.stringContaining("unregistered callers"), status: "UNAUTHENTICATED" },
    });

    await gemini.models.generateContent({
      model: "gemini-emu",
      contents: ask(marker),
      config: { httpOptions: { headers: { "x-outpost-task-id": taskId } } },
    });
    expect(await records(taskId)).toEqual([
      expect.objectContaining({ provider: "gemini", status: 401, model: "gemini-emu", stream: false }),
      expect.objectContaining({ provider: "gemini", status: 200, model: "gemini-emu", turn: 0, script_match: null }),
    ]);
  });
});

describe("emulator: one script, fault and latency machinery for every provider", () => {
  it("paces both streams by the script's latency and records each in stats with its provider", async () => {
    const marker = uniqueMarker("both-latency");
    const taskId = `task_${crypto.randomUUID()}`;
    await script(marker, [{ content: [{ type: "text", text: "one two three four" }] }], {
      ttft_ms: 100,
      token_delay_ms: 20,
    });
    const headers = { "x-outpost-task-id": taskId };
    let startedAt = Date.now();
    const content = await openai.chat.completions
      .stream({ model: "emu-gpt", messages: userMessage(marker) }, { headers })
      .finalContent();
    expect(content).toBe("one two three four");
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(160);

    startedAt = Date.now();
    let text = "";
    const stream = await gemini.models.generateContentStream({
      model: "gemini-emu",
      contents: ask(marker),
      config: { httpOptions: { headers } },
    });
    for await (const chunk of stream) text += chunk.text ?? "";
    expect(text).toBe("one two three four");
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(160);

    const recorded = await records(taskId);
    expect(recorded).toEqual([
      expect.objectContaining({ provider: "openai", stream: true, status: 200, turn: 0, script_match: marker }),
      expect.objectContaining({ provider: "gemini", stream: true, status: 200, turn: 0, script_match: marker }),
    ]);
    // The ttft once, then the token delay between consecutive deltas: 100 + 3 × 20.
    for (const record of recorded) expect(record.service_ms).toBeGreaterThanOrEqual(160);
  });

  it("makes both clients throw on a malformed stream frame", async () => {
    const marker = uniqueMarker("both-malformed");
    await script(marker, [
      {
        content: [{ type: "text", text: "never parsed whole" }],
        faults: [
          { kind: "malformed", after_deltas: 1 },
          { kind: "malformed", after_deltas: 1 },
        ],
      },
    ]);
    const quiet = new OpenAI({
      apiKey: "test",
      baseURL: `${emulatorUrl}/v1`,
      fetch: (input, init) => fetch(input, init),
      maxRetries: 0,
      logLevel: "off",
    });
    let received = "";
    const openaiError = await rejection(
      (async () => {
        const stream = await quiet.chat.completions.create({
          model: "emu-gpt",
          messages: userMessage(marker),
          stream: true,
        });
        for await (const chunk of stream) received += chunk.choices[0]?.delta.content ?? "";
      })(),
    );
    expect(openaiError).toBeInstanceOf(SyntaxError);
    expect(received).toBe("never ");

    received = "";
    const geminiError = await rejection(
      (async () => {
        const stream = await gemini.models.generateContentStream({ model: "gemini-emu", contents: ask(marker) });
        for await (const chunk of stream) received += chunk.text ?? "";
      })(),
    );
    expect(geminiError).toBeInstanceOf(Error);
    expect(geminiError).not.toBeInstanceOf(ApiError);
    expect(received).toBe("never ");
  });

  it("calls the first offered tool when unscripted, with an input built from its schema", async () => {
    const prompt = `Find pages about durable objects ${crypto.randomUUID()}`;
    const schema = {
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "integer", minimum: 3 } },
      required: ["query", "limit"],
    };
    const completion = await openai.chat.completions.create({
      model: "emu-gpt",
      messages: [{ role: "user", content: prompt }],
      tools: [{ type: "function", function: { name: "search_docs", parameters: schema } }],
    });
    const call = completion.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== "function") throw new Error("expected a function tool call");
    expect(completion.choices[0]?.message.content).toBe("I'll use the search_docs tool.");
    expect(JSON.parse(call.function.arguments)).toEqual({ query: prompt, limit: 3 });

    // Gemini's OpenAPI-style schema spells types in upper case.
    const response = await gemini.models.generateContent({
      model: "gemini-emu",
      contents: prompt,
      config: {
        tools: [
          {
            functionDeclarations: [
              {
                name: "search_docs",
                parameters: {
                  type: Type.OBJECT,
                  properties: { query: { type: Type.STRING }, limit: { type: Type.INTEGER, minimum: 3 } },
                  required: ["query", "limit"],
                },
              },
            ],
          },
        ],
      },
    });
    const parts = response.candidates?.[0]?.content?.parts ?? [];
    expect(parts[0]).toEqual({ text: "I'll use the search_docs tool." });
    expect(parts[1]?.functionCall).toMatchObject({ name: "search_docs", args: { query: prompt, limit: 3 } });
  });
});
