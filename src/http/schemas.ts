// The HTTP API's wire schemas: request bodies, parameters and query strings. Types are inferred from them, and the
// HTTP API reference (docs/reference/http-api.md) documents the same limits.
import { z } from "zod";
import { AGENT_NAME_PATTERN } from "../agents/definition.ts";
import { MAX_REPEAT } from "../evaluation-runs/evaluation.ts";
import { REDACTION_MODES } from "../events/redaction.ts";
import { FaultsSchema } from "../faults/faults.ts";
import { SCHEDULE_STATUSES } from "../schedules/schedule.ts";
import { MISSED_POLICIES } from "../schedules/timing.ts";
import { SESSION_STATUSES } from "../sessions/session.ts";
import { BUSY_POLICIES, CALLBACK_EVENTS, TASK_STATUSES } from "../tasks/task.ts";
import { MAX_INPUT_CHARS } from "../tasks/task-limits.ts";
import { toStorePath, WorkspacePathError } from "../workspace/paths.ts";

export { MAX_INPUT_CHARS };
/** Longest wait a client may ask of GET /v1/tasks/:id?wait= (seconds). */
export const MAX_WAIT_SECONDS = 60;

const MetadataValue = z.union([z.string().max(2_000), z.number(), z.boolean(), z.null()]);

/** Task metadata: a replacing state field (seed 003). */
const Metadata = z
  .record(z.string().min(1).max(64), MetadataValue)
  .refine((m) => Object.keys(m).length <= 32, "at most 32 keys");

/** A task's label. */
const Tag = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, "must be lowercase letters, digits, '-' or '_'");

/** Most model turns a task may ask for. */
export const MAX_TURNS_LIMIT = 1_000;

/** Most files a task can be started with. */
export const MAX_SEED_FILES = 500;

/** A workspace path as a client gives it: relative ("src/a.ts") or under /workspace; normalized to "/src/a.ts". */
export const WorkspacePath = z
  .string()
  .min(1)
  .max(1024)
  .transform((value, ctx) => {
    try {
      const path = toStorePath(value);
      if (path === "/") throw new WorkspacePathError("must name a file, not the workspace itself");
      return path;
    } catch (error) {
      ctx.addIssue({ code: "custom", message: error instanceof Error ? error.message : "invalid path" });
      return z.NEVER;
    }
  });

export const CreateTaskBody = z.strictObject({
  input: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(MAX_INPUT_CHARS, `must be at most ${MAX_INPUT_CHARS} characters`),
  metadata: Metadata.optional(),
  /** Seed 004 max_turns: model turns for this task (the agent's maxTurns otherwise). */
  max_turns: z.number().int().min(1).max(MAX_TURNS_LIMIT).optional(),
  /** Seed 003 max_iterations: the same limit; with both, the smaller applies. */
  max_iterations: z.number().int().min(1).max(MAX_TURNS_LIMIT).optional(),
  /** Total cost of the task's model calls, USD. */
  max_budget_usd: z.number().positive().max(100_000).optional(),
  /** Total tokens of the task's model calls (input, output and cache). */
  max_tokens: z.number().int().positive().max(1_000_000_000).optional(),
  /** Labels matched by the retention policy's by_task rules (e.g. "critical"), and by listings' ?tag=. */
  tags: z.array(Tag).max(16).optional(),
  /** Days to keep the task after it ends (seed 003 Task.retention_days); otherwise the retention policy decides. */
  retention_days: z.number().int().min(1).max(3650).optional(),
  /** Files to seed the workspace with: path → UTF-8 text. */
  /** Seed 002 redaction_mode: "redacted" keeps prompts and responses out of the event stream (default: the agent's). */
  redaction_mode: z.enum(REDACTION_MODES).optional(),
  /** Seed 002 dry run: compose the prompt (dry_run_prompt.txt in the run bundle) and call no model. */
  dry_run: z.boolean().optional(),
  /** Signed callbacks to this URL when the task reaches these statuses (all four unless named). */
  webhook: z
    .strictObject({
      url: z.string().min(1).max(2048),
      events: z.array(z.enum(CALLBACK_EVENTS)).min(1).max(4).optional(),
    })
    .optional(),
  files: z
    .record(z.string(), z.string())
    .refine((f) => Object.keys(f).length <= MAX_SEED_FILES, `at most ${MAX_SEED_FILES} files`)
    .optional(),
  /** Faults to inject into the run (docs/evaluations.md#fault-injection), where the operator allows them. */
  faults: FaultsSchema.optional(),
});
export type CreateTaskBody = z.infer<typeof CreateTaskBody>;

