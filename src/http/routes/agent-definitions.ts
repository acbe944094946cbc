// /v1/agents as definitions: the agents the tenant can run, described (GET /v1/agents, GET /v1/agents/:name), and
// the tenant's own agents added and replaced at runtime, versioned (PUT /v1/agents/:name, GET …/versions). Running
// one (tasks, sessions, invocations) is routes/agents.ts, which mounts these routes.
import { Hono } from "hono";
import { Agent, type AgentDefinition } from "../../agents/agent.ts";
import {
  type AgentFile,
  AgentFileError,
  filePatternProblem,
  MAX_AGENT_FILE_BYTES,
  parseAgentFile,
} from "../../agents/agent-file.ts";
import { registry } from "../../agents/catalog.ts";
import { AGENT_NAME_PATTERN } from "../../agents/definition.ts";
import { checkRuntimeAgent, runtimeAgentScope, subagentCycleError } from "../../agents/definition-runtime.ts";
import { describableVersion } from "../../agents/definition-stored.ts";
import { subagentNames } from "../../agents/definition-subagents.ts";
import { SkillAgent } from "../../agents/skill-agent.ts";
import { resolveModel } from "../../config/models.ts";
import { ApiError } from "../../errors.ts";
import type { JsonObject } from "../../lib/json.ts";
import { sha256Hex } from "../../lib/sha256.ts";
import { runtimeAgentLimits } from "../../tenants/agent-versions.ts";
import { tenantStubFor } from "../../tenants/directory.ts";
import {
  agentListingFor,
  currentOwnAgents,
  describedAgentFor,
  forgetOwnAgents,
  type StaleAgent,
  storedVersion,
} from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { requireAdmin } from "../auth.ts";
import { endpointAndKeyRefusals, refuseDeploymentSettings, type SettingRefusal } from "../deployment-settings.ts";
import type { AgentDescription, AgentList, AgentVersionList } from "../responses.ts";
import { bodyText } from "../validation.ts";

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
      web_search: agent.webSearch,
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

/**
 * A tenant's agent whose current version no longer passes the checks: what it says but the keys at fault, and first
 * among its warnings why it cannot run and how to mend it (the 409 of a run says the same).
 */
function describeStale(agent: StaleAgent, configuredModel: string | undefined): AgentDescription {
  const described = describe(describableVersion(agent.record), configuredModel);
  const reason = `Version ${agent.version} of this agent no longer passes Outpost's checks, at ${agent.stale.key}: ${agent.stale.message} It cannot run, and the settings shown leave that key out, until a corrected version is sent with PUT /v1/agents/${agent.name}.`;
  return { ...described, warnings: [reason, ...described.warnings] };
}

