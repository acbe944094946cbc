// An agent written as a YAML file (seed 004 section 7, the Agent YAML with its `claude:` block; seed 003 Agent): the
// file's schema, what it becomes (an agent definition, then checked by the same parseDefinition as a TypeScript
// agent), and seed 004's startup validation rules, which refuse a file or warn about it. Files in agents/ are
// compiled in by scripts/build-agents.ts, which fails the build with the file, line and key of the first problem.
//
// The file's keys are the seeds' snake_case names; each value is checked by the very schema the definition uses for
// it (AgentDefinitionSchema's own parts), so a file and a class accept the same values. What Outpost adds beyond the
// seeds (budgets, redaction, tenants, inbound hooks, WebFetch, per-tool approval rules) are top-level keys of the
// same spelling. Adapted to Workers: `tools` are remote MCP servers (no stdio), and the settings Outpost does not
// have yet are refused by name rather than ignored.
import { z } from "zod";
import { PERMISSION_SETTINGS_SHAPE } from "../approvals/permissions.ts";
import { ConfigError, DefinitionFileError } from "../errors.ts";
import { regexProblem } from "../evaluations/grade.ts";
import { type PatternProblem, re2PatternProblem } from "../lib/json-schema.ts";
import { readYaml, YamlSyntaxError } from "../lib/yaml-source.ts";
import { AUTH_PROVIDERS, LlmConfigSchema, PROVIDER_NAMES } from "../llm/provider.ts";
import { McpServerSchema } from "../mcp/config.ts";
import { HierarchicalDocumentToolSchema, VectorstoreToolSchema } from "../tools/knowledge-tools.ts";
import { type FileTools, fileKeyOf, inFileTerms, namedFileKeys } from "./agent-file-keys.ts";
import { type AgentDefinition, AgentDefinitionSchema, parseDefinition } from "./definition.ts";
import { definitionKey, innermost } from "./definition-errors.ts";

/** Largest agent file accepted (bytes): a prompt and settings, not a corpus. */
export const MAX_AGENT_FILE_BYTES = 256 * 1024;

const definition = AgentDefinitionSchema.shape;

/** Seed 004 LLMProvider, with Outpost's provider names (seed 002 ProviderName, and any OpenAI-compatible endpoint). */
const ModelSchema = z.strictObject({
  provider: z.enum(PROVIDER_NAMES).default("anthropic"),
  /** The model id; absent: OUTPOST_DEFAULT_MODEL, then the built-in default. */
  name: z.string().min(1).max(200).optional(),
  temperature: definition.temperature,
  max_tokens: definition.maxTokens,
  auth_provider: z.enum(AUTH_PROVIDERS).optional(),
  endpoint: LlmConfigSchema.in.shape.endpoint,
  /** The NAME of the Worker secret holding the key, never the key. */
  api_key: LlmConfigSchema.in.shape.api_key,
  // Each auth provider's settings (src/llm/provider.ts): names of secrets, never their values.
  oauth_token: LlmConfigSchema.in.shape.oauth_token,
  bedrock: LlmConfigSchema.in.shape.bedrock,
  vertex: LlmConfigSchema.in.shape.vertex,
  foundry: LlmConfigSchema.in.shape.foundry,
});

/** The keys of `model:` that go into the definition's llmConfig as they are. */
const LLM_KEYS = ["endpoint", "api_key", "oauth_token", "bedrock", "vertex", "foundry"] as const;

/** Seed 004 ClaudeConfig: every capability off unless turned on. */
const ClaudeSchema = z.strictObject({
  working_directory: definition.workingDirectory.optional(),
  permission_mode: PERMISSION_SETTINGS_SHAPE.permissionMode.optional(),
  max_turns: definition.maxTurns.optional(),
  extended_thinking: definition.extendedThinking,
  web_search: definition.webSearch,
  bash: definition.bash.optional(),
  file_system: definition.fileSystem.optional(),
  /** Seed 004 SubagentConfig {enabled, max_parallel}, with the agents it may delegate to (Outpost's addition). */
  subagents: definition.subagents.optional(),
  allowed_tools: z.array(z.string()).optional(),
});

/**
 * A tool of the file: a remote MCP server by name, or one of seed 004's knowledge tools (VectorstoreTool,
 * HierarchicalDocumentToolConfig) searching a collection of the tenant's (see rule 1; src/tools/knowledge-tools.ts).
 */
const ToolSchema = z.discriminatedUnion("type", [
  McpServerSchema.extend({ type: z.literal("mcp"), name: z.string().min(1).max(64) }),
  VectorstoreToolSchema,
  HierarchicalDocumentToolSchema,
]);

