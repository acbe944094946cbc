// AskUser (seed 002's ask_user action), the person's side: the agent asks a question and the run waits, at no cost,
// until someone answers with POST /v1/tasks/:id/resume; the answer is the tool's result. The tool as the model sees
// it is src/tools/ask-user.ts.
import type { ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { ToolRuntime } from "../contracts/runtime.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import { decisionKey } from "./requests.ts";
import { waitForPerson } from "./wait.ts";

export const ASK_USER = "AskUser";

/** The answer to an AskUser call: the person's message; until there is one, the run waits (throws). */
export function answerQuestion(
  runtime: Pick<ToolRuntime, "taskState" | "checkpoint">,
  timeoutSeconds: number | null,
  use: ToolUseBlock,
  turnIndex: number,
): ToolResult {
  const decision = runtime.taskState.get(decisionKey(use.id));
  const question = isRecord(use.input) && typeof use.input.question === "string" ? use.input.question : "";
  if (!question.trim()) return { content: 'AskUser needs {"question": "…"}.', is_error: true };
  if (!decision) waitForPerson(runtime, timeoutSeconds, { kind: "question", use, turnIndex, question });
  if (decision.action === "reject") {
    return {
      content: `The person did not answer${decision.message ? `: ${decision.message}` : "."}`,
      is_error: true,
    };
  }
  return { content: decision.message ?? "(no answer)", is_error: false };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
