// A script's outage and context window (emulator/conditions.ts), refused on each wire as the provider refuses (status,
// body, headers), raw and through the official clients, and the stats that count refusals; the rate limit and the
// conditions on an injected clock are conditions.test.ts. Every test owns a unique marker (one emulator for all).
import { BadRequestError, InternalServerError, OverloadedError } from "@anthropic-ai/sdk";
import { BadRequestError as OpenAIBadRequestError, InternalServerError as OpenAIInternalServerError } from "openai";
import { describe, expect, it } from "vitest";

import {
  anthropic,
  openai,
  rejection,
  script,
  send,
  statsOf,
  uniqueMarker,
  untilAnswered,
  WIRES,
  type Wire,
} from "./conditions-support.ts";

describe("service conditions: outage", () => {
  const overloaded: Record<Wire, { status: number; body: unknown }> = {
    anthropic: { status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } },
    openai: {
      status: 503,
      body: {
        error: { message: "The server is overloaded or not ready yet.", type: "server_error", param: null, code: null },
      },
    },
    gemini: {
      status: 503,
      body: {
        error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" },
      },
    },
  };

  it.each(WIRES)("refuses every request for duration_ms from the first, then answers again (%s)", async (wire) => {
    const marker = uniqueMarker(`outage-${wire}`);
    await script(marker, { outage: { duration_ms: 300 } });
    const before = Date.now();
    const first = await send(wire, marker);
    expect({ status: first.status, body: await first.json() }).toEqual(overloaded[wire]);
    expect(first.headers.get("retry-after")).toBeNull();
    const second = await send(wire, marker);
    // Still inside the window unless this test was starved for 300 ms; then it was answered, which is also right.
    if (Date.now() - before < 300) expect(second.status).toBe(overloaded[wire].status);
    await second.body?.cancel();
    const recovered = await untilAnswered(wire, marker, 5_000);
    expect(recovered.status).toBe(200);
    // The window is the emulator's wall-clock time: no answer comes before it ends.
    expect(Date.now() - before).toBeGreaterThanOrEqual(300);
  });

  it("starts after starts_after_requests answered requests, with the status and retry-after asked for", async () => {
    const marker = uniqueMarker("outage-after");
    await script(marker, {
      outage: { duration_ms: 60_000, status: 503, retry_after_seconds: 3, starts_after_requests: 2 },
    });
    expect((await send("anthropic", marker)).status).toBe(200);
    expect((await send("openai", marker)).status).toBe(200);
    const anthropicRefusal = await send("anthropic", marker);
    expect(anthropicRefusal.status).toBe(503);
    expect(anthropicRefusal.headers.get("retry-after")).toBe("3");
    expect(await anthropicRefusal.json()).toEqual({
      type: "error",
      error: { type: "api_error", message: "Internal server error" },
    });
    const openaiRefusal = await send("openai", marker);
    expect([openaiRefusal.status, openaiRefusal.headers.get("retry-after")]).toEqual([503, "3"]);
    const geminiRefusal = await send("gemini", marker);
    expect(geminiRefusal.headers.get("retry-after")).toBeNull();
    expect(await geminiRefusal.json()).toEqual({
      error: {
        code: 503,
        message: "The model is overloaded. Please try again later.",
        status: "UNAVAILABLE",
        details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "3s" }],
      },
    });
  });

  it("leaves the turn's attempts alone: its scripted fault still comes first once the outage is over", async () => {
    const marker = uniqueMarker("outage-turn");
    const turns = [{ content: [{ type: "text", text: "after" }], faults: [{ kind: "http", status: 500 }] }];
    await script(marker, { outage: { duration_ms: 300 } }, turns);
    const params = { model: "emu-model", max_tokens: 64, messages: [{ role: "user" as const, content: marker }] };
    const refused = await rejection(anthropic.messages.create(params));
    expect(refused).toBeInstanceOf(OverloadedError);
    expect((refused as OverloadedError).status).toBe(529);
    let fault: unknown;
    for (let i = 0; i < 200; i++) {
      fault = await rejection(anthropic.messages.create(params));
      if (!(fault instanceof OverloadedError)) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(fault).toBeInstanceOf(InternalServerError);
    expect((fault as InternalServerError).status).toBe(500);
    const reply = await anthropic.messages.create(params);
    expect(reply.content).toEqual([{ type: "text", text: "after" }]);
    const { requests } = await statsOf(marker);
    const refusals = requests.filter((record) => record.refusal !== null);
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    for (const record of refusals) {
      expect(record).toMatchObject({ status: 529, turn: 0, fault: null, refusal: "overloaded", usage: null });
    }
    expect(requests.filter((record) => record.refusal === null).map((record) => [record.status, record.fault])).toEqual(
      [
        [500, "http"],
        [200, null],
      ],
    );
  });

  it("is thrown by the OpenAI SDK as InternalServerError 503", async () => {
    const marker = uniqueMarker("outage-openai-sdk");
    await script(marker, { outage: { duration_ms: 60_000 } });
    const error = await rejection(
      openai.chat.completions.create({ model: "emu-model", messages: [{ role: "user", content: marker }] }),
    );
    expect(error).toBeInstanceOf(OpenAIInternalServerError);
    expect((error as OpenAIInternalServerError).status).toBe(503);
  });
});