export const TaskIdParam = z.uuid({ version: "v4" });

export const WaitQuery = z.coerce.number().finite().min(0).max(MAX_WAIT_SECONDS, `must be at most ${MAX_WAIT_SECONDS}`);

/** An SSE cursor: Last-Event-ID header or ?after=. */
export const EventCursor = z
  .string()
  .regex(/^\d{1,15}$/, "must be a non-negative integer event sequence number")
  .transform(Number);

/**
 * ?depth= of an event stream: how many levels of sub-agents below the task it carries (0: the task's own events
 * only); without it, the whole tree.
 */
export const EventDepth = z
  .string()
  .regex(/^\d{1,3}$/, "must be a non-negative integer (0: the task's own events only)")
  .transform(Number);

/** Artifact paths are relative, with no empty, '.' or '..' segments. */
export const ArtifactPath = z
  .string()
  .min(1)
  .max(512)
  .refine((p) => p.split("/").every((s) => s.length > 0 && s !== "." && s !== ".."), "must be a relative file path");

// Text only: a client cannot inject tool calls, tool results or thinking into a conversation.
const MessageContent = z.union([
  z.string().min(1).max(MAX_INPUT_CHARS),
  z
    .array(z.strictObject({ type: z.literal("text"), text: z.string().min(1).max(MAX_INPUT_CHARS) }))
    .min(1)
    .max(100),
]);

/** A message appended to a forked conversation (seed 003 State: messages follow the append reducer). */
const ForkMessage = z.strictObject({ role: z.enum(["user", "assistant"]), content: MessageContent });

export const ForkBody = z.strictObject({
  checkpoint_id: z.uuid(),
  /** Seed 003 human feedback state_updates: messages are appended; the other fields replace. */
  state_updates: z
    .strictObject({
      messages: z.array(ForkMessage).max(50).optional(),
      current_agent: z.string().min(1).max(64).optional(),
      metadata: Metadata.optional(),
      /** A workflow's State routing_key (null clears it); only a fork of a workflow's task has one. */
      routing_key: z.string().min(1).max(256).nullable().optional(),
    })
    .optional(),
});
export type ForkBody = z.infer<typeof ForkBody>;

/** Seed 003 human feedback: approve, reject or modify what the task waits for. */
export const ResumeBody = z.strictObject({
  /** The request this decision answers: pending_input.request_id as the reviewer saw it. */
  request_id: z.string().min(1).max(256),
  action: z.enum(["approve", "reject", "modify"]),
  /** The answer to a question, or the reason given to the model with a rejection. */
  message: z.string().min(1).max(MAX_INPUT_CHARS).optional(),
  /** modify: the arguments to run the waiting tool call with instead. */
  tool_input: z.record(z.string(), z.unknown()).optional(),
  /**
   * Seed 003 state_updates: `messages` (the person's, role user) are appended after the answered turn's tool
   * results; `metadata` replaces the task's. `current_agent` is named so that it can be refused with directions.
   */
  state_updates: z
    .strictObject({
      messages: z
        .array(z.strictObject({ role: z.literal("user"), content: MessageContent }))
        .min(1)
        .max(50)
        .optional(),
      metadata: Metadata.optional(),
      current_agent: z.string().min(1).max(64).optional(),
      /** A workflow's State routing_key (null clears it); only a workflow's task has one. */
      routing_key: z.string().min(1).max(256).nullable().optional(),
    })
    .optional(),
});
export type ResumeBody = z.infer<typeof ResumeBody>;

