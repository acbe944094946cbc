// The agent base class (seed 000 MaverickAgent, FR-001..FR-006). A developer writes a name, a system prompt and
// the tools it may use (the definition, checked by src/agents/definition.ts); the default `execute()` is the durable
// tool-use loop of src/agents/tool-loop.ts, and a subclass may override it or the steps it is made of.

import type {
  Message,
  MessageCreateParamsBase,
  MessageParam,
  ToolUseBlock,
  WebSearchTool20250305,
} from "@anthropic-ai/sdk/resources/messages";
import type { ToolPermissions } from "../approvals/permissions.ts";
import type { RuntimeAgentRecord } from "../contracts/agent-version.ts";
import type { AgentMessage, ModelCallOptions, StepInfo } from "../contracts/runtime.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import { MalformedResponseError } from "../errors.ts";
import type { EvaluationConfig, TestCase } from "../evaluations/config.ts";
import type { RedactionMode } from "../events/redaction.ts";
import type { HookSpec } from "../inbound-hooks/hook.ts";
import type { EmbeddingProvider } from "../knowledge/embedding.ts";
import type { JsonObject } from "../lib/json.ts";
import { type PromptCachePolicy, sendsCacheKey } from "../llm/prompt-cache.ts";
import type { LlmConfig } from "../llm/provider.ts";
import type { McpServerSpec } from "../mcp/config.ts";
import type { ToolDeclaration } from "../tools/allowed-tools.ts";
import type { KnowledgeToolSpec } from "../tools/knowledge-tools.ts";
import { type ToolSettings, workingDirectoryInstructions, workingDirectoryWarnings } from "../tools/settings.ts";
import type { AgentContext } from "./context.ts";
import { DEFAULT_COMPACT_AT, DEFAULT_COMPACT_TO } from "./context-window.ts";
import { type AgentDefinition, type AgentSpec, parseDefinition } from "./definition.ts";
import { modelRequest } from "./model-request.ts";
import type { AgentResult } from "./result.ts";
import { formatInstructions } from "./structured-output.ts";
import { runToolLoop } from "./tool-loop.ts";

export { AGENT_NAME_PATTERN, type AgentDefinition } from "./definition.ts";

/** Where an agent is defined (GET /v1/agents/:name shows it). */
export type AgentOrigin =
  | { kind: "typescript" }
  | { kind: "file"; path: string; warnings: readonly string[] }
  /** A tenant's own agent (PUT /v1/agents/:name): the version, its definition and warnings. */
  | { kind: "runtime"; record: RuntimeAgentRecord };

/**
 * File agents' checked definitions, keyed by the definition object. A file's definition is a constant compiled into
 * the Worker (src/agents/files.generated.ts), so it is checked once per isolate, not at every construction (each
 * request and each run builds its agent). The spec is read-only, so every instance can share it.
 */
const fileSpecs = new WeakMap<AgentDefinition, AgentSpec>();

function fileSpec(definition: AgentDefinition): AgentSpec {
  let spec = fileSpecs.get(definition);
  if (!spec) {
    spec = parseDefinition(definition);
    fileSpecs.set(definition, spec);
  }
  return spec;
}