describe("service conditions: context window", () => {
  it.each([
    [
      "anthropic",
      {
        type: "error",
        error: { type: "invalid_request_error", message: "prompt is too long: 20512 tokens > 16000 maximum" },
      },
    ],
    [
      "openai",
      {
        error: {
          message:
            "This model's maximum context length is 16000 tokens. However, your messages resulted in 20512 tokens. Please reduce the length of the messages.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded",
        },
      },
    ],
    [
      "gemini",
      {
        error: {
          code: 400,
          message: "The input token count (20512) exceeds the maximum number of tokens allowed (16000).",
          status: "INVALID_ARGUMENT",
        },
      },
    ],
  ] as const)("refuses a prompt longer than the window with a 400 (%s)", async (wire, body) => {
    const marker = uniqueMarker(`window-${wire}`);
    const turns = [{ content: [{ type: "text", text: "ok" }], usage: { input_tokens: 20_512 } }];
    await script(marker, { context_window: 16_000 }, turns);
    const response = await send(wire, marker, 100);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual(body);
  });

  it("refuses input plus max_tokens past the window on Anthropic and OpenAI, not on Gemini", async () => {
    const marker = uniqueMarker("window-max-tokens");
    const turns = [{ content: [{ type: "text", text: "ok" }], usage: { input_tokens: 15_000 } }];
    await script(marker, { context_window: 16_000 }, turns);
    const anthropicRefusal = await send("anthropic", marker, 4_096);
    expect(anthropicRefusal.status).toBe(400);
    expect(await anthropicRefusal.json()).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message:
          "input length and `max_tokens` exceed context limit: 15000 + 4096 > 16000, decrease input length or `max_tokens` and try again",
      },
    });
    const openaiRefusal = await send("openai", marker, 4_096);
    expect(await openaiRefusal.json()).toEqual({
      error: {
        message:
          "This model's maximum context length is 16000 tokens. However, you requested 19096 tokens (15000 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    });
    expect((await send("gemini", marker, 4_096)).status).toBe(200);
    expect((await send("anthropic", marker, 1_000)).status).toBe(200);
  });

  it("counts the prompt as its usage is billed, prompt caching included", async () => {
    const marker = uniqueMarker("window-billed");
    const window = 5_000;
    await script(marker, { context_window: window, prompt_cache: true });
    const system = [
      {
        type: "text" as const,
        text: `${marker} ${"lorem ipsum ".repeat(600)}`,
        cache_control: { type: "ephemeral" as const },
      },
    ];
    const params = {
      model: "claude-sonnet-4-6",
      max_tokens: 10,
      system,
      messages: [{ role: "user" as const, content: "go" }],
    };
    const { usage } = await anthropic.messages.create(params);
    const prompt = usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
    expect(usage.cache_creation_input_tokens).toBeGreaterThan(0);
    const error = await rejection(anthropic.messages.create({ ...params, max_tokens: window - prompt + 1 }));
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).apiMessage).toBe(
      `input length and \`max_tokens\` exceed context limit: ${prompt} + ${window - prompt + 1} > ${window}, decrease input length or \`max_tokens\` and try again`,
    );
    // The refusal billed nothing: the next request reads the cache the first one wrote, as it would have anyway.
    const again = await anthropic.messages.create({ ...params, max_tokens: window - prompt });
    expect(again.usage.cache_read_input_tokens).toBe(usage.cache_creation_input_tokens);
  });

  it("counts the emulator's own estimate when billing is off, as usage reports it", async () => {
    const marker = uniqueMarker("window-estimate");
    await script(marker, { context_window: 20_000 });
    const params = {
      model: "emu-model",
      max_tokens: 10,
      messages: [{ role: "user" as const, content: `${marker} go` }],
    };
    const { usage } = await anthropic.messages.create(params);
    const long = { ...params, messages: [{ role: "user" as const, content: `${marker} ${"word ".repeat(20_000)}` }] };
    const counted = (await anthropic.messages.countTokens({ model: long.model, messages: long.messages })).input_tokens;
    const error = await rejection(anthropic.messages.create(long));
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).apiMessage).toBe(`prompt is too long: ${counted} tokens > 20000 maximum`);
    expect(usage.input_tokens).toBeLessThan(100);
  });

  it("is thrown by the OpenAI SDK as BadRequestError with code context_length_exceeded", async () => {
    const marker = uniqueMarker("window-openai-sdk");
    await script(marker, { context_window: 16_000 }, [
      { content: [{ type: "text", text: "ok" }], usage: { input_tokens: 20_512 } },
    ]);
    const error = await rejection(
      openai.chat.completions.create({ model: "emu-model", messages: [{ role: "user", content: marker }] }),
    );
    expect(error).toBeInstanceOf(OpenAIBadRequestError);
    expect((error as OpenAIBadRequestError).code).toBe("context_length_exceeded");
    expect((error as OpenAIBadRequestError).param).toBe("messages");
  });
});

describe("service conditions: stats", () => {
  it("counts each script's refusals by kind, listing a script with conditions even before it is refused", async () => {
    const marker = uniqueMarker("stats");
    const quiet = uniqueMarker("stats-quiet");
    await script(marker, { rate_limit: { requests_per_minute: 1 } });
    await script(quiet, { context_window: 1_000_000 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send(i === 1 ? "openai" : "anthropic", marker)).status);
    expect(statuses).toEqual([200, 429, 429]);
    const { requests, refusals } = await statsOf(marker);
    expect(refusals).toEqual({ [marker]: { rate_limited: 2, overloaded: 0, context_exceeded: 0 } });
    expect(requests.map((record) => [record.status, record.refusal])).toEqual([
      [200, null],
      [429, "rate_limited"],
      [429, "rate_limited"],
    ]);
    expect((await statsOf(quiet)).refusals).toEqual({
      [quiet]: { rate_limited: 0, overloaded: 0, context_exceeded: 0 },
    });
  });
});
