// Agents and workflows: GET /v1/agents, /v1/agents/:name, its versions, and GET /v1/workflows.

import { z } from "zod";
import { PERMISSION_MODES } from "../../approvals/permissions.ts";
import { HOOK_SCHEMES } from "../../inbound-hooks/hook.ts";
import { JsonObjectSchema } from "../../lib/json.ts";
import { WorkflowDefinitionSchema } from "../../workflows/definition.ts";
import { Timestamp } from "./common.ts";

// ---- Agents ------------------------------------------------------------------------------------------------------

/** An agent as GET /v1/agents/:name describes it: its definition, never a secret's value. */
export const AgentSchema = z.strictObject({
  name: z.string(),
  /** "tool_loop" (the default loop) or "skills" (seed 002's decision loop over the skill catalog). */
  kind: z.enum(["tool_loop", "skills"]),
  description: z.string(),
  /** Seed 003 Agent.role, or null. */
  role: z.string().nullable(),
  model: z.string(),
  /** Seed 003 Agent.temperature (OpenAI-compatible and Gemini agents), or null for the provider's default. */
  temperature: z.number().nullable(),
  /** Seed 004 extended thinking: each call's thinking budget, or null when the agent does not think first. */
  thinking_budget_tokens: z.number().int().positive().nullable(),
  /** Seed 004 response_format: the JSON Schema of the final answer (structured_output), or null. */
  response_format: JsonObjectSchema.nullable(),
  /** Output tokens per model call (thinking included). */
  max_tokens: z.number().int().positive(),
  allowed_tools: z.array(z.string()),
  /** Seed 004's least-privilege settings, as the agent's built-in tools are run with them. */
  capabilities: z.strictObject({
    bash: z.strictObject({ enabled: z.boolean(), excluded_commands: z.array(z.string()), allow_unsafe: z.boolean() }),
    file_system: z.strictObject({ read: z.boolean(), write: z.boolean(), edit: z.boolean() }),
    web_fetch: z.strictObject({
      enabled: z.boolean(),
      max_bytes: z.number().int().positive(),
      timeout_seconds: z.number().int().positive(),
    }),
    /** Anthropic's web search server tool as each model call offers it, or null when search is off. */
    web_search: z
      .strictObject({
        type: z.literal("web_search_20250305"),
        name: z.literal("web_search"),
        max_uses: z.number().int().positive().nullable().exactOptional(),
        allowed_domains: z.array(z.string()).nullable().exactOptional(),
        blocked_domains: z.array(z.string()).nullable().exactOptional(),
        user_location: z
          .strictObject({
            type: z.literal("approximate"),
            city: z.string().nullable().exactOptional(),
            region: z.string().nullable().exactOptional(),
            country: z.string().nullable().exactOptional(),
            timezone: z.string().nullable().exactOptional(),
          })
          .nullable()
          .exactOptional(),
      })
      .nullable(),
  }),
  /** Where each server is and how it is reached; header secrets stay out of it. */
  mcp_servers: z.array(
    z.strictObject({
      name: z.string(),
      transport: z.enum(["streamable_http", "sse"]),
      url: z.url(),
      required: z.boolean(),
    }),
  ),
  max_turns: z.number().int().positive(),
  /** Seed 004 permission_mode, with the per-tool rules that override it. */
  permission_mode: z.enum(PERMISSION_MODES),
  tool_permissions: z.record(z.string(), z.enum(["allow", "ask"])),
  /** Where deliveries go and how they are verified (the secret's name only, never its value). */
  hooks: z.array(
    z.strictObject({
      id: z.string(),
      /** POST here: /v1/hooks/<id>. */
      path: z.string(),
      scheme: z.enum(HOOK_SCHEMES),
      /** The name of the Worker secret that verifies deliveries. */
      secret: z.string(),
      /** The X-GitHub-Event values that start a run; null: all. */
      events: z.array(z.string()).nullable(),
    }),
  ),
  /** A skill agent's skills ("all": the whole catalog); null for another agent. */
  skills: z.union([z.array(z.string()), z.literal("all")]).nullable(),
  system_prompt: z.string(),
  /** Where it is defined: a file of agents/ (its path) or a TypeScript class. */
  source: z.discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("file"), path: z.string() }),
    z.strictObject({ kind: z.literal("typescript") }),
    /** The tenant's own agent (PUT /v1/agents/:name), at its current version. */
    z.strictObject({ kind: z.literal("runtime"), version: z.number().int().positive() }),
  ]),
  /** Seed 004's startup warnings about its definition (rules 2 and 3); empty when there are none. */
  warnings: z.array(z.string()),
});
export type AgentDescription = z.infer<typeof AgentSchema>;

/** GET /v1/agents/:name/versions: every version of the tenant's own agent, newest first (none for the Worker's). */
export const AgentVersionListSchema = z.strictObject({
  agent: z.string(),
  versions: z.array(
    z.strictObject({
      version: z.number().int().positive(),
      /** SHA-256 of the body as it was sent. */
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      warnings: z.array(z.string()),
      created_at: Timestamp,
      /** The id of the API key that sent it. */
      created_by: z.string(),
    }),
  ),
});
export type AgentVersionList = z.infer<typeof AgentVersionListSchema>;

/** GET /v1/agents: the agents the key's tenant may see, by name. */
export const AgentListSchema = z.strictObject({ agents: z.array(AgentSchema) });
export type AgentList = z.infer<typeof AgentListSchema>;

// ---- Workflows ---------------------------------------------------------------------------------------------------

/**
 * A workflow as GET /v1/workflows/:name describes it: its definition as checked (seed 003 Workflow, defaults
 * applied: an agent node's `pattern`, a tool node's `arguments`, `checkpoints`, `max_iterations`), and its source.
 */
export const WorkflowSchema = WorkflowDefinitionSchema.extend({
  source: z.discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("file"), path: z.string() }),
    z.strictObject({ kind: z.literal("typescript") }),
  ]),
});
export type WorkflowDescription = z.infer<typeof WorkflowSchema>;

/** GET /v1/workflows: the workflows the key's tenant may see (every agent they name visible to it), by name. */
export const WorkflowListSchema = z.strictObject({ workflows: z.array(WorkflowSchema) });
export type WorkflowList = z.infer<typeof WorkflowListSchema>;
