// The agent base class (seed 000 MaverickAgent, FR-001..FR-006). A developer writes a name, a system prompt and
// the tools it may use; the default `execute()` is a durable tool-use loop, and a subclass may override it.

import type {
  ContentBlock,
  ContentBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageParam,
  ToolResultBlockParam,
  ToolUseBlock,
  ToolUseBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { type PermissionMode, parsePermissions, type ToolPermissions } from "../approvals/permissions.ts";
import { DEFAULT_MAX_TOKENS } from "../config/models.ts";
import type { AgentMessage, ModelCallOptions, StepInfo } from "../contracts/runtime.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import { ConfigError, LimitExceededError, MalformedResponseError } from "../errors.ts";
import type { RedactionMode } from "../events/redaction.ts";
import { type HookDefinition, type HookSpec, parseHooks } from "../inbound-hooks/hook.ts";
import { type LlmConfig, PROVIDER_NAMES } from "../llm/provider.ts";
import { type McpServerInput, type McpServerSpec, parseMcpServers } from "../mcp/config.ts";
import { DEFAULT_TENANT, TENANT_PATTERN } from "../tenants/api-keys.ts";
import { RUNNABLE_BUILTIN_TOOLS } from "../tools/builtin.ts";
import {
  enabledBuiltins,
  parseToolSettings,
  requireCapabilities,
  type ToolSettings,
  type ToolSettingsInput,
} from "../tools/settings.ts";
import type { ToolDeclaration } from "../tools/toolbox.ts";
import type { AgentContext } from "./context.ts";
import { type AgentResult, failureResult, successResult } from "./result.ts";
import { extractText } from "./text.ts";
import { validateToolNames } from "./tool-names.ts";

export interface AgentDefinition {
  /** Unique name, seed 003 pattern ^[a-z][a-z0-9_]*$ (it appears in URLs). */
  name: string;
  description?: string;
  systemPrompt: string;
  /**
   * Built-in tool names, mcp__<server>__<tool> names and mcp__<server>__* (seed 004 allowed_tools); validated here
   * (FR-002) and against the servers' real tool lists when a run starts. Omitted: every configured tool (the
   * built-ins the settings turn on, and every tool of every declared MCP server).
   */
  allowedTools?: readonly string[];
  /** Remote MCP servers by name (seed 003 MCPServer); see src/mcp/config.ts for the fields. */
  mcpServers?: Readonly<Record<string, McpServerInput>>;
  /** Seed 004 BashConfig {enabled, excluded_commands, allow_unsafe}: the Bash tool. Off unless enabled. */
  bash?: ToolSettingsInput["bash"];
  /** Seed 004 FileSystemConfig {read, write, edit}: Read/Glob/Grep, Write, Edit. All off by default. */
  fileSystem?: ToolSettingsInput["fileSystem"];
  /** {enabled, max_bytes, timeout_seconds}: the WebFetch tool. Off unless enabled. */
  webFetch?: ToolSettingsInput["webFetch"];
  /** Pin a model; otherwise OUTPOST_DEFAULT_MODEL, then DEFAULT_MODEL (src/config/models.ts). */
  model?: string;
  /** Model turns before the run ends with "max_turns limit reached" (seed 004 max_turns). */
  maxTurns?: number;
  /** Output token budget of each model call. */
  maxTokens?: number;
  /** Default cost budget of a task, USD (a task may set its own max_budget_usd). */
  maxBudgetUsd?: number;
  /**
   * Seed 004 permission_mode: "manual" (every tool call waits for a person's approval), "acceptEdits" (Write and
   * Edit run, other calls wait) or "acceptAll" (nothing waits; the default: capabilities are already least
   * privilege). toolPermissions overrides it per tool ("allow" or "ask"; mcp__<server>__* for a whole server).
   */
  permissionMode?: PermissionMode;
  toolPermissions?: Readonly<Record<string, "allow" | "ask">>;
  /** How long a tool call may wait for approval; then it is rejected, or the run fails (onApprovalTimeout). */
  approvalTimeoutSeconds?: number;
  onApprovalTimeout?: "reject" | "fail";
  /**
   * Inbound webhooks that start this agent (POST /v1/hooks/<id>): by id, the signing scheme, the Worker secret that
   * verifies deliveries, and the template that makes the task's input. See src/inbound-hooks/hook.ts.
   */
  hooks?: Readonly<Record<string, HookDefinition>>;
  /**
   * Seed 002 redaction_mode for this agent's tasks unless a task says: "redacted" keeps prompts and responses out
   * of the event stream (the run bundle's transcript keeps them). Default "full".
   */
  redactionMode?: RedactionMode;
  /**
   * Seed 003 LLMConfig: the model provider (seed 002 ProviderName anthropic or gemini, or any openai_compatible
   * endpoint), its endpoint, and the NAME of the Worker secret holding its API key. Absent: Anthropic.
   */
  llmConfig?: LlmConfig;
  /**
   * The tenants that may see and run this agent (each matching TENANT_PATTERN). Another tenant is told the agent
   * does not exist, on every route. Absent: every tenant (a single-tenant deployment needs nothing here).
   */
  tenants?: readonly string[];
}

export const AGENT_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;

const LlmConfigSchema = z.strictObject({
  provider: z.enum(PROVIDER_NAMES),
  endpoint: z.url({ protocol: /^https?$/ }).optional(),
  api_key: z
    .string()
    .regex(/^[A-Z][A-Z0-9_]*$/, "must be the NAME of a Worker secret (e.g. OPENAI_API_KEY)")
    .refine((name) => !name.startsWith("OUTPOST_"), "cannot be one of Outpost's own secrets")
    .optional(),
});

function parseLlmConfig(agent: string, config: LlmConfig | undefined): LlmConfig | null {
  if (config === undefined) return null;
  const result = LlmConfigSchema.safeParse(config);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.length ? `.${issue.path.join(".")}` : "";
    throw new ConfigError(`Agent "${agent}": llmConfig${where}: ${issue?.message ?? "invalid"}`);
  }
  if (result.data.provider === "openai_compatible" && !result.data.endpoint) {
    throw new ConfigError(`Agent "${agent}": llmConfig.endpoint is required for openai_compatible (its base URL).`);
  }
  return Object.freeze({ ...result.data });
}

