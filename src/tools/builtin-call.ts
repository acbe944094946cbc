// One call of a built-in tool: refused when its capability is off (checked again at every call, whatever the
// agent's list says), answered with its stored result when it committed its workspace changes before an eviction cut
// it short, else run, on record as tool_call_started and tool_call_completed. A tool that throws gives the model an
// is_error result; only cancellation ends the call with an exception.
import type { ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { StepInfo, ToolRuntime } from "../contracts/runtime.ts";
import type { SubagentHost } from "../contracts/subagents.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import { AwaitingSubagentsError, toErrorInfo } from "../errors.ts";
import type { OutboundPolicy } from "../net/outbound.ts";
import type { Workspace } from "../workspace/workspace.ts";
import { BUILTIN_TOOL_IMPLEMENTATIONS } from "./builtin.ts";
import { capabilityOn, type ToolSettings } from "./settings.ts";
import { TASK_TOOL } from "./task-tool.ts";
import { type BuiltinTool, resultText } from "./tool.ts";

/** Characters of a result the tool_call_completed event previews. */
const PREVIEW_CHARS = 500;

/** What a built-in tool call runs with: the run's, and the agent's settings. */
export interface BuiltinCallContext {
  taskId: string;
  runtime: ToolRuntime;
  workspace: Workspace;
  settings: ToolSettings;
  outbound: OutboundPolicy;
  subagents: SubagentHost | null;
}

export async function callBuiltin(
  context: BuiltinCallContext,
  use: ToolUseBlock,
  turnIndex: number,
  info: StepInfo,
  position: number,
  /** The tool itself when it is not one of the deployment's built-ins (an agent's knowledge tool). */
  own?: BuiltinTool,
): Promise<ToolResult> {
  const { runtime, settings } = context;
  const base = { turn_index: turnIndex, tool_use_id: use.id, tool_name: use.name };
  const tool = own ?? BUILTIN_TOOL_IMPLEMENTATIONS.get(use.name);
  if (!tool || !capabilityOn(use.name, settings)) {
    runtime.emit("tool_denied", { ...base, reason: "capability_off" }, info.spanId);
    return { content: `Tool "${use.name}" is turned off for this agent.`, is_error: true };
  }
  // A call that committed its workspace changes before an eviction cut it short: its result, not a second run.
  const settled = tool.changesWorkspace ? context.workspace.settled<ToolResult>(use.id) : undefined;
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
  // A Task call runs again each time one of the turn's sub-agents ends until its own has: subagent_started says
  // once what it started.
  if (tool.name !== TASK_TOOL) {
    runtime.emit("tool_call_started", { ...base, input: use.input, attempt: info.attempt }, info.spanId);
  }
  const started = Date.now();
  let result: ToolResult;
  try {
    result = await tool.run(use.input, {
      taskId: context.taskId,
      runtime,
      signal: runtime.signal,
      workspace: context.workspace,
      settings,
      outbound: context.outbound,
      turnIndex,
      toolUseId: use.id,
      stepLabel: `step-${position}`,
      subagents: context.subagents,
    });
  } catch (error) {
    if (runtime.signal.aborted || error instanceof AwaitingSubagentsError) throw error;
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
