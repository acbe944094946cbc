// The tools of one run: the built-ins the agent may use and the tools of its MCP servers, discovered when the run
// starts. It answers the model's tool calls: a tool the agent may not use never runs (tool_denied), a call that
// needs a person waits for one (the rules are src/approvals), an MCP call gets its timeout and its fallback tools,
// and every failure reaches the model as an is_error result it can act on. Discovery is a journaled step, so a resumed run sends the model the same tools without asking again, and the
// sessions themselves reconnect on first use after an eviction.
import type { TextBlockParam, Tool, ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { ASK_USER, answerQuestion } from "../approvals/ask-user.ts";
import { gateCall, humanMessages } from "../approvals/gate.ts";
import { needsApproval, type ToolPermissions } from "../approvals/permissions.ts";
import type { EventPayload } from "../contracts/events.ts";
import type { StepInfo, ToolRuntime } from "../contracts/runtime.ts";
import { MCP_WILDCARD_PATTERN, parseMcpToolName } from "../contracts/tool-names.ts";
import type { ToolResult, ToolResultBlock } from "../contracts/tool-result.ts";
import { InvalidToolError, McpConnectionError, toErrorInfo } from "../errors.ts";
import type { Redactor } from "../events/redaction.ts";
import { lazyModule } from "../lib/lazy-module.ts";
import { type McpServerSpec, toolSettings } from "../mcp/config.ts";
import { toMcpCallResult, toToolResult } from "../mcp/content.ts";
import { mcpIdempotencyKey } from "../mcp/idempotency.ts";
import type { McpSession } from "../mcp/session.ts";
import type { OutboundPolicy } from "../net/outbound.ts";
import { FORK_STATE_KEY, type ForkState } from "../tasks/task-state.ts";
import type { Workspace } from "../workspace/workspace.ts";
import { BUILTIN_TOOL_IMPLEMENTATIONS } from "./builtin.ts";
import { MAX_RESULT_CHARS } from "./file-tools.ts";
import { capabilityOn, enabledBuiltins, type ToolSettings } from "./settings.ts";
import { resultText } from "./tool.ts";

/** The MCP client, loaded when an agent with MCP servers first runs. */
const loadMcp = lazyModule(() => import("../mcp/session.ts"));

/** What an agent declares about its tools (the Agent class holds it). */
export interface ToolDeclaration {
  /** The agent's allowed_tools as written, or undefined for every configured tool. */
  allowedTools: readonly string[] | undefined;
  mcpServers: readonly McpServerSpec[];
  settings: ToolSettings;
  permissions: ToolPermissions;
}

export interface ToolboxDeps {
  taskId: string;
  runtime: ToolRuntime;
  /** Reads a Worker secret by name. */
  secret: (name: string) => string | undefined;
  outbound: OutboundPolicy;
  workspace: Workspace;
  /** Error text from tools and servers passes through it before the model, the conversation or a client sees it. */
  redactor: Pick<Redactor, "text">;
}

/** One discovered MCP tool, as the journal keeps it. */
interface CatalogTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
}

/** The journaled result of connecting: each server's tools, or why it could not be reached. */
interface McpCatalog {
  servers: Record<string, { transport: string; tools: CatalogTool[] }>;
  failed: Record<string, { code: string; message: string }>;
}

/** What every mcp_tool_call_* event of one call says about it. */
type McpCallFields = Omit<EventPayload<"mcp_tool_call_started">, "arguments" | "timeout_seconds">;

const PREVIEW_CHARS = 500;
/** Anthropic's rule for tool names; an MCP tool whose full name breaks it cannot be offered to the model. */
const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

export class Toolbox {
  private readonly declaration: ToolDeclaration;
  private readonly deps: ToolboxDeps;
  private readonly sessions = new Map<string, McpSession>();
  private readonly pendingSessions: McpServerSpec[] = [];
  private catalog: McpCatalog = { servers: {}, failed: {} };
  /** The MCP client module, loaded on first use: agents without MCP servers never load the SDK. */
  private mcp: typeof import("../mcp/session.ts") | null = null;
  /** Full name → definition, in the order sent to the model. */
  private readonly allowed = new Map<string, Tool>();
  /** The fork origin's half-done calls, read once (see uncertainCalls). */
  private inherited: Readonly<Record<string, string>> | undefined;
  /** Calls a reviewer sent with other arguments (modify with tool_input); decisions are stored, so replays agree. */
  private readonly rewritten = new Set<string>();