export const AgentFileSchema = z.strictObject({
  name: definition.name,
  description: definition.description,
  role: definition.role,
  /** The system prompt (seed 004 instructions; seed 003 system_prompt): inline text. */
  instructions: z.union([
    z.string().refine((s) => s.trim() !== "", "must not be empty"),
    z.strictObject({ inline: z.string().refine((s) => s.trim() !== "", "must not be empty") }),
  ]),
  model: ModelSchema.prefault({}),
  /** Seed 004: the provider of embeddings for knowledge tools (rule 1): openai or azure_openai. */
  embedding_provider: definition.embeddingProvider,
  claude: ClaudeSchema.optional(),
  tools: z.array(ToolSchema).max(32).default([]),
  /** Semantic Kernel's tool filtering: Anthropic agents ignore it (rule 2). */
  tool_filtering: z.unknown().optional(),
  /** Seed 004 response_format: the JSON Schema the final answer conforms to (structured_output). */
  response_format: z.record(z.string(), z.unknown(), "must be a JSON Schema object").optional(),
  /** Seed 004 test_cases and evaluations (src/evaluations/config.ts): for evaluation runs, never used by a task. */
  test_cases: definition.testCases,
  evaluations: definition.evaluations,
  // Outpost's own settings.
  max_budget_usd: definition.maxBudgetUsd,
  provider_wait_seconds: definition.providerWaitSeconds,
  context_window: definition.contextWindow,
  prompt_cache: definition.promptCache,
  redaction_mode: definition.redactionMode.optional(),
  tenants: definition.tenants,
  hooks: z.record(z.string(), z.unknown()).optional(),
  web_fetch: definition.webFetch.optional(),
  tool_permissions: PERMISSION_SETTINGS_SHAPE.toolPermissions,
  approval_timeout_seconds: PERMISSION_SETTINGS_SHAPE.approvalTimeoutSeconds,
  on_approval_timeout: PERMISSION_SETTINGS_SHAPE.onApprovalTimeout.optional(),
});
type AgentFileInput = z.input<typeof AgentFileSchema>;
type AgentFileValue = z.output<typeof AgentFileSchema>;

/** A checked agent file: the definition it makes and its warnings. */
export interface AgentFile {
  /** Where it came from, e.g. "agents/support.yaml". */
  path: string;
  definition: AgentDefinition;
  /** Seed 004's startup warnings (rules 2 and 3, auth_provider on another provider). */
  warnings: string[];
}

/** A problem in an agent file, with the line of the key it is about when that is known. */
export class AgentFileError extends DefinitionFileError {
  /**
   * The file's key the problem is about (PUT /v1/agents/:name's 400 names it): `key`, or the key at fault of a check
   * that relates keys, whose message names it in its own words.
   */
  readonly field: string | null;
  constructor(path: string, line: number | null, key: string | null, message: string, field: string | null = key) {
    super(path, line, key, message);
    this.field = field;
  }
}

/**
 * The first regular expression of a checked file's definition that RE2 refuses, with its key in the file: a regex
 * metric's pattern, or a `pattern` or `patternProperties` key of response_format or of a json_schema metric's schema
 * (which must compile with JavaScript's RegExp too, the engine of the validator). Called where re2js can be waited
 * for: scripts/build-agents.ts and PUT /v1/agents/:name (parseAgentFile's checks are synchronous, and check RegExp).
 */
export async function filePatternProblem(definition: AgentDefinition): Promise<PatternProblem | null> {
  const evaluations = definition.evaluations;
  const regex = await regexProblem(evaluations);
  if (regex) return regex;
  for (const [index, metric] of (evaluations?.metrics ?? []).entries()) {
    if (metric.type !== "json_schema" || metric.schema === undefined) continue;
    const problem = await re2PatternProblem(metric.schema, `evaluations.metrics.${index}.schema`);
    if (problem) return problem;
  }
  const format = definition.responseFormat;
  return format === undefined || format instanceof z.ZodType ? null : re2PatternProblem(format, "response_format");
}

/**
 * Parses and checks one agent file (YAML, or JSON, which is YAML too). `also` checks more of the definition (an agent
 * added at runtime: src/agents/definition-runtime.ts); its refusals are the file's, with their key and line.
 */
