// The runtime's decision to try a failed model call again (src/runtime/provider-retry.ts) and what it honours of the
// provider's answer (src/llm/retry-hint.ts): pure functions, checked against the numbers docs/provider-waits.md gives.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.ts";
import { limitResetSecondsOf, parseDurationMs, retryAfterSecondsOf } from "../../src/llm/retry-hint.ts";
import { BACKOFF_CAP_MS, DEFAULT_PROVIDER_WAIT_MS, nextTry, providerWaitMs } from "../../src/runtime/provider-retry.ts";

const NOW = Date.parse("2026-12-07T12:00:00.000Z");
const base = { sinceMs: NOW, nowMs: NOW, hintMs: null, horizonMs: DEFAULT_PROVIDER_WAIT_MS };

describe("when a failed model call is tried again", () => {
  it("waits 0.5 s, then 1 s, inside the run", () => {
    expect(nextTry({ ...base, failures: 1, random: () => 0.99 })).toEqual({ kind: "in_run", delayMs: 500 });
    expect(nextTry({ ...base, failures: 2, random: () => 0.99 })).toEqual({ kind: "in_run", delayMs: 1000 });
  });

  it("then parks the step with full jitter over a window that doubles per failure, up to 5 minutes", () => {
    const at = (failures: number, random: number) => nextTry({ ...base, failures, random: () => random });
    expect(at(3, 0.5)).toEqual({ kind: "park", untilMs: NOW + 2000 });
    expect(at(4, 0.5)).toEqual({ kind: "park", untilMs: NOW + 4000 });
    expect(at(5, 0.75)).toEqual({ kind: "park", untilMs: NOW + 12_000 });
    expect(at(30, 0.999_999)).toEqual({ kind: "park", untilMs: NOW + BACKOFF_CAP_MS - 1 });
    // Full jitter reaches down to nothing: a short draw is waited inside the run.
    expect(at(3, 0.1)).toEqual({ kind: "in_run", delayMs: 400 });
  });

  it("never tries sooner than the provider's retry-after, and spreads what comes after it", () => {
    // A hint past the in-run pauses parks the call at once, from the first failure.
    expect(nextTry({ ...base, failures: 1, hintMs: 30_000, random: () => 0 })).toEqual({
      kind: "park",
      untilMs: NOW + 30_000,
    });
    expect(nextTry({ ...base, failures: 1, hintMs: 30_000, random: () => 0.5 })).toEqual({
      kind: "park",
      untilMs: NOW + 31_000,
    });
    // A short hint is honoured inside the run.
    expect(nextTry({ ...base, failures: 1, hintMs: 800, random: () => 0 })).toEqual({ kind: "in_run", delayMs: 800 });
  });

  it("spreads a rate limit's retries over one and a half times the time its room takes to come back", () => {
    // retry-after 2 s, the limit full again in 60 s: somewhere in [2 s, 2 s + 87 s).
    const limited = { ...base, failures: 1, hintMs: 2000, refillMs: 60_000 };
    expect(nextTry({ ...limited, random: () => 0 })).toEqual({ kind: "park", untilMs: NOW + 2000 });
    expect(nextTry({ ...limited, random: () => 0.5 })).toEqual({ kind: "park", untilMs: NOW + 2000 + 43_500 });
    // A backoff already wider than that window keeps its own.
    expect(nextTry({ ...limited, failures: 9, random: () => 0.5 })).toEqual({ kind: "park", untilMs: NOW + 130_000 });
  });

  it("stops at the horizon: the last try is at it, none after it", () => {
    const horizon = { ...base, horizonMs: 60_000, sinceMs: NOW - 59_000 };
    expect(nextTry({ ...horizon, failures: 6, random: () => 0.9 })).toEqual({ kind: "in_run", delayMs: 1000 });
    expect(nextTry({ ...horizon, failures: 6, nowMs: NOW + 1000, random: () => 0 })).toEqual({ kind: "fail" });
    expect(nextTry({ ...base, failures: 1, horizonMs: 10_000, hintMs: 60_000, random: () => 0 })).toEqual({
      kind: "park",
      untilMs: NOW + 10_000,
    });
  });
});

describe("what a provider's answer says about when to try again", () => {
  const headers = (entries: Record<string, string>) => new Headers(entries);

  it("reads retry-after in seconds, as an HTTP date, and OpenAI's retry-after-ms", () => {
    expect(retryAfterSecondsOf(headers({ "retry-after": "7" }), 529, NOW)).toBe(7);
    expect(retryAfterSecondsOf(headers({ "retry-after": "Mon, 07 Dec 2026 12:00:20 GMT" }), 503, NOW)).toBe(20);
    expect(retryAfterSecondsOf(headers({ "retry-after-ms": "1500", "retry-after": "9" }), 429, NOW)).toBe(1.5);
    expect(retryAfterSecondsOf(headers({}), 529, NOW)).toBeNull();
    expect(retryAfterSecondsOf(headers({ "retry-after": "7" }), 200, NOW)).toBeNull();
  });

  it("for a 429 without retry-after, waits for the latest reset among the exhausted limits", () => {
    const anthropic = headers({
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": "2026-12-07T12:00:04Z",
      "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-tokens-reset": "2026-12-07T12:00:09Z",
      "anthropic-ratelimit-output-tokens-remaining": "5000",
      "anthropic-ratelimit-output-tokens-reset": "2026-12-07T12:01:00Z",
    });
    expect(retryAfterSecondsOf(anthropic, 429, NOW)).toBe(9);
    const openai = headers({
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "1m6s",
      "x-ratelimit-remaining-tokens": "100",
      "x-ratelimit-reset-tokens": "6m0s",
    });
    expect(retryAfterSecondsOf(openai, 429, NOW)).toBe(66);
    // A reset is not a reason to wait for anything but a 429.
    expect(retryAfterSecondsOf(anthropic, 529, NOW)).toBeNull();
    // With retry-after, a 429 still says when its exhausted limits are back in full: the window retries spread over.
    anthropic.set("retry-after", "2");
    expect([retryAfterSecondsOf(anthropic, 429, NOW), limitResetSecondsOf(anthropic, 429, NOW)]).toEqual([2, 9]);
    expect(limitResetSecondsOf(anthropic, 529, NOW)).toBeNull();
  });

  it("parses OpenAI's durations", () => {
    expect([
      parseDurationMs("1s"),
      parseDurationMs("6m0s"),
      parseDurationMs("250ms"),
      parseDurationMs("1h2m3.5s"),
    ]).toEqual([1000, 360_000, 250, 3_723_500]);
    expect([parseDurationMs(""), parseDurationMs("soon"), parseDurationMs("5")]).toEqual([null, null, null]);
  });
});

describe("how long a call may wait for its provider", () => {
  it("is the agent's providerWaitSeconds, else OUTPOST_PROVIDER_WAIT_SECONDS, else 30 minutes", () => {
    expect(providerWaitMs(90, "600")).toBe(90_000);
    expect(providerWaitMs(null, "600")).toBe(600_000);
    expect(providerWaitMs(null, undefined)).toBe(30 * 60_000);
    expect(providerWaitMs(null, " ")).toBe(30 * 60_000);
  });

  it("refuses a deployment value that is not a whole number of seconds from 1 to 86400", () => {
    for (const bad of ["0", "-5", "1.5", "ten", "86401"]) {
      expect(() => providerWaitMs(null, bad)).toThrow(ConfigError);
    }
  });
});
