// Creating a task over HTTP, for every route that does (POST /v1/agents/:name/tasks, /invoke and /sessions, a
// workflow's task, a fork, a replay, a hook's delivery, and the A2A and MCP adapters): the request as the commands of
// src/commands/ take it (commandContext: the key's principal, the Idempotency-Key with Stripe's semantics, the
// creation tokens as RateLimit headers), the body's seed files, and the 202 (or the task's stream) once the task is
// durable. The checks themselves are the commands'.
import type { Context } from "hono";
import type { Agent } from "../agents/agent.ts";
import { callbackUrl, requestedWebhook as commandWebhook } from "../commands/callbacks.ts";
import type { CommandContext } from "../commands/context.ts";
import { type Adapter, keyPrincipal } from "../commands/principal.ts";
import { type CreationToken, requireCreationToken, takeCreationToken } from "../commands/rate.ts";
import {
  creationId as commandCreationId,
  allowedFaults as commandFaults,
  creationRefused,
  IDEMPOTENCY_KEY_PATTERN,
  launchRun,
  prepareRun,
  type RunRequest,
} from "../commands/runs.ts";
import { ApiError } from "../errors.ts";
import type { Faults } from "../faults/faults.ts";
import { creationRatePerMinute } from "../tasks/creation-rate.ts";
import type { TaskInit, TaskView, TaskWebhook } from "../tasks/task.ts";
import { firstSeedOverflow, MAX_WORKSPACE_ENTRIES } from "../workspace/limits.ts";
import type { AppEnv } from "./app-env.ts";
import { creationStream, requireRead, wantsStream } from "./event-stream.ts";
import { type CreateTaskBody, WorkspacePath } from "./schemas.ts";
import { taskResource } from "./task-resource.ts";
import { parseWith } from "./validation.ts";

/** Tasks a key may create per minute unless it or OUTPOST_RATE_LIMIT_PER_MINUTE says otherwise. */
export { DEFAULT_RATE_LIMIT_PER_MINUTE } from "../tasks/creation-rate.ts";
export type { RunRequest };
export { callbackUrl, creationRefused, IDEMPOTENCY_KEY_PATTERN };

/** The key's own limit, else the deployment's (pass null for the deployment's alone). */
export function rateLimitPerMinute(
  c: Context<AppEnv>,
  own: number | null = c.get("apiKey").rateLimitPerMinute,
): number {
  // The same rule as for the work a key leaves behind (a schedule's fires, an evaluation's runs).
  return creationRatePerMinute(c.env, own);
}

/**
 * What the commands (src/commands/) act with for this request: the key's principal through `adapter`, the request's
 * Idempotency-Key (the command that creates checks it), and the creation tokens it takes reported as RateLimit-Limit,
 * RateLimit-Remaining and, when refused, Retry-After.
 */
export function commandContext(c: Context<AppEnv>, adapter: Adapter = "v1"): CommandContext {
  const key = c.req.header("idempotency-key");
  return {
    env: c.env,
    principal: keyPrincipal(c.env, c.get("apiKey"), adapter),
    ...(key !== undefined ? { idempotency: { key, request: `${c.req.method} ${c.req.path}` } } : {}),
    onToken: tokenHeaders(c),
  };
}

/** A creation token as the response's RateLimit-Limit, RateLimit-Remaining and, when refused, Retry-After. */
export function tokenHeaders(c: Context<AppEnv>): (token: CreationToken) => void {
  return (token) => {
    c.header("RateLimit-Limit", String(token.perMinute));
    c.header("RateLimit-Remaining", String(token.remaining));
    if (!token.allowed) c.header("Retry-After", String(token.retryAfterSeconds));
  };
}

/** 429 rate_limited with Retry-After when the request's key has used up its task creations for now. */
export async function takeRateToken(c: Context<AppEnv>): Promise<void> {
  await requireCreationToken(commandContext(c));
}

/**
 * Takes a token from the RateLimiter object named `bucket` for what is not a task's creation (a redelivery),
 * holding `perMinute`; when it is empty, 429 rate_limited with Retry-After, the message being `what`.
 */
