// What a command is given besides its own input: the deployment (its bindings and settings), the principal it acts
// for (principal.ts), the request's Idempotency-Key when the way in has one, and a listener for the creation tokens
// it takes (the HTTP adapters turn them into RateLimit and Retry-After headers).
import type { Env } from "../env.ts";
import type { Principal } from "./principal.ts";

export interface CommandContext {
  env: Env;
  principal: Principal;
  /**
   * The request's Idempotency-Key and the request it keys (its route and body): a repeat reaches the same task, a
   * different request under the key is refused.
   */
  idempotency?: { key: string; request: string } | undefined;
  /** Told of each creation token taken, allowed or not. */
  onToken?: ((token: CreationToken) => void) | undefined;
}

/** One token taken (or not) from a principal's creation bucket (rate.ts). */
export interface CreationToken {
  allowed: boolean;
  /** The bucket's tokens a minute. */
  perMinute: number;
  remaining: number;
  /** Seconds until a token is there (0 when allowed). */
  retryAfterSeconds: number;
}
