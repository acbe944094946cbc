// A message to an input-required task: the decision it is, bound to the request it was shown (src/approvals/
// replies.ts judges the binding in the task's object), then the same resume as POST /v1/tasks/:id/resume. A reply
// that names its request (a data part's or the metadata's request_id, or the id in referenceTaskIds) decides it; a
// bare one decides only the one request the task showed over A2A; otherwise the answer is a message saying what waits,
// and nothing is decided. A repeated messageId is bound as the first was. docs/a2a.md says it for clients.
import type { Message } from "@a2a-js/sdk";
import { type BoundRequest, MAX_REPLY_ID_CHARS } from "../approvals/replies.ts";
import { canonicalJson } from "../lib/canonical-json.ts";
import { sha256Hex } from "../lib/sha256.ts";
import { isTerminal, type TaskView } from "../tasks/task.ts";
import { decisionRefused, invalidParams, taskNotFound, unsupported } from "./errors.ts";
import type { OutpostPort, TaskStub } from "./outpost-port.ts";
import { agentMessage, contextIdOf, dataPart, NAMING_HINT, textPart } from "./task-mapping.ts";

/** The text answers of an approval request take, besides a data part. */
const APPROVE = new Set(["approve", "approved", "yes", "y", "ok"]);
const REJECT = new Set(["reject", "rejected", "no", "n", "deny"]);

/** What a reply led to: the task it decided for (and where its stream follows from), or an answer of its own. */
export type ReplyOutcome = { stub: TaskStub; task: TaskView; cursor: number } | { answer: Message };

/** A reply's data part, if any: an object (a resume body). */
function dataObject(data: unknown[]): Record<string, unknown> | null {
  const [first] = data;
  if (first === undefined) return null;
  if (typeof first !== "object" || first === null || Array.isArray(first)) {
    throw invalidParams(
      "A reply's data part is an object: {request_id, action, message?, tool_input?}.",
      "message.parts",
    );
  }
  return first as Record<string, unknown>;
}

/** The request a reply names by its request_id (its data part's, or its metadata's), or null. */
function namedRequest(message: Message, data: Record<string, unknown> | null): string | null {
  const fromData = data?.request_id;
  const fromMetadata = (message.metadata as Record<string, unknown> | undefined)?.request_id;
  for (const [value, field] of [
    [fromData, "message.parts"],
    [fromMetadata, "message.metadata.request_id"],
  ] as const) {
    if (value !== undefined && (typeof value !== "string" || value === "")) {
      throw invalidParams("request_id is the id of the request the reply answers (a string).", field);
    }
  }
  if (typeof fromData === "string" && typeof fromMetadata === "string" && fromData !== fromMetadata) {
    throw invalidParams("The data part and the metadata name two requests; name one.", "message.metadata.request_id");
  }
  return (fromData ?? fromMetadata ?? null) as string | null;
}

/**
 * A reply as a resume body for `request`: a data part is one ({action, message?, tool_input?}); text alone answers a
 * question, or approves or rejects a call (a request the task does not know the kind of takes either).
 */
function decisionBody(request: BoundRequest, text: string, data: Record<string, unknown> | null): unknown {
  if (data) return { ...(text ? { message: text } : {}), ...data, request_id: request.request_id };
  const word = text.toLowerCase();
  if (request.kind !== "question") {
    if (APPROVE.has(word)) return { request_id: request.request_id, action: "approve" };
    if (REJECT.has(word)) return { request_id: request.request_id, action: "reject" };
  }
  if (request.kind === "approval") {
    throw invalidParams(
      `Task waits for approval of ${request.tool_name}: reply "approve" or "reject", or a data part {"action": "reject", "message": "why"}.`,
      "message.parts",
    );
  }
  return { request_id: request.request_id, action: "approve", message: text };
}

/** The answer to a reply that decided nothing: what the task waits for, and how to answer it. */
function pendingAnswer(task: TaskView, replyId: string, request: BoundRequest | null): Message {
  const id = `${task.id}-reply-${replyId}`;
  if (!request) {
    const text = `Nothing was decided: task ${task.id} waits for a request this API key may not read; a key with the read scope can see which, and name it.`;
    return agentMessage(task, contextIdOf(task), id, [textPart(text)]);
  }
  const what = request.kind === "question" ? "an answer" : `approval of ${request.tool_name}`;
  const text = `Nothing was decided: task ${task.id} waits for request ${request.request_id} (${what}). A reply decides it when it names it (${NAMING_HINT}, or the id in referenceTaskIds), or, once the task has shown it, bare.`;
  return agentMessage(task, contextIdOf(task), id, [textPart(text), dataPart(request)], {
    request_id: request.request_id,
  });
}

/** A reply to `task` (found for the reply's taskId): bound in the task's object, then decided through its resume. */
export async function replyToTask(
  port: OutpostPort,
  stub: TaskStub,
  task: TaskView,
  message: Message,
  text: string,
  data: unknown[],
): Promise<ReplyOutcome> {
  if (!message.messageId || message.messageId.length > MAX_REPLY_ID_CHARS) {
    throw invalidParams(
      `A reply needs a messageId of its own (1–${MAX_REPLY_ID_CHARS} characters): a repeat is known by it.`,
      "message.messageId",
    );
  }
  const object = dataObject(data);
  if (!object && !text) throw invalidParams("A reply needs a text or a data part.", "message.parts");
  const fingerprint = await sha256Hex(
    canonicalJson([message.parts, message.metadata ?? null, message.referenceTaskIds]),
  );
  const binding = await stub.reply({
    reply: {
      reply_id: message.messageId,
      fingerprint,
      named: namedRequest(message, object),
      references: message.referenceTaskIds,
      readable: port.readable,
    },
  });
  if (!binding) throw taskNotFound(task.id);
  switch (binding.outcome) {
    case "reused":
      throw invalidParams(
        `messageId ${message.messageId} was sent before with another message: each message needs its own.`,
        "message.messageId",
      );
    case "not_waiting":
      throw unsupported(
        isTerminal(binding.status as TaskView["status"])
          ? `Task ${task.id} has ended (${binding.status}); to go on, send a new message with its contextId.`
          : `Task ${task.id} is working; it takes a message only while it waits for input.`,
      );
    case "pending":
      return { answer: pendingAnswer(task, message.messageId, binding.request) };
    case "decide":
      break;
  }
  const body = decisionBody(binding.request, text, object);
  // The command cuts a refusal to what the key may read (the request waiting now is not for a key that may not).
  const decided = await port.resume(task.id, port.decision(body, object ? "message.parts" : "message"));
  if (!decided) throw taskNotFound(task.id);
  if ("refused" in decided) throw decisionRefused(decided.refused.code, decided.refused.message);
  return { stub, task: decided.decided.task, cursor: task.last_event_seq };
}