function parseTenants(agent: string, tenants: readonly string[] | undefined): readonly string[] | null {
  if (tenants === undefined) return null;
  if (!Array.isArray(tenants) || tenants.length === 0) {
    throw new ConfigError(`Agent "${agent}": tenants must list at least one tenant (omit it for every tenant).`);
  }
  for (const [index, tenant] of tenants.entries()) {
    if (typeof tenant !== "string" || !TENANT_PATTERN.test(tenant)) {
      throw new ConfigError(`Agent "${agent}": tenants.${index} must match ${TENANT_PATTERN}.`);
    }
  }
  return Object.freeze([...new Set(tenants)]);
}

const DEFINITION_KEYS: ReadonlySet<string> = new Set([
  "name",
  "description",
  "systemPrompt",
  "allowedTools",
  "mcpServers",
  "bash",
  "fileSystem",
  "webFetch",
  "model",
  "maxTurns",
  "maxTokens",
  "maxBudgetUsd",
  "permissionMode",
  "toolPermissions",
  "approvalTimeoutSeconds",
  "onApprovalTimeout",
  "hooks",
  "redactionMode",
  "llmConfig",
  "tenants",
]);

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
  permission_mode: "permissionMode",
};
const DEFAULT_MAX_TURNS = 10;

export abstract class Agent {
  readonly name: string;
  readonly description: string;
  readonly systemPrompt: string;
  /** allowed_tools as declared, or the wildcard of every declared MCP server when it was omitted. */
  readonly allowedTools: readonly string[];
  readonly mcpServers: readonly McpServerSpec[];
  /** The built-in tools' capabilities (seed 004), every one off unless the definition turns it on. */
  readonly settings: ToolSettings;
  readonly model: string | undefined;
  readonly maxTurns: number;
  readonly maxTokens: number;
  readonly maxBudgetUsd: number | null;
  readonly permissions: ToolPermissions;
  readonly hooks: readonly HookSpec[];
  readonly redactionMode: RedactionMode;
  readonly llmConfig: LlmConfig | null;
  /** The tenants that may see and run the agent, or null for every tenant. Ask visibleTo(), not this list. */
  readonly tenants: readonly string[] | null;
  private readonly declaredTools: readonly string[] | undefined;