export abstract class Agent {
  readonly name: string;
  readonly description: string;
  /** Seed 003 Agent.role, or null. */
  readonly role: string | null;
  readonly systemPrompt: string;
  /** allowed_tools as declared, or the wildcard of every declared MCP server when it was omitted. */
  readonly allowedTools: readonly string[];
  readonly mcpServers: readonly McpServerSpec[];
  /** The built-in tools' capabilities (seed 004), every one off unless the definition turns it on. */
  readonly settings: ToolSettings;
  readonly model: string | undefined;
  readonly maxTurns: number;
  readonly maxTokens: number;
  /** Seed 004 extended thinking: its budget per call, or null. */
  readonly thinkingBudget: number | null;
  /** Seed 004 web search: the server tool each model call offers, or null. */
  readonly webSearch: WebSearchTool20250305 | null;
  /** Seed 003 Agent.temperature, or null for the provider's default. */
  readonly temperature: number | null;
  readonly maxBudgetUsd: number | null;
  /** How long a model call may wait out its provider, in seconds; null: the deployment's (src/runtime/provider-retry.ts). */
  readonly providerWaitSeconds: number | null;
  /** Its context window and compaction marks (src/runtime/compaction.ts); null: the model table's and the defaults. */
  readonly contextWindow: AgentSpec["contextWindow"];
  /** Seed 004 response_format: the JSON Schema the final answer conforms to, or null. */
  readonly responseFormat: JsonObject | null;
  readonly permissions: ToolPermissions;
  readonly hooks: readonly HookSpec[];
  readonly redactionMode: RedactionMode;
  readonly llmConfig: LlmConfig | null;
  /** Prompt caching (src/llm/prompt-cache.ts): the TTL of the breakpoints, or null when off. */
  readonly promptCache: PromptCachePolicy;
  /** Seed 004 embedding_provider: embeds the knowledge tools' queries; null without knowledge tools. */
  readonly embeddingProvider: EmbeddingProvider | null;
  /** Seed 004 VectorstoreTool and HierarchicalDocumentToolConfig, each under its own name. */
  readonly knowledgeTools: readonly KnowledgeToolSpec[];
  /** The tenants that may see and run the agent, or null for every tenant. Ask visibleTo(), not this list. */
  readonly tenants: readonly string[] | null;
  /** Seed 004 test_cases, for evaluation runs (src/evaluations/). */
  readonly testCases: readonly TestCase[];
  /** Seed 004 evaluations: the metrics, thresholds and grader model of its test cases; null without any. */
  readonly evaluations: EvaluationConfig | null;
  /** Where the agent is defined: a TypeScript class, or a file of agents/ with its startup warnings. */
  readonly origin: AgentOrigin;
  /** The version a task of this agent records and runs again: a tenant's own agent's; null for the Worker's. */
  readonly runtime: RuntimeAgentRecord | null;
  private readonly declaredTools: readonly string[] | undefined;

  /** Checks the definition (a ConfigError or InvalidToolError naming what is wrong) and keeps it. */
  constructor(definition: AgentDefinition, origin: AgentOrigin = { kind: "typescript" }) {
    const spec = origin.kind === "file" ? fileSpec(definition) : parseDefinition(definition);
    this.origin = origin;
    this.runtime = origin.kind === "runtime" ? origin.record : null;
    this.name = spec.name;
    this.description = spec.description;
    this.role = spec.role;
    this.systemPrompt = spec.systemPrompt;
    this.allowedTools = spec.allowedTools;
    this.declaredTools = spec.declaredTools;
    this.mcpServers = spec.mcpServers;
    this.settings = spec.settings;
    this.model = spec.model;
    this.maxTurns = spec.maxTurns;
    this.maxTokens = spec.maxTokens;
    this.temperature = spec.temperature;
    this.thinkingBudget = spec.thinkingBudget;
    this.webSearch = spec.webSearch;
    this.maxBudgetUsd = spec.maxBudgetUsd;
    this.providerWaitSeconds = spec.providerWaitSeconds;
    this.contextWindow = spec.contextWindow;
    this.responseFormat = spec.responseFormat;
    this.permissions = spec.permissions;
    this.hooks = spec.hooks;
    this.redactionMode = spec.redactionMode;
    this.llmConfig = spec.llmConfig;
    this.promptCache = spec.promptCache;
    this.embeddingProvider = spec.embeddingProvider;
    this.knowledgeTools = spec.knowledgeTools;
    this.tenants = spec.tenants;
    this.testCases = spec.testCases;
    this.evaluations = spec.evaluations;
  }

  /**
   * Whether `tenant` may see and run this agent. Every route that names an agent asks this (through the
   * registry's visible()), and so does the runner before each run, so a deploy that narrows the list takes effect
   * for tasks already started.
   */
  visibleTo(tenant: string): boolean {
    return this.tenants === null || this.tenants.includes(tenant);
  }