export async function takeToken(c: Context<AppEnv>, bucket: string, perMinute: number, what: string): Promise<void> {
  const token = await takeCreationToken(c.env, { rate_bucket: bucket, rate_limit_per_minute: perMinute });
  tokenHeaders(c)(token);
  if (!token.allowed) {
    throw new ApiError("rate_limited", `${what}; try again in ${token.retryAfterSeconds} s.`);
  }
}

/** The task id for this request and its fingerprint (src/commands/runs.ts creationId). */
export function creationId(c: Context<AppEnv>, body: unknown): Promise<{ id: string; fingerprint?: string }> {
  return commandCreationId(commandContext(c), body);
}

/** Starts the task in its object (durably, before anything is answered); a repeated request finds it instead. */
export function launch(
  c: Context<AppEnv>,
  init: TaskInit,
  adapter: Adapter = "v1",
): Promise<{ task: TaskView; replayed: boolean }> {
  return launchRun(commandContext(c, adapter), init);
}

/**
 * Starts the task and answers 202 with it, or replays the original 202 to a repeated request; with Accept:
 * text/event-stream, answers with the task's event stream from its first event instead (its id in `x-task-id`).
 */
export async function startTask(c: Context<AppEnv>, tenant: string, init: TaskInit): Promise<Response> {
  // Refused before anything is created: a key that may not read the task may not read its events either.
  const streaming = wantsStream(c);
  if (streaming) requireRead(c, "A streamed task");
  const { task, replayed } = await launch(c, init);
  const resource = taskResource(c, task);
  if (streaming) {
    const headers = { location: resource.links.self, ...(replayed ? { "idempotent-replayed": "true" } : {}) };
    const stream = await creationStream(c, tenant, task.id, headers);
    if (stream) return stream;
  }
  c.header("Location", resource.links.self);
  if (replayed) c.header("Idempotent-Replayed", "true");
  return c.json(resource, 202);
}

/**
 * What every request that starts a run on an agent does before it starts one (src/commands/runs.ts prepareRun), as
 * the request's key through `adapter`. Returns the TaskInit.
 */
export function newRun(
  c: Context<AppEnv>,
  agent: Agent,
  body: RunRequest,
  run: Parameters<typeof prepareRun>[3],
  adapter: Adapter = "v1",
): Promise<TaskInit> {
  return prepareRun(commandContext(c, adapter), agent, body, run);
}

/** The request's files keyed by normalized workspace path; each bad path is a 400 naming `files.<path>`. */
export function seedFiles(files: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const raws: string[] = [];
  for (const [raw, content] of Object.entries(files ?? {})) {
    const field = `files.${raw}`;
    const path = parseWith(WorkspacePath, raw, field);
    if (path in out) throw new ApiError("validation_failed", `${raw} names the same file as another entry.`, field);
    out[path] = content;
    raws.push(raw);
  }
  // Checked here so that the client gets a clear 400; the task's object refuses them too (StartOutcome).
  const overflow = firstSeedOverflow(Object.keys(out));
  if (overflow !== -1) {
    throw new ApiError(
      "workspace_full",
      `A workspace holds at most ${MAX_WORKSPACE_ENTRIES} files and folders, and these files with the folders they imply hold more; ${raws[overflow]} is the first past the limit.`,
      `files.${raws[overflow]}`,
    );
  }
  for (const path of Object.keys(out)) {
    for (let dir = path.slice(0, path.lastIndexOf("/")); dir; dir = dir.slice(0, dir.lastIndexOf("/"))) {
      if (dir in out) {
        throw new ApiError(
          "validation_failed",
          `${dir.slice(1)} is a file, so it cannot contain ${path.slice(1)}.`,
          `files.${dir.slice(1)}`,
        );
      }
    }
  }
  return out;
}

/** The callbacks a new task's request asks for, or null: they need the read scope too (src/commands/callbacks.ts). */
export function requestedWebhook(c: Context<AppEnv>, body: Pick<CreateTaskBody, "webhook">): TaskWebhook | null {
  return commandWebhook(c.env, commandContext(c).principal, body.webhook);
}

/** Faults a run may inject, where the operator allows them (src/commands/runs.ts allowedFaults). */
export function allowedFaults(c: Context<AppEnv>, agent: Pick<Agent, "toolDeclaration">, faults: Faults): Faults {
  return commandFaults(commandContext(c), agent, faults, "faults");
}
