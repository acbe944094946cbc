// The parts every operation table of the OpenAPI document shares (src/http/openapi/operations.ts assembles them):
// the tags, what an operation says of itself, the error codes every operation of a kind answers, and the parameters
// and answers that recur.
import { z } from "zod";
import type { RequestErrorCode } from "../../../errors/codes.ts";
import type { Scope } from "../../../tenants/api-keys.ts";
import { EventCursor, EventDepth, TaskIdParam, WaitQuery } from "../../schemas.ts";
import { IDEMPOTENCY_KEY_PATTERN } from "../../task-creation.ts";

export const TAGS = {
  meta: "The API itself: health, this document and its reference page.",
  agents: "The agents the key's tenant can run, and its own agents added at runtime.",
  workflows: "Workflows: graphs of agents, run as one task.",
  tasks: "Tasks: one run of an agent or a workflow, its events, decisions, checkpoints, forks and callbacks.",
  files: "A task's or a session's run bundle (artifacts) and workspace files.",
  sessions: "Chat sessions: a conversation with an agent, one turn per message.",
  schedules: "Scheduled runs: an agent's task started on a cron expression or at an instant.",
  collections: "Collections of documents that agents' knowledge tools search (vector-store and hierarchical).",
  evaluations: "Evaluation runs: an agent's test cases run and graded by its metrics, with reports and comparisons.",
  hooks: "Inbound webhooks: signed deliveries that start runs.",
  tenant: "The tenant the API key belongs to.",
} as const;
export type Tag = keyof typeof TAGS;

/**
 * Who may call an operation: anyone (`none`), the sender of a signed webhook delivery (`signature`, no API key), or
 * an API key with that scope.
 */
export type Access = "none" | "signature" | Scope;

/** One answer of an operation: JSON, an event stream, raw content, or nothing (204). */
export interface AnswerSpec {
  description: string;
  json?: z.ZodType;
  /** The answer is an event stream (text/event-stream) of the task's event records. */
  sse?: true;
  /** Other media types, each with its schema (or none: any bytes). */
  raw?: Readonly<Record<string, z.ZodType | null>>;
  headers?: z.ZodObject;
}

export interface OperationSpec {
  method: "get" | "post" | "put" | "delete";
  /** In the OpenAPI form: `{id}` for Hono's `:id`. */
  path: string;
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  access: Access;
  params?: { path?: z.ZodObject; query?: z.ZodObject; header?: z.ZodObject };
  /** A JSON body validated by this schema (with jsonBody: 256 KiB, application/json). */
  body?: z.ZodType;
  /** A body in other media types (the route reads and checks it itself). */
  rawBody?: { description: string; content: Readonly<Record<string, z.ZodType>> };
  answers: Readonly<Record<number, AnswerSpec>>;
  /** The codes this route answers besides those every route of its kind does (see impliedErrors). */
  errors: readonly RequestErrorCode[];
}

/** The codes every operation of a kind can answer: keyed access, a JSON body, and a bug (500). */
export function impliedErrors(op: OperationSpec): RequestErrorCode[] {
  const codes: RequestErrorCode[] = [];
  if (op.access !== "none" && op.access !== "signature") {
    codes.push("unauthorized", "insufficient_scope", "api_keys_not_configured", "api_keys_invalid");
  }
  if (op.body) codes.push("validation_failed", "invalid_json", "unsupported_media_type", "payload_too_large");
  if (op.params?.query || op.params?.header) codes.push("validation_failed");
  codes.push("internal_error");
  return codes;
}

// ---- Parameters ----------------------------------------------------------------------------------------------------

export const TaskId = z.object({
  id: TaskIdParam.describe("The task's id. A malformed id is answered like an unknown one: 404 task_not_found."),
});
export const SessionId = z.object({
  id: TaskIdParam.describe("The session's id. A malformed id is answered like an unknown one: 404 session_not_found."),
});
export const AgentName = z.object({ name: z.string().describe("The agent's name.") });
export const WorkflowName = z.object({ name: z.string().describe("The workflow's name.") });

