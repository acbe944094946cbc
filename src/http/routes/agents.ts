// /v1/agents: starting a task, a chat session or an invocation on an agent the tenant can run (the Worker's, from
// agents/ files and classes, or the tenant's own). Describing agents and adding them at runtime is
// agent-definitions.ts, mounted here.
import type { Context } from "hono";
import { Hono } from "hono";
import { Agent } from "../../agents/agent.ts";
import { SkillAgent } from "../../agents/skill-agent.ts";
import { callbackWebhook } from "../../callbacks/payload.ts";
import { callbackPolicy, checkCallbackUrl } from "../../callbacks/policy.ts";
import type { Env } from "../../env.ts";
import { ApiError } from "../../errors.ts";
import type { TaskInit, TaskLimits, TaskWebhook } from "../../tasks/task.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import { taskInit, taskModel } from "../../tasks/task-init.ts";
import { loosenedLimit, requirePricedBudget } from "../../tasks/task-limits.ts";
import { firstSeedOverflow, MAX_WORKSPACE_ENTRIES } from "../../workspace/limits.ts";
import { agentFor } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { requireRead, streamResponse, wantsStream } from "../event-stream.ts";
import type { Invocation } from "../responses.ts";
import { CreateSessionBody, CreateTaskBody, InvokeBody, WaitQuery, WorkspacePath } from "../schemas.ts";
import { creationId, creationRefused, launch, startTask, takeRateToken } from "../task-creation.ts";
import { mayRead, taskResource } from "../task-resource.ts";
import { jsonBody, parseWith } from "../validation.ts";
import { agentDefinitionRoutes } from "./agent-definitions.ts";
import { sessionResource } from "./sessions.ts";

/** How long POST /v1/agents/:name/invoke waits for the run's end unless ?wait= says (seconds). */
const DEFAULT_INVOKE_WAIT_SECONDS = 30;

/** What a request that starts a run on an agent may set (the task, session and invoke bodies). */
type RunRequest = Pick<
  CreateTaskBody,
  "metadata" | "max_turns" | "max_budget_usd" | "max_tokens" | "tags" | "retention_days" | "redaction_mode"
> & { max_iterations?: number | undefined };

/**
 * What every request that starts a run on an agent does before it starts one: its limits and redaction may tighten
 * the agent's, never loosen them (refused, not clamped, so that the client never believes it got what it asked
 * for); a budget needs a priced model; then the route's own checks, the key's rate limit, and the id (from the
 * Idempotency-Key, if any). Returns the TaskInit.
 */
async function newRun(
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
  });
}

/** 400 agent_not_conversational unless the agent runs the default tool loop, which can continue a conversation. */
function requireConversational(agent: Agent, what: string): void {
  if (runsToolLoop(agent)) return;
  throw new ApiError(
    "agent_not_conversational",
    `Agent "${agent.name}" does not run the default tool loop, so it cannot ${what}.`,
    "name",
  );
}

/** Whether the agent runs the default tool loop (not a skill agent's decision loop, not a custom execute()). */
function runsToolLoop(agent: Agent): boolean {
  return !(agent instanceof SkillAgent) && agent.execute === Agent.prototype.execute;
}

/** The task's own limits from the request; max_turns and max_iterations are one limit, the smaller winning. */
function taskLimits(body: RunRequest): TaskLimits {
  const turns = [body.max_turns, body.max_iterations].filter((n): n is number => n !== undefined);
  return {
    ...(turns.length > 0 ? { max_turns: Math.min(...turns) } : {}),
    ...(body.max_budget_usd !== undefined ? { max_budget_usd: body.max_budget_usd } : {}),
    ...(body.max_tokens !== undefined ? { max_tokens: body.max_tokens } : {}),
  };
}

