// One Durable Object per API key (`key:<id>`) and per inbound hook (`hook:<id>`): a token bucket for the tasks it may
// create (a key: OUTPOST_RATE_LIMIT_PER_MINUTE or its own rate_limit_per_minute; a hook: its rate_limit_per_minute
// or DEFAULT_HOOK_RATE_LIMIT_PER_MINUTE). An object serializes its callers, so the count is exact across every
// Worker instance, and the bucket is stored so an eviction does not hand out a fresh one.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env.ts";

export interface RateDecision {
  allowed: boolean;
  /** Tokens left after this request. */
  remaining: number;
  /** Seconds until a request would be allowed (0 when allowed). */
  retryAfterSeconds: number;
}

export class RateLimiter extends DurableObject<Env> {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS bucket (id INTEGER PRIMARY KEY CHECK (id = 1), tokens REAL, at REAL)");
  }

  /** Takes one token from a bucket of `perMinute` tokens that refills continuously. */
  async take(perMinute: number): Promise<RateDecision> {
    const now = Date.now();
    const row = this.sql.exec<{ tokens: number; at: number }>("SELECT tokens, at FROM bucket").toArray()[0];
    const refill = perMinute / 60_000;
    const tokens = Math.min(perMinute, row ? row.tokens + (now - row.at) * refill : perMinute);
    const allowed = tokens >= 1;
    const left = allowed ? tokens - 1 : tokens;
    this.sql.exec("INSERT OR REPLACE INTO bucket (id, tokens, at) VALUES (1, ?, ?)", left, now);
    return {
      allowed,
      remaining: Math.floor(left),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - left) / refill / 1000)),
    };
  }
}