export function parseAgentFile(path: string, source: string, also?: (definition: AgentDefinition) => void): AgentFile {
  let doc: ReturnType<typeof readYaml>;
  try {
    doc = readYaml(source);
  } catch (error) {
    if (!(error instanceof YamlSyntaxError)) throw error;
    const key = error.keys && error.keys.length > 0 ? error.keys.map(String).join(".") : null;
    throw new AgentFileError(path, error.line, key, error.message);
  }
  const lineOf = doc.lineOf;
  const raw: unknown = doc.value;
  const parsed = AgentFileSchema.safeParse(raw);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    // A union's issue from inside the branch that got furthest ("claude.web_search.max_uses", not "claude.web_search").
    const issue = first ? innermost(first) : undefined;
    const at = issue?.path ?? [];
    const keys = issue?.code === "unrecognized_keys" ? [...at, issue.keys[0] ?? ""] : at;
    const key = keys.length > 0 ? keys.map(String).join(".") : null;
    const message = issue?.code === "unrecognized_keys" ? "unknown key" : (issue?.message ?? "invalid");
    throw new AgentFileError(path, lineOf(keys), key, message);
  }
  const file = parsed.data;
  const refuse = (keys: PropertyKey[], message: string): never => {
    throw new AgentFileError(path, lineOf(keys), keys.map(String).join("."), message);
  };
  const warnings = startupRules(file, refuse);
  const defined = toDefinition(file, raw as AgentFileInput);
  try {
    // The checks that relate one key to another, exactly as for a TypeScript agent.
    parseDefinition(defined);
    also?.(defined);
  } catch (error) {
    if (!(error instanceof ConfigError) && definitionKey(error) === null) throw error;
    throw definitionRefusal(path, error as Error, lineOf, (raw as AgentFileInput).tools);
  }
  return { path, definition: defined, warnings };
}

/**
 * A refusal of the definition's checks as the file's: the file's key (the error's key in the file's terms), its line,
 * and the message in the file's terms, which says the key itself when it names none.
 */
function definitionRefusal(
  path: string,
  error: Error,
  lineOf: (keys: readonly PropertyKey[]) => number | null,
  tools: FileTools,
): AgentFileError {
  const { field, message, keyed } = refusalInFileTerms(error, tools);
  const line = field === null ? null : lineOf(field.split("."));
  return new AgentFileError(
    path,
    line,
    keyed && field !== null && !message.includes(field) ? field : null,
    message,
    field,
  );
}

/** A refusal of a definition's checks in a file's terms (refusalInFileTerms). */
export interface FileTermsRefusal {
  /** The file's key at fault, or null when neither the error nor its message names one. */
  field: string | null;
  /** The message in the file's terms, without the `Agent "<name>": ` it opens with. */
  message: string;
  /** Whether the error itself named the key (else the field is the first key its message names). */
  keyed: boolean;
}

/**
 * A refusal of the definition's checks (a DefinitionError, a ToolNameError, a ConfigError naming no key) in the terms
 * of the file the definition came from, whose `tools` place its MCP servers and knowledge tools: what PUT
 * /v1/agents/:name answers, and what a stored version that no longer passes says (src/agents/definition-stored.ts).
 */
