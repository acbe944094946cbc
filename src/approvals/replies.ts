// A reply that answers what a task waits for without naming its request (an A2A message to an input-required task,
// docs/a2a.md), bound to the request it was shown, never to whatever waits when it arrives. The rule (issue 36): a
// reply that names a request (its request_id, or a reference to it) is a decision for that request, judged by
// resume.ts as /v1's are; a bare reply is taken only when exactly one request waits and it is the one the task last
// showed its client; otherwise it is answered with what waits, and nothing is decided. Each reply is kept by its own
// id, so a repeat is bound as the first was (its original answer). Pure: the task's object (src/task-host/
// reply-surface.ts) gathers the facts and keeps the state.
import { z } from "zod";
import { type StateKey, stateKey } from "../lib/state-key.ts";

/** Replies remembered per task (the newest): enough for any client's retries, bounded whatever a client sends. */
export const MAX_REMEMBERED_REPLIES = 100;
/** Longest reply id kept (A2A's messageId; clients send UUIDs). */
export const MAX_REPLY_ID_CHARS = 256;

/** The request a reply is bound to, as far as the task knows it: its kind and tool are null for one it does not. */
const BoundRequestSchema = z.lazy(() =>
  z.object({
    request_id: z.string(),
    kind: z.enum(["approval", "question"]).nullable(),
    tool_name: z.string().nullable(),
  }),
);
export type BoundRequest = z.infer<typeof BoundRequestSchema>;

/**
 * What a reply is bound to: `decide` the request (a decision for it goes to the task's resume), or `pending`: nothing
 * is decided and the answer says what waits (null when the sender may not read it), or `not_waiting`: the task waits
 * for nothing (its status then). `repeated`: the reply's id was bound before, and this is that binding again.
 */
export type ReplyBinding =
  | { outcome: "decide"; request: BoundRequest; repeated: boolean }
  | { outcome: "pending"; request: BoundRequest | null; repeated: boolean }
  | { outcome: "not_waiting"; status: string; repeated: boolean }
  /** The reply's id was bound before for another reply: a reply needs an id of its own. */
  | { outcome: "reused" };

const RememberedSchema = z.lazy(() =>
  z.object({
    reply_id: z.string(),
    fingerprint: z.string(),
    outcome: z.enum(["decide", "pending", "not_waiting"]),
    request: BoundRequestSchema.nullable(),
    status: z.string(),
  }),
);
type Remembered = z.infer<typeof RememberedSchema>;

/** The replies a task has bound, newest last (at most MAX_REMEMBERED_REPLIES). */
export const REPLIES_KEY: StateKey<Remembered[]> = stateKey(
  "a2a_replies",
  z.lazy(() => z.array(RememberedSchema)),
);
/** The request the task last showed a client that replies without naming it (an A2A input-required status). */
export const SHOWN_REQUEST_KEY: StateKey<string> = stateKey(
  "a2a_shown_request",
  z.lazy(() => z.string()),
);

/** A reply as the object binds it. */
export interface Reply {
  /** The reply's own id (A2A's messageId): a repeat is bound as the first was. */
  reply_id: string;
  /** A digest of what the reply says (its parts, metadata, references): the same id for another reply is refused. */
  fingerprint: string;
  /** The request it names (its data part's or metadata's request_id), or null. */
  named: string | null;
  /** Ids it references (A2A referenceTaskIds): one that is a request of this task names it. */
  references: string[];
  /** Whether its sender may read the task (and so may have been shown the request, and be told it). */
  readable: boolean;
}

/** What the task's object is told (its one RPC for replies): that an answer showed a request, or a reply to bind. */
export type ReplyCall = { shown: string } | { reply: Reply };

/** What the task's object knows when a reply comes. */
export interface ReplyFacts {
  /** The status the task shows, and the request it shows waiting (its own, or a sub-agent's), if any. */
  status: string;
  shown: { request_id: string; kind: "approval" | "question"; tool_name: string } | null;
  /** How many requests wait now: the task's own and its sub-agents'. */
  waiting: number;
  /** Whether `id` names a request of this task: the one it waits for, one answered, or a sub-agent's it showed. */
  isRequest: (id: string) => boolean;
  /** Whether the task showed this request to a client (an A2A answer, a delivered input_required callback). */
  wasShown: (id: string) => boolean;
}

/**
 * Binds a reply by the rule this file opens with. Returns the binding, and the remembered replies to store (null
 * when nothing changes: a repeat).
 */
export function bindReply(
  facts: ReplyFacts,
  remembered: readonly Remembered[],
  reply: Reply,
): { binding: ReplyBinding; remember: Remembered[] | null } {
  const earlier = remembered.find((r) => r.reply_id === reply.reply_id);
  if (earlier) {
    if (earlier.fingerprint !== reply.fingerprint) return { binding: { outcome: "reused" }, remember: null };
    return { binding: replay(earlier), remember: null };
  }
  const binding = bind(facts, reply);
  const entry: Remembered = {
    reply_id: reply.reply_id,
    fingerprint: reply.fingerprint,
    outcome: binding.outcome,
    request: binding.outcome === "not_waiting" ? null : binding.request,
    status: facts.status,
  };
  return { binding, remember: [...remembered, entry].slice(-MAX_REMEMBERED_REPLIES) };
}

function bind(facts: ReplyFacts, reply: Reply): Exclude<ReplyBinding, { outcome: "reused" }> {
  const { shown } = facts;
  const named = reply.named ?? reply.references.find((id) => facts.isRequest(id)) ?? null;
  if (named !== null) {
    const request = shown?.request_id === named ? shown : { request_id: named, kind: null, tool_name: null };
    return { outcome: "decide", request, repeated: false };
  }
  if (!shown) return { outcome: "not_waiting", status: facts.status, repeated: false };
  const seen = reply.readable && facts.waiting === 1 && facts.wasShown(shown.request_id);
  if (seen) return { outcome: "decide", request: shown, repeated: false };
  return { outcome: "pending", request: reply.readable ? shown : null, repeated: false };
}

function replay(earlier: Remembered): ReplyBinding {
  if (earlier.outcome === "not_waiting") return { outcome: "not_waiting", status: earlier.status, repeated: true };
  if (earlier.outcome === "pending") return { outcome: "pending", request: earlier.request, repeated: true };
  // A decision's binding always has its request.
  return { outcome: "decide", request: earlier.request as BoundRequest, repeated: true };
}
