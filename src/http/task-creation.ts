// Creating a task, for every route that does (POST /v1/agents/:name/tasks, POST /v1/workflows/:name/tasks, fork,
// inbound webhooks): what a request that starts a run may set and how it is checked (newRun), the key's rate limit,
// the Idempotency-Key (Stripe's semantics), and the one call that makes the task durable before the 202.
import type { Context } from "hono";
import type { Agent } from "../agents/agent.ts";
import { callbackWebhook } from "../callbacks/payload.ts";
import { callbackPolicy, checkCallbackUrl } from "../callbacks/policy.ts";
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import { type Faults, faultInjectionAllowed, faultInjectionOffMessage } from "../faults/faults.ts";
import { sha256Hex } from "../lib/sha256.ts";
import { creationRatePerMinute } from "../tasks/creation-rate.ts";
import { keyBucket, type TaskPrincipal } from "../tasks/principal.ts";
import type { TaskInit, TaskLimits, TaskView, TaskWebhook } from "../tasks/task.ts";
import { derivedTaskId, startInObject } from "../tasks/task-ids.ts";
import { taskInit, taskModel } from "../tasks/task-init.ts";
import { loosenedLimit, requirePricedBudget } from "../tasks/task-limits.ts";
import { firstSeedOverflow, MAX_WORKSPACE_ENTRIES } from "../workspace/limits.ts";
import type { AppEnv } from "./app-env.ts";
import { creationStream, requireRead, wantsStream } from "./event-stream.ts";
import { type CreateTaskBody, WorkspacePath } from "./schemas.ts";
import { mayRead, taskResource } from "./task-resource.ts";
import { parseWith } from "./validation.ts";

/** Tasks a key may create per minute unless it or OUTPOST_RATE_LIMIT_PER_MINUTE says otherwise. */
export { DEFAULT_RATE_LIMIT_PER_MINUTE } from "../tasks/creation-rate.ts";
/** An Idempotency-Key: 1 to 255 printable ASCII characters (the OpenAPI document states it too). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The key's own limit, else the deployment's (pass null for the deployment's alone). */
export function rateLimitPerMinute(
  c: Context<AppEnv>,
  own: number | null = c.get("apiKey").rateLimitPerMinute,
): number {
  // The same rule as for the work a key leaves behind (a schedule's fires, an evaluation's runs).
  return creationRatePerMinute(c.env, own);
}

/** 429 rate_limited with Retry-After when the request's key has used up its task creations for now. */
export async function takeRateToken(c: Context<AppEnv>): Promise<void> {
  const limit = rateLimitPerMinute(c);
  await takeToken(c, keyBucket(c.get("apiKey").id), limit, `This API key may create ${limit} tasks a minute`);
}

/**
 * The principal of a task the request's key creates (src/tasks/principal.ts): its sub-agents take their creation
 * tokens from the key's bucket, at the key's rate. Undefined without a key (a hook's delivery names its own).
 */
