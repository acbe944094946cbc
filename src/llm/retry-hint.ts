// When a provider says a refused call may be sent again, read from its response headers: `retry-after-ms` (OpenAI),
// `retry-after` (seconds or an HTTP date), and for a 429 the reset time of each exhausted rate limit, Anthropic's
// `anthropic-ratelimit-<limit>-reset` (an RFC 3339 time) and OpenAI's `x-ratelimit-reset-<limit>` (a duration such
// as "1m6s" or "250ms"). The runtime decides the retry (src/runtime/provider-retry.ts); this is what it honours.

/** Anthropic's rate limits, each with -limit, -remaining and -reset headers. */
const ANTHROPIC_LIMITS = ["requests", "tokens", "input-tokens", "output-tokens"] as const;
/** OpenAI's, each with x-ratelimit-limit-, -remaining- and -reset- headers. */
const OPENAI_LIMITS = ["requests", "tokens"] as const;

/** OpenAI's reset durations: "1s", "6m0s", "1h2m3.5s", "250ms". */
export function parseDurationMs(text: string): number | null {
  const trimmed = text.trim();
  if (!/^(?:\d+(?:\.\d+)?(?:h|ms|m|s))+$/.test(trimmed)) return null;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)) {
    const value = Number(amount);
    total += unit === "h" ? value * 3_600_000 : unit === "m" ? value * 60_000 : unit === "s" ? value * 1000 : value;
  }
  return total;
}

/** `retry-after` as seconds or as an HTTP date, in milliseconds from `now`. */
function retryAfterMs(headers: Headers, now: number): number | null {
  const ms = Number(headers.get("retry-after-ms")?.trim() || Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after")?.trim();
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : null;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : null;
}

/** The latest reset among the rate limits a 429 found exhausted (remaining 0), in milliseconds from `now`. */
function exhaustedResetMs(headers: Headers, now: number): number | null {
  let latest: number | null = null;
  const consider = (ms: number | null) => {
    if (ms !== null && Number.isFinite(ms)) latest = Math.max(latest ?? 0, Math.max(0, ms));
  };
  for (const limit of ANTHROPIC_LIMITS) {
    if (headers.get(`anthropic-ratelimit-${limit}-remaining`)?.trim() !== "0") continue;
    const at = Date.parse(headers.get(`anthropic-ratelimit-${limit}-reset`) ?? "");
    if (Number.isFinite(at)) consider(at - now);
  }
  for (const limit of OPENAI_LIMITS) {
    if (headers.get(`x-ratelimit-remaining-${limit}`)?.trim() !== "0") continue;
    consider(parseDurationMs(headers.get(`x-ratelimit-reset-${limit}`) ?? ""));
  }
  return latest;
}

/**
 * Seconds the provider asks a client to wait before sending a refused call again, or null when it says nothing:
 * retry-after (or retry-after-ms) when present, else for a 429 the reset of the limits it found exhausted.
 */
export function retryAfterSecondsOf(headers: Headers, status: number, now = Date.now()): number | null {
  if (status < 400) return null;
  const ms = retryAfterMs(headers, now) ?? (status === 429 ? exhaustedResetMs(headers, now) : null);
  return ms === null ? null : ms / 1000;
}

/**
 * For a 429, seconds until the limits it found exhausted are back in full (their reset headers), or null. A
 * retry-after says when one more request may pass; this says over how long the limit's room comes back, which is
 * the window many callers refused together should spread their retries over (src/runtime/provider-retry.ts).
 */
export function limitResetSecondsOf(headers: Headers, status: number, now = Date.now()): number | null {
  if (status !== 429) return null;
  const ms = exhaustedResetMs(headers, now);
  return ms === null ? null : ms / 1000;
}
