// Extracting readable text from assistant content (FR-006): plain strings, text blocks, and mixed content where
// text sits between tool calls and thinking. Non-text blocks are skipped.
import type { ContentBlock, ContentBlockParam, Message, MessageParam } from "@anthropic-ai/sdk/resources/messages";

type AnyContent = string | readonly (ContentBlock | ContentBlockParam)[];

/**
 * The text of the content's text blocks, joined by blank lines when there are several. A cited passage (web search)
 * comes as a text block of its own in the middle of a sentence: it and the text right around it join as they are.
 */
export function extractText(content: AnyContent | Message | MessageParam): string {
  const blocks = typeof content === "string" || Array.isArray(content) ? content : (content as MessageParam).content;
  if (typeof blocks === "string") return blocks;
  let out = "";
  let previous: ContentBlock | ContentBlockParam | undefined;
  for (const block of blocks as readonly (ContentBlock | ContentBlockParam)[]) {
    if (block.type === "text" && block.text.length > 0) {
      const runOn = previous?.type === "text" && (cited(previous) || cited(block));
      out += out === "" || runOn ? block.text : `\n\n${block.text}`;
    }
    previous = block;
  }
  return out;
}

function cited(block: ContentBlock | ContentBlockParam): boolean {
  return block.type === "text" && (block.citations?.length ?? 0) > 0;
}

/** Text of every assistant message in a conversation, in order. */
export function extractAllText(messages: readonly (Message | MessageParam)[]): string[] {
  return messages.filter((m) => m.role === "assistant").map((m) => extractText(m));
}
