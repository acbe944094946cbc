// Building seed 004's ExecutionResult (its schema: src/contracts/execution-result.ts) for a turn that has ended (a
// session's message, or an invocation's one run): read off the turn's own messages (from the user message that
// started it) and the usage the turn added, so it costs what the turn holds, never what the conversation holds.
import type { AgentResult } from "../agents/result.ts";
import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { AgentUsage } from "../contracts/usage.ts";
import type { Json } from "../lib/json.ts";
import { searchOutcome } from "../llm/web-search.ts";
import type { MessageContent } from "./conversation.ts";

/** A message of the turn as the conversation stores it. */
export interface TurnMessage {
  role: "user" | "assistant";
  content: MessageContent;
}

/** How the turn ended: its answer, or why it did not produce one. */
export type TurnOutcome = { ok: true; response: string } | { ok: false; reason: string; response?: string };

/** How an agent's run ended, as a turn's outcome. */
export function runOutcome(result: AgentResult): TurnOutcome {
  if (result.success) return { ok: true, response: result.output };
  const reason = result.errors[0]?.message ?? "The run failed without a reported error.";
  return { ok: false, reason, response: result.output };
}

/**
 * The result of a turn: `messages` are the turn's, from its user message on; `before` and `after` the usage totals
 * when it started and when it ended.
 */
export function executionResult(
  messages: readonly TurnMessage[],
  before: AgentUsage,
  after: AgentUsage,
  outcome: TurnOutcome,
  structuredOutput: Json | null = null,
): ExecutionResult {
  const toolCalls: ExecutionResult["tool_calls"] = [];
  const toolResults: ExecutionResult["tool_results"] = [];
  let modelTurns = 0;
  for (const message of messages) {
    if (message.role === "assistant") modelTurns++;
    if (typeof message.content === "string") continue;
    for (const block of message.content) {
      // A web search (server_tool_use, and its web_search_tool_result) is a call the model made too, though the API
      // ran it inside the model call: it is listed with the calls Outpost ran.
      if (block.type === "tool_use" || block.type === "server_tool_use") {
        toolCalls.push({ name: block.name, arguments: block.input, call_id: block.id });
      } else if (block.type === "tool_result") {
        toolResults.push({ call_id: block.tool_use_id, result: resultText(block.content), is_error: block.is_error });
      } else if (block.type === "web_search_tool_result") {
        const outcome = searchOutcome(block.content);
        const result = outcome.error_code
          ? `web search failed: ${outcome.error_code}`
          : outcome.results.map((r) => `${r.title} <${r.url}>`).join("\n");
        toolResults.push({ call_id: block.tool_use_id, result, is_error: outcome.error_code !== null });
      }
    }
  }
  // A turn's first message may answer calls of the turn before it (left unanswered): those are not this turn's.
  const own = new Set(toolCalls.map((c) => c.call_id));
  const ownResults = toolResults.filter((r) => own.has(r.call_id));
  const prompt =
    after.input_tokens -
    before.input_tokens +
    (after.cache_creation_input_tokens - before.cache_creation_input_tokens) +
    (after.cache_read_input_tokens - before.cache_read_input_tokens);
  const completion = after.output_tokens - before.output_tokens;
  return {
    response: outcome.ok ? outcome.response : (outcome.response ?? ""),
    tool_calls: toolCalls,
    tool_results: ownResults,
    token_usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    structured_output: outcome.ok ? structuredOutput : null,
    num_turns: modelTurns,
    is_error: !outcome.ok,
    error_reason: outcome.ok ? null : outcome.reason,
  };
}

/** A tool result's text: the text itself, or its text blocks joined (an image is named, not inlined). */
function resultText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.map((block) => (block.type === "text" ? (block.text ?? "") : `[${block.type}]`)).join("\n");
}
