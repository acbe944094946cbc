// An A2A message as Outpost's input: its text and data parts, a reply to an input-required task as the resume body
// POST /v1/tasks/:id/resume takes, and a context's earlier conversation as the context a follow-up task starts from.
// Plain functions of the message; the request handler (request-handler.ts) decides which applies.
import type { Message } from "@a2a-js/sdk";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { StoredMessage } from "../runtime/conversation.ts";
import { history } from "../sessions/session-view.ts";
import type { TaskView } from "../tasks/task.ts";
import { invalidParams } from "./errors.ts";

/** The text answers of an approval request take, besides a data part. */
const APPROVE = new Set(["approve", "approved", "yes", "y", "ok"]);
const REJECT = new Set(["reject", "rejected", "no", "n", "deny"]);

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

/**
 * A reply as a resume body: a data part is one ({action, message?, tool_input?, request_id?}); text alone answers a
 * question, or approves or rejects a call. Bound to the request the task waits for unless the data names one.
 */
export function replyBody(pending: NonNullable<TaskView["pending_input"]>, text: string, data: unknown[]): unknown {
  const [first] = data;
  if (first !== undefined) {
    if (typeof first !== "object" || first === null || Array.isArray(first)) {
      throw invalidParams("A reply's data part is an object: {action, message?, tool_input?}.", "message.parts");
    }
    return { request_id: pending.request_id, ...(text ? { message: text } : {}), ...first };
  }
  if (!text) throw invalidParams("A reply needs a text or a data part.", "message.parts");
  if (pending.kind === "question") return { request_id: pending.request_id, action: "approve", message: text };
  const word = text.toLowerCase();
  if (APPROVE.has(word)) return { request_id: pending.request_id, action: "approve" };
  if (REJECT.has(word)) return { request_id: pending.request_id, action: "reject" };
  throw invalidParams(
    `Task waits for approval of ${pending.tool_name}: reply "approve" or "reject", or a data part {"action": "reject", "message": "why"}.`,
    "message.parts",
  );
}
