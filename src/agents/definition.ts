// An agent's definition (seed 000 MaverickAgent, seed 003 Agent, seed 004 ClaudeConfig) as one zod schema, composed
// from each subsystem's own part: the built-in tools' settings (src/tools/settings.ts), MCP servers
// (src/mcp/config.ts), review settings (src/approvals/permissions.ts), inbound hooks (src/inbound-hooks/hook.ts) and
// the model provider (src/llm/provider.ts). parseDefinition() checks it when the agent is built, so a bad definition
// fails at deploy time (and in tests), never in the middle of a run: a DefinitionError (a ConfigError) naming the key,
// or, for a tool name, a ToolNameError (an InvalidToolError) naming the entry (src/agents/definition-errors.ts).

import type { WebSearchTool20250305 } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { PERMISSION_SETTINGS_SHAPE, type ToolPermissions, toolPermissions } from "../approvals/permissions.ts";
import { DEFAULT_MAX_TOKENS } from "../config/models.ts";
import { type EvaluationConfig, EvaluationsSchema, type TestCase, TestCasesSchema } from "../evaluations/config.ts";
import type { RedactionMode } from "../events/redaction.ts";
import { type HookSpec, HooksSchema } from "../inbound-hooks/hook.ts";
import { type EmbeddingProvider, EmbeddingProviderSchema } from "../knowledge/embedding.ts";
import type { JsonObject } from "../lib/json.ts";
import { type PromptCachePolicy, PromptCacheSchema, promptCachePolicy } from "../llm/prompt-cache.ts";
import { type LlmConfig, LlmConfigSchema } from "../llm/provider.ts";
import { WEB_SEARCH_ALLOWED_NAME, WebSearchSettingSchema } from "../llm/web-search.ts";
import { type McpServerSpec, McpServersSchema } from "../mcp/config.ts";
import { DEFAULT_TENANT, TENANT_PATTERN } from "../tenants/api-keys.ts";
import { RUNNABLE_BUILTIN_TOOLS } from "../tools/builtin.ts";
import { KnowledgeToolSchema, type KnowledgeToolSpec } from "../tools/knowledge-tools.ts";
import { enabledBuiltins, requireCapabilities, TOOL_SETTINGS_SHAPE, type ToolSettings } from "../tools/settings.ts";
import { AGENT_NAME_PATTERN } from "./agent-name.ts";
import { SUMMARIZERS, type Summarizer } from "./compaction.ts";
import {
  checkEvaluations,
  checkKnowledgeTools,
  checkModelSettings,
  checkSubagents,
  checkSummarizer,
  checkWebSearch,
  eachKeyed,
  WITH_WEB_SEARCH,
} from "./definition-checks.ts";
import { DefinitionError, keyed, parseDefinitionPart } from "./definition-errors.ts";
import { type ResponseFormatInput, responseSchema } from "./structured-output.ts";
import { validateToolNames } from "./tool-names.ts";

export { AGENT_NAME_PATTERN };

const DEFAULT_MAX_TURNS = 10;
/** The most model turns of a run: a task's own max_turns has the same bound (MAX_TURNS_LIMIT, src/http/schemas.ts). */
const MOST_TURNS = 1_000;
/**
 * The most output tokens of one model call: the longest output of any model Outpost knows (128k, Claude's and
 * OpenAI's); a larger budget is no budget, and the provider refuses it.
 */
const MOST_OUTPUT_TOKENS = 128_000;
const POSITIVE_INTEGER = "must be a positive integer";