  constructor(declaration: ToolDeclaration, deps: ToolboxDeps) {
    this.declaration = declaration;
    this.deps = deps;
    for (const spec of declaration.mcpServers) {
      this.pendingSessions.push(spec);
    }
    this.resolve();
  }

  /**
   * Connects the MCP servers and lists their tools (a journaled step), then checks the allowed tools and the
   * fallbacks against what the servers really offer. Throws InvalidToolError, or McpConnectionError for a required
   * server that could not be reached.
   */
  async open(): Promise<void> {
    if (this.pendingSessions.length === 0) return;
    this.mcp = await loadMcp();
    for (const spec of this.pendingSessions) {
      this.sessions.set(
        spec.name,
        new this.mcp.McpSession({ spec, secret: this.deps.secret, outbound: this.deps.outbound }),
      );
    }
    this.catalog = await this.deps.runtime.step("mcp_connect", () => this.discover());
    const required = this.declaration.mcpServers.find((s) => s.required && this.catalog.failed[s.name]);
    if (required) {
      const failure = this.catalog.failed[required.name];
      throw new McpConnectionError(required.name, `it is required and could not be connected: ${failure?.message}`);
    }
    this.resolve();
  }

  /** Closes every MCP session (ending it on the server) and records it. Never throws. */
  async close(): Promise<void> {
    if (this.sessions.size === 0) return;
    await Promise.all([...this.sessions.values()].map((s) => s.close()));
    this.deps.runtime.emit("mcp_servers_disconnected", { servers: [...this.sessions.keys()] });
  }

  /** The tool definitions sent to the model. */
  definitions(): Tool[] {
    return [...this.allowed.values()];
  }

  /** The full names of the tools this run may use. */
  names(): string[] {
    return [...this.allowed.keys()];
  }

  /**
   * Answers one tool_use block. Never throws for a tool's failure; only cancellation (and a wait for a person)
   * propagates. An error result is text the runtime did not write (a tool's or a server's message, which may echo a
   * credential): it is redacted before the model, the conversation and the API see it.
   */
  async call(use: ToolUseBlock, turnIndex: number, info: StepInfo, position = 1): Promise<ToolResult> {
    const result = await this.answer(use, turnIndex, info, position);
    return result.is_error ? redactResult(result, this.deps.redactor) : result;
  }

  private async answer(use: ToolUseBlock, turnIndex: number, info: StepInfo, position: number): Promise<ToolResult> {
    const { runtime } = this.deps;
    const { permissions } = this.declaration;
    if (!this.allowed.has(use.name)) {
      runtime.emit(
        "tool_denied",
        { turn_index: turnIndex, tool_use_id: use.id, tool_name: use.name, reason: "not_allowed" },
        info.spanId,
      );
      return {
        content: `Tool "${use.name}" is not available to this agent. Available tools: ${this.names().join(", ") || "none"}.`,
        is_error: true,
      };
    }
    if (use.name === ASK_USER) return answerQuestion(runtime, permissions.timeoutSeconds, use, turnIndex);
    // A call this fork inherited half-done: whatever the agent's permissions, a person decides whether it runs again.
    const uncertain = this.uncertainCalls()[use.id] !== undefined;
    const gate = gateCall(runtime, permissions, { use, turnIndex, info, uncertain });
    if ("answer" in gate) return gate.answer;
    // Other arguments make another call: it must not pass for a repeat of the one first sent (see mcpCallKey).
    if (gate.rewritten) this.rewritten.add(use.id);
    if (parseMcpToolName(gate.run.name)) return this.callMcp(gate.run, turnIndex, info, position);
    return this.callBuiltin(gate.run, turnIndex, info, position);
  }

  /** What people added to the conversation when they answered this turn's calls (see src/approvals/gate.ts). */
  humanMessages(toolUseIds: readonly string[]): TextBlockParam[] {
    return humanMessages(this.deps.runtime.state, toolUseIds);
  }

