// Service conditions a script may ask for, so that the emulator refuses as the real providers do: a rate limit per
// minute, an outage of a set length, and a context window. They are decided before a request reaches its script's
// turn (emulator/script.ts), so a refused request is neither billed nor counted as an attempt at the turn (its faults
// wait). What each provider says when it refuses is here too, as an ErrorSpec that the dialect renders in its shape.
import type { ErrorSpec, Provider, ReplyUsage } from "./reply.ts";
import { isRecord, type Parsed } from "./request.ts";

export interface RateLimit {
  requests_per_minute: number;
}

/** The statuses an outage may answer with; 529 is Anthropic's overloaded, which OpenAI and Gemini send as 503. */
export type OutageStatus = 500 | 502 | 503 | 529;

export interface Outage {
  duration_ms: number;
  status?: OutageStatus;
  retry_after_seconds?: number;
  starts_after_requests?: number;
}

/** The script fields this module reads; every one is optional, and a script without them is never refused here. */
export interface ServiceConditionOptions {
  rate_limit?: RateLimit;
  outage?: Outage;
  context_window?: number;
}

export type RefusalKind = "rate_limited" | "overloaded" | "context_exceeded";

export const REFUSAL_KINDS: readonly RefusalKind[] = ["rate_limited", "overloaded", "context_exceeded"];

/** A script's request bucket after a request took from it, for the wire's rate-limit headers. */
export interface Bucket {
  limit: number;
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
  /** When it is full again, in epoch milliseconds. */
  resetAt: number;
}

export type Refusal =
  | { kind: "rate_limited"; limit: number; retryAfterMs: number }
  | { kind: "overloaded"; status: OutageStatus; retryAfterSeconds: number | null }
  | { kind: "context_exceeded"; inputTokens: number; maxTokens: number; window: number };

export interface Admission {
  /** Null when the script has no rate limit. */
  bucket: Bucket | null;
  refusal: Refusal | null;
}

interface ConditionState {
  tokens: number;
  refilledAt: number;
  /** Requests the conditions let through: an outage starts once `starts_after_requests` of them have. */
  admitted: number;
  outageFrom: number | null;
}

/** What admission needs of a request; `promptTokens` is only asked when the script has a context window. */
export interface AdmissionRequest {
  provider: Provider;
  promptTokens: () => number;
  maxTokens: number | null;
}

/** The per-script state of the conditions, on a clock tests may set (wall-clock milliseconds by default). */
export class ServiceConditions {
  readonly #states = new Map<string, ConditionState>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * Rate limit first (every request of the script takes a token while there is one, as a gateway counts before it
   * routes), then the outage, then the context window. Only a request let through by all three counts as admitted.
   */
  admit(script: ServiceConditionOptions & { id: string }, request: AdmissionRequest): Admission {
    const { rate_limit: rateLimit, outage, context_window: window } = script;
    if (!rateLimit && !outage && window === undefined) return { bucket: null, refusal: null };
    const now = this.#now();
    let state = this.#states.get(script.id);
    if (!state) {
      state = { tokens: rateLimit?.requests_per_minute ?? 0, refilledAt: now, admitted: 0, outageFrom: null };
      this.#states.set(script.id, state);
    }
    let bucket: Bucket | null = null;
    if (rateLimit) {
      const limit = rateLimit.requests_per_minute;
      // Continuous replenishment, as Anthropic documents its token bucket: limit/60 requests a second, capped at limit.
      state.tokens = Math.min(limit, state.tokens + ((now - state.refilledAt) * limit) / 60_000);
      state.refilledAt = now;
      // Within a rounding error of a whole request counts as one: a refill of exactly one period must admit.
      const empty = state.tokens < 1 - 1e-9;
      if (!empty) state.tokens = Math.max(0, state.tokens - 1);
      const resetMs = msToRefill(limit - state.tokens, limit);
      bucket = { limit, remaining: Math.floor(state.tokens + 1e-9), resetMs, resetAt: now + resetMs };
      if (empty) {
        const retryAfterMs = Math.max(1, msToRefill(1 - state.tokens, limit));
        return { bucket, refusal: { kind: "rate_limited", limit, retryAfterMs } };
      }
    }
    if (outage) {
      if (state.outageFrom === null && state.admitted >= (outage.starts_after_requests ?? 0)) state.outageFrom = now;
      if (state.outageFrom !== null && now < state.outageFrom + outage.duration_ms) {
        const refusal: Refusal = {
          kind: "overloaded",
          status: outage.status ?? 529,
          retryAfterSeconds: outage.retry_after_seconds ?? null,
        };
        return { bucket, refusal };
      }
    }
    if (window !== undefined) {
      const inputTokens = request.promptTokens();
      // Gemini's output cap is the model's own maxOutputTokens, apart from the window: only the input counts there.
      const maxTokens = request.provider === "gemini" ? 0 : (request.maxTokens ?? 0);
      if (inputTokens + maxTokens > window) {
        return { bucket, refusal: { kind: "context_exceeded", inputTokens, maxTokens, window } };
      }
    }
    state.admitted++;
    return { bucket, refusal: null };
  }

  clear(): void {
    this.#states.clear();
  }
}

