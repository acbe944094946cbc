// Waiting out the model provider. The runtime decides every retry of a model call (the SDKs make none of their own):
// a refused or broken call is tried again after 0.5 s, then 1 s, inside the run; after that the step is parked on the
// object's `provider_wait` timer, with exponential backoff and full jitter up to 5 minutes between tries, never
// sooner than the provider's retry-after or rate-limit reset says, until the horizon (30 minutes from the call's
// first failure unless the agent or the deployment says otherwise). While parked the run holds nothing and has no
// heartbeat: only the timer starts it again (src/runtime/run-supervisor.ts). The wait is on record in the task's
// state, so an eviction or a restart resumes it where it was, and the task shows it as `waiting_for`.
import { AgentError, CanceledError, ConfigError, type ErrorInfo, LimitExceededError } from "../errors.ts";
import type { TypedState } from "../lib/state-key.ts";
import { PROVIDER_WAIT_KEY, type ProviderWait } from "../tasks/waiting-for.ts";

/** The in-run pauses before the second and third tries of a call. */
export const IN_RUN_DELAYS_MS = [500, 1000] as const;
/** A wait longer than this parks the step on its timer rather than holding the run. */
export const IN_RUN_MAX_MS = 1000;
/** The backoff's base (doubled per further failure) and its ceiling, between two tries. */
export const BACKOFF_BASE_MS = 2000;
export const BACKOFF_CAP_MS = 5 * 60_000;
/** How long one call may wait for its provider, from its first failure, unless the agent or the deployment says. */
export const DEFAULT_PROVIDER_WAIT_MS = 30 * 60_000;

/** What to do after a failed try: give up, wait inside the run, or park the step on its timer. */
export type RetryDecision = { kind: "fail" } | { kind: "in_run"; delayMs: number } | { kind: "park"; untilMs: number };

export interface RetryInput {
  /** Failures of this call so far, the one just seen included (1 after the first). */
  failures: number;
  /** When the call first failed, and now (epoch ms). */
  sinceMs: number;
  nowMs: number;
  /** What the provider said: its retry-after or rate-limit reset, in ms; null when it said nothing. */
  hintMs: number | null;
  /** A 429's exhausted limits: in how many ms they are back in full (their reset headers); null when unknown. */
  refillMs?: number | null;
  horizonMs: number;
  /** Uniform in [0, 1): the jitter. */
  random: () => number;
}

/**
 * A rate limit's retries spread over this many times the time its room takes to come back: the retries of callers
 * refused together then arrive more slowly than the limit refills, even beside the calls of callers not refused. The
 * rate-limit case of `npm run bench:waits` (24 three-call tasks at 30 requests a minute) measures the waste it leaves.
 */
export const REFILL_SPREAD = 1.5;

/**
 * When to try a failed call again. The first two retries wait 0.5 s and 1 s in the run; later ones wait a uniformly
 * random time up to 2 s doubled per failure (full jitter, capped at 5 minutes), added to what the provider asked for,
 * so that many tasks refused together do not come back together; a rate limit that says when its room is back in
 * full spreads them over REFILL_SPREAD times that. The last try is at the horizon; past it, none.
 */
export function nextTry(input: RetryInput): RetryDecision {
  const { failures, nowMs, hintMs, random } = input;
  const deadline = input.sinceMs + input.horizonMs;
  if (nowMs >= deadline) return { kind: "fail" };
  const early = IN_RUN_DELAYS_MS[failures - 1];
  let delay: number;
  if (early !== undefined && (hintMs ?? 0) <= IN_RUN_MAX_MS) delay = Math.max(early, hintMs ?? 0);
  else {
    const exponent = Math.max(0, failures - IN_RUN_DELAYS_MS.length);
    const backoff = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** exponent);
    const refill = input.refillMs ? REFILL_SPREAD * Math.max(0, input.refillMs - (hintMs ?? 0)) : 0;
    delay = (hintMs ?? 0) + Math.floor(random() * Math.min(BACKOFF_CAP_MS, Math.max(backoff, refill)));
  }
  delay = Math.min(delay, deadline - nowMs);
  if (delay <= IN_RUN_MAX_MS) return { kind: "in_run", delayMs: delay };
  return { kind: "park", untilMs: nowMs + delay };
}

/**
 * The horizon of one call's waits: the agent's providerWaitSeconds, else the deployment's
 * OUTPOST_PROVIDER_WAIT_SECONDS, else 30 minutes. A deployment value that is not a whole number of seconds from 1 to
 * 86,400 is a ConfigError (the run fails with config_error, as with a bad price table).
 */
export function providerWaitMs(agentSeconds: number | null, deployment: string | undefined): number {
  if (agentSeconds !== null) return agentSeconds * 1000;
  const text = deployment?.trim();
  if (!text) return DEFAULT_PROVIDER_WAIT_MS;
  const seconds = Number(text);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 86_400) {
    throw new ConfigError(
      `OUTPOST_PROVIDER_WAIT_SECONDS must be a whole number of seconds from 1 to 86400, not "${text}".`,
    );
  }
  return seconds * 1000;
}

/** A failure a later try may not repeat: a refusal, an overload, a lost or broken connection, a timeout. */
export function retryableFailure(error: unknown): error is AgentError {
  return (
    error instanceof AgentError &&
    error.retryable &&
    !(error instanceof CanceledError) &&
    !(error instanceof LimitExceededError)
  );
}

/** The task's record of the call that is failing, read and written through its typed state. */
export class ProviderWaits {
  private readonly state: Pick<TypedState, "get" | "put" | "delete">;

  constructor(state: Pick<TypedState, "get" | "put" | "delete">) {
    this.state = state;
  }

  /** The record, if it is for `step` (one left by another step is stale: that step ended). */
  of(step: string): ProviderWait | null {
    const wait = this.state.get(PROVIDER_WAIT_KEY);
    return wait && wait.step === step ? wait : null;
  }

  /** The parked wait, if the run is parked. */
  parked(): ProviderWait | null {
    const wait = this.state.get(PROVIDER_WAIT_KEY);
    return wait && wait.until !== null ? wait : null;
  }

  /** Records one more failure of `step`'s call and returns the record. */
  failed(step: string, error: ErrorInfo, now: number): ProviderWait {
    const before = this.of(step);
    const wait: ProviderWait = {
      step,
      since: before?.since ?? now,
      failures: (before?.failures ?? 0) + 1,
      last_error: error,
      until: null,
      parked_at: null,
    };
    this.state.put(PROVIDER_WAIT_KEY, wait);
    return wait;
  }

  park(wait: ProviderWait, until: number, now: number): ProviderWait {
    const parked = { ...wait, until, parked_at: now };
    this.state.put(PROVIDER_WAIT_KEY, parked);
    return parked;
  }

  /** The timer came: the run holds the call again. */
  woke(wait: ProviderWait): void {
    this.state.put(PROVIDER_WAIT_KEY, { ...wait, until: null, parked_at: null });
  }

  /** The call succeeded, or the run gave up on it. */
  end(step?: string): void {
    const wait = this.state.get(PROVIDER_WAIT_KEY);
    if (wait && (step === undefined || wait.step === step)) this.state.delete(PROVIDER_WAIT_KEY);
  }
}
