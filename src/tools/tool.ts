// The contract of a tool Outpost runs itself (built-in tools; MCP tools come over the wire). A failure is data:
// `is_error: true` with a message the model can act on (a ToolResult, src/contracts/tool-result.ts), never an
// exception that ends the run.
import type { ToolRuntime } from "../contracts/runtime.ts";
import type { SubagentHost } from "../contracts/subagents.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import type { OutboundPolicy } from "../net/outbound.ts";
import type { Workspace } from "../workspace/workspace.ts";
import type { ToolSettings } from "./settings.ts";

export interface ToolContext {
  taskId: string;
  runtime: ToolRuntime;
  signal: AbortSignal;
  /** The task's workspace; tools change it only through a WorkspaceFs they commit. */
  workspace: Workspace;
  settings: ToolSettings;
  outbound: OutboundPolicy;
  turnIndex: number;
  /** The model's tool_use id: the key a workspace commit settles the call under. */
  toolUseId: string;
  /** "step-<n>": the call's position in its turn, as in seed 002's artifact names (turn_1_step-1_stdout.txt). */
  stepLabel: string;
  /** The task's sub-agents (the Task tool), or null where a run cannot delegate. */
  subagents: SubagentHost | null;
}

export interface BuiltinTool {
  name: string;
  description: string;
  /** JSON Schema of the input, as sent to the model. */
  inputSchema: { type: "object"; properties: Record<string, unknown>; required?: string[] };
  run(input: unknown, context: ToolContext): Promise<ToolResult>;
  /**
   * True for tools that change the workspace. They commit their changes together with their result (keyed by the
   * tool_use id), and a replay of a call that committed returns that result instead of running again.
   */
  changesWorkspace?: boolean;
  /**
   * True for tools that change nothing (MCP's readOnlyHint): the read-only calls of a turn may run at the same time
   * (src/agents/tool-loop.ts). A tool that changes the workspace, the task's state or anything outside is not.
   */
  readOnly?: boolean;
}

export function toolError(message: string): ToolResult {
  return { content: message, is_error: true };
}

/** The text of a result (images as a short marker), for previews in events. */
export function resultText(result: ToolResult): string {
  if (typeof result.content === "string") return result.content;
  return result.content.map((block) => (block.type === "text" ? block.text : "[image]")).join("\n");
}
