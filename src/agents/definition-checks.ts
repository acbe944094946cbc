// What one key of an agent's definition says about another (src/agents/definition.ts parses it, then asks these):
// evaluations against the response format and the grader, knowledge tools against their embedding provider, web
// search against the provider and allowedTools, thinking and temperature against the provider and the output budget,
// the sub-agents against the agent itself. Each throws a DefinitionError naming the key at fault.
import type { WebSearchTool20250305 } from "@anthropic-ai/sdk/resources/messages";
import { ConfigError } from "../errors.ts";
import { type EvaluationConfig, graderLlmConfig } from "../evaluations/config.ts";
import type { JsonObject } from "../lib/json.ts";
import { WEB_SEARCH_ALLOWED_NAME, webSearchTool } from "../llm/web-search.ts";
import { RUNNABLE_BUILTIN_TOOLS } from "../tools/builtin.ts";
import { DefinitionError, keyed } from "./definition-errors.ts";
import { responseSchema } from "./structured-output.ts";

/** What the checks read of a parsed definition (AgentDefinitionSchema's output, src/agents/definition.ts). */
interface Parsed {
  knowledgeTools: readonly { name: string }[];
  embeddingProvider?: unknown;
  llmConfig?: { provider: string } | undefined;
  webSearch?: Parameters<typeof webSearchTool>[0];
  allowedTools?: readonly string[] | undefined;
  toolPermissions?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * What the evaluation config says about the rest of the definition: a json_schema metric needs a schema (its own or
 * the agent's response_format), and its own must be a usable JSON Schema; the grader model must be a usable provider.
 */
export function checkEvaluations(
  agent: string,
  config: EvaluationConfig | undefined,
  responseFormat: JsonObject | null,
): void {
  if (!config) return;
  for (const [index, metric] of config.metrics.entries()) {
    if (metric.type !== "json_schema") continue;
    const at = `evaluations.metrics.${index}.schema`;
    if (metric.schema === undefined && responseFormat === null) {
      throw new DefinitionError(
        at,
        `Agent "${agent}": ${at} is needed: the agent has no responseFormat to check against.`,
      );
    }
    if (metric.schema !== undefined) {
      try {
        responseSchema(agent, metric.schema);
      } catch (error) {
        if (error instanceof ConfigError) throw new DefinitionError(at, error.message.replaceAll("responseFormat", at));
        throw error;
      }
    }
  }
  const grader = config.model ? graderLlmConfig(config.model) : null;
  if (grader && !grader.ok) {
    throw new DefinitionError(grader.key, `Agent "${agent}": ${grader.key}: ${grader.message}.`);
  }
}

/**
 * The names of the knowledge tools, checked: distinct, and with an embedding provider to embed their queries. Seed
 * 004's startup rule 1 refuses an Anthropic agent with a knowledge tool and no embedding_provider (Anthropic has no
 * embeddings API); Outpost embeds with the embedding provider whatever the model's provider, so every agent needs one.
 */
export function checkKnowledgeTools(
  agent: string,
  parsed: Pick<Parsed, "knowledgeTools" | "embeddingProvider" | "llmConfig">,
): string[] {
  const names = parsed.knowledgeTools.map((tool) => tool.name);
  const twice = names.findIndex((name, i) => names.indexOf(name) !== i);
  if (twice >= 0) {
    throw new DefinitionError(
      `knowledgeTools.${twice}.name`,
      `Agent "${agent}": knowledgeTools names "${names[twice]}" twice.`,
    );
  }
  if (names.length > 0 && !parsed.embeddingProvider) {
    const provider = parsed.llmConfig?.provider ?? "anthropic";
    throw new DefinitionError(
      "knowledgeTools.0",
      provider === "anthropic"
        ? `Agent "${agent}": knowledge tools on an Anthropic agent need embeddingProvider (seed 004 startup rule 1: Anthropic has no embeddings; openai or azure_openai).`
        : `Agent "${agent}": knowledge tools need embeddingProvider (openai or azure_openai), which embeds their queries.`,
    );
  }
  return names;
}

/** The built-in names an agent with web search may list: WebSearch is the server tool's (seed 000's name). */
export const WITH_WEB_SEARCH: ReadonlySet<string> = new Set([...RUNNABLE_BUILTIN_TOOLS, WEB_SEARCH_ALLOWED_NAME]);

/**
 * The web search server tool a definition turns on, or null; what it says about the provider and allowedTools is
 * checked here. A declared allowedTools lists WebSearch exactly when search is on, so the list always says whether
 * the model can search.
 */
export function checkWebSearch(
  agent: string,
  parsed: Pick<Parsed, "webSearch" | "allowedTools" | "llmConfig" | "toolPermissions">,
): WebSearchTool20250305 | null {
  const tool = webSearchTool(parsed.webSearch);
  const declared = parsed.allowedTools;
  if (!tool) {
    const listed = declared?.indexOf(WEB_SEARCH_ALLOWED_NAME) ?? -1;
    if (listed >= 0) {
      throw new DefinitionError(
        `allowedTools.${listed}`,
        `Agent "${agent}": allowedTools lists ${WEB_SEARCH_ALLOWED_NAME}, which needs webSearch: true in the agent's definition.`,
      );
    }
    return null;
  }
  const provider = parsed.llmConfig?.provider ?? "anthropic";
  if (provider !== "anthropic") {
    throw new DefinitionError(
      "webSearch",
      `Agent "${agent}": webSearch is Anthropic's server-side tool; this agent's provider is ${provider}.`,
    );
  }
  if (tool.allowed_domains && tool.blocked_domains) {
    throw new DefinitionError(
      "webSearch.blocked_domains",
      `Agent "${agent}": webSearch.allowed_domains and webSearch.blocked_domains cannot both be set (the API refuses it).`,
    );
  }
  checkDomains(agent, "allowed_domains", tool.allowed_domains);
  checkDomains(agent, "blocked_domains", tool.blocked_domains);
  if (declared && !declared.includes(WEB_SEARCH_ALLOWED_NAME)) {
    throw new DefinitionError(
      "allowedTools",
      `Agent "${agent}": webSearch is on but allowedTools does not list ${WEB_SEARCH_ALLOWED_NAME}: add it, or turn webSearch off.`,
    );
  }
  if (parsed.toolPermissions?.[WEB_SEARCH_ALLOWED_NAME] !== undefined) {
    throw new DefinitionError(
      `toolPermissions.${WEB_SEARCH_ALLOWED_NAME}`,
      `Agent "${agent}": toolPermissions.${WEB_SEARCH_ALLOWED_NAME}: web search runs inside the model call, where no person can review it.`,
    );
  }
  return tool;
}

/**
 * A web search domain as Anthropic's API takes one: a domain name (its subdomains are included), with no scheme, port
 * or wildcard in it, and an optional path holding at most one `*` (`example.com/blog/*`). A `*` alone would read as
 * "every domain" and match none.
 */
const SEARCH_DOMAIN =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\/[^\s*]*(?:\*[^\s*]*)?)?$/i;

function checkDomains(agent: string, list: string, domains: readonly string[] | null | undefined): void {
  for (const [index, domain] of (domains ?? []).entries()) {
    const at = `webSearch.${list}.${index}`;
    if (!SEARCH_DOMAIN.test(domain)) {
      throw new DefinitionError(
        at,
        `Agent "${agent}": ${at} ${JSON.stringify(domain)} must be a domain such as example.com (no scheme, port or wildcard in the domain; its subdomains are included, and a path may follow, with one * in it).`,
      );
    }
    if (domains?.indexOf(domain) !== index) {
      throw new DefinitionError(at, `Agent "${agent}": ${at} ${JSON.stringify(domain)} is listed twice.`);
    }
  }
}

/**
 * The Messages API's own compaction request (contextWindow.summarizer anthropic) is a beta of Anthropic's own API:
 * an agent of another provider, or of Claude on a cloud platform, is refused here rather than failing its first
 * compaction.
 */
export function checkSummarizer(
  agent: string,
  summarizer: string | undefined,
  llm: { provider: string; auth_provider?: string | undefined } | undefined,
): void {
  if (summarizer !== "anthropic") return;
  const provider = llm?.provider ?? "anthropic";
  const auth = llm?.auth_provider ?? "api_key";
  if (provider === "anthropic" && (auth === "api_key" || auth === "oauth_token")) return;
  const what = provider === "anthropic" ? `Claude through auth_provider ${auth}` : `provider ${provider}`;
  throw new ConfigError(
    `Agent "${agent}": contextWindow.summarizer anthropic is the Messages API's own compaction, on Anthropic's own API only (an API key or an OAuth token); this agent uses ${what}. Use summarizer outpost.`,
  );
}

/**
 * The sub-agents an agent names: never itself (a cycle through other agents is found where every agent is known:
 * src/agents/definition-subagents.ts), and each once.
 */
export function checkSubagents(agent: string, names: readonly string[]): void {
  for (const [index, name] of names.entries()) {
    const at = `subagents.agents.${index}`;
    if (name === agent) {
      throw new DefinitionError(
        at,
        `Agent "${agent}": ${at} "${name}" is this agent itself: an agent may not delegate to itself, directly or through others.`,
      );
    }
    if (names.indexOf(name) !== index)
      throw new DefinitionError(at, `Agent "${agent}": ${at} "${name}" is listed twice.`);
  }
}

/** What the model settings say about the provider and each other: temperature, thinking and the output budget. */
export function checkModelSettings(
  agent: string,
  parsed: {
    temperature?: number | undefined;
    maxTokens?: number | undefined;
    llmConfig?: { provider: string } | undefined;
  },
  thinking: number | null,
): void {
  const provider = parsed.llmConfig?.provider ?? "anthropic";
  // Validated per provider: Anthropic's current Messages API takes no sampling parameters (a request with one is a
  // 400), so an Anthropic agent is refused here rather than failing every run.
  if (parsed.temperature !== undefined && provider === "anthropic") {
    throw new DefinitionError(
      "temperature",
      `Agent "${agent}": temperature is not taken by Anthropic's models (the Messages API dropped sampling parameters); it applies to openai_compatible and gemini agents.`,
    );
  }
  if (thinking !== null && provider !== "anthropic") {
    throw new DefinitionError(
      "extendedThinking",
      `Agent "${agent}": extendedThinking is for Anthropic's models; this agent's provider is ${provider}.`,
    );
  }
  // The thinking is part of a call's output: max_tokens must exceed its budget (the API refuses otherwise). A
  // maxTokens left out is raised to leave the default answer room; one set too low is refused.
  if (thinking !== null && parsed.maxTokens !== undefined && parsed.maxTokens <= thinking) {
    throw new DefinitionError(
      "maxTokens",
      `Agent "${agent}": maxTokens (${parsed.maxTokens}) must be more than extendedThinking.budget_tokens (${thinking}): the thinking counts against each call's output.`,
    );
  }
}

/** Runs `check` on each name of a list, a refusal naming the entry (`<key>.<index>`). */
export function eachKeyed<T>(key: string, list: readonly T[], check: (item: T) => void): void {
  for (const [index, item] of list.entries()) keyed(`${key}.${index}`, () => check(item));
}
