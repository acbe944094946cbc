// A script's service conditions (emulator/conditions.ts): a rate limit per minute, an outage of a set length and a
// context window. This file: the clock-driven parts (the bucket's refill, the outage window) on an injected clock,
// the options' checks, and the rate limit as each wire refuses it (status, body, headers), raw and through the
// official clients from inside workerd; conditions-refusals.test.ts has the outage, the context window and the stats.
// Every test owns a unique marker because all test files share one emulator.
import { RateLimitError } from "@anthropic-ai/sdk";
import { ApiError } from "@google/genai";
import { RateLimitError as OpenAIRateLimitError } from "openai";
import { describe, expect, it } from "vitest";
import { openaiDuration, parseConditions, refusalSpec, ServiceConditions } from "../../emulator/conditions.ts";

import {
  ANTHROPIC_RATE_LIMIT,
  anthropic,
  emulatorUrl,
  gemini,
  openai,
  RFC3339,
  register,
  rejection,
  script,
  send,
  uniqueMarker,
  untilAnswered,
  WIRES,
  type Wire,
} from "./conditions-support.ts";

describe("service conditions on an injected clock", () => {
  const script = { id: "script_test", rate_limit: { requests_per_minute: 3 } };
  const request = { provider: "anthropic" as const, promptTokens: () => 10, maxTokens: 10 };

  it("takes a request from a full bucket each time and refuses the one that finds it empty", () => {
    const conditions = new ServiceConditions(() => 1_000_000);
    const admitted = [1, 2, 3].map(() => conditions.admit(script, request));
    expect(admitted.map((admission) => [admission.refusal, admission.bucket?.remaining])).toEqual([
      [null, 2],
      [null, 1],
      [null, 0],
    ]);
    // Full again after 3 requests at 3 a minute: 60 s.
    expect(admitted[2]?.bucket).toEqual({ limit: 3, remaining: 0, resetMs: 60_000, resetAt: 1_060_000 });
    expect(conditions.admit(script, request).refusal).toEqual({ kind: "rate_limited", limit: 3, retryAfterMs: 20_000 });
  });

  it("refills continuously, at requests_per_minute / 60 a second", () => {
    let now = 0;
    const conditions = new ServiceConditions(() => now);
    for (let i = 0; i < 3; i++) conditions.admit(script, request);
    now = 19_999;
    expect(conditions.admit(script, request).refusal).toEqual({ kind: "rate_limited", limit: 3, retryAfterMs: 1 });
    now = 20_000;
    expect(conditions.admit(script, request)).toMatchObject({ refusal: null, bucket: { remaining: 0 } });
    now = 20_000 + 60_000;
    expect(conditions.admit(script, request)).toMatchObject({
      refusal: null,
      bucket: { remaining: 2, resetMs: 20_000 },
    });
  });

  it("refuses every request of an outage's window, from the first after starts_after_requests, and none after", () => {
    let now = 5_000;
    const conditions = new ServiceConditions(() => now);
    const outage = {
      id: "script_outage",
      outage: { duration_ms: 300, starts_after_requests: 1, retry_after_seconds: 2 },
    };
    expect(conditions.admit(outage, request).refusal).toBeNull();
    now = 6_000;
    const refused = { kind: "overloaded", status: 529, retryAfterSeconds: 2 };
    expect(conditions.admit(outage, request).refusal).toEqual(refused);
    now = 6_299;
    expect(conditions.admit(outage, request).refusal).toEqual(refused);
    now = 6_300;
    expect(conditions.admit(outage, request).refusal).toBeNull();
    expect(conditions.admit(outage, request).refusal).toBeNull();
  });

  it("counts the input and the output cap against the window, but only the input on Gemini", () => {
    const conditions = new ServiceConditions(() => 0);
    const window = { id: "script_window", context_window: 16_000 };
    const ask = (provider: "anthropic" | "gemini", input: number, maxTokens: number | null) =>
      conditions.admit(window, { provider, promptTokens: () => input, maxTokens }).refusal;
    expect(ask("anthropic", 20_512, 1)).toEqual({
      kind: "context_exceeded",
      inputTokens: 20_512,
      maxTokens: 1,
      window: 16_000,
    });
    expect(ask("anthropic", 15_000, 4_096)).toEqual({
      kind: "context_exceeded",
      inputTokens: 15_000,
      maxTokens: 4_096,
      window: 16_000,
    });
    expect(ask("anthropic", 11_904, 4_096)).toBeNull();
    expect(ask("anthropic", 16_000, null)).toBeNull();
    expect(ask("gemini", 15_000, 4_096)).toBeNull();
    expect(ask("gemini", 16_001, 1)).toMatchObject({ kind: "context_exceeded", inputTokens: 16_001 });
  });

  it("writes OpenAI's reset durations as Go does", () => {
    expect([250, 1_000, 8_640, 60_000, 66_000, 3_723_000].map(openaiDuration)).toEqual([
      "250ms",
      "1s",
      "8.64s",
      "1m0s",
      "1m6s",
      "1h2m3s",
    ]);
  });

  it("rounds a rate limit's retry-after up to whole seconds, at least one", () => {
    const refusal = { kind: "rate_limited" as const, limit: 60, retryAfterMs: 10 };
    expect(refusalSpec("anthropic", refusal).retryAfter).toBe(1);
    expect(refusalSpec("openai", { ...refusal, retryAfterMs: 7_001 }).retryAfter).toBe(8);
    expect(refusalSpec("gemini", { ...refusal, retryAfterMs: 7_000 })).toEqual({ status: 429, retryDelay: 7 });
  });

  it("leaves a script without conditions alone", () => {
    const conditions = new ServiceConditions(() => 0);
    expect(conditions.admit({ id: "plain" }, request)).toEqual({ bucket: null, refusal: null });
    expect(parseConditions({ match: "x", turns: [] })).toEqual({ ok: true, value: {} });
  });
});