function described(agent: Agent | StaleAgent, configuredModel: string | undefined): AgentDescription {
  return agent instanceof Agent ? describe(agent, configuredModel) : describeStale(agent, configuredModel);
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
 * secrets (a model key or another auth provider's credentials) and another model endpoint (which would receive a
 * key), its deployment-wide inbound hooks, and the tenants it serves (it serves its own). Such an agent is an agents/
 * file. What it may reach and delegate to is checked with the file (checkRuntimeAgent, src/agents/definition-runtime.ts).
 */
function refuseRuntimeAgentSettings(definition: AgentDefinition): void {
  const llm = definition.llmConfig;
  const grader = definition.evaluations?.model;
  const refusals: SettingRefusal[] = [
    [definition.hooks !== undefined, "hooks", "inbound hooks are the deployment's: declare them in an agents/ file"],
    [definition.tenants !== undefined, "tenants", "an agent added with PUT belongs to the tenant that added it"],
    ...endpointAndKeyRefusals(llm, "model", "model"),
    [
      (llm?.auth_provider ?? "api_key") !== "api_key",
      "model.auth_provider",
      "the deployment's credentials for other auth providers (and their secrets) are for agents/ files only",
    ],
    ...endpointAndKeyRefusals(grader, "evaluations.model", "model"),
    ...endpointAndKeyRefusals(definition.embeddingProvider, "embedding_provider", "embeddings"),
  ];
  refuseDeploymentSettings(refusals, "an agent added at runtime");
}

/** The body checked as an agent file (`also`: the checks of an agent added at runtime), or 400 naming the key at fault. */
function checkedFile(source: string, also: (definition: AgentDefinition) => void): AgentFile {
  try {
    return parseAgentFile("body", source, also);
  } catch (error) {
    if (error instanceof AgentFileError) {
      throw new ApiError("validation_failed", error.message, error.field ?? "(body)");
    }
    throw error;
  }
}

/** A refusal of the body's definition (a check's DefinitionError) as checkedFile() answers one: 400, its key and line. */
function refusedAsFile(source: string, refusal: Error): never {
  checkedFile(source, () => {
    throw refusal;
  });
  // Not reached: the check above refuses the body whatever it holds.
  throw refusal;
}

/** The sub-agents of each of the Worker's agents the tenant may see, by name. */
function workerSubagents(tenant: string): Record<string, string[]> {
  return Object.fromEntries(
    registry.listFor(tenant).map((agent) => [agent.name, [...agent.settings.subagents.agents]]),
  );
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

export const agentDefinitionRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    // Only the agents the key's tenant may see: another tenant's agents (their MCP URLs, hook secrets' names) stay hidden.
    // Those of its own whose version no longer passes the checks too, each saying so: the tenant sees what to mend.
    const agents = (await agentListingFor(c)).map((agent) => described(agent, c.env.OUTPOST_DEFAULT_MODEL));
    return c.json({ agents } satisfies AgentList);
  })
  .get("/:name", async (c) => {
    // A name that cannot be registered, and another tenant's agent, are answered like any unknown name: 404.
    return c.json(described(await describedAgentFor(c, c.req.param("name")), c.env.OUTPOST_DEFAULT_MODEL));
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
    const source = await bodyText(c, MAX_AGENT_FILE_BYTES);
    const tenant = c.get("tenant");
    const limits = runtimeAgentLimits(c.env);
    // The tenant's agents as they are now, not as this instance last read them: a sub-agent must exist, and lead back
    // to no one.
    const own = await currentOwnAgents(c);
    const scope = runtimeAgentScope(tenant, c.env.OUTPOST_TENANT_PRIVATE_HOSTS, (agent) => {
      const stored = own.get(agent);
      return stored ? subagentNames(stored.definition) : registry.visible(agent, tenant)?.settings.subagents.agents;
    });
    const file = checkedFile(source, (definition) => checkRuntimeAgent(definition, scope));
    if (file.definition.name !== name) {
      throw new ApiError(
        "validation_failed",
        `Invalid name: the body defines "${String(file.definition.name)}", the URL names "${name}".`,
        "name",
      );
    }
    refuseRuntimeAgentSettings(file.definition);
    const badPattern = await filePatternProblem(file.definition);
    if (badPattern)
      throw new ApiError("validation_failed", `Invalid ${badPattern.field}: ${badPattern.message}.`, badPattern.field);
    const subagents = file.definition.subagents?.agents ?? [];
    const outcome = await tenantStubFor(c.env, tenant).putAgent(
      {
        name,
        source,
        sha256: await sha256Hex(source),
        definition: file.definition as unknown as JsonObject,
        warnings: file.warnings,
        created_by: c.get("apiKeyId"),
      },
      ifMatch,
      limits,
      // The object checks the sub-agents again as it writes: the Worker's agents among them, by what they delegate to.
      subagents.length > 0 ? workerSubagents(tenant) : {},
    );
    // This instance's requests see the new version at once (others within OWN_AGENTS_TTL_MS).
    forgetOwnAgents(tenant);
    if (outcome.outcome === "subagent_cycle") {
      // Another PUT closed the cycle after the check above: the same refusal, with its key and line in the body.
      refusedAsFile(source, subagentCycleError(name, subagents, outcome.cycle));
    }
    if (outcome.outcome === "version_mismatch") {
      throw new ApiError(
        "agent_version_conflict",
        `The agent "${name}" is at version ${outcome.current}; If-Match named ${ifMatch}. Read it again and retry.`,
        "if-match",
      );
    }
    if (outcome.outcome === "agent_limit") {
      throw new ApiError(
        "agent_limit_reached",
        `The tenant has ${outcome.limit} agents of its own, the most OUTPOST_MAX_RUNTIME_AGENTS allows; change one of them instead, or ask the operator to raise the limit.`,
        "name",
      );
    }
    if (outcome.outcome === "version_limit") {
      throw new ApiError(
        "agent_version_limit_reached",
        `The agent "${name}" has ${outcome.limit} versions, the most OUTPOST_MAX_AGENT_VERSIONS allows; Outpost drops none (a task may still need any), so add the change under a new name, or ask the operator to raise the limit.`,
        "name",
      );
    }
    c.header("Location", `${new URL(c.req.url).origin}/v1/agents/${name}`);
    c.header("ETag", `"${outcome.agent.version}"`);
    if (outcome.outcome === "unchanged") c.header("Idempotent-Replayed", "true");
    return c.json(
      described(storedVersion(outcome.agent), c.env.OUTPOST_DEFAULT_MODEL),
      outcome.outcome === "created" ? 201 : 200,
    );
  })
  .get("/:name/versions", async (c) => {
    const name = c.req.param("name");
    await describedAgentFor(c, name);
    const versions = await tenantStubFor(c.env, c.get("tenant")).agentVersions(name);
    return c.json({ agent: name, versions } satisfies AgentVersionList);
  });
