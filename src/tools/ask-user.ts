// AskUser (seed 002's ask_user action), the tool as the model sees it: the agent asks a person a question and waits,
// at no cost, until someone answers with POST /v1/tasks/:id/resume. The Toolbox never runs it; the answer comes
// from the person's decision (src/approvals/ask-user.ts).
import { z } from "zod";
import { ASK_USER } from "../approvals/ask-user.ts";
import { defineTool } from "./define-tool.ts";
import type { BuiltinTool } from "./tool.ts";

export const askUserTool: BuiltinTool = defineTool({
  name: ASK_USER,
  description:
    "Ask the person who started this task a question and wait for the answer. Use it when you cannot go on " +
    "without a decision or a fact only they have; the answer comes back as this tool's result.",
  input: z.strictObject({ question: z.string().min(1).max(4000).describe("The question, complete on its own.") }),
  example: '{"question": "…"}',
  // Never run directly: the Toolbox answers it from the person's decision.
  async run() {
    return { content: "AskUser is answered by a person, not run.", is_error: true };
  },
});