export const AgentDefinitionSchema = z.strictObject({
  /** Unique name, seed 003 pattern ^[a-z][a-z0-9_]*$ (it appears in URLs). */
  name: z.string().regex(AGENT_NAME_PATTERN),
  description: z.string().default(""),
  /** Seed 003 Agent.role: the agent's role or purpose, shown with the agent (GET /v1/agents); not sent to the model. */
  role: z.string().trim().min(1, "must not be empty").optional(),
  systemPrompt: z.string().refine((prompt) => prompt.trim() !== ""),
  /** Model turns before the run ends with "max_turns limit reached" (seed 004 max_turns). */
  maxTurns: z
    .number(POSITIVE_INTEGER)
    .int(POSITIVE_INTEGER)
    .positive(POSITIVE_INTEGER)
    .max(MOST_TURNS, "must be at most 1,000 (a task's own max_turns has the same bound)")
    .default(DEFAULT_MAX_TURNS),
  /** Remote MCP servers by name (seed 003 MCPServer); see src/mcp/config.ts for the fields. */
  mcpServers: McpServersSchema.prefault({}),
  ...TOOL_SETTINGS_SHAPE,
  /**
   * Built-in tool names, mcp__<server>__<tool> names and mcp__<server>__* (seed 004 allowed_tools); validated here
   * (FR-002) and against the servers' real tool lists when a run starts. Omitted: every configured tool (the
   * built-ins the settings turn on, and every tool of every declared MCP server).
   */
  allowedTools: z.array(z.string()).readonly().optional(),
  /** Pin a model; otherwise OUTPOST_DEFAULT_MODEL, then DEFAULT_MODEL (src/config/models.ts). */
  model: z.string().optional(),
  /**
   * Seed 003 Agent.temperature: the sampling temperature of every model call, 0–2, for OpenAI-compatible and Gemini
   * agents (Anthropic's current API takes none). Absent: the provider's default.
   */
  temperature: z
    .number("must be a number from 0 to 2")
    .min(0, "must be at least 0")
    .max(2, "must be at most 2")
    .optional(),
  /** Output token budget of each model call (raised past extendedThinking's budget when left at its default). */
  maxTokens: z
    .number(POSITIVE_INTEGER)
    .int(POSITIVE_INTEGER)
    .positive(POSITIVE_INTEGER)
    .max(MOST_OUTPUT_TOKENS, "must be at most 128,000 (the longest output of any model)")
    .optional(),
  /**
   * Seed 004 ExtendedThinkingConfig: the model thinks before it answers, within budget_tokens of each call's output:
   * 1,024 (the Messages API's minimum; the seed says 1,000) to 100,000. Anthropic agents only. The thinking streams as llm_thinking_delta events and stays, signed,
   * in the conversation.
   */
  extendedThinking: z
    .strictObject({
      enabled: z.boolean("must be true or false").default(false),
      budget_tokens: z
        .number("must be a whole number from 1,024 to 100,000")
        .int("must be a whole number from 1,024 to 100,000")
        .min(1_024, "must be at least 1,024 (the Messages API's minimum)")
        .max(100_000, "must be at most 100,000")
        .default(10_000),
    })
    .optional(),
  /**
   * Seed 004 web_search: Anthropic's server-side web search, offered to the model beside its tools. `true`, or
   * {enabled (default true), max_uses, allowed_domains | blocked_domains, user_location}. Anthropic agents only. The
   * API runs the searches inside a model call; a declared allowedTools must list WebSearch (src/llm/web-search.ts).
   */
  webSearch: WebSearchSettingSchema.optional(),
  /**
   * Seed 004 response_format: the final answer is one JSON value conforming to this JSON Schema (or zod schema),
   * validated, with one re-ask on a mismatch (src/agents/structured-output.ts). Default tool loop agents only.
   */
  responseFormat: z
    .union([
      z.custom<z.ZodType>((value) => value instanceof z.ZodType),
      z.record(z.string(), z.unknown(), "must be a JSON Schema object or a zod schema"),
    ])
    .optional(),
  /** Default cost budget of a task, USD (a task may set its own max_budget_usd). */
  maxBudgetUsd: z
    .number("must be a positive number of US dollars")
    .positive("must be a positive number of US dollars")
    .optional(),
  /**
   * The model's context window and when the conversation is compacted to stay inside it (docs/compaction.md):
   * `tokens` (default: the model table's, src/config/models.ts), `compact_at` (the share of the room for the prompt
   * at which a compaction starts, default 0.75), `compact_to` (the share it brings the prompt down to, default 0.5)
   * and `summarizer` (who writes a summary: `outpost`, the agent's model with Outpost's prompt, or `anthropic`, the
   * Messages API's own compaction request and its signed block; Anthropic's own API only).
   */
  contextWindow: z
    .strictObject({
      tokens: z
        .number("must be a whole number of tokens, at least 1,024")
        .int("must be a whole number of tokens, at least 1,024")
        .min(1_024, "must be at least 1,024 tokens")
        .optional(),
      compact_at: z
        .number("must be a share from 0.2 to 0.95")
        .min(0.2, "must be at least 0.2")
        .max(0.95, "must be at most 0.95")
        .default(0.75),
      compact_to: z
        .number("must be a share from 0.1 to 0.9")
        .min(0.1, "must be at least 0.1")
        .max(0.9, "must be at most 0.9")
        .default(0.5),
      summarizer: z.enum(SUMMARIZERS).default("outpost"),
    })
    .refine((window) => window.compact_to < window.compact_at, {
      message: "compact_to must be below compact_at",
      path: ["compact_to"],
    })
    .optional(),
  /**
   * How long one model call may wait out its provider (an outage, a rate limit), from its first failure, before the
   * run fails with the provider's last error (docs/provider-waits.md). Absent: OUTPOST_PROVIDER_WAIT_SECONDS, else 30
   * minutes.
   */
  providerWaitSeconds: z
    .number("must be a whole number of seconds from 1 to 86,400")
    .int("must be a whole number of seconds from 1 to 86,400")
    .min(1, "must be at least 1 second")
    .max(86_400, "must be at most 86,400 seconds (a day)")
    .optional(),
  ...PERMISSION_SETTINGS_SHAPE,
  /**
   * Seed 002 redaction_mode for this agent's tasks unless a task says: "redacted" keeps prompts and responses out
   * of the event stream (the run bundle's transcript keeps them). Default "full".
   */
  redactionMode: z.enum(["full", "redacted"] satisfies RedactionMode[], 'must be "full" or "redacted"').default("full"),
  /**
   * Seed 003 LLMConfig: the model provider (seed 002 ProviderName anthropic or gemini, or any openai_compatible
   * endpoint), its endpoint, and the NAME of the Worker secret holding its API key. Absent: Anthropic.
   */
  llmConfig: LlmConfigSchema.optional(),
  /** Prompt caching (docs/costs.md): false turns it off; {ttl: "5m" | "1h", cache_key}. Absent: on, 5 minutes. */
  promptCache: PromptCacheSchema.optional(),
  /**
   * Seed 004 embedding_provider: OpenAI or Azure OpenAI, which embeds the queries of the knowledge tools (the key by
   * the NAME of its Worker secret). Required with any knowledge tool (seed 004 startup rule 1 for Anthropic agents;
   * Outpost embeds with it whatever the model's provider). See src/knowledge/embedding.ts.
   */
  embeddingProvider: EmbeddingProviderSchema.optional(),
  /**
   * Seed 004 VectorstoreTool and HierarchicalDocumentToolConfig: tools that search the tenant's collections
   * (docs/knowledge.md), each by its own name. See src/tools/knowledge-tools.ts.
   */
  knowledgeTools: z.array(KnowledgeToolSchema).max(16, "must list at most 16 knowledge tools").default([]),
  /**
   * The tenants that may see and run this agent (each matching TENANT_PATTERN). Another tenant is told the agent
   * does not exist, on every route. Absent: every tenant (a single-tenant deployment needs nothing here).
   */
  tenants: z
    .array(z.string().regex(TENANT_PATTERN, `must match ${TENANT_PATTERN}`))
    .min(1, "must list at least one tenant (omit it for every tenant)")
    .readonly()
    .optional(),
  /**
   * Inbound webhooks that start this agent (POST /v1/hooks/<id>): by id, the signing scheme, the Worker secret that
   * verifies deliveries, and the template that makes the task's input. See src/inbound-hooks/hook.ts.
   */
  hooks: HooksSchema.prefault({}),
  /**
   * Seed 004 test_cases: messages on a fresh conversation with what the answer should be, run by POST
   * /v1/agents/:name/evaluations and `outpost test` (src/evaluations/config.ts). Never used by a task.
   */
  testCases: TestCasesSchema.optional(),
  /** Seed 004 evaluations: the metrics that judge every test case, their thresholds, and the grader model. */
  evaluations: EvaluationsSchema.optional(),
});

