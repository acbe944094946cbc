// What a tool call returns to the model, whoever answers it: a built-in tool, an MCP server, a person (AskUser), or
// the Toolbox refusing the call. A failure is data: `is_error: true` with a message the model can act on, never an
// exception that ends the run. A leaf: it imports nothing from the rest of src/.
import type { ImageBlockParam, TextBlockParam } from "@anthropic-ai/sdk/resources/messages";

/** What a tool_result block may carry back to the model besides plain text. */
export type ToolResultBlock = TextBlockParam | ImageBlockParam;

export interface ToolResult {
  /** Returned to the model as the tool_result content. */
  content: string | ToolResultBlock[];
  is_error: boolean;
  /** Recorded in the tool_call_completed event (e.g. a command's seed 002 StepExecutionResult). */
  details?: Record<string, unknown>;
}
