// /v1/agents: the agents the tenant can run (the Worker's, from agents/ files and classes, and the tenant's own,
// added at runtime with PUT /v1/agents/:name and versioned), and starting a task, a chat session or an invocation on
// one.
import type { Context } from "hono";
import { Hono } from "hono";
import { Agent, type AgentDefinition } from "../../agents/agent.ts";
import { AgentFileError, MAX_AGENT_FILE_BYTES, parseAgentFile } from "../../agents/agent-file.ts";
import { AGENT_NAME_PATTERN } from "../../agents/definition.ts";
import { SkillAgent } from "../../agents/skill-agent.ts";
import { callbackWebhook } from "../../callbacks/payload.ts";
import { callbackPolicy, checkCallbackUrl } from "../../callbacks/policy.ts";
import { resolveModel } from "../../config/models.ts";
import type { Env } from "../../env.ts";
import { ApiError } from "../../errors.ts";
import type { JsonObject } from "../../lib/json.ts";
import { sha256Hex } from "../../lib/sha256.ts";
import type { TaskInit, TaskLimits, TaskWebhook } from "../../tasks/task.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import { taskInit, taskModel } from "../../tasks/task-init.ts";
import { loosenedLimit, requirePricedBudget } from "../../tasks/task-limits.ts";
import { tenantStubFor } from "../../tenants/directory.ts";
import { firstSeedOverflow, MAX_WORKSPACE_ENTRIES } from "../../workspace/limits.ts";
import { agentFor, agentsFor, forgetOwnAgents, storedAgent } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { requireAdmin } from "../auth.ts";
import { requireRead, streamResponse, wantsStream } from "../event-stream.ts";
import type { AgentDescription, AgentList, AgentVersionList, Invocation } from "../responses.ts";
import { CreateSessionBody, CreateTaskBody, InvokeBody, WaitQuery, WorkspacePath } from "../schemas.ts";
import { creationId, creationRefused, launch, startTask, takeRateToken } from "../task-creation.ts";
import { mayRead, taskResource } from "../task-resource.ts";
import { jsonBody, parseWith, readLimited } from "../validation.ts";
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
    ...(run.files ? { files: run.files } : {}),
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

function describe(agent: Agent, configuredModel: string | undefined): AgentDescription {
  return {
    name: agent.name,
    // "tool_loop" (the default loop) or "skills" (seed 002's decision loop over the skill catalog).
    kind: agent instanceof SkillAgent ? "skills" : "tool_loop",
    description: agent.description,
    role: agent.role,
    model: resolveModel(agent.model, configuredModel),
    temperature: agent.temperature,
    thinking_budget_tokens: agent.thinkingBudget,
    response_format: agent.responseFormat,
    max_tokens: agent.maxTokens,
    allowed_tools: [...agent.allowedTools],
    // Seed 004's least-privilege settings, as the agent's built-in tools are run with them.
    capabilities: {
      bash: agent.settings.bash,
      file_system: agent.settings.fileSystem,
      web_fetch: agent.settings.webFetch,
    },
    // Where each server is and how it is reached; header secrets stay out of it.
    mcp_servers: agent.mcpServers.map((s) => ({
      name: s.name,
      transport: s.transport,
      url: s.url,
      required: s.required,
    })),
    max_turns: agent.maxTurns,
    // Seed 004 permission_mode, with the per-tool rules that override it.
    permission_mode: agent.permissions.mode,
    tool_permissions: agent.permissions.rules,
    // Where deliveries go and how they are verified (the secret's name only, never its value).
    hooks: agent.hooks.map((h) => ({
      id: h.id,
      path: `/v1/hooks/${h.id}`,
      scheme: h.scheme,
      secret: h.secret,
      events: h.events ?? null,
    })),
    skills: agent instanceof SkillAgent ? (agent.skillNames === "all" ? "all" : [...agent.skillNames]) : null,
    system_prompt: agent.systemPrompt,
    source: sourceOf(agent),
    warnings: agent.origin.kind === "file" ? [...agent.origin.warnings] : [...(agent.runtime?.warnings ?? [])],
  };
}

function sourceOf(agent: Agent): AgentDescription["source"] {
  switch (agent.origin.kind) {
    case "file":
      return { kind: "file", path: agent.origin.path };
    case "runtime":
      return { kind: "runtime", version: agent.origin.record.version };
    default:
      return { kind: "typescript" };
  }
}

/** Media types an agent's body may come as: JSON, or YAML under any of its usual names. */
const AGENT_BODY_TYPES = /^(application\/json|application\/yaml|application\/x-yaml|text\/yaml|text\/x-yaml)\b/i;

/**
 * What a tenant's own agent may not say, since a tenant's admin is not the deployment's operator: the Worker's
 * secrets (a model key, an MCP server's header) and another model endpoint (which would receive a key), its
 * deployment-wide inbound hooks, and the tenants it serves (it serves its own). Such an agent is an agents/ file.
 */