/** An agent's definition as its author writes it. */
export type AgentDefinition = z.input<typeof AgentDefinitionSchema>;

/** A definition, checked: what an Agent holds. */
export interface AgentSpec {
  name: string;
  description: string;
  role: string | null;
  systemPrompt: string;
  /** allowedTools as declared, or the built-ins the settings turn on and every declared server's wildcard. */
  allowedTools: readonly string[];
  /** allowedTools as declared, or undefined when the definition left it out. */
  declaredTools: readonly string[] | undefined;
  mcpServers: readonly McpServerSpec[];
  settings: ToolSettings;
  model: string | undefined;
  maxTurns: number;
  maxTokens: number;
  /** The thinking budget of each call, or null when the agent does not think first. */
  thinkingBudget: number | null;
  /** The web search server tool each call offers, or null when search is off. */
  webSearch: WebSearchTool20250305 | null;
  temperature: number | null;
  maxBudgetUsd: number | null;
  /** How long a model call may wait out its provider, in seconds; null: the deployment's. */
  providerWaitSeconds: number | null;
  /** The agent's own context window and compaction marks; null: the model table's window and the default marks. */
  contextWindow: { tokens: number | null; compactAt: number; compactTo: number; summarizer: Summarizer } | null;
  /** The JSON Schema the final answer must conform to, or null. */
  responseFormat: JsonObject | null;
  permissions: ToolPermissions;
  hooks: readonly HookSpec[];
  redactionMode: RedactionMode;
  llmConfig: LlmConfig | null;
  /** Null when caching is off. */
  promptCache: PromptCachePolicy;
  embeddingProvider: EmbeddingProvider | null;
  knowledgeTools: readonly KnowledgeToolSpec[];
  tenants: readonly string[] | null;
  testCases: readonly TestCase[];
  evaluations: EvaluationConfig | null;
}

