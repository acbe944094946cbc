// Seed 002 final answer synthesis: when a skill agent's plan says finish, one more model call (its own call site)
// writes the answer from everything the run found, its prompt kept in the run bundle; if that call fails, the finish
// action's own text is the answer.
import type { Message, MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { StepInfo } from "../contracts/runtime.ts";
import { LimitExceededError } from "../errors.ts";
import type { ActionStep } from "../skills/decision.ts";
import type { AgentContext } from "./context.ts";
import { extractText } from "./text.ts";

const SYNTHESIS_PROMPT =
  "Write the final answer to the task from everything above: what you found and did. Answer the task directly; " +
  "do not describe the process or mention skills, JSON or actions.";
const PREVIEW_CHARS = 500;

/**
 * The answer of a finish action taken at `turn`. `request` builds the synthesis call's request from its messages
 * (the agent's model, output budget and system prompt).
 */
export async function synthesize(
  context: AgentContext,
  finish: {
    turn: number;
    action: ActionStep;
    messages: readonly MessageParam[];
    request: (messages: MessageParam[]) => MessageCreateParamsBase;
  },
  info: StepInfo,
): Promise<string> {
  const { runtime } = context;
  const { turn, action, messages } = finish;
  const given = [action.params.result, action.params.summary, action.params.message].find(
    (v): v is string => typeof v === "string" && v.trim().length > 0,
  );
  const synthesisTurn = turn + 1;
  const evidenceItems = messages.filter((m) => m.role === "user").length - 1;
  runtime.emit(
    "final_answer_synthesis_started",
    { turn_index: synthesisTurn, evidence_items: evidenceItems },
    info.spanId,
  );
  const prompt = `${SYNTHESIS_PROMPT}${given ? `\n\nYour draft answer:\n${given}` : ""}`;
  await runtime.artifact(`artifacts/final_answer_prompt_turn_${synthesisTurn}.txt`, prompt);
  try {
    let message: Message | undefined;
    for await (const item of runtime.streamModel(finish.request([...messages, { role: "user", content: prompt }]), {
      turnIndex: synthesisTurn,
      callSite: "final_answer_synthesis",
      attempt: info.attempt,
      spanId: info.spanId,
    })) {
      if (item.type === "assistant") message = item.message;
    }
    const answer = message ? extractText(message.content).trim() : "";
    if (!answer) throw new Error("the synthesis call answered no text");
    runtime.emit(
      "final_answer_synthesis_completed",
      { turn_index: synthesisTurn, summary_preview: answer.slice(0, PREVIEW_CHARS) },
      info.spanId,
    );
    return answer;
  } catch (error) {
    if (runtime.signal.aborted || error instanceof LimitExceededError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    runtime.emit("final_answer_synthesis_failed", { turn_index: synthesisTurn, reason }, info.spanId);
    if (given) return given;
    throw error;
  }
}