  /**
   * The default tool-use loop: model turn, then the tool calls it asked for, until the model answers without
   * tools. Each model turn and each tool call is a durable step, so a replay never repeats one (SC-001, SC-007).
   */
  async execute(context: AgentContext): Promise<AgentResult> {
    return runToolLoop(context, {
      request: (messages) => this.requestFor(context, messages),
      modelTurn: (messages, turnIndex, info) => this.modelTurn(context, messages, turnIndex, info),
      callTool: (use, turnIndex, info, position) => this.callTool(context, use, turnIndex, info, position),
      window: {
        tokens: this.contextWindow?.tokens ?? null,
        compactAt: this.contextWindow?.compactAt ?? DEFAULT_COMPACT_AT,
        compactTo: this.contextWindow?.compactTo ?? DEFAULT_COMPACT_TO,
        summarizer: this.contextWindow?.summarizer ?? "outpost",
        maxTokens: this.maxTokens,
      },
      ...(this.responseFormat ? { responseFormat: this.responseFormat } : {}),
    });
  }

  /**
   * Streams a model call with this agent's system prompt, model and tools (FR-005). Yields each stream event and
   * then the assistant message; a mid-stream failure yields what arrived and then throws StreamingError.
   */
  async *query(
    prompt: string | MessageParam[],
    context: AgentContext,
    options: ModelCallOptions = { turnIndex: 1 },
  ): AsyncGenerator<AgentMessage, void> {
    const messages: MessageParam[] = typeof prompt === "string" ? [{ role: "user", content: prompt }] : prompt;
    yield* context.runtime.streamModel(this.requestFor(context, messages), options);
  }

  /**
   * The Messages API request of a model turn over `messages`: this agent's model and output budget, its system
   * prompt and the run's tools unless `system` and `tools` replace them.
   */
  protected requestFor(
    context: AgentContext,
    messages: MessageParam[],
    system = this.systemPrompt +
      workingDirectoryInstructions(this.settings) +
      (this.responseFormat ? formatInstructions(this.responseFormat) : ""),
    tools = context.tools.definitions(),
  ): MessageCreateParamsBase {
    return modelRequest({
      model: context.config.model,
      maxTokens: this.maxTokens,
      temperature: this.temperature,
      thinkingBudget: this.thinkingBudget,
      system,
      messages,
      tools,
      serverTools: this.webSearch ? [this.webSearch] : [],
      promptCache: this.promptCache,
      cacheKey:
        this.llmConfig?.provider === "openai_compatible" && sendsCacheKey(this.promptCache, this.llmConfig.endpoint)
          ? context.config.cacheKey
          : null,
    });
  }

  /** Seed 004's startup warnings about the files a task or session of this agent starts with (rule 4). */
  startupWarnings(paths: readonly string[]): string[] {
    return workingDirectoryWarnings(this.settings, paths);
  }

  /** What this agent declares about its tools; the run's Toolbox resolves it against the servers. */
  toolDeclaration(): ToolDeclaration {
    return {
      allowedTools: this.declaredTools,
      mcpServers: this.mcpServers,
      settings: this.settings,
      permissions: this.permissions,
      knowledgeTools: this.knowledgeTools,
      embeddingProvider: this.embeddingProvider,
    };
  }

  protected async modelTurn(
    context: AgentContext,
    messages: MessageParam[],
    turnIndex: number,
    info: StepInfo,
  ): Promise<Message> {
    let message: Message | undefined;
    for await (const item of this.query(messages, context, { turnIndex, attempt: info.attempt, spanId: info.spanId })) {
      if (item.type === "assistant") message = item.message;
    }
    if (!message) throw new MalformedResponseError("The model stream ended without a message.", "");
    return message;
  }

  /** Runs one tool call through the run's tools. A tool the agent may not use never runs (tool_denied). */
  protected callTool(
    context: AgentContext,
    use: ToolUseBlock,
    turnIndex: number,
    info: StepInfo,
    position = 1,
  ): Promise<ToolResult> {
    return context.tools.call(use, turnIndex, info, position);
  }
}