/** POST /v1/agents/:name/sessions: a chat session's settings; its messages come one by one. */
export const CreateSessionBody = z.strictObject({
  metadata: Metadata.optional(),
  /** What a message does while a turn is under way: reject it (409), enqueue it, or interrupt the turn. */
  busy: z.enum(BUSY_POLICIES).optional(),
  /** Seed 004 max_turns: model turns per message (the agent's maxTurns otherwise). */
  max_turns: z.number().int().min(1).max(MAX_TURNS_LIMIT).optional(),
  /** Total cost of the session's model calls, USD, across its turns. */
  max_budget_usd: z.number().positive().max(100_000).optional(),
  /** Total tokens of the session's model calls, across its turns. */
  max_tokens: z.number().int().positive().max(1_000_000_000).optional(),
  tags: CreateTaskBody.shape.tags,
  /** Days to keep the session after it is closed; otherwise the retention policy decides. */
  retention_days: z.number().int().min(1).max(3650).optional(),
  redaction_mode: z.enum(REDACTION_MODES).optional(),
  files: CreateTaskBody.shape.files,
});
export type CreateSessionBody = z.infer<typeof CreateSessionBody>;

/** POST /v1/sessions/:id/messages (seed 004 send, send_streaming). */
export const SendMessageBody = z.strictObject({
  message: z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(MAX_INPUT_CHARS, `must be at most ${MAX_INPUT_CHARS} characters`),
});
export type SendMessageBody = z.infer<typeof SendMessageBody>;

/** One message of an invocation's context: plain text, as seed 004 section 3b has the history. */
const ContextMessage = z.strictObject({
  role: z.enum(["user", "assistant"]),
  content: z.string().min(1, "must not be empty").max(MAX_INPUT_CHARS, `must be at most ${MAX_INPUT_CHARS} characters`),
});

/** POST /v1/agents/:name/invoke (seed 004 invoke_once): one message on a fresh conversation seeded with `context`. */
export const InvokeBody = z.strictObject({
  message: SendMessageBody.shape.message,
  context: z.array(ContextMessage).max(200, "at most 200 messages").optional(),
  metadata: Metadata.optional(),
  max_turns: CreateTaskBody.shape.max_turns,
  max_budget_usd: CreateTaskBody.shape.max_budget_usd,
  max_tokens: CreateTaskBody.shape.max_tokens,
  tags: CreateTaskBody.shape.tags,
  retention_days: CreateTaskBody.shape.retention_days,
  redaction_mode: CreateTaskBody.shape.redaction_mode,
});
export type InvokeBody = z.infer<typeof InvokeBody>;

/** Most entries one page of a listing holds (GET /v1/tasks, GET /v1/sessions), and how many it holds unless asked. */
export const MAX_LIST_LIMIT = 100;
export const DEFAULT_LIST_LIMIT = 20;

/** An instant in a query string: ISO 8601 with a time zone, normalised to UTC as the listings store it. */
const QueryInstant = z.iso.datetime({ offset: true }).transform((value) => new Date(value).toISOString());

/** The page of every listing: its size, and where the previous page ended. */
const PAGE_SHAPE = {
  limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  /** next_cursor from the previous page. */
  cursor: z.string().min(1).max(512).optional(),
};

/** The query string of a listing: every parameter optional, an unknown one refused (never ignored). */
function listQuery<const S extends readonly [string, ...string[]]>(statuses: S) {
  return z.strictObject({
    ...PAGE_SHAPE,
    /** One status, or several separated by commas (or the parameter repeated): any of them. */
    status: z.array(z.enum(statuses)).min(1).max(statuses.length).optional(),
    agent: z.string().max(64).regex(AGENT_NAME_PATTERN, "must be an agent name").optional(),
    tag: Tag.optional(),
    created_after: QueryInstant.optional(),
    created_before: QueryInstant.optional(),
  });
}