function refuseDeploymentSettings(definition: AgentDefinition): void {
  const llm = definition.llmConfig;
  const servers = Object.entries(definition.mcpServers ?? {});
  const withHeaders = servers.find(([, server]) => "headers" in server && server.headers !== undefined)?.[0];
  const refusals: [boolean, string, string][] = [
    [definition.hooks !== undefined, "hooks", "inbound hooks are the deployment's: declare them in an agents/ file"],
    [definition.tenants !== undefined, "tenants", "an agent added with PUT belongs to the tenant that added it"],
    [llm?.endpoint !== undefined, "model.endpoint", "another model endpoint would receive the deployment's key"],
    [llm?.api_key !== undefined, "model.api_key", "the deployment's secrets are named in agents/ files only"],
    [
      withHeaders !== undefined,
      "tools",
      `the headers of "${withHeaders}" read the deployment's secrets: declare such a server in an agents/ file`,
    ],
  ];
  const refused = refusals.find(([given]) => given);
  if (refused) {
    throw new ApiError(
      "validation_failed",
      `Invalid ${refused[1]}: not for an agent added at runtime; ${refused[2]}.`,
      refused[1],
    );
  }
}

/** If-Match: the version the client saw (0: the agent must not exist yet); null without the header. */
function ifMatchVersion(header: string | undefined): number | null {
  if (header === undefined) return null;
  const match = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(header);
  if (!match)
    throw new ApiError(
      "validation_failed",
      'Invalid if-match: must be a version, e.g. "3" (0: not yet created).',
      "if-match",
    );
  return Number(match[1]);
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
  .get("/", async (c) => {
    // Only the agents the key's tenant may see: another tenant's agents (their MCP URLs, hook secrets' names) stay hidden.
    const agents = (await agentsFor(c)).map((agent) => describe(agent, c.env.OUTPOST_DEFAULT_MODEL));
    return c.json({ agents } satisfies AgentList);
  })
  .get("/:name", async (c) => {
    // A name that cannot be registered, and another tenant's agent, are answered like any unknown name: 404.
    return c.json(describe(await agentFor(c, c.req.param("name")), c.env.OUTPOST_DEFAULT_MODEL));
  })
  .put("/:name", requireAdmin, async (c) => {
    const name = c.req.param("name");
    if (!AGENT_NAME_PATTERN.test(name) || name.length > 64) {
      throw new ApiError(
        "validation_failed",
        `Invalid name: must match ${AGENT_NAME_PATTERN} (at most 64 characters).`,
        "name",
      );
    }
    if (!AGENT_BODY_TYPES.test(c.req.header("content-type") ?? "")) {
      throw new ApiError(
        "unsupported_media_type",
        "Send the agent as YAML ('Content-Type: application/yaml') or JSON ('Content-Type: application/json').",
        "content-type",
      );
    }
    const ifMatch = ifMatchVersion(c.req.header("if-match"));
    const bytes = await readLimited(c.req.raw.body, MAX_AGENT_FILE_BYTES);
    let source: string;
    try {
      source = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new ApiError("invalid_json", "The body is not valid UTF-8.");
    }
    let file: ReturnType<typeof parseAgentFile>;
    try {
      file = parseAgentFile("body", source);
    } catch (error) {
      if (error instanceof AgentFileError)
        throw new ApiError("validation_failed", error.message, error.key ?? "(body)");
      throw error;
    }
    if (file.definition.name !== name) {
      throw new ApiError(
        "validation_failed",
        `Invalid name: the body defines "${String(file.definition.name)}", the URL names "${name}".`,
        "name",
      );
    }
    refuseDeploymentSettings(file.definition);
    const outcome = await tenantStubFor(c.env, c.get("tenant")).putAgent(
      {
        name,
        source,
        sha256: await sha256Hex(source),
        definition: file.definition as unknown as JsonObject,
        warnings: file.warnings,
        created_by: c.get("apiKeyId"),
      },
      ifMatch,
    );
    // This instance's requests see the new version at once (others within OWN_AGENTS_TTL_MS).
    forgetOwnAgents(c.get("tenant"));
    if (outcome.outcome === "version_mismatch") {
      throw new ApiError(
        "agent_version_conflict",
        `The agent "${name}" is at version ${outcome.current}; If-Match named ${ifMatch}. Read it again and retry.`,
        "if-match",
      );
    }
    c.header("Location", `${new URL(c.req.url).origin}/v1/agents/${name}`);
    c.header("ETag", `"${outcome.agent.version}"`);
    if (outcome.outcome === "unchanged") c.header("Idempotent-Replayed", "true");
    return c.json(
      describe(storedAgent(outcome.agent), c.env.OUTPOST_DEFAULT_MODEL),
      outcome.outcome === "created" ? 201 : 200,
    );
  })
  .get("/:name/versions", async (c) => {
    const name = c.req.param("name");
    await agentFor(c, name);
    const versions = await tenantStubFor(c.env, c.get("tenant")).agentVersions(name);
    return c.json({ agent: name, versions } satisfies AgentVersionList);
  })
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