export function refusalInFileTerms(error: Error, tools: FileTools): FileTermsRefusal {
  const message = inFileTerms(error.message.replace(/^Agent "[^"]*": /, ""));
  const key = definitionKey(error);
  if (key !== null) {
    const at = fileKeyOf(key, tools);
    // A message that opens with a path inside the key names the very value at fault: a pattern inside a schema.
    const lead = /^[\w.-]+/.exec(message)?.[0];
    return { field: lead?.startsWith(`${at}.`) ? lead : at, message, keyed: true };
  }
  // A check that names no key: the key its message names first.
  const named = namedFileKeys()
    .filter((k) => message.includes(k))
    .sort((a, b) => message.indexOf(a) - message.indexOf(b))[0];
  return { field: named ?? null, message, keyed: false };
}

/**
 * Seed 004's startup validation rules 1–3 (rule 4 is checked per task, below) and what Outpost cannot run yet: an
 * error refuses the file (`refuse` throws), a warning is returned.
 */
function startupRules(file: AgentFileValue, refuse: (keys: PropertyKey[], message: string) => never): string[] {
  const warnings: string[] = [];
  // The servers become a map by name: a second of the same name would silently replace the first.
  const names = file.tools.map((tool) => (tool.type === "mcp" ? tool.name : null));
  const twice = names.findIndex((name, index) => name !== null && names.indexOf(name) !== index);
  if (twice >= 0) {
    refuse(
      ["tools", twice, "name"],
      `"${names[twice]}" is the name of tools.${names.indexOf(names[twice] ?? null)} too`,
    );
  }
  const anthropic = file.model.provider === "anthropic";
  const knowledge = file.tools.findIndex((t) => t.type !== "mcp");
  // Rule 1: knowledge tools on Anthropic need a provider of embeddings (Anthropic has none).
  if (knowledge >= 0 && anthropic && !file.embedding_provider) {
    refuse(["tools", knowledge], "a knowledge tool on an Anthropic agent needs embedding_provider (rule 1)");
  }
  // Rule 2: tool filtering is Semantic Kernel's; an Anthropic agent ignores it.
  if (file.tool_filtering !== undefined) {
    if (anthropic) warnings.push("tool_filtering is ignored for Anthropic agents and was cleared (rule 2).");
    else refuse(["tool_filtering"], "tool filtering is not available in Outpost");
  }
  // Rule 3: the claude block is for Anthropic's models only.
  if (file.claude && !anthropic) {
    warnings.push(
      `the claude: block applies to Anthropic agents only; this agent's provider is ${file.model.provider}, so it is ignored (rule 3).`,
    );
  }
  if (file.model.auth_provider !== undefined && !anthropic) {
    warnings.push(`model.auth_provider applies to Anthropic agents only and is ignored for ${file.model.provider}.`);
  }
  // Rule 4 (a CLAUDE.md in claude.working_directory) is about a task's files, which a file does not know: it is
  // checked when a task or session starts with files (workingDirectoryWarnings, src/tools/settings.ts).
  return warnings;
}

/** The definition a checked file makes. Values come from the file as written, so defaults are the definition's. */
function toDefinition(file: AgentFileValue, raw: AgentFileInput): AgentDefinition {
  const model = raw.model ?? {};
  const claude = file.model.provider === "anthropic" ? raw.claude : undefined;
  // auth_provider on another provider is ignored (the warning above); api_key is the default, so it needs no llmConfig.
  const auth =
    file.model.provider === "anthropic" && model.auth_provider !== "api_key" ? model.auth_provider : undefined;
  const given = LLM_KEYS.filter((key) => model[key] !== undefined);
  const llm =
    file.model.provider !== "anthropic" || given.length > 0 || auth !== undefined
      ? {
          provider: file.model.provider,
          ...(auth === undefined ? {} : { auth_provider: auth }),
          ...Object.fromEntries(given.map((key) => [key, model[key]])),
        }
      : undefined;
  const servers = Object.fromEntries(
    (raw.tools ?? []).flatMap((tool) => {
      if (tool.type !== "mcp") return [];
      const { type: _type, name, ...server } = tool;
      return [[name, server]];
    }),
  );
  const knowledgeTools = (raw.tools ?? []).filter((tool) => tool.type !== "mcp");
  const entries: [keyof AgentDefinition, unknown][] = [
    ["name", raw.name],
    ["description", raw.description],
    ["role", raw.role],
    ["systemPrompt", typeof raw.instructions === "string" ? raw.instructions : raw.instructions.inline],
    ["model", model.name],
    ["temperature", model.temperature],
    ["maxTokens", model.max_tokens],
    ["llmConfig", llm],
    ["maxTurns", claude?.max_turns],
    ["permissionMode", claude?.permission_mode],
    ["extendedThinking", claude?.extended_thinking],
    ["webSearch", claude?.web_search],
    ["bash", claude?.bash],
    ["fileSystem", claude?.file_system],
    ["subagents", claude?.subagents],
    ["workingDirectory", claude?.working_directory],
    ["allowedTools", claude?.allowed_tools],
    ["mcpServers", Object.keys(servers).length > 0 ? servers : undefined],
    ["knowledgeTools", knowledgeTools.length > 0 ? knowledgeTools : undefined],
    ["embeddingProvider", raw.embedding_provider],
    ["maxBudgetUsd", raw.max_budget_usd],
    ["providerWaitSeconds", raw.provider_wait_seconds],
    ["contextWindow", raw.context_window],
    ["promptCache", raw.prompt_cache],
    ["responseFormat", raw.response_format],
    ["redactionMode", raw.redaction_mode],
    ["tenants", raw.tenants],
    ["hooks", raw.hooks],
    ["webFetch", raw.web_fetch],
    ["toolPermissions", raw.tool_permissions],
    ["approvalTimeoutSeconds", raw.approval_timeout_seconds],
    ["onApprovalTimeout", raw.on_approval_timeout],
    ["testCases", raw.test_cases],
    ["evaluations", raw.evaluations],
  ];
  return Object.fromEntries(entries.filter(([, value]) => value !== undefined)) as AgentDefinition;
}