/** Whole milliseconds until `requests` have come back at `limit` a minute (a rounding error is not a millisecond). */
function msToRefill(requests: number, limit: number): number {
  return Math.max(0, Math.ceil((requests * 60_000) / limit - 1e-6));
}

/**
 * The prompt's tokens as the request's usage would report them (input plus cache reads and writes): the turn's
 * scripted `input_tokens` (with its scripted cache counts) when it gives one, else what the emulator computes.
 */
export function promptTokens(scripted: Partial<ReplyUsage> | undefined, computed: number): number {
  if (scripted?.input_tokens === undefined) return computed;
  return scripted.input_tokens + (scripted.cache_read_input_tokens ?? 0) + (scripted.cache_creation_input_tokens ?? 0);
}

type Wire = "anthropic" | "openai" | "gemini";

/** Bedrock, Vertex and Foundry serve the Messages API, and refuse with its texts in their own shapes. */
function wireOf(provider: Provider): Wire {
  return provider === "openai" || provider === "gemini" ? provider : "anthropic";
}

const ANTHROPIC_RATE_LIMIT_TAIL =
  "For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for " +
  "current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also " +
  "contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.";

/** The error a provider answers a refusal with; the dialect renders it in its shape (emulator/reply.ts). */
export function refusalSpec(provider: Provider, refusal: Refusal): ErrorSpec {
  const wire = wireOf(provider);
  switch (refusal.kind) {
    case "rate_limited": {
      const { limit, retryAfterMs } = refusal;
      const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
      // Google gives the delay in the body's RetryInfo alone, never as a header.
      if (wire === "gemini") return { status: 429, retryDelay: seconds };
      if (wire === "openai") {
        const message =
          `Rate limit reached for requests per min (RPM): Limit ${limit}, Used ${limit}, Requested 1. Please try ` +
          `again in ${openaiDuration(retryAfterMs)}. Visit https://platform.openai.com/account/rate-limits to learn more.`;
        return { status: 429, retryAfter: seconds, message };
      }
      const message = `This request would exceed the rate limit for your organization of ${limit.toLocaleString("en-US")} requests per minute. ${ANTHROPIC_RATE_LIMIT_TAIL}`;
      return { status: 429, retryAfter: seconds, message };
    }
    case "overloaded": {
      const { status, retryAfterSeconds } = refusal;
      if (retryAfterSeconds === null) return { status };
      return wire === "gemini" ? { status, retryDelay: retryAfterSeconds } : { status, retryAfter: retryAfterSeconds };
    }
    case "context_exceeded":
      return { status: 400, ...contextMessage(wire, refusal) };
  }
}

function contextMessage(
  wire: Wire,
  { inputTokens, maxTokens, window }: Extract<Refusal, { kind: "context_exceeded" }>,
): Pick<ErrorSpec, "message" | "param" | "code"> {
  const tooLong = inputTokens > window;
  switch (wire) {
    case "anthropic":
      return {
        message: tooLong
          ? `prompt is too long: ${inputTokens} tokens > ${window} maximum`
          : `input length and \`max_tokens\` exceed context limit: ${inputTokens} + ${maxTokens} > ${window}, decrease input length or \`max_tokens\` and try again`,
      };
    case "openai": {
      const head = `This model's maximum context length is ${window} tokens. However, `;
      const message = tooLong
        ? `${head}your messages resulted in ${inputTokens} tokens. Please reduce the length of the messages.`
        : `${head}you requested ${inputTokens + maxTokens} tokens (${inputTokens} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`;
      return { message, param: "messages", code: "context_length_exceeded" };
    }
    case "gemini":
      return {
        message: `The input token count (${inputTokens}) exceeds the maximum number of tokens allowed (${window}).`,
      };
  }
}