export const Wait = WaitQuery.optional().describe("Seconds to wait for the run to end before answering (at most 60).");
export const After = EventCursor.optional().describe(
  "Replay the events after this sequence number (Last-Event-ID wins when both are sent).",
);
export const Depth = EventDepth.optional().describe(
  "How many levels of sub-agents below the task the stream carries (0: the task's own events only); all without it.",
);
export const LastEventId = EventCursor.optional().describe(
  "The `id:` of the last event the client has: the stream resumes after it (what EventSource sends on reconnect).",
);
export const IdempotencyKey = z
  .string()
  .regex(IDEMPOTENCY_KEY_PATTERN)
  .optional()
  .describe(
    "Makes the creation idempotent: a repeat with the same key and body gets the same task (Idempotent-Replayed: true); another body is refused with 422 idempotency_key_reused. Keys are kept at least as long as the task.",
  );
export const AcceptStream = z
  .string()
  .optional()
  .describe("`text/event-stream` to receive the run's events as they happen instead of a JSON answer.");

export const EventStreamQuery = z.object({ after: After, depth: Depth });
export const EventStreamHeaders = z.object({ "last-event-id": LastEventId });
export const CreationHeaders = z.object({ "idempotency-key": IdempotencyKey });
/** A request that starts a task (src/http/task-creation.ts startTask) may ask for its events instead of the task. */
export const TaskCreationHeaders = CreationHeaders.extend({ accept: AcceptStream });

// ---- Answers -------------------------------------------------------------------------------------------------------

export const Created = z.object({
  location: z.string().describe("The URL of what was created."),
  "idempotent-replayed": z.literal("true").optional().describe("Sent when the answer replays an earlier request's."),
});
export const Replayed = z.object({
  "idempotent-replayed": z.literal("true").optional().describe("Sent when the answer replays an earlier request's."),
});

export const events = (description: string): AnswerSpec => ({ description, sse: true });

/** What a request that starts a task answers: 202 with it, or with Accept: text/event-stream its events (startTask). */
export function startedTask(what: string, task: z.ZodType): Readonly<Record<number, AnswerSpec>> {
  return {
    200: {
      description: `With Accept: text/event-stream (needs \`read\`): the events of ${what.toLowerCase()} from its first, as GET /v1/tasks/:id/events sends them.`,
      sse: true,
      headers: Created.extend({ "x-task-id": z.string().describe("The id of the task started.") }),
    },
    202: { description: `${what}, started.`, json: task, headers: Created },
  };
}
export const noMoreEvents: AnswerSpec = {
  description:
    "The run (or turn) has ended and the client already has every event up to its end: an EventSource stops reconnecting.",
};
export const fileBytes = (what: string): AnswerSpec => ({
  description: `The ${what}'s bytes, with its content type.`,
  raw: { "*/*": null },
});

// ---- Shared by several resources ---------------------------------------------------------------------------------

/** The routes that read a task that may be missing: 404 for one never seen, 410 for one deleted by retention. */
export const MISSING_TASK: RequestErrorCode[] = ["task_not_found", "task_expired"];

export const SESSION_ID = { path: SessionId };

export const MISSING_SESSION: RequestErrorCode[] = ["session_not_found"];

export const TurnId = SessionId.extend({ turn_id: z.string().describe("The turn's id.") });

export const ScheduleId = z.object({
  id: TaskIdParam.describe(
    "The schedule's id. A malformed id is answered like an unknown one: 404 schedule_not_found.",
  ),
});

export const MISSING_SCHEDULE: RequestErrorCode[] = ["schedule_not_found"];

export const CollectionName = z.object({
  name: z
    .string()
    .describe(
      "The collection's name (lower case, digits, _ and -). A malformed one is answered 400 validation_failed naming `name`.",
    ),
});

export const CollectionDocument = CollectionName.extend({
  id: z.string().describe("The document's id, as it was put. A malformed one is answered 404 document_not_found."),
});

export const EvaluationId = z.object({
  id: TaskIdParam.describe(
    "The evaluation's id. A malformed id is answered like an unknown one: 404 evaluation_not_found.",
  ),
});
