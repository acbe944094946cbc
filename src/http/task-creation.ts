// Creating a task, for every route that does (POST /v1/agents/:name/tasks, fork, inbound webhooks): the key's rate
// limit, the Idempotency-Key (Stripe's semantics), and the one call that makes the task durable before the 202.
import type { Context } from "hono";
import { ApiError } from "../errors.ts";
import { sha256Hex } from "../lib/sha256.ts";
import type { TaskInit, TaskView } from "../tasks/task.ts";
import { derivedTaskId, taskStubFor } from "../tasks/task-ids.ts";
import type { AppEnv } from "./app-env.ts";
import { taskResource } from "./task-resource.ts";

/** Tasks a key may create per minute unless it or OUTPOST_RATE_LIMIT_PER_MINUTE says otherwise. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 60;
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The key's own limit, else the deployment's (pass null for the deployment's alone). */
export function rateLimitPerMinute(
  c: Context<AppEnv>,
  own: number | null = c.get("apiKey").rateLimitPerMinute,
): number {
  if (own) return own;
  const configured = Number(c.env.OUTPOST_RATE_LIMIT_PER_MINUTE);
  return Number.isInteger(configured) && configured > 0 ? configured : DEFAULT_RATE_LIMIT_PER_MINUTE;
}

/** 429 rate_limited with Retry-After when the request's key has used up its task creations for now. */
export async function takeRateToken(c: Context<AppEnv>): Promise<void> {
  const limit = rateLimitPerMinute(c);
  await takeToken(c, `key:${c.get("apiKey").id}`, limit, `This API key may create ${limit} tasks a minute`);
}

/**
 * Takes a token from the RateLimiter object named `bucket` (`key:<key id>`, `hook:<hook id>`), holding `perMinute`;
 * when it is empty, 429 rate_limited with Retry-After, the message being `what` and when to try again.
 */
export async function takeToken(c: Context<AppEnv>, bucket: string, perMinute: number, what: string): Promise<void> {
  const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(bucket));
  const decision = await limiter.take(perMinute);
  c.header("RateLimit-Limit", String(perMinute));
  c.header("RateLimit-Remaining", String(decision.remaining));
  if (!decision.allowed) {
    c.header("Retry-After", String(decision.retryAfterSeconds));
    throw new ApiError("rate_limited", `${what}; try again in ${decision.retryAfterSeconds} s.`);
  }
}

/**
 * The task id for this request: derived from the Idempotency-Key header when there is one (so a repeat reaches the
 * same object), random otherwise; and the request's fingerprint (its route and body) to tell a repeat from misuse.
 */
export async function creationId(c: Context<AppEnv>, body: unknown): Promise<{ id: string; fingerprint?: string }> {
  const key = c.req.header("idempotency-key");
  if (key === undefined) return { id: crypto.randomUUID() };
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new ApiError(
      "validation_failed",
      "Idempotency-Key must be 1–255 printable ASCII characters.",
      "idempotency-key",
    );
  }
  const tenant = c.get("tenant");
  return {
    id: await derivedTaskId("idempotency", tenant, key),
    fingerprint: await sha256Hex(`${c.req.method} ${c.req.path}\n${JSON.stringify(body)}`),
  };
}

/** Starts the task in its object (durably, before anything is answered); a repeated request finds it instead. */
export async function launch(
  c: Context<AppEnv>,
  tenant: string,
  init: TaskInit,
): Promise<{ task: TaskView; replayed: boolean }> {
  const started = await taskStubFor(c.env, tenant, init.id).start(init);
  // The task, when start() created it or found it created by the same request (StartOutcome).
  if (started.task) return { task: started.task, replayed: started.outcome === "replayed" };
  throw creationRefused(started);
}

/** Why an object created nothing (StartOutcome), as the API's error. */
export function creationRefused(
  started: { outcome: "mismatch" | "expired" } | { outcome: "workspace_full"; message: string },
): ApiError {
  if (started.outcome === "mismatch") {
    return new ApiError(
      "idempotency_key_reused",
      "This Idempotency-Key was used for a different request (another route or body); use a new key.",
      "idempotency-key",
    );
  }
  if (started.outcome === "expired") {
    return new ApiError(
      "task_expired",
      "What this request created has expired under the retention policy; use a new Idempotency-Key.",
      "idempotency-key",
    );
  }
  return new ApiError(
    "workspace_full",
    `The seed files do not fit the workspace: ${"message" in started ? started.message : ""}.`,
    "files",
  );
}

/** Starts the task and answers 202 with it, or replays the original 202 to a repeated request. */
export async function startTask(c: Context<AppEnv>, tenant: string, init: TaskInit): Promise<Response> {
  const { task, replayed } = await launch(c, tenant, init);
  const resource = taskResource(c, task);
  c.header("Location", resource.links.self);
  if (replayed) c.header("Idempotent-Replayed", "true");
  return c.json(resource, 202);
}