/** Checks a definition: its schema, then what one key says about another. Every refusal names its key. */
export function parseDefinition(definition: AgentDefinition): AgentSpec {
  const agent = String(definition.name);
  const parsed = parseDefinitionPart(agent, AgentDefinitionSchema, definition);
  const servers = parsed.mcpServers;
  const serverNames = new Set(servers.map((s) => s.name));
  const settings: ToolSettings = {
    bash: parsed.bash,
    fileSystem: parsed.fileSystem,
    webFetch: parsed.webFetch,
    subagents: parsed.subagents,
    workingDirectory: parsed.workingDirectory,
  };
  checkSubagents(agent, settings.subagents.agents);
  const webSearch = checkWebSearch(agent, parsed);
  const knowledgeNames = checkKnowledgeTools(agent, parsed);
  const tools = parsed.allowedTools ?? [
    ...enabledBuiltins(settings),
    ...(webSearch ? [WEB_SEARCH_ALLOWED_NAME] : []),
    ...servers.map((s) => `mcp__${s.name}__*`),
    ...knowledgeNames,
  ];
  const runnable = webSearch ? WITH_WEB_SEARCH : RUNNABLE_BUILTIN_TOOLS;
  validateToolNames(
    tools,
    knowledgeNames.length > 0 ? new Set([...runnable, ...knowledgeNames]) : runnable,
    serverNames,
  );
  eachKeyed("allowedTools", tools, (tool) => requireCapabilities(agent, [tool], settings));
  for (const server of servers) {
    for (const [tool, toolSettings] of Object.entries(server.tools)) {
      // Fallbacks are MCP tools of declared servers; they take the same arguments as the tool they stand in for.
      const at = `mcpServers.${server.name}.tools.${tool}.fallback_tools`;
      validateToolNames(toolSettings.fallbackTools, new Set(), serverNames, at);
      const itself = toolSettings.fallbackTools.indexOf(`mcp__${server.name}__${tool}`);
      if (itself >= 0) {
        throw new DefinitionError(`${at}.${itself}`, `Agent "${agent}": ${at} lists the tool itself.`);
      }
    }
  }
  keyed("contextWindow.summarizer", () => checkSummarizer(agent, parsed.contextWindow?.summarizer, parsed.llmConfig));
  const thinking = parsed.extendedThinking?.enabled ? parsed.extendedThinking.budget_tokens : null;
  checkModelSettings(agent, parsed, thinking);
  const maxTokens = parsed.maxTokens ?? (thinking === null ? DEFAULT_MAX_TOKENS : thinking + DEFAULT_MAX_TOKENS);
  const tenants = parsed.tenants ? Object.freeze([...new Set(parsed.tenants)]) : null;
  for (const hook of parsed.hooks) {
    // A hook starts tasks of its tenant; one the agent refuses would fail every run it starts.
    if (tenants !== null && !tenants.includes(hook.tenant)) {
      throw new DefinitionError(
        `hooks.${hook.id}.tenant`,
        `Agent "${agent}": hooks.${hook.id}.tenant "${hook.tenant}" is not one of the agent's tenants ` +
          `(${tenants.join(", ")}); a hook without a tenant starts tasks of "${DEFAULT_TENANT}".`,
      );
    }
  }
  const responseFormat =
    parsed.responseFormat === undefined
      ? null
      : keyed("responseFormat", () => responseSchema(agent, parsed.responseFormat as ResponseFormatInput));
  checkEvaluations(agent, parsed.evaluations, responseFormat);
  for (const [index, c] of (parsed.testCases ?? []).entries()) {
    const server = c.faults?.mcp_fault?.server;
    if (server !== undefined && !servers.some((s) => s.name === server)) {
      throw new DefinitionError(
        `testCases.${index}.faults.mcp_fault.server`,
        `Agent "${agent}": test_cases.${index}.faults.mcp_fault.server "${server}" is not one of the agent's MCP servers.`,
      );
    }
  }
  return {
    name: parsed.name,
    description: parsed.description,
    role: parsed.role ?? null,
    systemPrompt: parsed.systemPrompt,
    allowedTools: Object.freeze([...tools]),
    declaredTools: parsed.allowedTools ? Object.freeze([...parsed.allowedTools]) : undefined,
    mcpServers: Object.freeze(servers),
    settings,
    model: parsed.model,
    maxTurns: parsed.maxTurns,
    maxTokens,
    thinkingBudget: thinking,
    webSearch,
    temperature: parsed.temperature ?? null,
    maxBudgetUsd: parsed.maxBudgetUsd ?? null,
    providerWaitSeconds: parsed.providerWaitSeconds ?? null,
    contextWindow: parsed.contextWindow
      ? {
          tokens: parsed.contextWindow.tokens ?? null,
          compactAt: parsed.contextWindow.compact_at,
          compactTo: parsed.contextWindow.compact_to,
          summarizer: parsed.contextWindow.summarizer,
        }
      : null,
    responseFormat,
    // Web search runs inside the model call: no person can review a search, so no rule may name it.
    permissions: permissionsOf(agent, parsed, tools),
    hooks: Object.freeze(parsed.hooks),
    redactionMode: parsed.redactionMode,
    llmConfig: parsed.llmConfig ?? null,
    promptCache: promptCachePolicy(parsed.promptCache),
    embeddingProvider: parsed.embeddingProvider ?? null,
    knowledgeTools: Object.freeze(parsed.knowledgeTools),
    tenants,
    testCases: Object.freeze(parsed.testCases ?? []),
    evaluations: parsed.evaluations ?? null,
  };
}

/** The agent's review settings, checked against its tools rule by rule, so a refusal names the rule's key. */
function permissionsOf(
  agent: string,
  parsed: Parameters<typeof toolPermissions>[1],
  tools: readonly string[],
): ToolPermissions {
  const reviewed = tools.filter((t) => t !== WEB_SEARCH_ALLOWED_NAME);
  for (const [tool, rule] of Object.entries(parsed.toolPermissions ?? {})) {
    keyed(`toolPermissions.${tool}`, () =>
      toolPermissions(agent, { ...parsed, toolPermissions: { [tool]: rule } }, reviewed),
    );
  }
  return toolPermissions(agent, parsed, reviewed);
}
