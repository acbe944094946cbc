// A skill agent's actions (seed 002 ActionStep): run_command, mcp_call and ask_user carried out through the run's
// tools as the tool calls they stand for, each try a journaled step on record as skill_step_executed, tried again up
// to the agent's maxStepRetries when it fails.
import type { ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { ToolResult } from "../contracts/tool-result.ts";
import type { ActionStep } from "../skills/decision.ts";
import { resultText } from "../tools/tool.ts";
import type { AgentContext } from "./context.ts";
import type { Evidence } from "./skill-prompts.ts";

/** Characters of an action's output the next turn shows (the whole of it is in the run bundle). */
const EVIDENCE_CHARS = 4_000;
const PREVIEW_CHARS = 500;

/** run_command, mcp_call or ask_user through the run's tools, tried again up to maxStepRetries when it fails. */
export async function runAction(
  context: AgentContext,
  action: { turn: number; stepId: string; index: number; step: ActionStep; maxStepRetries: number },
): Promise<Evidence> {
  const { runtime } = context;
  const { turn, stepId, index, step, maxStepRetries } = action;
  let last: Evidence | undefined;
  for (let retry = 0; retry <= maxStepRetries; retry++) {
    const evidence = await runtime.step(`turn_${turn}_${stepId}_try_${retry}`, async (info) => {
      const use = toolUseFor(step, `toolu_skill_${turn}_${index + 1}_${retry}`);
      const result: ToolResult = use
        ? await context.tools.call(use, turn, info, index + 1)
        : { content: `Action ${step.type} is not supported here.`, is_error: true };
      const failed = result.is_error === true || /^exit code: [1-9]/.test(resultText(result));
      const status: Evidence["status"] = failed ? "failed" : "success";
      runtime.emit(
        "skill_step_executed",
        {
          turn_index: turn,
          step_id: stepId,
          type: step.type,
          status,
          retry_count: retry,
          command: step.type === "run_command" ? step.params.command : null,
          tool_name: step.type === "mcp_call" ? step.params.tool_name : null,
          output_preview: resultText(result).slice(0, PREVIEW_CHARS),
        },
        info.spanId,
      );
      // Asking a person is not retried: their answer is the answer.
      if (failed && retry < maxStepRetries && step.type !== "ask_user") {
        runtime.emit(
          "step_retry_scheduled",
          { turn_index: turn, step_id: stepId, retry_count: retry + 1 },
          info.spanId,
        );
      }
      return {
        turn,
        step_id: stepId,
        type: step.type,
        status,
        summary: resultText(result).slice(0, EVIDENCE_CHARS),
      };
    });
    last = evidence;
    if (evidence.status === "success" || step.type === "ask_user") break;
  }
  return last as Evidence;
}

/** The tool call that carries out an action (run_command → Bash, mcp_call → the MCP tool, ask_user → AskUser). */
function toolUseFor(action: ActionStep, id: string): ToolUseBlock | null {
  const block = (name: string, input: Record<string, unknown>): ToolUseBlock =>
    ({ type: "tool_use", id, name, input }) as ToolUseBlock;
  switch (action.type) {
    case "run_command":
      return block("Bash", { command: action.params.command });
    case "mcp_call":
      return block(String(action.params.tool_name), (action.params.arguments as Record<string, unknown>) ?? {});
    case "ask_user":
      return block("AskUser", { question: action.params.message });
    default:
      return null;
  }
}
