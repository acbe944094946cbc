// The emulator's common view of a model call, in the Anthropic Messages shape that scripts and default replies are
// written against (other dialects convert their requests into it): parsing a Messages API body with the minimal
// validation the real API would reject on (among it: every tool call answered in the next message), and the text views (first user text, last user text, tool results) that
// script matching and default replies key on.

import type { CompactionRequest } from "./compaction.ts";
import { checkSentBack, checkWebSearchTool, WEB_SEARCH_TOOL_TYPE } from "./web-search.ts";

export interface RequestMessage {
  role: "user" | "assistant";
  /** A string, or Anthropic content blocks (text, tool_use, tool_result, ...). */
  content: string | Record<string, unknown>[];
}

export interface MessagesRequest {
  model: string;
  /** The reply's token cap as sent, null where the provider lets it be left out; replies do not depend on it. */
  maxTokens: number | null;
  messages: RequestMessage[];
  system: unknown;
  tools: Record<string, unknown>[];
  stream: boolean;
  /** Whether a stream reports usage at its end: always, except OpenAI without `stream_options.include_usage`. */
  streamUsage: boolean;
  /**
   * The parts of the request the model reads, as sent in the provider's own shape: token estimates and the seeds of
   * default replies are taken over them, not over the normalised fields.
   */
  prompt: { system: unknown; messages: unknown; tools: unknown };
  /** Set for the Messages API's compaction request (emulator/compaction.ts): its checked `compaction` parameter. */
  compaction?: CompactionRequest;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Parses and minimally validates a /v1/messages body, wording errors like the real API does. */
export function parseMessagesRequest(body: unknown): Parsed<MessagesRequest> {
  if (!isRecord(body)) return fail("request body must be a JSON object");
  const { model, max_tokens: maxTokens, messages, system, tools, stream } = body;
  if (typeof model !== "string" || model.length === 0) return fail("model: Field required");
  if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1) {
    return fail("max_tokens: Input should be a positive integer");
  }
  if (!Array.isArray(messages) || messages.length === 0) {
    return fail("messages: Input should be a non-empty list");
  }
  const parsedMessages: RequestMessage[] = [];
  for (const [index, message] of messages.entries()) {
    if (!isRecord(message)) return fail(`messages.${index}: Input should be an object`);
    const { role, content } = message;
    if (role !== "user" && role !== "assistant") {
      return fail(`messages.${index}.role: Input should be 'user' or 'assistant'`);
    }
    if (typeof content === "string") {
      parsedMessages.push({ role, content });
    } else if (Array.isArray(content) && content.every(isRecord)) {
      parsedMessages.push({ role, content });
    } else {
      return fail(`messages.${index}.content: Input should be a string or a list of content blocks`);
    }
  }
  // The current API version takes no sampling parameters: any of them is a 400, whatever its value.
  for (const key of ["temperature", "top_p", "top_k"]) {
    if (key in body) return fail(`${key}: Extra inputs are not permitted`);
  }
  const { thinking } = body;
  if (isRecord(thinking) && thinking.type === "enabled") {
    const budget = thinking.budget_tokens;
    if (typeof budget !== "number" || !Number.isInteger(budget) || budget < 1024) {
      return fail("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
    }
    if (budget >= maxTokens) return fail("max_tokens: must be greater than thinking.budget_tokens");
  }
  const unanswered = unansweredToolUse(parsedMessages);
  if (unanswered) return fail(unanswered);
  if (tools !== undefined && (!Array.isArray(tools) || !tools.every(isRecord))) {
    return fail("tools: Input should be a list of tool definitions");
  }
  for (const [index, tool] of (tools ?? []).entries()) {
    const problem = tool.type === WEB_SEARCH_TOOL_TYPE ? checkWebSearchTool(tool, `tools.${index}`) : null;
    if (problem) return fail(problem);
  }
  const sentBack = checkSentBack(parsedMessages);
  if (sentBack) return fail(sentBack);
  if (stream !== undefined && typeof stream !== "boolean") return fail("stream: Input should be a boolean");
  return {
    ok: true,
    value: {
      model,
      maxTokens,
      messages: parsedMessages,
      system,
      tools: tools ?? [],
      stream: stream === true,
      streamUsage: true,
      prompt: { system, messages, tools },
    },
  };
}

/**
 * The real API's rule for tool calls: every tool_use of an assistant message is answered by a tool_result in the next
 * message, which must be a user message. Returns its error message for the first call left unanswered, or null.
 */
function unansweredToolUse(messages: readonly RequestMessage[]): string | null {
  for (const [index, message] of messages.entries()) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    const ids = message.content.filter((b) => b.type === "tool_use").map((b) => String(b.id));
    if (ids.length === 0) continue;
    const next = messages[index + 1];
    // A conversation may end on the calls: the request then asks for nothing about them yet (a prefill).
    if (!next) continue;
    const answered = new Set(
      typeof next.content === "string" || next.role !== "user"
        ? []
        : next.content.filter((b) => b.type === "tool_result").map((b) => String(b.tool_use_id)),
    );
    const missing = ids.filter((id) => !answered.has(id));
    if (missing.length > 0) {
      return `messages.${index + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
  }
  return null;
}

export function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

/** The turn index of a request: how many times the model has already spoken in it. */
export function turnIndex(messages: readonly RequestMessage[]): number {
  return messages.filter((message) => message.role === "assistant").length;
}

/** Text of a content value: the string itself, or its text blocks (and compaction blocks' summaries) joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(isRecord)
    .map((block) => (block.type === "text" ? block.text : block.type === "compaction" ? block.content : null))
    .filter((text): text is string => typeof text === "string")
    .join("\n");
}

export function systemText(system: unknown): string {
  return contentText(system);
}

export function firstUserText(messages: readonly RequestMessage[]): string {
  const first = messages.find((message) => message.role === "user");
  return first ? contentText(first.content) : "";
}

/** The most recent non-empty user text; tool-result-only messages are skipped so prompts still drive values. */
export function lastUserText(messages: readonly RequestMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== "user") continue;
    const text = contentText(message.content);
    if (text.length > 0) return text;
  }
  return "";
}

export function toolResultBlocks(message: RequestMessage | undefined): Record<string, unknown>[] {
  if (!message || typeof message.content === "string") return [];
  return message.content.filter((block) => block.type === "tool_result");
}

export function hasAnyToolResult(messages: readonly RequestMessage[]): boolean {
  return messages.some((message) => toolResultBlocks(message).length > 0);
}

/** Rough but stable token estimate: the spec'd chars/4 over the parts of the request the model reads. */
export function estimateInputTokens(request: MessagesRequest): number {
  const { system, messages, tools } = request.prompt;
  return Math.ceil(JSON.stringify({ system, messages, tools }).length / 4);
}
