// Compaction's pure part: what the model is sent of a conversation once part of it has been compacted (a view: the
// messages before `through` replaced by `head`), the size estimates, the clearing of old tool results, where a
// summary may cut the conversation, and what the summarizer reads. The decisions and the model calls are
// src/agents/context-window.ts; docs/compaction.md explains both.
import type { MessageParam, ToolResultBlockParam } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { JsonSchema } from "../lib/json.ts";
import { stateKey } from "../lib/state-key.ts";

/**
 * Who writes a summary: `outpost`, the agent's own model with Outpost's prompt (SUMMARY_SYSTEM), or `anthropic`, the
 * Messages API's own compaction request, whose signed block is sent back as it came (docs/compaction.md).
 */
export const SUMMARIZERS = ["outpost", "anthropic"] as const;
export type Summarizer = (typeof SUMMARIZERS)[number];

/** What the model is sent of a conversation: `head` in place of its messages before `through`, then the rest as is. */
export interface ContextView {
  through: number;
  head: MessageParam[];
}

/**
 * A session's view at the end of its last turn, for the next turn to start from: `conversation_length` is the
 * conversation's length when it was stored, so a replay of that same turn (which starts shorter) does not take it.
 */
export const CONTEXT_VIEW_KEY = stateKey(
  "context_view",
  z.lazy(() =>
    z.strictObject({
      through: z.number().int().nonnegative(),
      head: z.array(z.strictObject({ role: z.enum(["user", "assistant"]), content: JsonSchema })),
      conversation_length: z.number().int().nonnegative(),
    }),
  ),
);

/** The last messages no compaction touches: the model's latest turn and what answered it, word for word. */
export const KEEP_RECENT_MESSAGES = 4;
/** The output budget of one summarization call. */
export const SUMMARY_MAX_TOKENS = 2048;
/** A cleared tool result begins with this, so a later compaction does not clear it again. */
const CLEARED_PREFIX = "[Tool result cleared";
/** A summary's head begins with this. */
export const SUMMARY_PREFIX = "[Summary of the conversation so far";

/**
 * The system prompt of a summarization call. The emulator answers a request whose system prompt begins
 * "Summarize the conversation" with a summary of its own (emulator/summarize.ts).
 */
export const SUMMARY_SYSTEM =
  "Summarize the conversation below so that an AI agent can continue its task from your summary alone, without " +
  "the conversation. Keep: the task and every constraint on it; decisions made and why; facts learned (names, " +
  "numbers, paths, identifiers, URLs), each exactly as written; what each tool call did and found; what is done " +
  "and what remains. Leave out pleasantries and anything superseded. Write plain text, as short as it can be " +
  "while keeping all of that.";

/** The conversation as the model is sent it under `view` (a view past the conversation's end is not applied). */
export function contextOf(messages: readonly MessageParam[], view: ContextView | null): MessageParam[] {
  if (!view || view.through > messages.length) return [...messages];
  return [...view.head, ...messages.slice(view.through)];
}

/** A size estimate in tokens: its JSON over four characters a token. */
export function tokensOf(value: unknown): number {
  return Math.ceil(JSON.stringify(value).length / 4);
}

/** The names of the tools called in `messages`, by tool_use id. */
function toolNames(messages: readonly MessageParam[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const block of message.content) if (block.type === "tool_use") names.set(block.id, block.name);
  }
  return names;
}

function resultChars(result: ToolResultBlockParam): number {
  const content = result.content;
  if (content === undefined) return 0;
  return typeof content === "string" ? content.length : JSON.stringify(content).length;
}

/**
 * `messages` with every tool result's content replaced by a note of what it was and how to get it again (its
 * tool_use and the result's block stay, so no call is parted from its answer), and how many were cleared.
 */
export function clearedToolResults(messages: readonly MessageParam[]): { messages: MessageParam[]; cleared: number } {
  const names = toolNames(messages);
  let cleared = 0;
  const out = messages.map((message): MessageParam => {
    if (message.role !== "user" || typeof message.content === "string") return message;
    const content = message.content.map((block) => {
      if (block.type !== "tool_result") return block;
      const text = typeof block.content === "string" ? block.content : "";
      if (text.startsWith(CLEARED_PREFIX)) return block;
      cleared++;
      const name = names.get(block.tool_use_id) ?? "the tool";
      const note =
        `${CLEARED_PREFIX} to keep the conversation inside the model's context window: ${name} returned ` +
        `${resultChars(block)} characters${block.is_error ? " (an error)" : ""}. Call it again if you need them.]`;
      return { ...block, content: note };
    });
    return { ...message, content };
  });
  return { messages: out, cleared };
}

/** The index of the last assistant message, or -1. */
export function lastAssistantIndex(messages: readonly MessageParam[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "assistant") return i;
  return -1;
}

/**
 * Where a summary may end: the earliest assistant message from `from` on whose tail (it and everything after it)
 * fits `budget` tokens, and never past the last assistant message (the model's latest turn, with its pending
 * tool_use and its thinking, is kept as it is). The head that replaces what comes before is one user message, so the
 * tail must begin with the assistant's. -1 when there is no assistant message from `from` on.
 */
export function summaryCut(messages: readonly MessageParam[], from: number, budget: number): number {
  const last = lastAssistantIndex(messages);
  if (last < from) return -1;
  let tail = tokensOf(messages.slice(last));
  let cut = last;
  for (let i = last - 1; i >= Math.max(from, 1); i--) {
    tail += tokensOf(messages[i]);
    if (tail > budget) break;
    if (messages[i]?.role === "assistant") cut = i;
  }
  return cut;
}

