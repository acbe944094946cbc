// The operation table of the OpenAPI document: every route the app registers, with its operationId (the typed
// client's function names come from it: stable, camelCase), tag, summary, the scope it needs, its parameters, its
// request body, its answers and the error codes it can answer. The schemas are the ones the routes validate with
// (src/http/schemas.ts) and the response schemas (src/http/responses.ts): nothing here restates a wire type.
// test/http/openapi.test.ts holds this table to the app's routes, both ways.
//
// It imports the response schemas at runtime, so only src/http/openapi/document.ts imports it, and the Worker loads
// that module on the first GET /openapi.json (test/project/layering.test.ts checks both).
import { z } from "zod";
import { AgentFileSchema } from "../../agents/agent-file.ts";
import type { RequestErrorCode } from "../../errors/codes.ts";
import { EventRecordSchema } from "../../events/event-record.ts";
import { JsonObjectSchema } from "../../lib/json.ts";
import type { Scope } from "../../tenants/api-keys.ts";
import {
  AgentListSchema,
  AgentSchema,
  AgentVersionListSchema,
  ArtifactListSchema,
  CheckpointListSchema,
  CheckpointSchema,
  CollectionListSchema,
  CollectionSchema,
  DeliveryListSchema,
  DocumentListSchema,
  DocumentSchema,
  EvaluationComparisonSchema,
  EvaluationListSchema,
  EvaluationResourceSchema,
  EvaluationResponseSchema,
  HealthSchema,
  HookReceiptSchema,
  HookResponseSchema,
  InvocationSchema,
  MessageListSchema,
  PutDocumentsResultSchema,
  RedeliveryResponseSchema,
  ReplayComparisonSchema,
  ResumeResponseSchema,
  ScheduleListSchema,
  ScheduleResponseSchema,
  SessionArtifactListSchema,
  SessionListSchema,
  SessionMessageListSchema,
  SessionResponseSchema,
  SessionResumeResponseSchema,
  SessionWorkspaceListSchema,
  SubagentSessionListSchema,
  TaskListSchema,
  TaskResponseSchema,
  TenantSchema,
  TraceLogSchema,
  TurnResponseSchema,
  WorkflowListSchema,
  WorkflowSchema,
  WorkspaceListSchema,
} from "../responses.ts";
import {
  ArtifactPath,
  CreateEvaluationBody,
  CreateScheduleBody,
  CreateSessionBody,
  CreateTaskBody,
  EvaluationListQuery,
  EventCursor,
  EventDepth,
  ForkBody,
  InvokeBody,
  PutDocumentsBody,
  ResumeBody,
  ScheduleListQuery,
  SendMessageBody,
  SessionListQuery,
  TaskIdParam,
  TaskListQuery,
  WaitQuery,
  WorkspacePath,
} from "../schemas.ts";
import { IDEMPOTENCY_KEY_PATTERN } from "../task-creation.ts";
import { DOCS_FILES } from "./docs-assets.ts";

/** The document's tags, in the order a reader meets them. */
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

const TaskId = z.object({
  id: TaskIdParam.describe("The task's id. A malformed id is answered like an unknown one: 404 task_not_found."),
});
const SessionId = z.object({
  id: TaskIdParam.describe("The session's id. A malformed id is answered like an unknown one: 404 session_not_found."),
});
const AgentName = z.object({ name: z.string().describe("The agent's name.") });
const WorkflowName = z.object({ name: z.string().describe("The workflow's name.") });

const Wait = WaitQuery.optional().describe("Seconds to wait for the run to end before answering (at most 60).");
const After = EventCursor.optional().describe(
  "Replay the events after this sequence number (Last-Event-ID wins when both are sent).",
);
const Depth = EventDepth.optional().describe(
  "How many levels of sub-agents below the task the stream carries (0: the task's own events only); all without it.",
);
const LastEventId = EventCursor.optional().describe(
  "The `id:` of the last event the client has: the stream resumes after it (what EventSource sends on reconnect).",
);
const IdempotencyKey = z
  .string()
  .regex(IDEMPOTENCY_KEY_PATTERN)
  .optional()
  .describe(
    "Makes the creation idempotent: a repeat with the same key and body gets the same task (Idempotent-Replayed: true); another body is refused with 422 idempotency_key_reused. Keys are kept at least as long as the task.",
  );
const AcceptStream = z
  .string()
  .optional()
  .describe("`text/event-stream` to receive the run's events as they happen instead of a JSON answer.");

const EventStreamQuery = z.object({ after: After, depth: Depth });
const EventStreamHeaders = z.object({ "last-event-id": LastEventId });
const CreationHeaders = z.object({ "idempotency-key": IdempotencyKey });

// ---- Answers -------------------------------------------------------------------------------------------------------

