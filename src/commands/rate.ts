// The creation rate, the one check every command that starts a run makes (a task, a session's message, a fork, a
// schedule's fire, an evaluation's run, a sub-agent): a token from the principal's bucket, the RateLimiter object
// `key:<key id>` or `hook:<hook id>` (durable-objects/rate-limiter.ts), which holds the principal's tasks a minute. A
// tree's children take from the bucket of the key that started the root, so delegation buys no extra rate.
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import type { CommandContext, CreationToken } from "./context.ts";

export type { CreationToken };

import type { Principal } from "./principal.ts";

/** Takes one token from the principal's creation bucket; the caller decides what no room means for its way in. */
export async function takeCreationToken(
  env: Pick<Env, "RATE_LIMITER">,
  principal: Pick<Principal, "rate_bucket" | "rate_limit_per_minute">,
): Promise<CreationToken> {
  const perMinute = principal.rate_limit_per_minute;
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(principal.rate_bucket));
  const decision = await limiter.take(perMinute);
  return { perMinute, ...decision };
}

/** What creates, and at what rate, in words: a key's tasks, a hook's runs. */
export function rateSubject(principal: Pick<Principal, "rate_bucket" | "rate_limit_per_minute">): string {
  const perMinute = principal.rate_limit_per_minute;
  return principal.rate_bucket.startsWith("hook:")
    ? `The hook "${principal.rate_bucket.slice("hook:".length)}" may start ${perMinute} runs a minute`
    : `This API key may create ${perMinute} tasks a minute`;
}

/** For a request: a token, else 429 rate_limited saying when to try again (the listener hears of it either way). */
export async function requireCreationToken(ctx: CommandContext): Promise<void> {
  const token = await takeCreationToken(ctx.env, ctx.principal);
  ctx.onToken?.(token);
  if (token.allowed) return;
  throw new ApiError("rate_limited", `${rateSubject(ctx.principal)}; try again in ${token.retryAfterSeconds} s.`);
}