/** A message as the summarizer reads it. */
function blockText(block: Exclude<MessageParam["content"], string>[number], names: Map<string, string>): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "tool_use":
      return `[called ${block.name} with ${JSON.stringify(block.input)}]`;
    case "tool_result": {
      const name = names.get(block.tool_use_id) ?? "the tool";
      const content = typeof block.content === "string" ? block.content : JSON.stringify(block.content ?? "");
      return `[${name} returned${block.is_error ? " an error" : ""}: ${content}]`;
    }
    case "thinking":
    case "redacted_thinking":
      return "";
    // A summary the Messages API wrote (summarizer anthropic), read by Outpost's summarizer as the text it is.
    case "compaction" as string:
      return String((block as unknown as CompactionBlock).content ?? "");
    default:
      return `[${block.type}]`;
  }
}

/** The conversation as text for the summarizer, a paragraph a message. */
export function transcriptOf(messages: readonly MessageParam[]): string {
  const names = toolNames(messages);
  return messages
    .map((message) => {
      const text =
        typeof message.content === "string"
          ? message.content
          : message.content
              .map((block) => blockText(block, names))
              .filter(Boolean)
              .join("\n");
      return `${message.role === "user" ? "USER" : "AGENT"}: ${text}`;
    })
    .join("\n\n");
}

/** `text` in pieces of at most `maxChars`, cut at paragraph ends where one is near. */
export function chunksOf(text: string, maxChars: number): string[] {
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    const paragraph = rest.lastIndexOf("\n\n", maxChars);
    const at = paragraph > maxChars / 2 ? paragraph : maxChars;
    chunks.push(rest.slice(0, at));
    rest = rest.slice(at).replace(/^\n+/, "");
  }
  if (rest) chunks.push(rest);
  return chunks;
}

/** The one user message that replaces a summarized part: the task as it was first asked, when short, and the summary. */
export function summaryHead(task: string | null, summary: string): MessageParam[] {
  const parts = task ? [`The task, as first asked:\n${task}`] : [];
  parts.push(`${SUMMARY_PREFIX}, written to save context; the latest messages follow it as they were:]\n${summary}`);
  return [{ role: "user", content: parts.join("\n\n") }];
}

/**
 * A summary the Messages API wrote (its compaction request, summarizer anthropic): signed over its content, so it is
 * stored and sent back exactly as it came. Not in the SDK's non-beta types; src/agents/anthropic-compaction.ts
 * asks for it.
 */
export interface CompactionBlock {
  type: "compaction";
  content: string | null;
  [field: string]: unknown;
}

export function isCompactionBlock(block: unknown): block is CompactionBlock {
  return typeof block === "object" && block !== null && (block as { type?: unknown }).type === "compaction";
}

/** Whether any message holds a compaction block. */
export function holdsCompaction(messages: readonly MessageParam[]): boolean {
  return messages.some((m) => typeof m.content !== "string" && m.content.some(isCompactionBlock));
}

/**
 * The head that replaces the messages a compaction block summarizes: the block goes first in the conversation, so
 * it opens the assistant message the kept part begins with (the cut is always at one), that message's blocks
 * following it as they were.
 */
export function compactedHead(block: CompactionBlock, kept: MessageParam): MessageParam[] {
  const content = typeof kept.content === "string" ? [{ type: "text" as const, text: kept.content }] : kept.content;
  return [{ role: "assistant", content: [block as never, ...content] }];
}

/**
 * `messages` in consecutive stretches of about `maxTokens` each, every stretch after the first beginning with an
 * assistant message (so a compaction block of the stretches before can open it); a single message larger than that
 * is a stretch of its own.
 */
export function stretchesOf(messages: readonly MessageParam[], maxTokens: number): MessageParam[][] {
  const stretches: MessageParam[][] = [];
  let current: MessageParam[] = [];
  let size = 0;
  for (const message of messages) {
    const tokens = tokensOf(message);
    if (message.role === "assistant" && current.length > 0 && size + tokens > maxTokens) {
      stretches.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += tokens;
  }
  if (current.length > 0) stretches.push(current);
  return stretches;
}

/** The text of the conversation's first message when it is plain text. */
export function firstText(messages: readonly MessageParam[]): string | null {
  const first = messages[0];
  if (first?.role !== "user") return null;
  if (typeof first.content === "string") return first.content;
  const texts = first.content.filter((b) => b.type === "text").map((b) => b.text);
  return texts.length === first.content.length ? texts.join("\n") : null;
}

/**
 * What a provider's "too long" refusal says: the prompt's tokens and the model's window, in each provider's words
 * (Anthropic's two, OpenAI's, Gemini's); null when it says neither.
 */
export function toldWindow(message: string): { tokens: number; window: number } | null {
  const patterns: [RegExp, number, number][] = [
    [/(\d+) tokens > (\d+) maximum/, 1, 2],
    [/(\d+) \+ \d+ > (\d+)/, 1, 2],
    [
      /maximum context length is (\d+) tokens\. However, (?:your messages resulted in|you requested) (\d+) tokens/,
      2,
      1,
    ],
    [/input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/, 1, 2],
  ];
  for (const [pattern, tokens, window] of patterns) {
    const match = pattern.exec(message);
    if (match) return { tokens: Number(match[tokens]), window: Number(match[window]) };
  }
  return null;
}