describe("service conditions: registration", () => {
  it.each([
    [{ rate_limit: { requests_per_minute: 0 } }, "script.rate_limit.requests_per_minute: must be a positive integer"],
    [{ rate_limit: { rpm: 5 } }, "script.rate_limit.rpm: unknown field (known: requests_per_minute)"],
    [{ outage: { status: 529 } }, "script.outage.duration_ms: must be a positive number"],
    [{ outage: { duration_ms: 100, status: 504 } }, "script.outage.status: must be one of 529, 500, 502, 503"],
    [
      { outage: { duration_ms: 100, retry_after_seconds: 1.5 } },
      "script.outage.retry_after_seconds: must be a non-negative integer",
    ],
    [
      { outage: { duration_ms: 100, starts_after_requests: -1 } },
      "script.outage.starts_after_requests: must be a non-negative integer",
    ],
    [{ context_window: "16k" }, "script.context_window: must be a positive integer (tokens)"],
  ])("refuses %j with a 400 naming the field", async (conditions, message) => {
    const response = await register({ match: uniqueMarker("bad"), turns: [], ...conditions });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: "error", error: { type: "invalid_request_error", message } });
  });

  it("lists the conditions with the script", async () => {
    const marker = uniqueMarker("listed");
    const conditions = {
      rate_limit: { requests_per_minute: 5 },
      outage: { duration_ms: 300, status: 503, retry_after_seconds: 2, starts_after_requests: 1 },
      context_window: 16_000,
    };
    await script(marker, conditions);
    const { scripts } = (await (await fetch(`${emulatorUrl}/_emulator/scripts`)).json()) as {
      scripts: Record<string, unknown>[];
    };
    expect(scripts.find((listed) => listed.match === marker)).toMatchObject(conditions);
  });
});

