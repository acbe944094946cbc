// An A2A message as Outpost's input: its text and data parts, and a context's earlier conversation as the context a
// follow-up task starts from. Plain functions of the message; the request handler (request-handler.ts) decides which
// applies, and a reply to an input-required task is replies.ts'.
import type { Message } from "@a2a-js/sdk";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { StoredMessage } from "../runtime/conversation.ts";
import { history } from "../sessions/session-view.ts";
import { invalidParams } from "./errors.ts";

/** Texts and data of a message's parts. */
export function partsOf(message: Message): { text: string; data: unknown[] } {
  const texts: string[] = [];
  const data: unknown[] = [];
  for (const part of message.parts) {
    if (part.content?.$case === "text") texts.push(part.content.value);
    else if (part.content?.$case === "data") data.push(part.content.value);
    else if (part.content) {
      throw invalidParams(
        "This agent takes text and data parts; send a file's content as text, or its link in the text.",
        "message.parts",
        "content_type_not_supported",
      );
    }
  }
  return { text: texts.join("\n").trim(), data };
}

/**
 * The conversation of a context's task as the context a follow-up continues from: its text, the messages of one
 * role run together (a tool loop's turns leave several assistant texts in a row).
 */
export function continuation(messages: readonly StoredMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const entry of history(messages)) {
    const last = out[out.length - 1];
    if (last && last.role === entry.role) last.content = `${String(last.content)}\n\n${entry.content}`;
    else out.push({ role: entry.role, content: entry.content });
  }
  return out;
}
