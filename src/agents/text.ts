// Extracting readable text from assistant content (FR-006): plain strings, text blocks, and mixed content where
// text sits between tool calls and thinking. Non-text blocks are skipped.
import type { ContentBlock, ContentBlockParam, Message, MessageParam } from "@anthropic-ai/sdk/resources/messages";

type AnyContent = string | readonly (ContentBlock | ContentBlockParam)[];

/** The text of the content's text blocks, joined by blank lines when there are several. */
export function extractText(content: AnyContent | Message | MessageParam): string {
  const blocks = typeof content === "string" || Array.isArray(content) ? content : (content as MessageParam).content;
  if (typeof blocks === "string") return blocks;
  const parts: string[] = [];
  for (const block of blocks as readonly (ContentBlock | ContentBlockParam)[]) {
    if (block.type === "text" && block.text.length > 0) parts.push(block.text);
  }
  return parts.join("\n\n");
}

/** Text of every assistant message in a conversation, in order. */
export function extractAllText(messages: readonly (Message | MessageParam)[]): string[] {
  return messages.filter((m) => m.role === "assistant").map((m) => extractText(m));
}