  /**
   * Calls this task inherited from its fork origin half-done (ForkState.uncertain): by tool_use id, the task whose
   * idempotency keys the call was first sent with.
   */
  private uncertainCalls(): Readonly<Record<string, string>> {
    this.inherited ??= this.deps.runtime.state.get<ForkState>(FORK_STATE_KEY)?.uncertain ?? {};
    return this.inherited;
  }

  private async callBuiltin(
    use: ToolUseBlock,
    turnIndex: number,
    info: StepInfo,
    position: number,
  ): Promise<ToolResult> {
    const { runtime } = this.deps;
    const { settings } = this.declaration;
    const base = { turn_index: turnIndex, tool_use_id: use.id, tool_name: use.name };
    const tool = BUILTIN_TOOL_IMPLEMENTATIONS.get(use.name);
    if (!tool || !capabilityOn(use.name, settings)) {
      runtime.emit("tool_denied", { ...base, reason: "capability_off" }, info.spanId);
      return { content: `Tool "${use.name}" is turned off for this agent.`, is_error: true };
    }
    // A call that committed its workspace changes before an eviction cut it short: its result, not a second run.
    const settled = tool.changesWorkspace ? this.deps.workspace.settled<ToolResult>(use.id) : undefined;
    if (settled) {
      runtime.emit(
        "tool_call_completed",
        {
          ...base,
          is_error: settled.is_error,
          output_preview: resultText(settled).slice(0, PREVIEW_CHARS),
          duration_ms: 0,
          recovered: true,
          ...(settled.details ? { details: settled.details } : {}),
        },
        info.spanId,
      );
      return { content: settled.content, is_error: settled.is_error };
    }
    runtime.emit("tool_call_started", { ...base, input: use.input, attempt: info.attempt }, info.spanId);
    const started = Date.now();
    let result: ToolResult;
    try {
      result = await tool.run(use.input, {
        taskId: this.deps.taskId,
        runtime,
        signal: runtime.signal,
        workspace: this.deps.workspace,
        settings,
        outbound: this.deps.outbound,
        turnIndex,
        toolUseId: use.id,
        stepLabel: `step-${position}`,
      });
    } catch (error) {
      if (runtime.signal.aborted) throw error;
      // A tool failure is data for the model, not the end of the run.
      result = { content: `Tool "${use.name}" failed: ${toErrorInfo(error).message}`, is_error: true };
    }
    runtime.emit(
      "tool_call_completed",
      {
        ...base,
        is_error: result.is_error,
        output_preview: resultText(result).slice(0, PREVIEW_CHARS),
        duration_ms: Date.now() - started,
        ...(result.details ? { details: result.details } : {}),
      },
      info.spanId,
    );
    // What the model gets back; details stay in the event.
    return { content: result.content, is_error: result.is_error };
  }

  /**
   * An MCP call, then its fallback tools in order while calls fail to produce a result (a timeout, a lost or
   * refused connection). A result the tool itself marks is_error is its answer and goes to the model as is.
   */
  private async callMcp(use: ToolUseBlock, turnIndex: number, info: StepInfo, position: number): Promise<ToolResult> {
    const { runtime } = this.deps;
    const primary = parseMcpToolName(use.name);
    const spec = this.declaration.mcpServers.find((s) => s.name === primary?.server);
    const fallbacks = spec && primary ? toolSettings(spec, primary.tool).fallbackTools : [];
    // A fallback that would need a person's approval is not used in place of an approved (or allowed) call.
    const attempts = [
      use.name,
      ...fallbacks.filter((name) => this.allowed.has(name) && !needsApproval(name, this.declaration.permissions)),
    ];
    const args = isRecord(use.input) ? use.input : {};
    const failures: string[] = [];
    for (const [index, name] of attempts.entries()) {
      const target = parseMcpToolName(name);
      const session = target ? this.sessions.get(target.server) : undefined;
      const targetSpec = this.declaration.mcpServers.find((s) => s.name === target?.server);
      if (!target || !session || !targetSpec) {
        failures.push(`${name}: not an MCP tool of this agent`);
        continue;
      }
      const timeoutSeconds = toolSettings(targetSpec, target.tool).timeoutSeconds;
      const event = {
        step_id: use.id,
        turn_index: turnIndex,
        tool_name: name,
        server: target.server,
        attempt: info.attempt,
        ...(index > 0 ? { fallback_for: use.name, fallback_index: index } : {}),
      };
      runtime.emit(
        "mcp_tool_call_started",
        { ...event, arguments: args, timeout_seconds: timeoutSeconds },
        info.spanId,
      );
      const started = Date.now();
      let raw: Awaited<ReturnType<McpSession["callTool"]>>;
      try {
        raw = await session.callTool(target.tool, args, {
          timeoutMs: timeoutSeconds * 1000,
          signal: runtime.signal,
          idempotencyKey: await this.mcpCallKey(use.id, name),
        });
      } catch (error) {
        if (runtime.signal.aborted) throw error;
        const failure = this.mcp?.describeCallFailure(error, timeoutSeconds) ?? toErrorInfo(error);
        runtime.emit(
          "mcp_tool_call_failed",
          { ...event, error: failure, duration_ms: Date.now() - started },
          info.spanId,
        );
        failures.push(`${name}: ${failure.message}`);
        continue;
      }
      // The call ran on the server: from here on no fallback runs in its place, whatever goes wrong.
      return this.mcpOutcome({ raw, event, target, use, turnIndex, position, index, started, spanId: info.spanId });
    }
    return {
      content:
        `Tool "${use.name}" failed and returned no result. ${failures.join(" Then ")} ` +
        "You can retry later, use another tool, or continue without it.",
      is_error: true,
    };
  }