  constructor(definition: AgentDefinition) {
    for (const key of Object.keys(definition)) {
      if (DEFINITION_KEYS.has(key)) continue;
      const hint = SEED_SPELLINGS[key] ? ` (the definition spells it ${SEED_SPELLINGS[key]})` : "";
      throw new ConfigError(`Agent "${definition.name}": unknown key "${key}"${hint}.`);
    }
    if (!AGENT_NAME_PATTERN.test(definition.name)) {
      throw new ConfigError(`Agent name "${definition.name}" must match ${AGENT_NAME_PATTERN} (lowercase, digits, _).`);
    }
    if (!definition.systemPrompt.trim()) throw new ConfigError(`Agent "${definition.name}" needs a system prompt.`);
    const maxTurns = definition.maxTurns ?? DEFAULT_MAX_TURNS;
    if (!Number.isInteger(maxTurns) || maxTurns < 1) {
      throw new ConfigError(`Agent "${definition.name}": maxTurns must be a positive integer.`);
    }
    const servers = parseMcpServers(definition.name, definition.mcpServers);
    const serverNames = new Set(servers.map((s) => s.name));
    const settings = parseToolSettings(definition.name, definition);
    const tools = definition.allowedTools ?? [...enabledBuiltins(settings), ...servers.map((s) => `mcp__${s.name}__*`)];
    validateToolNames(tools, RUNNABLE_BUILTIN_TOOLS, serverNames);
    requireCapabilities(definition.name, tools, settings);
    for (const server of servers) {
      for (const [tool, settings] of Object.entries(server.tools)) {
        // Fallbacks are MCP tools of declared servers; they take the same arguments as the tool they stand in for.
        validateToolNames(settings.fallbackTools, new Set(), serverNames);
        if (settings.fallbackTools.includes(`mcp__${server.name}__${tool}`)) {
          throw new ConfigError(
            `Agent "${definition.name}": mcpServers.${server.name}.tools.${tool}.fallback_tools lists the tool itself.`,
          );
        }
      }
    }
    this.declaredTools = definition.allowedTools ? Object.freeze([...definition.allowedTools]) : undefined;
    this.mcpServers = Object.freeze(servers);
    this.settings = settings;
    this.name = definition.name;
    this.description = definition.description ?? "";
    this.systemPrompt = definition.systemPrompt;
    this.allowedTools = Object.freeze([...tools]);
    this.model = definition.model;
    this.maxTurns = maxTurns;
    this.maxTokens = definition.maxTokens ?? DEFAULT_MAX_TOKENS;
    const budget = definition.maxBudgetUsd;
    if (budget !== undefined && !(Number.isFinite(budget) && budget > 0)) {
      throw new ConfigError(`Agent "${definition.name}": maxBudgetUsd must be a positive number of US dollars.`);
    }
    this.maxBudgetUsd = budget ?? null;
    this.permissions = parsePermissions(definition, tools);
    const redaction = definition.redactionMode ?? "full";
    if (redaction !== "full" && redaction !== "redacted") {
      throw new ConfigError(`Agent "${definition.name}": redactionMode must be "full" or "redacted".`);
    }
    this.redactionMode = redaction;
    this.llmConfig = parseLlmConfig(definition.name, definition.llmConfig);
    this.tenants = parseTenants(definition.name, definition.tenants);
    this.hooks = Object.freeze(parseHooks(definition.name, definition.hooks as Record<string, HookDefinition>));
    for (const hook of this.hooks) {
      // A hook starts tasks of its tenant; one the agent refuses would fail every run it starts.
      if (!this.visibleTo(hook.tenant)) {
        throw new ConfigError(
          `Agent "${definition.name}": hooks.${hook.id}.tenant "${hook.tenant}" is not one of the agent's tenants ` +
            `(${this.tenants?.join(", ")}); a hook without a tenant starts tasks of "${DEFAULT_TENANT}".`,
        );
      }
    }
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
    const { runtime } = context;
    const start = context.startFrom;
    const messages: MessageParam[] = start ? [...start.messages] : [{ role: "user", content: context.input }];
    if (!start) runtime.recordMessage(0, messages[0] as MessageParam);
    let turn = start?.turn ?? 0;
    if (context.dryRun) return dryRunResult(context, this.requestFor(context, messages));
    runtime.checkpoint("start", messages.at(-1)?.role === "assistant" ? "tool_calls" : "model_turn", { turn });
    // A fork of a checkpoint taken between a model turn and its tool calls runs those calls first.
    const pending = messages.at(-1);
    if (pending?.role === "assistant" && Array.isArray(pending.content)) {
      const uses = pending.content.filter((b): b is ToolUseBlockParam => b.type === "tool_use");
      if (uses.length > 0) await this.runToolCalls(context, messages, uses, turn);
    }
    const maxTurns = context.config.limits.maxTurns;
    while (turn < maxTurns) {
      turn++;
      const current = turn;
      const reply = await runtime.step(`turn_${current}_model`, (info) =>
        this.modelTurn(context, messages, current, info),
      );
      messages.push({ role: "assistant", content: toParams(reply.content) });
      runtime.recordMessage(messages.length - 1, messages[messages.length - 1] as MessageParam);
      const uses = reply.content.filter((block): block is ToolUseBlock => block.type === "tool_use");
      runtime.checkpoint(`turn_${current}_model`, uses.length > 0 ? "tool_calls" : "finish", { turn: current });
      if (uses.length === 0) {
        return successResult(extractText(reply.content), runtime.usage(), {
          turns: current,
          stop_reason: reply.stop_reason,
        });
      }
      await this.runToolCalls(context, messages, uses, current);
    }
    return failureResult(
      [
        new LimitExceededError(
          "max_turns",
          `max_turns limit reached (${maxTurns} model turns); raise the task's max_turns or the agent's maxTurns.`,
        ),
      ],
      runtime.usage(),
      { turns: maxTurns },
    );
  }