/** The request's files keyed by normalized workspace path; each bad path is a 400 naming `files.<path>`. */
function seedFiles(files: Record<string, string> | undefined): Record<string, string> {
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

/** The task's callback target, checked now so that a bad URL is the client's 400, not a failed delivery later. */
function taskWebhook(env: Env, webhook: NonNullable<CreateTaskBody["webhook"]>): TaskWebhook {
  // The callbacks' own policy: a host the operator opened to agents' tools is not thereby open to callbacks.
  const url = checkCallbackUrl(webhook.url, callbackPolicy(env));
  if (!env.OUTPOST_WEBHOOK_SECRET) {
    throw new ApiError(
      "callbacks_not_configured",
      "Callbacks are signed with OUTPOST_WEBHOOK_SECRET, which this deployment does not set.",
      "webhook",
    );
  }
  return callbackWebhook(url, webhook.events);
}

export const agentRoutes = new Hono<AppEnv>()
  .route("/", agentDefinitionRoutes)
  .post("/:name/sessions", async (c) => {
    const agent = await agentFor(c, c.req.param("name"));
    const body = await jsonBody(c, CreateSessionBody);
    // A session's turns continue one conversation through the default tool loop.
    requireConversational(agent, "hold a conversation; start tasks on it instead");
    const files = seedFiles(body.files);
    const init = await newRun(c, agent, body, { input: "", files });
    const started = await taskStubFor(c.env, init.tenant, init.id).startSession({
      ...init,
      session: { busy: body.busy ?? "reject" },
    });
    if (!started.task) throw creationRefused(started);
    const resource = sessionResource(c, started.task);
    c.header("Location", resource.links.self);
    if (started.outcome === "replayed") c.header("Idempotent-Replayed", "true");
    return c.json(resource, 201);
  })
  .post("/:name/invoke", async (c) => {
    const agent = await agentFor(c, c.req.param("name"));
    const body = await jsonBody(c, InvokeBody);
    // The context is a conversation the run continues: the default tool loop's to continue.
    requireConversational(agent, "continue a conversation; start a task on it instead");
    const streaming = wantsStream(c);
    if (streaming) requireRead(c, "A streamed answer");
    const waitParam = c.req.query("wait");
    const waitSeconds = waitParam === undefined ? DEFAULT_INVOKE_WAIT_SECONDS : parseWith(WaitQuery, waitParam, "wait");
    const init = await newRun(c, agent, body, { input: body.message });
    const { task, replayed } = await launch(c, init.tenant, { ...init, context: body.context ?? [] });
    const resource = taskResource(c, task);
    c.header("Location", resource.links.self);
    if (replayed) c.header("Idempotent-Replayed", "true");
    const stub = taskStubFor(c.env, init.tenant, task.id);
    if (streaming) {
      const subscription = await stub.subscribe(0);
      if (subscription && "id" in subscription) {
        return streamResponse(c, stub, subscription, { location: resource.links.self, "x-task-id": task.id });
      }
    }
    const now = waitSeconds > 0 ? ((await stub.wait(Math.round(waitSeconds * 1000))) ?? task) : task;
    const result = mayRead(c) ? await stub.invocationResult() : null;
    if (!result) return c.json(taskResource(c, now), 202);
    return c.json({ task_id: now.id, status: now.status, result, links: resource.links } satisfies Invocation, 200);
  })
  .post("/:name/tasks", async (c) => {
    const agent = await agentFor(c, c.req.param("name"));
    const body = await jsonBody(c, CreateTaskBody);
    const files = seedFiles(body.files);
    let webhook: TaskWebhook | null = null;
    const init = await newRun(c, agent, body, {
      input: body.input,
      files,
      dryRun: body.dry_run === true,
      check: () => {
        // Callbacks carry the task's result, error and what it waits for: another way to read it, so they need
        // `read`.
        if (body.webhook && !mayRead(c)) {
          throw new ApiError(
            "insufficient_scope",
            "Callbacks carry the task's result and what it waits for; asking for them needs the read scope.",
            "webhook",
          );
        }
        webhook = body.webhook ? taskWebhook(c.env, body.webhook) : null;
      },
    });
    return startTask(c, init.tenant, { ...init, webhook });
  });