export function requestPrincipal(c: Context<AppEnv>): TaskPrincipal | undefined {
  const key = c.get("apiKey") as AppEnv["Variables"]["apiKey"] | undefined;
  if (!key) return undefined;
  return {
    tenant: c.get("tenant"),
    key_id: key.id,
    rate_bucket: keyBucket(key.id),
    rate_limit_per_minute: rateLimitPerMinute(c),
  };
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
  // A task the request's key creates counts its sub-agents against the key, whichever route made its TaskInit.
  const principal = init.principal ?? requestPrincipal(c);
  const started = await startInObject(c.env, tenant, principal ? { ...init, principal } : init);
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

/**
 * Starts the task and answers 202 with it, or replays the original 202 to a repeated request; with Accept:
 * text/event-stream, answers with the task's event stream from its first event instead (its id in `x-task-id`).
 */
export async function startTask(c: Context<AppEnv>, tenant: string, init: TaskInit): Promise<Response> {
  // Refused before anything is created: a key that may not read the task may not read its events either.
  const streaming = wantsStream(c);
  if (streaming) requireRead(c, "A streamed task");
  const { task, replayed } = await launch(c, tenant, init);
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

/** What a request that starts a run on an agent may set (the task, session and invoke bodies). */
export type RunRequest = Pick<
  CreateTaskBody,
  "metadata" | "max_turns" | "max_budget_usd" | "max_tokens" | "tags" | "retention_days" | "redaction_mode"
> & { max_iterations?: number | undefined };

/**
 * What every request that starts a run on an agent does before it starts one: its limits and redaction may tighten
 * the agent's, never loosen them (refused, not clamped, so that the client never believes it got what it asked
 * for); a budget needs a priced model; then the route's own checks, the key's rate limit, and the id (from the
 * Idempotency-Key, if any). Returns the TaskInit.
 */
export async function newRun(
  c: Context<AppEnv>,
  agent: Agent,
  body: RunRequest,
  run: { input: string; files?: Record<string, string>; dryRun?: boolean; check?: () => void },
): Promise<TaskInit> {
  const loosened = loosenedLimit(body, agent);
  if (loosened) throw new ApiError("validation_failed", loosened.message, loosened.field);
  const model = taskModel(agent, c.env);
  const limits = taskLimits(body);
  requirePricedBudget({ limits, agent, model, prices: c.env.OUTPOST_PRICES, field: "max_budget_usd" });
  run.check?.();
  await takeRateToken(c);
  const { id, fingerprint } = await creationId(c, body);
  const tenant = c.get("tenant");
  return taskInit(c.env, {
    id,
    fingerprint,
    tenant,
    agent,
    input: run.input,
    metadata: body.metadata ?? {},
    model,
    redactionMode: body.redaction_mode,
    ...(run.dryRun !== undefined ? { dryRun: run.dryRun } : {}),
    tags: body.tags,
    retentionDays: body.retention_days,
    limits,
    ...(run.files ? { files: run.files, warnings: agent.startupWarnings(Object.keys(run.files)) } : {}),
    // Kept in a schedule's or an evaluation's template too: the runs they start count against this key.
    principal: requestPrincipal(c),
  });
}

/** The task's own limits from the request; max_turns and max_iterations are one limit, the smaller winning. */
export function taskLimits(body: RunRequest): TaskLimits {
  const turns = [body.max_turns, body.max_iterations].filter((n): n is number => n !== undefined);
  return {
    ...(turns.length > 0 ? { max_turns: Math.min(...turns) } : {}),
    ...(body.max_budget_usd !== undefined ? { max_budget_usd: body.max_budget_usd } : {}),
    ...(body.max_tokens !== undefined ? { max_tokens: body.max_tokens } : {}),
  };
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

/**
 * The callbacks a new task's request asks for, or null. Callbacks carry the task's result, error and what it waits
 * for: another way to read it, so asking for them needs the `read` scope. Called from newRun's `check`.
 */
export function requestedWebhook(c: Context<AppEnv>, body: Pick<CreateTaskBody, "webhook">): TaskWebhook | null {
  if (!body.webhook) return null;
  if (!mayRead(c)) {
    throw new ApiError(
      "insufficient_scope",
      "Callbacks carry the task's result and what it waits for; asking for them needs the read scope.",
      "webhook",
    );
  }
  return taskWebhook(c.env, body.webhook);
}

/** The task's callback target, checked now so that a bad URL is the client's 400, not a failed delivery later. */
export function taskWebhook(env: Env, webhook: NonNullable<CreateTaskBody["webhook"]>): TaskWebhook {
  return callbackWebhook(callbackUrl(env, webhook.url, { url: "webhook.url", secret: "webhook" }), webhook.events);
}

/**
 * A callback's URL (a task's webhook, an A2A push config's), checked now so that a bad one is the client's 400: by the
 * callbacks' own policy (a host the operator opened to agents' tools is not thereby open to callbacks), and in a
 * deployment that can sign callbacks.
 */
export function callbackUrl(env: Env, raw: string, fields: { url: string; secret: string }): URL {
  const url = checkCallbackUrl(raw, callbackPolicy(env), fields.url);
  if (!env.OUTPOST_WEBHOOK_SECRET) {
    throw new ApiError(
      "callbacks_not_configured",
      "Callbacks are signed with OUTPOST_WEBHOOK_SECRET, which this deployment does not set.",
      fields.secret,
    );
  }
  return url;
}

/**
 * Faults a run may inject: only where the operator turned fault injection on for the tenant (else 403
 * fault_injection_disabled), and an MCP fault only on one of the agent's servers. `field` names them in errors.
 */
export function allowedFaults(
  env: Pick<Env, "OUTPOST_FAULT_INJECTION">,
  tenant: string,
  agent: Pick<Agent, "toolDeclaration">,
  faults: Faults,
  field: string,
): Faults {
  if (!faultInjectionAllowed(env.OUTPOST_FAULT_INJECTION, tenant)) {
    throw new ApiError("fault_injection_disabled", faultInjectionOffMessage(tenant), field);
  }
  const server = faults.mcp_fault?.server;
  if (server !== undefined && !agent.toolDeclaration().mcpServers.some((s) => s.name === server)) {
    throw new ApiError(
      "validation_failed",
      `The agent has no MCP server named "${server}" for the fault to strike.`,
      `${field}.mcp_fault.server`,
    );
  }
  return faults;
}
