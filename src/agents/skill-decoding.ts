// Decoding a skill agent's turn (seed 002 ModelDecision): the model's text decoded into a decision, or, when it
// called tools natively instead, its calls taken as the plan; on record as llm_decision_decoded, and as the skill
// fields of the turn's transcript record.
import type { ContentBlock, ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { SkillTranscriptFields } from "../contracts/runtime.ts";
import { type ActionStep, classifyResponse, type DecodeResult, decodeModelDecision } from "../skills/decision.ts";
import type { TokenBudget } from "../skills/disclosure.ts";
import type { AgentContext } from "./context.ts";
import { extractText } from "./text.ts";

/** The decision of one turn's reply, emitted as llm_decision_decoded (native_tool_fallback first, when it applies). */
export function decodeTurn(context: AgentContext, turn: number, content: readonly ContentBlock[]): DecodeResult {
  const { runtime } = context;
  const text = extractText(content);
  const decoded = decodeModelDecision(text);
  const uses = content.filter((b): b is ToolUseBlock => b.type === "tool_use");
  if (!decoded.ok && uses.length > 0) {
    // The model called tools natively instead of answering with a decision: its calls become the plan.
    const actions = uses.map(nativeAction);
    runtime.emit("native_tool_fallback", {
      turn_index: turn,
      reason: `answered with ${uses.length} native tool call(s) instead of a decision (${decoded.error})`,
    });
    const fallback: DecodeResult = {
      ok: true,
      decision: {
        selected_skill: null,
        reasoning_summary: "",
        required_disclosure_paths: [],
        planned_actions: actions,
      },
      raw_action_types: uses.map((u) => u.name),
    };
    emitDecoded(context, turn, fallback);
    return fallback;
  }
  emitDecoded(context, turn, decoded);
  return decoded;
}

/** Seed 002 LlmTranscriptRecord's skill fields for a decision turn. */
export function transcriptFields(
  decoded: DecodeResult,
  budget: TokenBudget,
  disclosedPaths: string[],
): SkillTranscriptFields {
  if (!decoded.ok) {
    return {
      budget,
      disclosed_paths: disclosedPaths,
      decode_success: false,
      selected_skill: null,
      raw_action_types: decoded.raw_action_types,
      planned_action_types: [],
      required_disclosure_paths: [],
      response_kind: null,
      response_kind_reason: null,
      finish_summary: null,
      decode_error: decoded.error,
    };
  }
  const types = decoded.decision.planned_actions.map((a) => a.type);
  const kind = classifyResponse(types);
  const finish = decoded.decision.planned_actions.find((a) => a.type === "finish");
  const summary = finish
    ? [finish.params.summary, finish.params.result, finish.params.message].find((v) => typeof v === "string")
    : undefined;
  return {
    budget,
    disclosed_paths: disclosedPaths,
    decode_success: true,
    selected_skill: decoded.decision.selected_skill,
    raw_action_types: decoded.raw_action_types,
    planned_action_types: types,
    required_disclosure_paths: decoded.decision.required_disclosure_paths,
    response_kind: kind.kind,
    response_kind_reason: kind.reason,
    finish_summary: typeof summary === "string" ? summary : null,
    decode_error: null,
  };
}

function emitDecoded(context: AgentContext, turn: number, decoded: DecodeResult): void {
  if (!decoded.ok) {
    context.runtime.emit("llm_decision_decoded", {
      turn_index: turn,
      success: false,
      error: decoded.error,
      raw_action_types: decoded.raw_action_types,
    });
    return;
  }
  const types = decoded.decision.planned_actions.map((a) => a.type);
  const kind = classifyResponse(types);
  context.runtime.emit("llm_decision_decoded", {
    turn_index: turn,
    success: true,
    selected_skill: decoded.decision.selected_skill,
    reasoning_summary: decoded.decision.reasoning_summary,
    required_disclosure_paths: decoded.decision.required_disclosure_paths,
    planned_actions: decoded.decision.planned_actions,
    raw_action_types: decoded.raw_action_types,
    response_kind: kind.kind,
    response_kind_reason: kind.reason,
  });
}

/** A native tool call as the action it stands for (Bash → run_command, AskUser → ask_user, else mcp_call). */
function nativeAction(use: ToolUseBlock): ActionStep {
  const input = (use.input ?? {}) as Record<string, unknown>;
  if (use.name === "Bash")
    return { type: "run_command", params: { command: String(input.command ?? "") }, expected_output: null };
  if (use.name === "AskUser")
    return { type: "ask_user", params: { message: String(input.question ?? "") }, expected_output: null };
  return { type: "mcp_call", params: { tool_name: use.name, arguments: input }, expected_output: null };
}