  /**
   * The idempotency key of calling `toolName` (a full mcp__ name) for one tool_use: the same when a resumed run sends
   * the call again, so a server that honours it runs the call once. The only place a key is derived from the task.
   * A call a fork inherited half-done is sent with the key it was first sent with (its origin's), so a person's
   * approval to run it again still reaches a cooperating server as a repeat, not as a second call; unless the
   * person changed its arguments: that is another call, and a server must run it rather than answer the first.
   */
  private mcpCallKey(toolUseId: string, toolName: string): Promise<string> {
    const origin = this.rewritten.has(toolUseId) ? undefined : this.uncertainCalls()[toolUseId];
    const taskId = origin ?? this.deps.taskId;
    return mcpIdempotencyKey({ taskId, toolUseId, toolName });
  }

  /** A completed MCP call as the log, the run bundle and the model see it (seed 002 StepExecutionResult). */
  private async mcpOutcome(call: {
    raw: Awaited<ReturnType<McpSession["callTool"]>>;
    event: McpCallFields;
    target: { server: string; tool: string };
    use: ToolUseBlock;
    turnIndex: number;
    position: number;
    index: number;
    started: number;
    spanId: string;
  }): Promise<ToolResult> {
    const { runtime } = this.deps;
    const { raw, event, target, turnIndex, index, started, spanId } = call;
    const schema = this.catalog.servers[target.server]?.tools.find((t) => t.name === target.tool)?.output_schema;
    try {
      this.mcp?.checkStructuredOutput(schema, raw);
    } catch (error) {
      // A result that breaks the tool's own output schema is an error result, not a reason to call another tool.
      const failure = this.mcp?.describeCallFailure(error, 0) ?? toErrorInfo(error);
      runtime.emit("mcp_tool_call_failed", { ...event, error: failure, duration_ms: Date.now() - started }, spanId);
      return { content: `Tool "${call.use.name}" returned an invalid result: ${failure.message}`, is_error: true };
    }
    const result = toMcpCallResult(target.server, target.tool, raw);
    // Seed 002: an MCP call maps to a StepExecutionResult, its text saved as turn_<n>_step-<k>_mcp_stdout.txt.
    const stepLabel = `step-${call.position}`;
    let artifact = result.raw_text ? `artifacts/turn_${turnIndex}_${stepLabel}_mcp_stdout.txt` : null;
    const structured = raw.structuredContent === undefined ? null : raw.structuredContent;
    const structuredJson = structured === null ? "" : JSON.stringify(structured);
    const structuredArtifact =
      structuredJson.length > MAX_EVENT_STRUCTURED_CHARS
        ? `artifacts/turn_${turnIndex}_${stepLabel}_mcp_structured.json`
        : null;
    try {
      if (artifact) await runtime.artifact(artifact, result.raw_text);
      if (structuredArtifact) await runtime.artifact(structuredArtifact, structuredJson);
    } catch (error) {
      // The bundle is a record; failing to write it must not make a call that ran look like one that did not.
      console.error("MCP result artifact not written:", error instanceof Error ? error.message : error);
      artifact = null;
    }
    const stepResult: EventPayload<"mcp_tool_call_completed">["step_result"] = {
      step_id: stepLabel,
      exit_code: result.is_error ? 1 : 0,
      stdout_summary: result.raw_text.slice(0, PREVIEW_CHARS),
      stderr_summary: "",
      retry_count: index,
      status: result.is_error ? "failed" : "success",
      stdout_artifact: artifact,
      stderr_artifact: null,
    };
    runtime.emit(
      "mcp_tool_call_completed",
      {
        ...event,
        status: result.is_error ? "error" : "success",
        is_error: result.is_error,
        output_preview: result.raw_text.slice(0, PREVIEW_CHARS),
        // Large structured content is kept in the bundle; the event stays well inside a storage row.
        structured_content: structuredArtifact
          ? { truncated: true, preview: structuredJson.slice(0, PREVIEW_CHARS), artifact: structuredArtifact }
          : structured,
        step_result: stepResult,
        duration_ms: Date.now() - started,
      },
      spanId,
    );
    return capResult(toToolResult(raw), artifact);
  }

