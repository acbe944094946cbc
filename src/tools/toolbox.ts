// The tools of one run: the built-ins the agent may use and the tools of its MCP servers, discovered when the run
// starts. It answers the model's tool calls: a tool the agent may not use never runs (tool_denied), a call that
// needs a person waits for one (the rules are src/approvals), and every failure reaches the model as an is_error
// result it can act on, redacted. The parts it wires: discovery (mcp-catalog.ts), which tools the run may use
// (allowed-tools.ts), built-in calls (builtin-call.ts) and MCP calls with their fallbacks (mcp-call.ts); it also
// makes the agent's working directory when the workspace lacks it. Discovery is a journaled step, so a resumed run
// sends the model the same tools without asking again, and the sessions themselves reconnect on first use after an
// eviction.
import type { TextBlockParam, Tool, ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import { ASK_USER, answerQuestion } from "../approvals/ask-user.ts";
import { gateCall, humanMessages } from "../approvals/gate.ts";
import { needsApproval } from "../approvals/permissions.ts";
import type { StepInfo, ToolRuntime } from "../contracts/runtime.ts";
import type { SubagentHost } from "../contracts/subagents.ts";
import { parseMcpToolName } from "../contracts/tool-names.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import { McpConnectionError } from "../errors.ts";
import type { Redactor } from "../events/redaction.ts";
import type { KnowledgeSearch } from "../knowledge/collection.ts";
import { type Embedder, EmbeddingError } from "../knowledge/embedding.ts";
import { lazyModule } from "../lib/lazy-module.ts";
import { mcpIdempotencyKey } from "../mcp/idempotency.ts";
import type { McpSession } from "../mcp/session.ts";
import type { OutboundPolicy } from "../net/outbound.ts";
import { FORK_STATE_KEY } from "../tasks/task-state.ts";
import type { Workspace } from "../workspace/workspace.ts";
import { WorkspaceFs } from "../workspace/workspace-fs.ts";
import { resolveAllowedTools, type ToolDeclaration } from "./allowed-tools.ts";
import { BUILTIN_TOOL_IMPLEMENTATIONS } from "./builtin.ts";
import { callBuiltin } from "./builtin-call.ts";
import { knowledgeTool } from "./knowledge-tools.ts";
import { callMcpTool } from "./mcp-call.ts";
import { discoverTools, type McpCatalog } from "./mcp-catalog.ts";
import { startSubagents, TASK_TOOL } from "./task-tool.ts";
import type { BuiltinTool } from "./tool.ts";

/** The MCP client, loaded when an agent with MCP servers first runs. */
const loadMcp = lazyModule(() => import("../mcp/session.ts"));

export interface ToolboxDeps {
  taskId: string;
  runtime: ToolRuntime;
  /** Reads a Worker secret by name (src/lib/secrets.ts). */
  secret: (name: string) => string | undefined;
  outbound: OutboundPolicy;
  workspace: Workspace;
  /** Error text from tools and servers passes through it before the model, the conversation or a client sees it. */
  redactor: Pick<Redactor, "text">;
  /** The task's sub-agents, for the Task tool; null where a run cannot delegate. */
  subagents?: SubagentHost | null;
  /** The task's tenant's collections, for the knowledge tools; null or absent where there are none to search. */
  knowledge?: KnowledgeSearch | null;
  /** What sends an MCP server's requests, where not the global fetch (a run with an MCP fault: src/faults/). */
  mcpTransport?: (server: string) => ((request: Request) => Promise<Response>) | undefined;
}

export class Toolbox {
  private readonly declaration: ToolDeclaration;
  private readonly deps: ToolboxDeps;
  private readonly sessions = new Map<string, McpSession>();
  private catalog: McpCatalog = { servers: {}, failed: {} };
  /** The MCP client module, loaded on first use: agents without MCP servers never load the SDK. */
  private mcp: typeof import("../mcp/session.ts") | null = null;
  /** Full name → definition, in the order sent to the model. */
  private allowed: Map<string, Tool>;
  /** The fork origin's half-done calls, read once (see uncertainCalls). */
  private inherited: Readonly<Record<string, string>> | undefined;
  /** Calls a reviewer sent with other arguments (modify with tool_input); decisions are stored, so replays agree. */
  private readonly rewritten = new Set<string>();
  /** The agent's knowledge tools by name (src/tools/knowledge-tools.ts). */
  private readonly knowledge: ReadonlyMap<string, BuiltinTool>;

  constructor(declaration: ToolDeclaration, deps: ToolboxDeps) {
    this.declaration = declaration;
    this.deps = deps;
    let embedder: Embedder | undefined;
    const knowledgeDeps = {
      search: deps.knowledge ?? null,
      // Made on the first search, so a missing key fails that call (an is_error result), not the run.
      embedder: () => {
        const spec = declaration.embeddingProvider;
        if (!spec || !deps.knowledge) throw new EmbeddingError("no_key", "This agent has no embedding_provider.");
        embedder ??= deps.knowledge.embedder(spec);
        return embedder;
      },
    };
    this.knowledge = new Map(declaration.knowledgeTools.map((spec) => [spec.name, knowledgeTool(spec, knowledgeDeps)]));
    this.allowed = this.resolve();
  }

  /** The tools the run may use: the built-ins and MCP tools (allowed-tools.ts), then the knowledge tools it lists. */
  private resolve(): Map<string, Tool> {
    const allowed = resolveAllowedTools(this.declaration, this.catalog);
    const listed = this.declaration.allowedTools;
    for (const [name, tool] of this.knowledge) {
      if (listed && !listed.includes(name)) continue;
      allowed.set(name, { name, description: tool.description, input_schema: tool.inputSchema });
    }
    return allowed;
  }

  /**
   * Connects the MCP servers and lists their tools (a journaled step), then checks the allowed tools and the
   * fallbacks against what the servers really offer. Throws InvalidToolError, or McpConnectionError for a required
   * server that could not be reached.
   */
  async open(): Promise<void> {
    await this.makeWorkingDirectory();
    const { mcpServers } = this.declaration;
    if (mcpServers.length === 0) return;
    this.mcp = await loadMcp();
    for (const spec of mcpServers) {
      this.sessions.set(
        spec.name,
        new this.mcp.McpSession({
          spec,
          secret: this.deps.secret,
          outbound: this.deps.outbound,
          transport: this.deps.mcpTransport?.(spec.name),
        }),
      );
    }
    this.catalog = await this.deps.runtime.step("mcp_connect", () =>
      discoverTools(this.sessions.values(), this.deps.runtime),
    );
    const required = mcpServers.find((s) => s.required && this.catalog.failed[s.name]);
    if (required) {
      const failure = this.catalog.failed[required.name];
      throw new McpConnectionError(required.name, `it is required and could not be connected: ${failure?.message}`);
    }
    this.allowed = this.resolve();
  }

  /**
   * Creates the agent's working directory when the workspace lacks it, so that the shell can start in it and files
   * can be written there. Creating a folder that exists changes nothing, so a resumed run may do it again. A file in
   * its place is left alone: the tools then say the path is not a folder.
   */
  private async makeWorkingDirectory(): Promise<void> {
    const folder = this.declaration.settings.workingDirectory;
    if (folder === "/" || this.deps.workspace.stat(folder)) return;
    const fs = new WorkspaceFs(this.deps.workspace, { readOnly: false });
    try {
      await fs.mkdir(folder, { recursive: true });
    } catch (error) {
      if (typeof (error as { code?: unknown }).code !== "string") throw error;
      return;
    }
    await fs.commit();
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

  /**
   * Before a turn's calls run one by one: starts the sub-agents of its Task calls together (as many as
   * subagents.max_parallel allows), so that they run in parallel while the calls wait for them in order.
   */
  async prepare(uses: readonly { id: string; name: string; input: unknown }[]): Promise<void> {
    const { subagents } = this.deps;
    // A Task call that needs a person's approval starts its child only once approved (the tool itself does then).
    if (!subagents || !this.allowed.has(TASK_TOOL) || needsApproval(TASK_TOOL, this.declaration.permissions)) return;
    const calls = uses.filter((use) => use.name === TASK_TOOL);
    if (calls.length > 0) await startSubagents(subagents, calls, this.declaration.settings.subagents.max_parallel);
  }

  /**
   * Whether the call only reads, and so may run at the same time as the turn's other reads: a built-in tool that
   * changes nothing (Read, Glob, Grep, WebFetch) or an MCP tool its server marks readOnlyHint. Never a call that
   * may wait for a person (its approval, a fork's half-done call), so a wait never stops a run while a sibling
   * call is still running.
   */
  readOnly(use: { id: string; name: string }): boolean {
    if (!this.allowed.has(use.name) || needsApproval(use.name, this.declaration.permissions)) return false;
    if (this.uncertainCalls()[use.id] !== undefined) return false;
    const mcp = parseMcpToolName(use.name);
    if (mcp) return this.catalog.servers[mcp.server]?.tools.find((t) => t.name === mcp.tool)?.read_only === true;
    return (this.knowledge.get(use.name) ?? BUILTIN_TOOL_IMPLEMENTATIONS.get(use.name))?.readOnly === true;
  }

  /** What people added to the conversation when they answered this turn's calls (see src/approvals/gate.ts). */
  humanMessages(toolUseIds: readonly string[]): TextBlockParam[] {
    return humanMessages(this.deps.runtime.taskState, toolUseIds);
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
    if (parseMcpToolName(gate.run.name)) {
      return callMcpTool(
        {
          runtime,
          servers: this.declaration.mcpServers,
          sessions: this.sessions,
          catalog: this.catalog,
          mcp: this.mcp,
          idempotencyKey: (toolUseId, toolName) => this.mcpCallKey(toolUseId, toolName),
          mayStandIn: (name) => this.allowed.has(name) && !needsApproval(name, permissions),
        },
        gate.run,
        turnIndex,
        info,
        position,
      );
    }
    const { taskId, workspace, outbound } = this.deps;
    const subagents = this.deps.subagents ?? null;
    const context = { taskId, runtime, workspace, outbound, subagents, settings: this.declaration.settings };
    return callBuiltin(context, gate.run, turnIndex, info, position, this.knowledge.get(gate.run.name));
  }

  /**
   * Calls this task inherited from its fork origin half-done (ForkState.uncertain): by tool_use id, the task whose
   * idempotency keys the call was first sent with.
   */
  private uncertainCalls(): Readonly<Record<string, string>> {
    this.inherited ??= this.deps.runtime.taskState.get(FORK_STATE_KEY)?.uncertain ?? {};
    return this.inherited;
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
