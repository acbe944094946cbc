// What one key of an agent's definition says about another (src/agents/definition.ts parses it, then asks these):
// evaluations against the response format and the grader, knowledge tools against their embedding provider, web
// search against the provider and allowedTools. Each throws a ConfigError naming the keys.
import type { WebSearchTool20250305 } from "@anthropic-ai/sdk/resources/messages";
import { ConfigError } from "../errors.ts";
import { type EvaluationConfig, graderLlmConfig } from "../evaluations/config.ts";
import type { JsonObject } from "../lib/json.ts";
import { WEB_SEARCH_ALLOWED_NAME, webSearchTool } from "../llm/web-search.ts";
import { RUNNABLE_BUILTIN_TOOLS } from "../tools/builtin.ts";
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
      throw new ConfigError(`Agent "${agent}": ${at} is needed: the agent has no responseFormat to check against.`);
    }
    if (metric.schema !== undefined) {
      try {
        responseSchema(agent, metric.schema);
      } catch (error) {
        if (error instanceof ConfigError) throw new ConfigError(error.message.replaceAll("responseFormat", at));
        throw error;
      }
    }
  }
  const grader = config.model ? graderLlmConfig(config.model) : null;
  if (grader && !grader.ok) throw new ConfigError(`Agent "${agent}": ${grader.key}: ${grader.message}.`);
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
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) throw new ConfigError(`Agent "${agent}": knowledgeTools names "${twice}" twice.`);
  if (names.length > 0 && !parsed.embeddingProvider) {
    const provider = parsed.llmConfig?.provider ?? "anthropic";
    throw new ConfigError(
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
    if (declared?.includes(WEB_SEARCH_ALLOWED_NAME)) {
      throw new ConfigError(
        `Agent "${agent}": allowedTools lists ${WEB_SEARCH_ALLOWED_NAME}, which needs webSearch: true in the agent's definition.`,
      );
    }
    return null;
  }
  const provider = parsed.llmConfig?.provider ?? "anthropic";
  if (provider !== "anthropic") {
    throw new ConfigError(
      `Agent "${agent}": webSearch is Anthropic's server-side tool; this agent's provider is ${provider}.`,
    );
  }
  if (tool.allowed_domains && tool.blocked_domains) {
    throw new ConfigError(
      `Agent "${agent}": webSearch.allowed_domains and webSearch.blocked_domains cannot both be set (the API refuses it).`,
    );
  }
  if (declared && !declared.includes(WEB_SEARCH_ALLOWED_NAME)) {
    throw new ConfigError(
      `Agent "${agent}": webSearch is on but allowedTools does not list ${WEB_SEARCH_ALLOWED_NAME}: add it, or turn webSearch off.`,
    );
  }
  if (parsed.toolPermissions?.[WEB_SEARCH_ALLOWED_NAME] !== undefined) {
    throw new ConfigError(
      `Agent "${agent}": toolPermissions.${WEB_SEARCH_ALLOWED_NAME}: web search runs inside the model call, where no person can review it.`,
    );
  }
  return tool;
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