describe("service conditions: rate limit", () => {
  const rateLimited: Record<Wire, (response: Response) => Promise<void>> = {
    async anthropic(response) {
      expect(await response.json()).toEqual({
        type: "error",
        error: { type: "rate_limit_error", message: ANTHROPIC_RATE_LIMIT },
      });
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(29);
      expect(Number(response.headers.get("retry-after"))).toBeLessThanOrEqual(30);
      expect(response.headers.get("anthropic-ratelimit-requests-limit")).toBe("2");
      expect(response.headers.get("anthropic-ratelimit-requests-remaining")).toBe("0");
      expect(response.headers.get("anthropic-ratelimit-requests-reset")).toMatch(RFC3339);
    },
    async openai(response) {
      expect(await response.json()).toEqual({
        error: {
          message: expect.stringMatching(
            /^Rate limit reached for requests per min \(RPM\): Limit 2, Used 2, Requested 1\. Please try again in (29(\.\d+)?s|30s)\. Visit https:\/\/platform\.openai\.com\/account\/rate-limits to learn more\.$/,
          ),
          type: "requests",
          param: null,
          code: "rate_limit_exceeded",
        },
      });
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(29);
      expect(response.headers.get("x-ratelimit-limit-requests")).toBe("2");
      expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(response.headers.get("x-ratelimit-reset-requests")).toMatch(/^(59(\.\d+)?s|1m0s)$/);
    },
    async gemini(response) {
      expect(await response.json()).toEqual({
        error: {
          code: 429,
          message: "Resource has been exhausted (e.g. check quota).",
          status: "RESOURCE_EXHAUSTED",
          details: [
            { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: expect.stringMatching(/^(29|30)s$/) },
          ],
        },
      });
      expect(response.headers.get("retry-after")).toBeNull();
    },
  };

  it.each(WIRES)("answers the request that finds the bucket empty with the provider's 429 (%s)", async (wire) => {
    const marker = uniqueMarker(`rpm-${wire}`);
    await script(marker, { rate_limit: { requests_per_minute: 2 } });
    const first = await send(wire, marker);
    const second = await send(wire, marker);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await send(wire, marker);
    expect(third.status).toBe(429);
    await rateLimited[wire](third);
  });

  it("sends Anthropic's rate-limit headers on the script's answered requests", async () => {
    const marker = uniqueMarker("rpm-headers-anthropic");
    await script(marker, { rate_limit: { requests_per_minute: 2 } });
    const before = Date.now();
    const [first, second] = [await send("anthropic", marker), await send("anthropic", marker)];
    const remaining = [first, second].map((response) => response.headers.get("anthropic-ratelimit-requests-remaining"));
    expect(remaining).toEqual(["1", "0"]);
    expect(first.headers.get("anthropic-ratelimit-requests-limit")).toBe("2");
    // Full again 30 s after the first request (one of two taken, at 2 a minute), rounded up to the second.
    const reset = first.headers.get("anthropic-ratelimit-requests-reset") ?? "";
    expect(reset).toMatch(RFC3339);
    expect(Date.parse(reset)).toBeGreaterThanOrEqual(before + 30_000 - 1_000);
    expect(Date.parse(reset)).toBeLessThanOrEqual(Date.now() + 31_000);
    expect(first.headers.get("retry-after")).toBeNull();
  });

  it("sends OpenAI's rate-limit headers on the script's answered requests", async () => {
    const marker = uniqueMarker("rpm-headers-openai");
    await script(marker, { rate_limit: { requests_per_minute: 2 } });
    const [first, second] = [await send("openai", marker), await send("openai", marker)];
    const remaining = [first, second].map((response) => response.headers.get("x-ratelimit-remaining-requests"));
    expect(remaining).toEqual(["1", "0"]);
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(first.headers.get("x-ratelimit-reset-requests")).toBe("30s");
    expect(first.headers.get("retry-after")).toBeNull();
  });

  it("sends no rate-limit headers on Gemini, as Google sends none", async () => {
    const marker = uniqueMarker("rpm-headers-gemini");
    await script(marker, { rate_limit: { requests_per_minute: 2 } });
    const response = await send("gemini", marker);
    expect(response.status).toBe(200);
    expect([...response.headers.keys()].filter((name) => /ratelimit|retry-after/.test(name))).toEqual([]);
  });

  it("answers again once the bucket has refilled a request's worth", async () => {
    const marker = uniqueMarker("rpm-refill");
    // 60 a minute: a request's worth comes back every second.
    await script(marker, { rate_limit: { requests_per_minute: 60 } });
    let refused: Response | null = null;
    for (let i = 0; i < 120 && !refused; i++) {
      const response = await send("anthropic", marker);
      if (response.status === 429) refused = response;
      else await response.body?.cancel();
    }
    expect(refused?.headers.get("retry-after")).toBe("1");
    const refusedAt = Date.now();
    const again = await untilAnswered("anthropic", marker, 3_000);
    expect(again.status).toBe(200);
    expect(Date.now() - refusedAt).toBeLessThanOrEqual(3_000);
  });

  it("is thrown by the Anthropic SDK as RateLimitError with retry-after, created or streamed", async () => {
    const marker = uniqueMarker("rpm-sdk");
    await script(marker, { rate_limit: { requests_per_minute: 1 } });
    const params = { model: "emu-model", max_tokens: 64, messages: [{ role: "user" as const, content: marker }] };
    await anthropic.messages.create(params);
    const created = await rejection(anthropic.messages.create(params));
    expect(created).toBeInstanceOf(RateLimitError);
    expect((created as RateLimitError).headers.get("retry-after")).toMatch(/^(59|60)$/);
    expect((created as RateLimitError).type).toBe("rate_limit_error");
    const streamed = await rejection(anthropic.messages.stream(params).finalMessage());
    expect(streamed).toBeInstanceOf(RateLimitError);
  });

  it("is thrown by the OpenAI SDK as RateLimitError with code rate_limit_exceeded", async () => {
    const marker = uniqueMarker("rpm-openai-sdk");
    await script(marker, { rate_limit: { requests_per_minute: 1 } });
    const params = { model: "emu-model", messages: [{ role: "user" as const, content: marker }] };
    await openai.chat.completions.create(params);
    const error = await rejection(openai.chat.completions.create(params));
    expect(error).toBeInstanceOf(OpenAIRateLimitError);
    expect((error as OpenAIRateLimitError).code).toBe("rate_limit_exceeded");
    expect((error as OpenAIRateLimitError).headers.get("retry-after")).toMatch(/^(59|60)$/);
  });

  it("is thrown by the Gemini client as ApiError 429", async () => {
    const marker = uniqueMarker("rpm-gemini-sdk");
    await script(marker, { rate_limit: { requests_per_minute: 1 } });
    const params = { model: "gemini-emu", contents: `${marker} go` };
    await gemini.models.generateContent(params);
    const error = await rejection(gemini.models.generateContent(params));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(429);
    expect((error as ApiError).message).toContain('"status":"RESOURCE_EXHAUSTED"');
  });
});