  private async discover(): Promise<McpCatalog> {
    const { runtime } = this.deps;
    const catalog: McpCatalog = { servers: {}, failed: {} };
    const skipped: { server: string; tool: string; reason: string }[] = [];
    await Promise.all(
      [...this.sessions.values()].map(async (session) => {
        try {
          const tools = await session.listTools(runtime.signal);
          const usable = tools.filter((tool) => unusableReason(session.name, tool.name) === null);
          for (const tool of tools) {
            const reason = unusableReason(session.name, tool.name);
            if (reason) skipped.push({ server: session.name, tool: tool.name, reason });
          }
          catalog.servers[session.name] = {
            transport: session.transportUsed ?? "streamable_http",
            tools: usable.map((tool) => toCatalogTool(tool)),
          };
        } catch (error) {
          if (runtime.signal.aborted) throw error;
          const info = toErrorInfo(error);
          catalog.failed[session.name] = { code: info.code, message: info.message };
          runtime.emit("mcp_connection_failed", { server: session.name, error: info });
        }
      }),
    );
    const connected = Object.entries(catalog.servers);
    if (connected.length > 0) {
      const tools = connected.flatMap(([server, entry]) => entry.tools.map((t) => `mcp__${server}__${t.name}`));
      runtime.emit("mcp_servers_connected", {
        server_count: connected.length,
        tool_count: tools.length,
        tools,
        servers: Object.fromEntries(connected.map(([server, entry]) => [server, { transport: entry.transport }])),
        // Tools whose full name the model cannot be given (they are not offered).
        skipped_tools: skipped,
      });
    }
    return catalog;
  }