  /** Runs a turn's tool calls, each a durable step, then records their results and a checkpoint. */
  private async runToolCalls(
    context: AgentContext,
    messages: MessageParam[],
    uses: readonly (ToolUseBlock | ToolUseBlockParam)[],
    turn: number,
  ): Promise<void> {
    const { runtime } = context;
    const results: ToolResultBlockParam[] = [];
    for (const [index, use] of uses.entries()) {
      const block = { ...use, type: "tool_use" } as ToolUseBlock;
      const result = await runtime.step(`turn_${turn}_tool_${use.id}`, (info) =>
        this.callTool(context, block, turn, info, index + 1),
      );
      results.push({ type: "tool_result", tool_use_id: use.id, content: result.content, is_error: result.is_error });
    }
    // Tool results come first in the user turn; what a reviewer added at a resume follows them.
    const human = context.tools.humanMessages(uses.map((use) => use.id));
    messages.push({ role: "user", content: [...results, ...human] });
    runtime.recordMessage(messages.length - 1, messages[messages.length - 1] as MessageParam);
    runtime.checkpoint(`turn_${turn}_tools`, "model_turn", { turn });
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
    const tools = context.tools.definitions();
    yield* context.runtime.streamModel(
      {
        model: context.config.model,
        max_tokens: this.maxTokens,
        system: this.systemPrompt,
        messages,
        ...(tools.length > 0 ? { tools } : {}),
      },
      options,
    );
  }

  /** The Messages API request of a model turn over `messages`, with this agent's prompt, model and tools. */
  protected requestFor(context: AgentContext, messages: MessageParam[]): MessageCreateParamsBase {
    const tools = context.tools.definitions();
    return {
      model: context.config.model,
      max_tokens: this.maxTokens,
      system: this.systemPrompt,
      messages,
      ...(tools.length > 0 ? { tools } : {}),
    };
  }

  /** What this agent declares about its tools; the run's Toolbox resolves it against the servers. */
  toolDeclaration(): ToolDeclaration {
    return {
      allowedTools: this.declaredTools,
      mcpServers: this.mcpServers,
      settings: this.settings,
      permissions: this.permissions,
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

/**
 * Seed 002 dry run: the prompt the first model call would send, saved as dry_run_prompt.txt in the run bundle; no
 * model is called, and the result says what was composed.
 */
export async function dryRunResult(context: AgentContext, request: MessageCreateParamsBase): Promise<AgentResult> {
  const text = JSON.stringify(request, null, 2);
  await context.runtime.step("dry_run_prompt", async () => {
    await context.runtime.artifact("dry_run_prompt.txt", text);
  });
  const tokens = Math.ceil(new TextEncoder().encode(text).byteLength / 4);
  return successResult(
    `Dry run: the prompt was composed (about ${tokens} tokens) and saved as dry_run_prompt.txt; no model was called.`,
    context.runtime.usage(),
    { dry_run: true, estimated_input_tokens: tokens },
  );
}

/** Response blocks as request blocks, so the assistant turn can be sent back to the model unchanged. */
function toParams(content: readonly ContentBlock[]): ContentBlockParam[] {
  return content.map((block): ContentBlockParam => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text };
      case "tool_use":
        return { type: "tool_use", id: block.id, name: block.name, input: block.input };
      case "thinking":
        return { type: "thinking", thinking: block.thinking, signature: block.signature };
      case "redacted_thinking":
        return { type: "redacted_thinking", data: block.data };
      default:
        return block as unknown as ContentBlockParam;
    }
  });
}