/** The rate-limit headers a wire sends on every response of a rate-limited script; Gemini, Bedrock and Vertex send none. */
export function rateLimitHeaders(provider: Provider, bucket: Bucket): Record<string, string> {
  if (provider === "anthropic") {
    return {
      "anthropic-ratelimit-requests-limit": String(bucket.limit),
      "anthropic-ratelimit-requests-remaining": String(bucket.remaining),
      "anthropic-ratelimit-requests-reset": rfc3339(bucket.resetAt),
    };
  }
  if (provider === "openai") {
    return {
      "x-ratelimit-limit-requests": String(bucket.limit),
      "x-ratelimit-remaining-requests": String(bucket.remaining),
      "x-ratelimit-reset-requests": openaiDuration(bucket.resetMs),
    };
  }
  return {};
}

/** A time in RFC 3339 to the second, rounded up (the bucket is not full before it), as Anthropic's headers give it. */
function rfc3339(epochMs: number): string {
  return new Date(Math.ceil(epochMs / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A duration as OpenAI's x-ratelimit-reset-* headers write it (Go's format): "250ms", "1s", "8.64s", "1m6s", "6m0s". */
export function openaiDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms));
  if (total < 1000) return `${total}ms`;
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = `${Number(((total % 60_000) / 1000).toFixed(3))}s`;
  if (hours > 0) return `${hours}h${minutes}m${seconds}`;
  return minutes > 0 ? `${minutes}m${seconds}` : seconds;
}

// ---- validation of the script fields, on POST /_emulator/scripts ----------------------------------

const OUTAGE_STATUSES: readonly number[] = [529, 500, 502, 503];

function isCount(value: unknown, min: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min;
}

function unknownKey(record: Record<string, unknown>, known: readonly string[], where: string): string | null {
  const extra = Object.keys(record).find((key) => !known.includes(key));
  return extra === undefined ? null : `${where}.${extra}: unknown field (known: ${known.join(", ")})`;
}

/** The conditions of a script registration, checked; the message names the first bad field. */
export function parseConditions(body: Record<string, unknown>): Parsed<ServiceConditionOptions> {
  const fail = (message: string): Parsed<ServiceConditionOptions> => ({ ok: false, message });
  const value: ServiceConditionOptions = {};
  const { rate_limit: rateLimit, outage, context_window: window } = body;
  if (rateLimit !== undefined) {
    if (!isRecord(rateLimit)) return fail("script.rate_limit: must be an object");
    const extra = unknownKey(rateLimit, ["requests_per_minute"], "script.rate_limit");
    if (extra) return fail(extra);
    if (!isCount(rateLimit.requests_per_minute, 1)) {
      return fail("script.rate_limit.requests_per_minute: must be a positive integer");
    }
    value.rate_limit = { requests_per_minute: rateLimit.requests_per_minute };
  }
  if (outage !== undefined) {
    const parsed = parseOutage(outage);
    if (!parsed.ok) return parsed;
    value.outage = parsed.value;
  }
  if (window !== undefined) {
    if (!isCount(window, 1)) return fail("script.context_window: must be a positive integer (tokens)");
    value.context_window = window;
  }
  return { ok: true, value };
}

function parseOutage(outage: unknown): Parsed<Outage> {
  const fail = (message: string): Parsed<Outage> => ({ ok: false, message: `script.outage${message}` });
  if (!isRecord(outage)) return fail(": must be an object");
  const known = ["duration_ms", "status", "retry_after_seconds", "starts_after_requests"];
  const extra = unknownKey(outage, known, "script.outage");
  if (extra) return { ok: false, message: extra };
  const { duration_ms: duration, status, retry_after_seconds: retryAfter, starts_after_requests: after } = outage;
  if (typeof duration !== "number" || !Number.isFinite(duration) || duration <= 0) {
    return fail(".duration_ms: must be a positive number");
  }
  if (status !== undefined && (typeof status !== "number" || !OUTAGE_STATUSES.includes(status))) {
    return fail(".status: must be one of 529, 500, 502, 503");
  }
  if (retryAfter !== undefined && !isCount(retryAfter, 0)) {
    return fail(".retry_after_seconds: must be a non-negative integer");
  }
  if (after !== undefined && !isCount(after, 0)) return fail(".starts_after_requests: must be a non-negative integer");
  return {
    ok: true,
    value: {
      duration_ms: duration,
      ...(status !== undefined ? { status: status as OutageStatus } : {}),
      ...(retryAfter !== undefined ? { retry_after_seconds: retryAfter } : {}),
      ...(after !== undefined ? { starts_after_requests: after } : {}),
    },
  };
}