/** GET /v1/tasks. */
export const TaskListQuery = listQuery(TASK_STATUSES).extend({
  parent_task_id: TaskIdParam.optional(),
  /** The tasks running this workflow (POST /v1/workflows/:name/tasks). */
  workflow: z.string().max(64).regex(AGENT_NAME_PATTERN, "must be a workflow name").optional(),
});
export type TaskListQuery = z.infer<typeof TaskListQuery>;

/** GET /v1/sessions. */
export const SessionListQuery = listQuery(SESSION_STATUSES);
export type SessionListQuery = z.infer<typeof SessionListQuery>;

/**
 * POST /v1/schedules: the agent, when (a 5-field `cron` read in `timezone`, or one instant `at`), what to do with
 * fires missed while the runtime was down, and each run's task as POST /v1/agents/:name/tasks takes it (its body's
 * fields, checked the same way). cron, timezone and at are checked by the route (src/schedules/timing.ts) so that
 * each has its own error code.
 */
export const CreateScheduleBody = CreateTaskBody.extend({
  agent: z.string().min(1).max(64).regex(AGENT_NAME_PATTERN, "must be an agent name"),
  /** A 5-field cron expression (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5". */
  cron: z.string().max(256).optional(),
  /** The IANA time zone `cron` is read in (default UTC). */
  timezone: z.string().max(64).optional(),
  /** One run at this instant (ISO 8601 with its offset), instead of a cron expression. */
  at: z.string().max(64).optional(),
  /** Fires missed while the runtime was down: one run for all of them (run_once, the default), or none (skip). */
  missed: z.enum(MISSED_POLICIES).optional(),
}).superRefine((body, ctx) => {
  if ((body.cron === undefined) === (body.at === undefined)) {
    ctx.addIssue({ code: "custom", path: ["cron"], message: "give either cron or at (not both)" });
  } else if (body.at !== undefined && body.timezone !== undefined) {
    ctx.addIssue({ code: "custom", path: ["timezone"], message: "applies to cron only; at carries its own offset" });
  }
});
export type CreateScheduleBody = z.infer<typeof CreateScheduleBody>;

/** GET /v1/schedules. */
export const ScheduleListQuery = listQuery(SCHEDULE_STATUSES).pick({
  limit: true,
  cursor: true,
  status: true,
  agent: true,
});
export type ScheduleListQuery = z.infer<typeof ScheduleListQuery>;

/** PUT /v1/collections/:name/documents: its schema lives with the collections (src/knowledge/collection.ts). */
export { PutDocumentsBody } from "../knowledge/collection.ts";
/** POST /v1/agents/:name/evaluations: the cases to run (names or tags; absent: all) and how often each. */
export const CreateEvaluationBody = z.strictObject({
  /** Case names or tags: every case named, and every case carrying a tag named. */
  cases: z.array(z.string().min(1).max(64)).min(1, "must name at least one case (omit it for all)").max(500).optional(),
  /** Runs of each case (default 1): repeated runs show how stable the agent's answers are. */
  repeat: z.number().int().min(1).max(MAX_REPEAT, `must be at most ${MAX_REPEAT}`).optional(),
  /** Metadata every run's task carries. */
  metadata: Metadata.optional(),
  /** Tags every run's task carries (the retention policy's by_task rules, listings' ?tag=). */
  tags: z.array(Tag).max(16).optional(),
});
export type CreateEvaluationBody = z.infer<typeof CreateEvaluationBody>;

/** GET /v1/collections/:name/documents: a page of the collection's documents, by id. */
export const DocumentListQuery = z.strictObject(PAGE_SHAPE);
export type DocumentListQuery = z.infer<typeof DocumentListQuery>;

/** GET /v1/agents/:name/evaluations: a page of the agent's evaluations, or with compare two of them. */
export const EvaluationListQuery = z.strictObject({
  ...PAGE_SHAPE,
  /** Two evaluation ids, a,b: b compared with a. */
  compare: z
    .string()
    .transform((value) => value.split(","))
    .pipe(z.tuple([z.string().min(1), z.string().min(1)], "must be two evaluation ids: a,b"))
    .optional(),
});
export type EvaluationListQuery = z.infer<typeof EvaluationListQuery>;
