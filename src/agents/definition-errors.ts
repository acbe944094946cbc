// How a definition's problems are told (src/agents/definition.ts checks it): every refusal is a DefinitionError naming
// its key (the definition's path to it, "allowedTools.2", "mcpServers.docs.url"), which a file's check turns into the
// file's key and line (src/agents/agent-file.ts) and PUT /v1/agents/:name into the 400's field. A zod issue is worded
// `Agent "<name>": <path> <what is wrong>.`, with the seeds' snake_case spellings pointed to the definition's camelCase
// and a union's issue taken from inside the branch that got furthest.
import type { z } from "zod";
import { ConfigError } from "../errors.ts";
import { TOOL_SETTINGS_SHAPE } from "../tools/settings.ts";
import { AGENT_NAME_PATTERN } from "./agent-name.ts";
import { ToolNameError } from "./tool-names.ts";

/** A refusal of a definition, and the key it is about (the definition's dotted path to it). */
export class DefinitionError extends ConfigError {
  readonly key: string;
  constructor(key: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    // A failed task names its error's type: still a ConfigError, as before keys were given.
    this.name = "ConfigError";
    this.key = key;
  }
}

/** The key a refusal of a definition is about, or null when it names none. */
export function definitionKey(error: unknown): string | null {
  return error instanceof DefinitionError || error instanceof ToolNameError ? error.key : null;
}

/** Runs a check of the definition, giving a ConfigError it throws without a key this one. */
export function keyed<T>(key: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!(error instanceof ConfigError) || definitionKey(error) !== null) throw error;
    throw new DefinitionError(key, error.message, { cause: error });
  }
}

/**
 * Parses `value` with `schema`, a definition or a part of one (a subclass's own keys), or throws a DefinitionError for
 * its first issue, worded as below.
 */
export function parseDefinitionPart<S extends z.ZodType>(agent: string, schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues;
  // A key the definition does not know is reported first: it is likely the reason for the rest.
  const first = issues.find((i) => i.code === "unrecognized_keys" && i.path.length === 0) ?? issues[0];
  if (!first) throw new ConfigError(`Agent "${agent}": invalid definition.`);
  const issue = innermost(first);
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] ?? ""] : issue.path;
  throw new DefinitionError(path.map(String).join(".") || "(definition)", issueText(agent, issue));
}

/** The seeds' snake_case names, which a definition spells in camelCase. */
const SEED_SPELLINGS: Readonly<Record<string, string>> = {
  system_prompt: "systemPrompt",
  allowed_tools: "allowedTools",
  mcp_servers: "mcpServers",
  file_system: "fileSystem",
  web_fetch: "webFetch",
  max_turns: "maxTurns",
  max_tokens: "maxTokens",
  max_iterations: "maxTurns",
  max_budget_usd: "maxBudgetUsd",
  extended_thinking: "extendedThinking",
  web_search: "webSearch",
  response_format: "responseFormat",
  permission_mode: "permissionMode",
  test_cases: "testCases",
  embedding_provider: "embeddingProvider",
  prompt_cache: "promptCache",
  provider_wait_seconds: "providerWaitSeconds",
};

/** Keys whose value is an object of its own settings: an issue inside one reads "<path>: <what is wrong>". */
const SECTIONS: ReadonlySet<string> = new Set([
  "bash",
  "fileSystem",
  "webFetch",
  "mcpServers",
  "hooks",
  "llmConfig",
  "testCases",
  "evaluations",
  "embeddingProvider",
  "knowledgeTools",
  "promptCache",
]);
/** The built-in tools' settings name an unknown key by its whole path ("unknown key bash.enable"). */
const TOOL_SETTINGS: ReadonlySet<string> = new Set(Object.keys(TOOL_SETTINGS_SHAPE));

/**
 * One issue as the ConfigError's message: `Agent "<name>": <path> <what is wrong>.` for the definition's own keys,
 * whose messages say what the key must be ("maxTurns must be a positive integer"), and `<path>: <message>` inside
 * a section and for zod's own messages.
 */
function issueText(agent: string, issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String);
  const at = path.join(".");
  const field = path[0];
  if (field === "name") return `Agent name "${agent}" must match ${AGENT_NAME_PATTERN} (lowercase, digits, _).`;
  if (field === "systemPrompt") return `Agent "${agent}" needs a system prompt.`;
  let text: string;
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0] ?? "";
    if (field === undefined) {
      const spelling = SEED_SPELLINGS[key];
      text = `unknown key "${key}"${spelling ? ` (the definition spells it ${spelling})` : ""}`;
    } else if (TOOL_SETTINGS.has(field)) {
      text = `unknown key ${issue.keys.map((k) => `${at}.${k}`).join(", ")}`;
    } else {
      text = `${at}: unknown key "${issue.keys.join('", "')}"`;
    }
  } else if (field === undefined) {
    text = issue.message;
  } else {
    const inSection = SECTIONS.has(field);
    text = `${at}${inSection || /^[A-Z]/.test(issue.message) ? ":" : ""} ${issue.message}`;
  }
  return `Agent "${agent}": ${text}${text.endsWith(".") ? "" : "."}`;
}

/**
 * The issue to report of a union (`promptCache: false | {ttl}`): the issue inside the branch that got as far as a
 * key of its own, with its whole path ("promptCache.ttl must be …"), rather than "matches no branch".
 */
export function innermost(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union") return issue;
  const inner = issue.errors.flat().find((i) => i.path.length > 0 || i.code === "unrecognized_keys");
  return inner ? innermost({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue) : issue;
}