const Created = z.object({
  location: z.string().describe("The URL of what was created."),
  "idempotent-replayed": z.literal("true").optional().describe("Sent when the answer replays an earlier request's."),
});
const Replayed = z.object({
  "idempotent-replayed": z.literal("true").optional().describe("Sent when the answer replays an earlier request's."),
});

const events = (description: string): AnswerSpec => ({ description, sse: true });
const noMoreEvents: AnswerSpec = {
  description:
    "The run (or turn) has ended and the client already has every event up to its end: an EventSource stops reconnecting.",
};
const fileBytes = (what: string): AnswerSpec => ({
  description: `The ${what}'s bytes, with its content type.`,
  raw: { "*/*": null },
});

// ---- The table -----------------------------------------------------------------------------------------------------

const META: OperationSpec[] = [
  {
    method: "get",
    path: "/",
    operationId: "getHealth",
    tag: "meta",
    summary: "Health check",
    description: "Unauthenticated, so it says nothing about the deployment.",
    access: "none",
    answers: { 200: { description: "The API answers.", json: HealthSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "getOpenApiDocument",
    tag: "meta",
    summary: "This OpenAPI 3.1 document",
    description:
      "Unauthenticated: it describes the API, which is the same for every deployment, not the deployment (no agent, tenant or key appears in it).",
    access: "none",
    answers: { 200: { description: "The OpenAPI 3.1 document.", json: JsonObjectSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/docs",
    operationId: "getApiReference",
    tag: "meta",
    summary: "The API reference page",
    description:
      "Swagger UI reading /openapi.json, served by the Worker with its assets (no CDN); its Content-Security-Policy lets it reach this origin only.",
    access: "none",
    answers: { 200: { description: "The HTML page.", raw: { "text/html": z.string() } } },
    errors: [],
  },
  {
    method: "get",
    path: "/docs/{file}",
    operationId: "getApiReferenceAsset",
    tag: "meta",
    summary: "A script or stylesheet of the reference page",
    access: "none",
    params: {
      path: z.object({
        file: z.enum(DOCS_FILES).describe("The file."),
      }),
    },
    answers: {
      200: { description: "The file.", raw: { "text/javascript": z.string(), "text/css": z.string() } },
    },
    errors: ["route_not_found"],
  },
];

const AGENTS: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/agents",
    operationId: "listAgents",
    tag: "agents",
    summary: "List the agents the key's tenant can run",
    access: "read",
    answers: { 200: { description: "The agents, by name.", json: AgentListSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/v1/agents/{name}",
    operationId: "getAgent",
    tag: "agents",
    summary: "Describe an agent",
    access: "read",
    params: { path: AgentName },
    answers: { 200: { description: "The agent's definition (never a secret's value).", json: AgentSchema } },
    errors: ["agent_not_found"],
  },
  {
    method: "put",
    path: "/v1/agents/{name}",
    operationId: "putAgent",
    tag: "agents",
    summary: "Add or replace one of the tenant's own agents",
    description:
      "The body is an agent file (YAML or JSON); each change is a new version. If-Match names the version the client saw (0: the agent must not exist yet). Deployment settings (hooks, tenants, another model endpoint or key, MCP headers) are refused.",
    access: "admin",
    params: {
      path: AgentName,
      header: z.object({
        "if-match": z
          .string()
          .optional()
          .describe('The version the client saw, e.g. "3" (0: the agent must not exist yet).'),
      }),
    },
    rawBody: {
      description: "The agent file, at most 256 KiB.",
      content: { "application/yaml": z.string(), "application/json": AgentFileSchema },
    },
    answers: {
      200: { description: "Replaced (or unchanged: Idempotent-Replayed: true).", json: AgentSchema, headers: Created },
      201: { description: "Created.", json: AgentSchema, headers: Created },
    },
    errors: [
      "validation_failed",
      "invalid_json",
      "unsupported_media_type",
      "payload_too_large",
      "agent_version_conflict",
    ],
  },
  {
    method: "get",
    path: "/v1/agents/{name}/versions",
    operationId: "listAgentVersions",
    tag: "agents",
    summary: "List the versions of one of the tenant's own agents",
    access: "read",
    params: { path: AgentName },
    answers: { 200: { description: "Every version, newest first.", json: AgentVersionListSchema } },
    errors: ["agent_not_found"],
  },
  {
    method: "post",
    path: "/v1/agents/{name}/sessions",
    operationId: "createSession",
    tag: "sessions",
    summary: "Start a chat session with an agent",
    access: "run",
    params: { path: AgentName, header: CreationHeaders },
    body: CreateSessionBody,
    answers: { 201: { description: "The session.", json: SessionResponseSchema, headers: Created } },
    errors: [
      "agent_not_found",
      "agent_not_conversational",
      "rate_limited",
      "idempotency_key_reused",
      "task_expired",
      "workspace_full",
    ],
  },
  {
    method: "post",
    path: "/v1/agents/{name}/invoke",
    operationId: "invokeAgent",
    tag: "agents",
    summary: "Run an agent once on a message and wait for its answer",
    description:
      "Seed 004 invoke_once: one message on a fresh conversation seeded with `context`. Waits up to `wait` seconds (30 by default): 200 with the ExecutionResult once the run has ended, else 202 with the task. With `Accept: text/event-stream`, the run's events as they happen (needs `read`).",
    access: "run",
    params: {
      path: AgentName,
      query: z.object({ wait: Wait }),
      header: z.object({ accept: AcceptStream, "idempotency-key": IdempotencyKey }),
    },
    body: InvokeBody,
    answers: {
      200: {
        description:
          "The run has ended: the task and its ExecutionResult; or, with Accept: text/event-stream, the run's events.",
        json: InvocationSchema,
        sse: true,
        headers: Created,
      },
      202: {
        description: "Still running (or the key may not read): the task.",
        json: TaskResponseSchema,
        headers: Created,
      },
    },
    errors: ["agent_not_found", "agent_not_conversational", "rate_limited", "idempotency_key_reused", "task_expired"],
  },
  {
    method: "post",
    path: "/v1/agents/{name}/tasks",
    operationId: "createTask",
    tag: "tasks",
    summary: "Start a task on an agent",
    access: "run",
    params: { path: AgentName, header: CreationHeaders },
    body: CreateTaskBody,
    answers: { 202: { description: "The task, started.", json: TaskResponseSchema, headers: Created } },
    errors: [
      "agent_not_found",
      "rate_limited",
      "idempotency_key_reused",
      "task_expired",
      "workspace_full",
      "invalid_callback_url",
      "callbacks_not_configured",
    ],
  },
];

const WORKFLOWS: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/workflows",
    operationId: "listWorkflows",
    tag: "workflows",
    summary: "List the workflows the key's tenant can run",
    access: "read",
    answers: { 200: { description: "The workflows, by name.", json: WorkflowListSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/v1/workflows/{name}",
    operationId: "getWorkflow",
    tag: "workflows",
    summary: "Describe a workflow",
    access: "read",
    params: { path: WorkflowName },
    answers: { 200: { description: "The workflow's definition, as checked.", json: WorkflowSchema } },
    errors: ["workflow_not_found"],
  },
  {
    method: "post",
    path: "/v1/workflows/{name}/tasks",
    operationId: "createWorkflowTask",
    tag: "workflows",
    summary: "Start a run of a workflow as a task",
    access: "run",
    params: { path: WorkflowName, header: CreationHeaders },
    body: CreateTaskBody,
    answers: { 202: { description: "The task, started.", json: TaskResponseSchema, headers: Created } },
    errors: [
      "workflow_not_found",
      "rate_limited",
      "idempotency_key_reused",
      "task_expired",
      "workspace_full",
      "invalid_callback_url",
      "callbacks_not_configured",
    ],
  },
];

/** The routes that read a task that may be missing: 404 for one never seen, 410 for one deleted by retention. */
const MISSING_TASK: RequestErrorCode[] = ["task_not_found", "task_expired"];

const TASKS: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/tasks",
    operationId: "listTasks",
    tag: "tasks",
    summary: "List the tenant's tasks, newest first",
    access: "read",
    params: { query: TaskListQuery },
    answers: { 200: { description: "One page; next_cursor continues it.", json: TaskListSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/v1/tasks/{id}",
    operationId: "getTask",
    tag: "tasks",
    summary: "Read a task (optionally waiting for its end)",
    access: "read",
    params: { path: TaskId, query: z.object({ wait: Wait }) },
    answers: { 200: { description: "The task.", json: TaskResponseSchema } },
    errors: MISSING_TASK,
  },
  {
    method: "get",
    path: "/v1/tasks/{id}/messages",
    operationId: "listTaskMessages",
    tag: "tasks",
    summary: "Read a task's conversation (redacted)",
    access: "read",
    params: { path: TaskId },
    answers: { 200: { description: "The conversation.", json: MessageListSchema } },
    errors: MISSING_TASK,
  },
  {
    method: "get",
    path: "/v1/tasks/{id}/events",
    operationId: "streamTaskEvents",
    tag: "tasks",
    summary: "Stream a task's events (replay, then live, until its terminal event)",
    access: "read",
    params: { path: TaskId, query: EventStreamQuery, header: EventStreamHeaders },
    answers: { 200: events("The task's events, from the cursor on."), 204: noMoreEvents },
    errors: MISSING_TASK,
  },
  {
    method: "post",
    path: "/v1/tasks/{id}/cancel",
    operationId: "cancelTask",
    tag: "tasks",
    summary: "Cancel a task",
    access: "run",
    params: { path: TaskId },
    answers: { 200: { description: "The task, canceled.", json: TaskResponseSchema } },
    errors: [...MISSING_TASK, "task_already_finished"],
  },
  {
    method: "get",
    path: "/v1/tasks/{id}/checkpoints",
    operationId: "listCheckpoints",
    tag: "tasks",
    summary: "List a task's checkpoints, oldest first",
    access: "read",
    params: { path: TaskId },
    answers: { 200: { description: "The checkpoints.", json: CheckpointListSchema } },
    errors: MISSING_TASK,
  },
  {
    method: "get",
    path: "/v1/tasks/{id}/subagents",
    operationId: "listSubagents",
    tag: "tasks",
    summary: "List the sub-agent sessions a task started",
    access: "read",
    params: { path: TaskId },
    answers: { 200: { description: "Each delegation that started a child.", json: SubagentSessionListSchema } },
    errors: MISSING_TASK,
  },
  {
    method: "get",
    path: "/v1/tasks/{id}/trace",
    operationId: "getTaskTrace",
    tag: "tasks",
    summary: "Read a task's trace (seed 003 TraceLog)",
    access: "read",
    params: { path: TaskId },
    answers: { 200: { description: "The trace, a tree of the sub-agents' traces.", json: TraceLogSchema } },
    errors: MISSING_TASK,
  },
  {
    method: "get",
    path: "/v1/tasks/{id}/checkpoints/{checkpoint_id}",
    operationId: "getCheckpoint",
    tag: "tasks",
    summary: "Read one checkpoint with its state",
    access: "read",
    params: { path: TaskId.extend({ checkpoint_id: z.string().describe("The checkpoint's id.") }) },
    answers: { 200: { description: "The checkpoint, its conversation redacted.", json: CheckpointSchema } },
    errors: [...MISSING_TASK, "checkpoint_not_found"],
  },
  {
    method: "post",
    path: "/v1/tasks/{id}/fork",
    operationId: "forkTask",
    tag: "tasks",
    summary: "Start a new task from one of a task's checkpoints",
    access: "run",
    params: { path: TaskId, header: CreationHeaders },
    body: ForkBody,
    answers: { 202: { description: "The fork, started.", json: TaskResponseSchema, headers: Created } },
    errors: [
      ...MISSING_TASK,
      "checkpoint_not_found",
      "tool_call_in_flight",
      "agent_not_found",
      "workflow_not_found",
      "rate_limited",
      "idempotency_key_reused",
    ],
  },
  {
    method: "post",
    path: "/v1/tasks/{id}/replay",
    operationId: "replayTask",
    tag: "tasks",
    summary: "Run an ended task's agent again, answered by the task's recorded model responses and tool results",
    description:
      "No body. The agent's current definition runs on the same input; no model is called and no tool runs (docs/evaluations.md#replaying-a-run).",
    access: "run",
    params: { path: TaskId, header: CreationHeaders },
    answers: { 202: { description: "The replay, started.", json: TaskResponseSchema, headers: Created } },
    errors: [
      ...MISSING_TASK,
      "run_not_ended",
      "replay_unavailable",
      "agent_not_found",
      "rate_limited",
      "idempotency_key_reused",
    ],
  },
  {
    method: "get",
    path: "/v1/tasks/{id}/replay",
    operationId: "compareReplay",
    tag: "tasks",
    summary: "What a replay did differently from the task it replays",
    access: "read",
    params: { path: TaskId },
    answers: { 200: { description: "The differences, by turn.", json: ReplayComparisonSchema } },
    errors: [...MISSING_TASK, "run_not_ended", "replay_unavailable"],
  },
  {
    method: "post",
    path: "/v1/tasks/{id}/resume",
    operationId: "resumeTask",
    tag: "tasks",
    summary: "Answer what a task waits for (approve, reject or modify)",
    access: "run",
    params: { path: TaskId },
    body: ResumeBody,
    answers: {
      200: {
        description: "The task with the decision on record (a repeat: the same, Idempotent-Replayed: true).",
        json: ResumeResponseSchema,
        headers: Replayed,
      },
    },
    errors: [...MISSING_TASK, "task_not_waiting", "pending_input_changed", "already_decided"],
  },
  {
    method: "get",
    path: "/v1/tasks/{id}/deliveries",
    operationId: "listDeliveries",
    tag: "tasks",
    summary: "List a task's callback deliveries with every attempt",
    access: "read",
    params: { path: TaskId },
    answers: { 200: { description: "The deliveries, oldest first.", json: DeliveryListSchema } },
    errors: MISSING_TASK,
  },
  {
    method: "post",
    path: "/v1/tasks/{id}/deliveries/{delivery_id}/redeliver",
    operationId: "redeliver",
    tag: "tasks",
    summary: "Send a callback delivery again",
    access: "run",
    params: { path: TaskId.extend({ delivery_id: z.string().describe("The delivery's id.") }) },
    answers: { 202: { description: "The delivery, pending again.", json: RedeliveryResponseSchema } },
    errors: [...MISSING_TASK, "delivery_not_found", "rate_limited"],
  },
];

/** The file routes of a task or a session (src/http/routes/task-files.ts). */
function fileOperations(owner: "task" | "session"): OperationSpec[] {
  const base = owner === "task" ? "/v1/tasks/{id}" : "/v1/sessions/{id}";
  const Owner = owner === "task" ? "Task" : "Session";
  const id = owner === "task" ? TaskId : SessionId;
  const missing: RequestErrorCode[] = owner === "task" ? MISSING_TASK : ["session_not_found"];
  const file = "The file's path within it; it may contain slashes.";
  return [
    {
      method: "get",
      path: `${base}/artifacts`,
      operationId: `list${Owner}Artifacts`,
      tag: "files",
      summary: `List a ${owner}'s run bundle files`,
      access: "read",
      params: { path: id },
      answers: {
        200: {
          description: "The bundle's files, with their URLs.",
          json: owner === "task" ? ArtifactListSchema : SessionArtifactListSchema,
        },
      },
      errors: missing,
    },
    {
      method: "get",
      path: `${base}/artifacts/{path}`,
      operationId: `get${Owner}Artifact`,
      tag: "files",
      summary: `Download a file of a ${owner}'s run bundle`,
      access: "read",
      params: { path: id.extend({ path: ArtifactPath.describe(file) }) },
      answers: { 200: fileBytes("artifact") },
      errors: [...missing, "artifact_not_found", "validation_failed"],
    },
    {
      method: "get",
      path: `${base}/bundle`,
      operationId: `get${Owner}Bundle`,
      tag: "files",
      summary: `Download a ${owner}'s whole run bundle as one tar file`,
      description:
        owner === "task"
          ? "Once the task has ended: every file of the bundle, bundle.json first (docs/reference/run-bundle.md)."
          : "Once the session is closed: every file of the bundle, bundle.json first (docs/reference/run-bundle.md).",
      access: "read",
      params: { path: id },
      answers: { 200: { description: "The bundle as a POSIX tar archive.", raw: { "application/x-tar": null } } },
      errors: [...missing, "run_not_ended"],
    },
    {
      method: "get",
      path: `${base}/workspace`,
      operationId: `list${Owner}Workspace`,
      tag: "files",
      summary: `List a ${owner}'s workspace files and folders`,
      access: "read",
      params: { path: id },
      answers: {
        200: {
          description: "Every file and folder, by path.",
          json: owner === "task" ? WorkspaceListSchema : SessionWorkspaceListSchema,
        },
      },
      errors: missing,
    },
    {
      method: "get",
      path: `${base}/workspace/{path}`,
      operationId: `get${Owner}WorkspaceFile`,
      tag: "files",
      summary: `Download a file of a ${owner}'s workspace`,
      description: "Served as data: nosniff, and a sandboxing Content-Security-Policy.",
      access: "read",
      params: { path: id.extend({ path: WorkspacePath.describe(file) }) },
      answers: { 200: fileBytes("file") },
      errors: [...missing, "workspace_file_not_found", "validation_failed"],
    },
  ];
}

const SESSION_ID = { path: SessionId };
const MISSING_SESSION: RequestErrorCode[] = ["session_not_found"];
const TurnId = SessionId.extend({ turn_id: z.string().describe("The turn's id.") });

const SESSIONS: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/sessions",
    operationId: "listSessions",
    tag: "sessions",
    summary: "List the tenant's sessions, newest first",
    access: "read",
    params: { query: SessionListQuery },
    answers: { 200: { description: "One page; next_cursor continues it.", json: SessionListSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}",
    operationId: "getSession",
    tag: "sessions",
    summary: "Read a session",
    access: "read",
    params: SESSION_ID,
    answers: { 200: { description: "The session.", json: SessionResponseSchema } },
    errors: MISSING_SESSION,
  },
  {
    method: "delete",
    path: "/v1/sessions/{id}",
    operationId: "closeSession",
    tag: "sessions",
    summary: "Close a session",
    access: "run",
    params: SESSION_ID,
    answers: { 200: { description: "The session, closed.", json: SessionResponseSchema } },
    errors: MISSING_SESSION,
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/messages",
    operationId: "listSessionMessages",
    tag: "sessions",
    summary: "Read a session's conversation (redacted)",
    access: "read",
    params: SESSION_ID,
    answers: { 200: { description: "The conversation.", json: SessionMessageListSchema } },
    errors: MISSING_SESSION,
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/messages",
    operationId: "sendSessionMessage",
    tag: "sessions",
    summary: "Send a message: start a turn (and wait for it, or stream it)",
    description:
      "Seed 004 send: waits up to `wait` seconds (30 by default) for the turn's end: 200 with its result, else 202. Seed 004 send_streaming with `Accept: text/event-stream` (needs `read`): the turn's events as they happen.",
    access: "run",
    params: { path: SessionId, query: z.object({ wait: Wait }), header: z.object({ accept: AcceptStream }) },
    body: SendMessageBody,
    answers: {
      200: {
        description:
          "The turn has ended, with its ExecutionResult as `result`; or, with Accept: text/event-stream, the turn's events.",
        json: TurnResponseSchema,
        sse: true,
        headers: z.object({ location: z.string().describe("The turn's URL.") }),
      },
      202: {
        description: "The turn runs, waits for a person or is queued.",
        json: TurnResponseSchema,
        headers: z.object({ location: z.string().describe("The turn's URL.") }),
      },
    },
    errors: [...MISSING_SESSION, "session_busy", "session_closed", "rate_limited"],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/trace",
    operationId: "getSessionTrace",
    tag: "sessions",
    summary: "Read a session's trace (seed 003 TraceLog)",
    access: "read",
    params: SESSION_ID,
    answers: { 200: { description: "The trace.", json: TraceLogSchema } },
    errors: MISSING_SESSION,
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/turns/{turn_id}",
    operationId: "getTurn",
    tag: "sessions",
    summary: "Read a turn (optionally waiting for its end)",
    access: "read",
    params: { path: TurnId, query: z.object({ wait: Wait }) },
    answers: { 200: { description: "The turn.", json: TurnResponseSchema } },
    errors: [...MISSING_SESSION, "turn_not_found"],
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/events",
    operationId: "streamSessionEvents",
    tag: "sessions",
    summary: "Stream a session's events across its turns",
    access: "read",
    params: { path: SessionId, query: EventStreamQuery, header: EventStreamHeaders },
    answers: { 200: events("The session's events, from the cursor on, until it is closed."), 204: noMoreEvents },
    errors: MISSING_SESSION,
  },
  {
    method: "get",
    path: "/v1/sessions/{id}/turns/{turn_id}/events",
    operationId: "streamTurnEvents",
    tag: "sessions",
    summary: "Stream one turn's events",
    access: "read",
    params: { path: TurnId, query: z.object({ after: After }), header: EventStreamHeaders },
    answers: { 200: events("The turn's events, from the cursor on, until the turn ends."), 204: noMoreEvents },
    errors: [...MISSING_SESSION, "turn_not_found"],
  },
  {
    method: "post",
    path: "/v1/sessions/{id}/resume",
    operationId: "resumeSession",
    tag: "sessions",
    summary: "Answer what a session's turn waits for",
    access: "run",
    params: SESSION_ID,
    body: ResumeBody,
    answers: {
      200: {
        description: "The session with the decision on record.",
        json: SessionResumeResponseSchema,
        headers: Replayed,
      },
    },
    errors: [...MISSING_SESSION, "session_closed", "task_not_waiting", "pending_input_changed", "already_decided"],
  },
];

const HOOKS: OperationSpec[] = [
  {
    method: "post",
    path: "/v1/hooks/{hook_id}",
    operationId: "receiveHookDelivery",
    tag: "hooks",
    summary: "Deliver a signed webhook that starts a run",
    description:
      "No API key: the delivery's signature authenticates it (GitHub's X-Hub-Signature-256, or Standard Webhooks' webhook-id, webhook-timestamp and webhook-signature, as the hook declares). A delivery is admitted once; a repeat gets the task the first one started. Bodies up to 1 MiB.",
    access: "signature",
    params: { path: z.object({ hook_id: z.string().describe("The hook's id, as its agent declares it.") }) },
    rawBody: {
      description: "The sender's payload: JSON, or GitHub's form encoding (payload=<json>).",
      content: { "application/json": JsonObjectSchema, "application/x-www-form-urlencoded": z.string() },
    },
    answers: {
      200: { description: "A ping, an event the hook ignores, or a repeat.", json: HookResponseSchema },
      202: { description: "The delivery started a task.", json: HookReceiptSchema },
    },
    errors: [
      "hook_not_found",
      "hook_not_configured",
      "signature_missing",
      "signature_invalid",
      "timestamp_out_of_tolerance",
      "payload_too_large",
      "invalid_json",
      "validation_failed",
      "task_expired",
      "hook_input_empty",
      "hook_input_too_long",
      "rate_limited",
    ],
  },
];

const ScheduleId = z.object({
  id: TaskIdParam.describe(
    "The schedule's id. A malformed id is answered like an unknown one: 404 schedule_not_found.",
  ),
});
const MISSING_SCHEDULE: RequestErrorCode[] = ["schedule_not_found"];

const SCHEDULES: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/schedules",
    operationId: "listSchedules",
    tag: "schedules",
    summary: "List the tenant's schedules, newest first",
    access: "read",
    params: { query: ScheduleListQuery },
    answers: { 200: { description: "One page; next_cursor continues it.", json: ScheduleListSchema } },
    errors: [],
  },
  {
    method: "post",
    path: "/v1/schedules",
    operationId: "createSchedule",
    tag: "schedules",
    summary: "Schedule runs of an agent (cron or at)",
    description:
      "Each run is an ordinary task with the body's task options (as POST /v1/agents/{name}/tasks takes them) and `trigger.kind: schedule`, started by the schedule's own alarm; a due time runs at most once.",
    access: "run",
    params: { header: CreationHeaders },
    body: CreateScheduleBody,
    answers: { 201: { description: "The schedule.", json: ScheduleResponseSchema, headers: Created } },
    errors: [
      "invalid_cron",
      "invalid_timezone",
      "invalid_schedule_time",
      "agent_not_found",
      "rate_limited",
      "idempotency_key_reused",
      "schedule_not_found",
      "workspace_full",
      "invalid_callback_url",
      "callbacks_not_configured",
    ],
  },
  {
    method: "get",
    path: "/v1/schedules/{id}",
    operationId: "getSchedule",
    tag: "schedules",
    summary: "Read a schedule: its next due time and recent fires",
    access: "read",
    params: { path: ScheduleId },
    answers: { 200: { description: "The schedule.", json: ScheduleResponseSchema } },
    errors: MISSING_SCHEDULE,
  },
  {
    method: "post",
    path: "/v1/schedules/{id}/pause",
    operationId: "pauseSchedule",
    tag: "schedules",
    summary: "Pause a schedule (due times that pass while paused do not run)",
    access: "run",
    params: { path: ScheduleId },
    answers: { 200: { description: "The schedule, paused.", json: ScheduleResponseSchema } },
    errors: [...MISSING_SCHEDULE, "schedule_finished"],
  },
  {
    method: "post",
    path: "/v1/schedules/{id}/resume",
    operationId: "resumeSchedule",
    tag: "schedules",
    summary: "Resume a paused schedule from its next due time",
    access: "run",
    params: { path: ScheduleId },
    answers: { 200: { description: "The schedule, active.", json: ScheduleResponseSchema } },
    errors: [...MISSING_SCHEDULE, "schedule_finished"],
  },
  {
    method: "delete",
    path: "/v1/schedules/{id}",
    operationId: "deleteSchedule",
    tag: "schedules",
    summary: "Delete a schedule (the tasks it started stay)",
    access: "run",
    params: { path: ScheduleId },
    answers: { 204: { description: "Deleted." } },
    errors: MISSING_SCHEDULE,
  },
];

const CollectionName = z.object({
  name: z
    .string()
    .describe(
      "The collection's name (lower case, digits, _ and -). A malformed one is answered 400 validation_failed naming `name`.",
    ),
});
const CollectionDocument = CollectionName.extend({
  id: z.string().describe("The document's id, as it was put. A malformed one is answered 404 document_not_found."),
});

const COLLECTIONS: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/collections",
    operationId: "listCollections",
    tag: "collections",
    summary: "List the tenant's collections with their counts",
    access: "read",
    answers: { 200: { description: "Every collection, by name.", json: CollectionListSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/v1/collections/{name}",
    operationId: "getCollection",
    tag: "collections",
    summary: "Read a collection: its embedding model, backend and counts",
    access: "read",
    params: { path: CollectionName },
    answers: { 200: { description: "The collection.", json: CollectionSchema } },
    errors: ["validation_failed", "collection_not_found"],
  },
  {
    method: "delete",
    path: "/v1/collections/{name}",
    operationId: "deleteCollection",
    tag: "collections",
    summary: "Delete a collection with its documents, chunks and vectors",
    description:
      "Frees its name (it may be created again with another embedding model) and its place among the tenant's 100 collections.",
    access: "admin",
    params: { path: CollectionName },
    answers: { 204: { description: "Deleted." } },
    errors: ["validation_failed", "collection_not_found"],
  },
  {
    method: "get",
    path: "/v1/collections/{name}/documents",
    operationId: "listDocuments",
    tag: "collections",
    summary: "List a collection's documents",
    access: "read",
    params: { path: CollectionName },
    answers: { 200: { description: "Every document, by id.", json: DocumentListSchema } },
    errors: ["validation_failed", "collection_not_found"],
  },
  {
    method: "put",
    path: "/v1/collections/{name}/documents",
    operationId: "putDocuments",
    tag: "collections",
    summary: "Add or replace documents (chunked along their Markdown headings, embedded, indexed)",
    description:
      "Creates the collection on its first put, which must name `embedding_provider` (openai or azure_openai; the deployment's endpoint and key are used). A document put again has all its chunks replaced. At most 20 documents per request, 100,000 characters each, 500 chunks each and 1,000 chunks in all; 1,000 documents and 10,000 chunks per collection (checked before anything is embedded). Under Vectorize, 503 index_unavailable means the documents are stored but may not be searchable: the same put again repairs them.",
    access: "admin",
    params: { path: CollectionName },
    body: PutDocumentsBody,
    answers: { 200: { description: "The collection and the documents put.", json: PutDocumentsResultSchema } },
    errors: [
      "embedding_mismatch",
      "collection_limit_reached",
      "embedding_failed",
      "embedding_not_configured",
      "index_unavailable",
    ],
  },
  {
    method: "get",
    path: "/v1/collections/{name}/documents/{id}",
    operationId: "getDocument",
    tag: "collections",
    summary: "Read a document: its text and its chunks with their heading paths",
    access: "read",
    params: { path: CollectionDocument },
    answers: { 200: { description: "The document.", json: DocumentSchema } },
    errors: ["validation_failed", "collection_not_found", "document_not_found"],
  },
  {
    method: "delete",
    path: "/v1/collections/{name}/documents/{id}",
    operationId: "deleteDocument",
    tag: "collections",
    summary: "Delete a document and its chunks",
    access: "admin",
    params: { path: CollectionDocument },
    answers: { 204: { description: "Deleted." } },
    errors: ["validation_failed", "collection_not_found", "document_not_found"],
  },
];

const EvaluationId = z.object({
  id: TaskIdParam.describe(
    "The evaluation's id. A malformed id is answered like an unknown one: 404 evaluation_not_found.",
  ),
});

const EVALUATIONS: OperationSpec[] = [
  {
    method: "post",
    path: "/v1/agents/{name}/evaluations",
    operationId: "startEvaluation",
    tag: "evaluations",
    summary: "Run the agent's test cases and grade them (an evaluation run)",
    description:
      "Runs each chosen case (all, or those named or tagged in `cases`) `repeat` times, each run a task on a fresh conversation (`trigger.kind: evaluation`), a few at a time, and grades each with the agent's `evaluations` metrics as it ends. Read its progress and results at the `Location`.",
    access: "run",
    params: { path: AgentName, header: CreationHeaders },
    body: CreateEvaluationBody,
    answers: { 201: { description: "The evaluation, started.", json: EvaluationResponseSchema, headers: Created } },
    errors: ["agent_not_found", "agent_not_conversational", "rate_limited", "idempotency_key_reused", "workspace_full"],
  },
  {
    method: "get",
    path: "/v1/agents/{name}/evaluations",
    operationId: "listEvaluations",
    tag: "evaluations",
    summary: "List the agent's evaluations, newest first, or compare two (?compare=a,b)",
    access: "read",
    params: { path: AgentName, query: EvaluationListQuery },
    answers: {
      200: {
        description:
          "One page (next_cursor continues it); with `compare`, evaluation b against a, per case and metric.",
        json: z.union([EvaluationListSchema, EvaluationComparisonSchema]),
      },
    },
    errors: ["agent_not_found", "evaluation_not_found"],
  },
  {
    method: "get",
    path: "/v1/evaluations/{id}",
    operationId: "getEvaluation",
    tag: "evaluations",
    summary: "Read an evaluation: its progress, each run's metrics, the summary",
    access: "read",
    params: { path: EvaluationId },
    answers: { 200: { description: "The evaluation.", json: EvaluationResourceSchema } },
    errors: ["evaluation_not_found"],
  },
  {
    method: "get",
    path: "/v1/evaluations/{id}/report.json",
    operationId: "getEvaluationReport",
    tag: "evaluations",
    summary: "The report of a completed evaluation, as JSON (the evaluation as it completed)",
    access: "read",
    params: { path: EvaluationId },
    answers: { 200: { description: "The report.", json: EvaluationResourceSchema.omit({ links: true }) } },
    errors: ["evaluation_not_found", "evaluation_not_completed"],
  },
  {
    method: "get",
    path: "/v1/evaluations/{id}/report.md",
    operationId: "getEvaluationMarkdown",
    tag: "evaluations",
    summary: "The report of a completed evaluation, as Markdown",
    access: "read",
    params: { path: EvaluationId },
    answers: { 200: { description: "The report.", raw: { "text/markdown": z.string() } } },
    errors: ["evaluation_not_found", "evaluation_not_completed"],
  },
];

const TENANT: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/tenant",
    operationId: "getTenant",
    tag: "tenant",
    summary: "Who the key belongs to, the tenant's keys and its callback signing secret",
    access: "admin",
    answers: { 200: { description: "The tenant.", json: TenantSchema } },
    errors: [],
  },
];

/** Every operation the app serves, in the document's order. */
export const OPERATIONS: readonly OperationSpec[] = [
  ...META,
  ...AGENTS,
  ...WORKFLOWS,
  ...TASKS,
  ...fileOperations("task"),
  ...SESSIONS,
  ...fileOperations("session"),
  ...SCHEDULES,
  ...COLLECTIONS,
  ...EVALUATIONS,
  ...HOOKS,
  ...TENANT,
];

/** What an event stream's `data:` carries: one event record as JSON (its payload per the event catalog). */
export { EventRecordSchema };