  /** Computes the allowed tools from the declaration and what discovery found. */
  private resolve(): void {
    this.allowed.clear();
    const { allowedTools, mcpServers } = this.declaration;
    const serverTools = (server: string): CatalogTool[] => this.catalog.servers[server]?.tools ?? [];
    const available = (): string[] => [
      ...[...BUILTIN_TOOL_IMPLEMENTATIONS.keys()].filter((n) => allowedTools?.includes(n)),
      ...Object.entries(this.catalog.servers).flatMap(([s, e]) => e.tools.map((t) => `mcp__${s}__${t.name}`)),
    ];
    const addMcp = (server: string, tool: CatalogTool) => {
      const name = `mcp__${server}__${tool.name}`;
      if (!MODEL_TOOL_NAME.test(name) || !parseMcpToolName(name)) return;
      this.allowed.set(name, {
        name,
        description: tool.description,
        input_schema: tool.input_schema as Tool["input_schema"],
      });
    };
    const patterns = allowedTools ?? [
      ...enabledBuiltins(this.declaration.settings),
      ...mcpServers.map((s) => `mcp__${s.name}__*`),
    ];
    for (const pattern of patterns) {
      const builtin = BUILTIN_TOOL_IMPLEMENTATIONS.get(pattern);
      if (builtin) {
        this.allowed.set(pattern, {
          name: builtin.name,
          description: builtin.description,
          input_schema: builtin.inputSchema,
        });
        continue;
      }
      const wildcard = MCP_WILDCARD_PATTERN.exec(pattern)?.[1];
      if (wildcard !== undefined) {
        for (const tool of serverTools(wildcard)) addMcp(wildcard, tool);
        continue;
      }
      const mcp = parseMcpToolName(pattern);
      if (!mcp || !this.catalog.servers[mcp.server]) continue; // not discovered yet, or the server failed
      const tool = serverTools(mcp.server).find((t) => t.name === mcp.tool);
      if (!tool) throw new InvalidToolError(pattern, available(), `is not offered by MCP server "${mcp.server}"`);
      addMcp(mcp.server, tool);
    }
    // Settings and fallbacks must name real tools too, once their servers answered.
    for (const spec of mcpServers) {
      if (!this.catalog.servers[spec.name]) continue;
      for (const [tool, settings] of Object.entries(spec.tools)) {
        if (!serverTools(spec.name).some((t) => t.name === tool)) {
          throw new InvalidToolError(
            `mcp__${spec.name}__${tool}`,
            available(),
            `has settings but is not offered by MCP server "${spec.name}"`,
          );
        }
        for (const fallback of settings.fallbackTools) {
          const target = parseMcpToolName(fallback);
          if (target && this.catalog.servers[target.server] && !this.allowed.has(fallback)) {
            throw new InvalidToolError(
              fallback,
              available(),
              `is a fallback of mcp__${spec.name}__${tool} but is not an allowed tool`,
            );
          }
        }
      }
    }
  }
}

/** Why mcp__<server>__<tool> cannot be offered to the model, or null when it can. */
function unusableReason(server: string, tool: string): string | null {
  const name = `mcp__${server}__${tool}`;
  if (!parseMcpToolName(name))
    return "the tool name contains characters or a double underscore that mcp__<server>__<tool> cannot carry";
  if (!MODEL_TOOL_NAME.test(name)) return "the full tool name is longer than the model's 128-character limit";
  return null;
}

function toCatalogTool(tool: McpTool): CatalogTool {
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? tool.name,
    input_schema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema ? { output_schema: tool.outputSchema as Record<string, unknown> } : {}),
  };
}

/** A result within MAX_RESULT_CHARS of text for the model; the full text is in the bundle's artifact. */
/** Structured content larger than this goes to the run bundle; its event carries a preview. */
const MAX_EVENT_STRUCTURED_CHARS = 64 * 1024;
/** Images larger than this (base64 characters) are not kept in the conversation, whose rows must stay small. */
const MAX_IMAGE_CHARS = 1024 * 1024;

function capResult(result: ToolResult, artifact: string | null): ToolResult {
  const note = `\n… [cut at ${MAX_RESULT_CHARS} characters; the full result is ${artifact} in the run bundle]`;
  if (typeof result.content === "string") {
    return result.content.length <= MAX_RESULT_CHARS
      ? result
      : { ...result, content: result.content.slice(0, MAX_RESULT_CHARS) + note };
  }
  let budget = MAX_RESULT_CHARS;
  let cut = false;
  const blocks = result.content.flatMap((block): ToolResultBlock[] => {
    if (block.type === "image" && block.source.type === "base64" && block.source.data.length > MAX_IMAGE_CHARS) {
      cut = true;
      const bytes = Math.floor((block.source.data.length * 3) / 4);
      return [
        { type: "text", text: `[an image of about ${bytes} bytes was left out: images over 768 KiB are not kept]` },
      ];
    }
    if (block.type !== "text") return [block];
    if (block.text.length <= budget) {
      budget -= block.text.length;
      return [block];
    }
    // The first text over the budget is cut and says so; later ones are left out (the API refuses empty text).
    const text = cut ? "" : block.text.slice(0, budget) + note;
    cut = true;
    budget = 0;
    return text ? [{ ...block, text }] : [];
  });
  return cut ? { ...result, content: blocks } : result;
}

/** A result with every text in it redacted. */
function redactResult(result: ToolResult, redactor: Pick<Redactor, "text">): ToolResult {
  if (typeof result.content === "string") return { ...result, content: redactor.text(result.content) };
  return {
    ...result,
    content: result.content.map((block) =>
      block.type === "text" ? { ...block, text: redactor.text(block.text) } : block,
    ),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
