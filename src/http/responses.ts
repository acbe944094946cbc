// The HTTP API's response bodies as zod schemas, the counterpart of schemas.ts (request bodies): one per body, and the
// types the routes answer with inferred from them. The tests parse every answer they read with them (test/support/helpers.ts),
// strictly: a member not listed here fails; the OpenAPI document is generated from them (src/http/openapi/). The wire types the
// task's object returns are defined beside their code and composed here: the task view (src/tasks/task.ts), a
// request and a decision (src/approvals/requests.ts), messages and checkpoints (src/runtime/), deliveries and the
// callback payload (src/callbacks/delivery.ts, payload.ts), and ErrorInfo (src/errors/error-info.ts).
//
// Nothing parses a response at runtime (a route's body is what it builds, byte for byte), and the Worker imports this
// module for its types only, except the OpenAPI document, which the first GET /openapi.json loads with import()
// (test/project/layering.test.ts checks it): an isolate builds these schemas only if it serves the document.

import { z } from "zod";
import { PERMISSION_MODES } from "../approvals/permissions.ts";
import { HumanDecisionSchema, PendingInputSchema } from "../approvals/requests.ts";
import { DeliverySchema } from "../callbacks/delivery.ts";
import { CallbackPayloadSchema } from "../callbacks/payload.ts";
import { ExecutionResultSchema } from "../contracts/execution-result.ts";
import type { TraceLog } from "../contracts/trace.ts";
import { REQUEST_ERROR_CODES } from "../errors/codes.ts";
import {
  EVALUATION_STATUSES,
  EvaluationComparisonSchema,
  EvaluationViewSchema,
} from "../evaluation-runs/evaluation.ts";
import { HOOK_SCHEMES } from "../inbound-hooks/hook.ts";
import { EmbeddingProviderSchema } from "../knowledge/embedding.ts";
import { JsonObjectSchema, JsonSchema } from "../lib/json.ts";
import { CheckpointSchema, CheckpointSummarySchema } from "../runtime/checkpoints.ts";
import { StoredMessageSchema } from "../runtime/conversation.ts";
import { SCHEDULE_STATUSES, ScheduleViewSchema } from "../schedules/schedule.ts";
import { SESSION_STATUSES, SessionViewSchema, TurnViewSchema } from "../sessions/session.ts";
import { DIFFERENCE_KINDS } from "../tasks/run-comparison.ts";
import { TASK_STATUSES, TaskViewSchema } from "../tasks/task.ts";
import { SCOPES } from "../tenants/api-keys.ts";
import { WorkflowDefinitionSchema } from "../workflows/definition.ts";

const TaskId = z.uuid({ version: "v4" });
const Timestamp = z.iso.datetime();
const Count = z.number().int().nonnegative();

// ---- GET / -------------------------------------------------------------------------------------------------------

/** The unauthenticated health check: nothing about the deployment. */
export const HealthSchema = z.strictObject({ name: z.literal("outpost"), status: z.literal("ok") });
export type Health = z.infer<typeof HealthSchema>;

// ---- Errors ------------------------------------------------------------------------------------------------------

/**
 * Every error answer (src/http/errors.ts): the registry's code, a message for people, the request id, the field at
 * fault, and for some codes further members that let a client act without another request. Those go only to a key
 * that may read the task (task-resource.ts readableDetails).
 */
export const ErrorBodySchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(REQUEST_ERROR_CODES),
    message: z.string(),
    /** The x-request-id header's value. */
    request_id: z.uuid(),
    /** The input at fault: a body field by its path, a parameter, a query value or a header. */
    field: z.string().optional(),
    /** pending_input_changed: what the task waits for now. */
    pending_input: PendingInputSchema.optional(),
    /** already_decided: the decision on record, with the request it answered. */
    decision: HumanDecisionSchema.optional(),
    /** tool_call_in_flight: the calls the origin still runs. */
    tool_use_ids: z.array(z.string()).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

// ---- Agents ------------------------------------------------------------------------------------------------------

/** An agent as GET /v1/agents/:name describes it: its definition, never a secret's value. */
export const AgentSchema = z.strictObject({
  name: z.string(),
  /** "tool_loop" (the default loop) or "skills" (seed 002's decision loop over the skill catalog). */
  kind: z.enum(["tool_loop", "skills"]),
  description: z.string(),
  /** Seed 003 Agent.role, or null. */
  role: z.string().nullable(),
  model: z.string(),
  /** Seed 003 Agent.temperature (OpenAI-compatible and Gemini agents), or null for the provider's default. */
  temperature: z.number().nullable(),
  /** Seed 004 extended thinking: each call's thinking budget, or null when the agent does not think first. */
  thinking_budget_tokens: z.number().int().positive().nullable(),
  /** Seed 004 response_format: the JSON Schema of the final answer (structured_output), or null. */
  response_format: JsonObjectSchema.nullable(),
  /** Output tokens per model call (thinking included). */
  max_tokens: z.number().int().positive(),
  allowed_tools: z.array(z.string()),
  /** Seed 004's least-privilege settings, as the agent's built-in tools are run with them. */
  capabilities: z.strictObject({
    bash: z.strictObject({ enabled: z.boolean(), excluded_commands: z.array(z.string()), allow_unsafe: z.boolean() }),
    file_system: z.strictObject({ read: z.boolean(), write: z.boolean(), edit: z.boolean() }),
    web_fetch: z.strictObject({
      enabled: z.boolean(),
      max_bytes: z.number().int().positive(),
      timeout_seconds: z.number().int().positive(),
    }),
    /** Anthropic's web search server tool as each model call offers it, or null when search is off. */
    web_search: z
      .strictObject({
        type: z.literal("web_search_20250305"),
        name: z.literal("web_search"),
        max_uses: z.number().int().positive().nullable().exactOptional(),
        allowed_domains: z.array(z.string()).nullable().exactOptional(),
        blocked_domains: z.array(z.string()).nullable().exactOptional(),
        user_location: z
          .strictObject({
            type: z.literal("approximate"),
            city: z.string().nullable().exactOptional(),
            region: z.string().nullable().exactOptional(),
            country: z.string().nullable().exactOptional(),
            timezone: z.string().nullable().exactOptional(),
          })
          .nullable()
          .exactOptional(),
      })
      .nullable(),
  }),
  /** Where each server is and how it is reached; header secrets stay out of it. */
  mcp_servers: z.array(
    z.strictObject({
      name: z.string(),
      transport: z.enum(["streamable_http", "sse"]),
      url: z.url(),
      required: z.boolean(),
    }),
  ),
  max_turns: z.number().int().positive(),
  /** Seed 004 permission_mode, with the per-tool rules that override it. */
  permission_mode: z.enum(PERMISSION_MODES),
  tool_permissions: z.record(z.string(), z.enum(["allow", "ask"])),
  /** Where deliveries go and how they are verified (the secret's name only, never its value). */
  hooks: z.array(
    z.strictObject({
      id: z.string(),
      /** POST here: /v1/hooks/<id>. */
      path: z.string(),
      scheme: z.enum(HOOK_SCHEMES),
      /** The name of the Worker secret that verifies deliveries. */
      secret: z.string(),
      /** The X-GitHub-Event values that start a run; null: all. */
      events: z.array(z.string()).nullable(),
    }),
  ),
  /** A skill agent's skills ("all": the whole catalog); null for another agent. */
  skills: z.union([z.array(z.string()), z.literal("all")]).nullable(),
  system_prompt: z.string(),
  /** Where it is defined: a file of agents/ (its path) or a TypeScript class. */
  source: z.discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("file"), path: z.string() }),
    z.strictObject({ kind: z.literal("typescript") }),
    /** The tenant's own agent (PUT /v1/agents/:name), at its current version. */
    z.strictObject({ kind: z.literal("runtime"), version: z.number().int().positive() }),
  ]),
  /** Seed 004's startup warnings about its definition (rules 2 and 3); empty when there are none. */
  warnings: z.array(z.string()),
});
export type AgentDescription = z.infer<typeof AgentSchema>;

/** GET /v1/agents/:name/versions: every version of the tenant's own agent, newest first (none for the Worker's). */
export const AgentVersionListSchema = z.strictObject({
  agent: z.string(),
  versions: z.array(
    z.strictObject({
      version: z.number().int().positive(),
      /** SHA-256 of the body as it was sent. */
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      warnings: z.array(z.string()),
      created_at: Timestamp,
      /** The id of the API key that sent it. */
      created_by: z.string(),
    }),
  ),
});
export type AgentVersionList = z.infer<typeof AgentVersionListSchema>;

/** GET /v1/agents: the agents the key's tenant may see, by name. */
export const AgentListSchema = z.strictObject({ agents: z.array(AgentSchema) });
export type AgentList = z.infer<typeof AgentListSchema>;

// ---- Workflows ---------------------------------------------------------------------------------------------------

/**
 * A workflow as GET /v1/workflows/:name describes it: its definition as checked (seed 003 Workflow, defaults
 * applied: an agent node's `pattern`, a tool node's `arguments`, `checkpoints`, `max_iterations`), and its source.
 */
export const WorkflowSchema = WorkflowDefinitionSchema.extend({
  source: z.discriminatedUnion("kind", [
    z.strictObject({ kind: z.literal("file"), path: z.string() }),
    z.strictObject({ kind: z.literal("typescript") }),
  ]),
});
export type WorkflowDescription = z.infer<typeof WorkflowSchema>;

/** GET /v1/workflows: the workflows the key's tenant may see (every agent they name visible to it), by name. */
export const WorkflowListSchema = z.strictObject({ workflows: z.array(WorkflowSchema) });
export type WorkflowList = z.infer<typeof WorkflowListSchema>;

// ---- Tasks -------------------------------------------------------------------------------------------------------

/** Where everything about a task is. */
export const TaskLinksSchema = z.strictObject({
  self: z.url(),
  events: z.url(),
  messages: z.url(),
  artifacts: z.url(),
  workspace: z.url(),
  checkpoints: z.url(),
  trace: z.url(),
  resume: z.url(),
  cancel: z.url(),
  deliveries: z.url(),
});
export type TaskLinks = z.infer<typeof TaskLinksSchema>;

/** The task as a key that may read it gets it (GET /v1/tasks/:id, and every route that answers with a task). */
export const TaskResourceSchema = TaskViewSchema.unwrap().extend({ links: TaskLinksSchema });
export type TaskResource = z.infer<typeof TaskResourceSchema>;

/**
 * What a key without `read` gets back about a task (scope `run`): enough to follow it (its id, its origin's id for a
 * fork, its status, the newest event's sequence number) and the links to act on it. Nothing of what the task holds:
 * not even what a waiting task asks, because answering it well means reading it, and reading is what `read` is for.
 */
export const TaskReceiptSchema = z.strictObject({
  id: TaskId,
  status: z.enum(TASK_STATUSES),
  parent_task_id: TaskId.nullable(),
  last_event_seq: Count,
  links: TaskLinksSchema,
});
export type TaskReceipt = z.infer<typeof TaskReceiptSchema>;

/**
 * A task as a route answers with it, by the key's scopes: POST /v1/agents/:name/tasks (202), GET /v1/tasks/:id,
 * POST /v1/tasks/:id/cancel and POST /v1/tasks/:id/fork (202).
 */
export const TaskResponseSchema = z.union([TaskResourceSchema, TaskReceiptSchema]);
export type TaskResponse = z.infer<typeof TaskResponseSchema>;

/** A human decision as a key without `read` sees it: which request it answered, how, by whom and when. */
export const DecisionReceiptSchema = HumanDecisionSchema.unwrap().pick({
  request_id: true,
  action: true,
  decided_by: true,
  decided_at: true,
});
export type DecisionReceipt = z.infer<typeof DecisionReceiptSchema>;

/** The task resumed, with the decision on record, as a key that may read gets it. */
export const ResumedTaskSchema = TaskResourceSchema.extend({ decision: HumanDecisionSchema });
export type ResumedTask = z.infer<typeof ResumedTaskSchema>;

/** The task resumed, as a key without `read` gets it: receipts of both. */
export const ResumedTaskReceiptSchema = TaskReceiptSchema.extend({ decision: DecisionReceiptSchema });
export type ResumedTaskReceipt = z.infer<typeof ResumedTaskReceiptSchema>;

/** POST /v1/tasks/:id/resume: the task with the decision on record (a replay: the same, with Idempotent-Replayed). */
export const ResumeResponseSchema = z.union([ResumedTaskSchema, ResumedTaskReceiptSchema]);
export type ResumeResponse = z.infer<typeof ResumeResponseSchema>;

/**
 * POST /v1/agents/:name/invoke once the run has ended (seed 004 invoke_once): the task it ran as, and its
 * ExecutionResult. While it runs (or for a key without `read`), the answer is the task itself (TaskResponseSchema).
 */
export const InvocationSchema = z.strictObject({
  task_id: TaskId,
  status: z.enum(TASK_STATUSES),
  result: ExecutionResultSchema,
  links: TaskLinksSchema,
});
export type Invocation = z.infer<typeof InvocationSchema>;

// ---- Listings (src/tenants/directory.ts) -------------------------------------------------------------------------

/** What a listing shows of each task or session: enough to pick one; its own URL has the rest. */
function summarySchema<const S extends readonly [string, ...string[]]>(statuses: S) {
  return z.strictObject({
    id: TaskId,
    agent: z.string(),
    status: z.enum(statuses),
    parent_task_id: TaskId.nullable(),
    tags: z.array(z.string()),
    created_at: Timestamp,
    /** When the status last changed. */
    updated_at: Timestamp,
    /** When the task ended or the session was closed; null before. */
    ended_at: Timestamp.nullable(),
    /** USD as of the last status change; null when a model it used has no price. */
    total_cost_usd: z.number().nonnegative().nullable(),
    links: z.strictObject({ self: z.url() }),
  });
}

export const TaskSummarySchema = summarySchema(TASK_STATUSES).extend({
  /** The workflow the task runs (POST /v1/workflows/:name/tasks); null for a task of one agent. */
  workflow: z.string().nullable(),
});
export type TaskSummary = z.infer<typeof TaskSummarySchema>;

/** GET /v1/tasks: one page, newest first; next_cursor continues it (null on the last page). */
export const TaskListSchema = z.strictObject({ tasks: z.array(TaskSummarySchema), next_cursor: z.string().nullable() });
export type TaskList = z.infer<typeof TaskListSchema>;

export const SessionSummarySchema = summarySchema(SESSION_STATUSES);
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

/** GET /v1/sessions: one page, newest first. */
export const SessionListSchema = z.strictObject({
  sessions: z.array(SessionSummarySchema),
  next_cursor: z.string().nullable(),
});
export type SessionList = z.infer<typeof SessionListSchema>;

// ---- Sessions (src/sessions/) ---------------------------------------------------------------------------------

/** Where everything about a session is. */
export const SessionLinksSchema = z.strictObject({
  self: z.url(),
  /** GET lists the conversation; POST sends a message. */
  messages: z.url(),
  events: z.url(),
  resume: z.url(),
  artifacts: z.url(),
  workspace: z.url(),
  trace: z.url(),
});
export type SessionLinks = z.infer<typeof SessionLinksSchema>;

/** A session as a key that may read it gets it (POST /v1/agents/:name/sessions, GET and DELETE /v1/sessions/:id). */
export const SessionResourceSchema = SessionViewSchema.unwrap().extend({ links: SessionLinksSchema });
export type SessionResource = z.infer<typeof SessionResourceSchema>;

/** A session as a key without `read` gets it: its id, status and links. */
export const SessionReceiptSchema = z.strictObject({
  id: TaskId,
  status: z.enum(SESSION_STATUSES),
  last_event_seq: Count,
  links: SessionLinksSchema,
});
export type SessionReceipt = z.infer<typeof SessionReceiptSchema>;

export const SessionResponseSchema = z.union([SessionResourceSchema, SessionReceiptSchema]);
export type SessionResponse = z.infer<typeof SessionResponseSchema>;

/** Where everything about a turn is. */
export const TurnLinksSchema = z.strictObject({ self: z.url(), events: z.url(), session: z.url() });
export type TurnLinks = z.infer<typeof TurnLinksSchema>;

/**
 * A turn (one message and what it produced) as a key that may read it gets it: POST /v1/sessions/:id/messages (200
 * once it has ended, with its seed 004 ExecutionResult as `result`; 202 while it runs or is queued) and
 * GET /v1/sessions/:id/turns/:turn_id.
 */
export const TurnResourceSchema = TurnViewSchema.unwrap().extend({ links: TurnLinksSchema });
export type TurnResource = z.infer<typeof TurnResourceSchema>;

/** A turn as a key without `read` gets it. */
export const TurnReceiptSchema = TurnViewSchema.unwrap()
  .pick({ id: true, session_id: true, index: true, status: true })
  .extend({ links: TurnLinksSchema });
export type TurnReceipt = z.infer<typeof TurnReceiptSchema>;

export const TurnResponseSchema = z.union([TurnResourceSchema, TurnReceiptSchema]);
export type TurnResponse = z.infer<typeof TurnResponseSchema>;

/** GET /v1/sessions/:id/messages: the conversation, redacted. */
export const SessionMessageListSchema = z.strictObject({
  session_id: TaskId,
  messages: z.array(StoredMessageSchema),
});
export type SessionMessageList = z.infer<typeof SessionMessageListSchema>;

/** POST /v1/sessions/:id/resume: the session with the decision on record. */
export const ResumedSessionSchema = SessionResourceSchema.extend({ decision: HumanDecisionSchema });
export const ResumedSessionReceiptSchema = SessionReceiptSchema.extend({ decision: DecisionReceiptSchema });
export const SessionResumeResponseSchema = z.union([ResumedSessionSchema, ResumedSessionReceiptSchema]);
export type SessionResumeResponse = z.infer<typeof SessionResumeResponseSchema>;

/** GET /v1/tasks/:id/messages: the conversation, redacted. */
export const MessageListSchema = z.strictObject({ task_id: TaskId, messages: z.array(StoredMessageSchema) });
export type MessageList = z.infer<typeof MessageListSchema>;

/** GET /v1/tasks/:id/subagents: seed 003 SubAgentSession of each delegation that started a child, oldest first. */
export const SubagentSessionListSchema = z.strictObject({
  task_id: TaskId,
  subagents: z.array(
    z.strictObject({
      session_id: TaskId.describe("the child task's id"),
      parent_task_id: TaskId,
      agent_name: z.string(),
      agent_version: z
        .number()
        .int()
        .positive()
        .nullable()
        .describe("the version of the tenant's own agent the child runs; null for the Worker's agent"),
      task_description: z.string(),
      tool_use_id: z.string(),
      message_history: z.array(StoredMessageSchema).describe("the child's own conversation, redacted"),
      summary: z.string().nullable(),
      status: z.enum(["running", "completed", "failed"]),
      created_at: z.iso.datetime(),
    }),
  ),
});
export type SubagentSessionList = z.infer<typeof SubagentSessionListSchema>;

/** GET /v1/tasks/:id/checkpoints: the run's checkpoints, oldest first. */
export const CheckpointListSchema = z.strictObject({ task_id: TaskId, checkpoints: z.array(CheckpointSummarySchema) });
export type CheckpointList = z.infer<typeof CheckpointListSchema>;

/** Seed 003 ToolCallRecord: `server` is the MCP server, "anthropic" for its web search, null for a built-in tool. */
const ToolCallRecordSchema = z.strictObject({
  tool_use_id: z.string(),
  server: z.string().nullable(),
  tool: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  result: z.record(z.string(), z.unknown()).nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int().nonnegative().nullable(),
});

/** GET /v1/tasks/:id/trace, GET /v1/sessions/:id/trace, trace.json of the bundle: seed 003 TraceLog. */
/** Seed 003 TraceLog, a tree: each sub-agent's own trace is under its sub_agent_sessions entry. */
export const TraceLogSchema: z.ZodType<TraceLogBody> = z.strictObject({
  task_id: TaskId,
  steps: z.array(
    z.strictObject({
      step_name: z.string(),
      message: z.string(),
      timestamp: z.iso.datetime(),
      status: z.enum(["info", "warning", "error"]),
      agent: z.string(),
      tool_calls: z.array(ToolCallRecordSchema),
      duration_ms: z.number().int().nonnegative(),
    }),
  ),
  sub_agent_sessions: z.record(
    z.string(),
    z.strictObject({
      session_id: z.string().describe("the child task's id"),
      agent: z.string(),
      message_count: z.number().int().nonnegative(),
      status: z.enum(["running", "input_required", "completed", "failed", "canceled"]),
      parent_task_id: z.string(),
      tool_use_id: z.string().describe("the parent's Task call"),
      task_description: z.string(),
      get trace() {
        return TraceLogSchema;
      },
    }),
  ),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type TraceLogBody = TraceLog;

/** GET /v1/tasks/:id/checkpoints/:checkpoint_id: one checkpoint with its state, the conversation redacted. */
export { CheckpointSchema };

/** GET /v1/tasks/:id/deliveries: the task's callback deliveries with every attempt, oldest first. */
export const DeliveryListSchema = z.strictObject({ task_id: TaskId, deliveries: z.array(DeliverySchema) });
export type DeliveryList = z.infer<typeof DeliveryListSchema>;

/** A delivery as a key without `read` sees it: which delivery, for which event, and where it stands. */
export const DeliveryReceiptSchema = DeliverySchema.unwrap().pick({
  id: true,
  event_type: true,
  event_seq: true,
  status: true,
  next_attempt_at: true,
  created_at: true,
});
export type DeliveryReceipt = z.infer<typeof DeliveryReceiptSchema>;

/** POST /v1/tasks/:id/deliveries/:delivery_id/redeliver (202): the delivery, pending again, by the key's scopes. */
export const RedeliveryResponseSchema = z.union([DeliverySchema, DeliveryReceiptSchema]);
export type RedeliveryResponse = z.infer<typeof RedeliveryResponseSchema>;

/** What a callback POSTs to the task's webhook URL (not a response: the request a receiver gets). */
export { CallbackPayloadSchema };

/** A file of the run bundle. */
export const ArtifactSchema = z.strictObject({
  /** Within the bundle, e.g. "final_summary.md" or "artifacts/llm/…". */
  path: z.string(),
  size: Count,
  content_type: z.string(),
  created_at: Timestamp,
  /** False while the file is staged in the task's object; true once it is in R2. */
  uploaded: z.boolean(),
  /** GET it: /v1/tasks/:id/artifacts/<path>. */
  url: z.url(),
});
export type Artifact = z.infer<typeof ArtifactSchema>;

/** GET /v1/tasks/:id/artifacts: the run bundle's files, by path. */
export const ArtifactListSchema = z.strictObject({ task_id: TaskId, artifacts: z.array(ArtifactSchema) });
export type ArtifactList = z.infer<typeof ArtifactListSchema>;

/** A file or folder of the workspace; a file has the URL that serves it. */
export const WorkspaceEntrySchema = z.discriminatedUnion("type", [
  z.strictObject({
    /** Relative to the workspace, e.g. "src/a.ts". */
    path: z.string(),
    type: z.literal("file"),
    size: Count,
    modified_at: Timestamp,
    /** GET it: /v1/tasks/:id/workspace/<path>. */
    url: z.url(),
  }),
  z.strictObject({ path: z.string(), type: z.literal("directory"), size: Count, modified_at: Timestamp }),
]);
export type WorkspaceListEntry = z.infer<typeof WorkspaceEntrySchema>;

/** GET /v1/tasks/:id/workspace: every file and folder, by path. */
export const WorkspaceListSchema = z.strictObject({ task_id: TaskId, files: z.array(WorkspaceEntrySchema) });
export type WorkspaceList = z.infer<typeof WorkspaceListSchema>;

// ---- Schedules (src/schedules/) ----------------------------------------------------------------------------------

export const ScheduleLinksSchema = z.strictObject({
  self: z.url(),
  pause: z.url(),
  resume: z.url(),
  /** The tenant's tasks (each run is one); a run's trigger names the schedule. */
  tasks: z.url(),
});
export type ScheduleLinks = z.infer<typeof ScheduleLinksSchema>;

/** A schedule as GET /v1/schedules/:id answers (and POST, pause and resume, to a key that may read). */
export const ScheduleResourceSchema = ScheduleViewSchema.unwrap().extend({ links: ScheduleLinksSchema });
export type ScheduleResource = z.infer<typeof ScheduleResourceSchema>;

/**
 * What POST /v1/schedules, pause and resume answer a key that may act but not read: when it runs, never what (the
 * input, metadata, files and callbacks are the runs' content).
 */
export const ScheduleReceiptSchema = z.strictObject({
  id: TaskId,
  agent: z.string(),
  status: z.enum(SCHEDULE_STATUSES),
  cron: z.string().nullable(),
  timezone: z.string().nullable(),
  at: Timestamp.nullable(),
  next_run_at: Timestamp.nullable(),
  links: ScheduleLinksSchema,
});
export type ScheduleReceipt = z.infer<typeof ScheduleReceiptSchema>;

export const ScheduleResponseSchema = z.union([ScheduleResourceSchema, ScheduleReceiptSchema]);
export type ScheduleResponse = z.infer<typeof ScheduleResponseSchema>;

/** What GET /v1/schedules shows of each schedule (src/tenants/schedule-directory.ts); its own URL has the rest. */
export const ScheduleSummarySchema = z.strictObject({
  id: TaskId,
  agent: z.string(),
  status: z.enum(SCHEDULE_STATUSES),
  cron: z.string().nullable(),
  timezone: z.string().nullable(),
  at: Timestamp.nullable(),
  next_run_at: Timestamp.nullable(),
  last_fired_at: Timestamp.nullable(),
  created_at: Timestamp,
  updated_at: Timestamp,
  links: z.strictObject({ self: z.url() }),
});
export type ScheduleSummary = z.infer<typeof ScheduleSummarySchema>;

/** GET /v1/schedules: one page, newest first; next_cursor continues it (null on the last page). */
export const ScheduleListSchema = z.strictObject({
  schedules: z.array(ScheduleSummarySchema),
  next_cursor: z.string().nullable(),
});
export type ScheduleList = z.infer<typeof ScheduleListSchema>;

// ---- Collections (src/knowledge/) --------------------------------------------------------------------------------

const MetadataSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** A collection (GET /v1/collections/:name, and each of GET /v1/collections). */
export const CollectionSchema = z.strictObject({
  name: z.string(),
  /** The provider and model its chunks were embedded with, e.g. "openai:text-embedding-3-small". */
  embedding_model: z.string(),
  /** The embedding provider it was created with: secret names only, never values. */
  embedding_provider: EmbeddingProviderSchema,
  dimensions: Count,
  document_count: Count,
  chunk_count: Count,
  /** Where its chunks are searched: exact cosine in SQLite, or the Vectorize index. */
  backend: z.enum(["sqlite", "vectorize"]),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type CollectionResource = z.infer<typeof CollectionSchema>;

export const CollectionListSchema = z.strictObject({ collections: z.array(CollectionSchema) });
export type CollectionList = z.infer<typeof CollectionListSchema>;

export const DocumentSummarySchema = z.strictObject({
  id: z.string(),
  title: z.string().nullable(),
  source: z.string().nullable(),
  metadata: MetadataSchema,
  chars: Count,
  chunk_count: Count,
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** GET /v1/collections/:name/documents: every document of the collection, by id. */
/** GET /v1/collections/:name/documents: a page of the collection's documents, by id. */
export const DocumentListSchema = z.strictObject({
  collection: z.string(),
  documents: z.array(DocumentSummarySchema),
  /** Pass as ?cursor= for the next page; null on the last. */
  next_cursor: z.string().nullable(),
});
export type DocumentList = z.infer<typeof DocumentListSchema>;

export const ChunkSchema = z.strictObject({
  chunk_id: z.string(),
  /** Position in the document, from 0. */
  index: Count,
  /** The Markdown headings above the chunk, outermost first. */
  heading_path: z.array(z.string()),
  text: z.string(),
});

/** GET /v1/collections/:name/documents/:id: the document, its text and its chunks in order. */
export const DocumentSchema = DocumentSummarySchema.extend({ text: z.string(), chunks: z.array(ChunkSchema) });
export type DocumentResource = z.infer<typeof DocumentSchema>;

/** PUT /v1/collections/:name/documents: the collection after the put, and the documents put. */
export const PutDocumentsResultSchema = z.strictObject({
  collection: CollectionSchema,
  documents: z.array(DocumentSummarySchema),
});
export type PutDocumentsResult = z.infer<typeof PutDocumentsResultSchema>;
// ---- Evaluations (src/evaluation-runs/) ------------------------------------------------------------------------

export const EvaluationLinksSchema = z.strictObject({
  self: z.url(),
  /** The report, once the evaluation has completed (409 evaluation_not_completed before). */
  report_json: z.url(),
  report_markdown: z.url(),
  agent: z.url(),
});

/** An evaluation as GET /v1/evaluations/:id answers (and POST /v1/agents/:name/evaluations, to a key that may read). */
export const EvaluationResourceSchema = EvaluationViewSchema.unwrap().extend({ links: EvaluationLinksSchema });
export type EvaluationResource = z.infer<typeof EvaluationResourceSchema>;

/** What POST /v1/agents/:name/evaluations answers a key that may act but not read: how far it is, never the runs'. */
export const EvaluationReceiptSchema = EvaluationViewSchema.unwrap()
  .pick({ id: true, agent: true, status: true, progress: true })
  .extend({ links: EvaluationLinksSchema });
export type EvaluationReceipt = z.infer<typeof EvaluationReceiptSchema>;

export const EvaluationResponseSchema = z.union([EvaluationResourceSchema, EvaluationReceiptSchema]);

/** What GET /v1/agents/:name/evaluations shows of each (src/tenants/evaluation-directory.ts); its own URL has the rest. */
export const EvaluationSummaryEntrySchema = z.strictObject({
  id: TaskId,
  agent: z.string(),
  status: z.enum(EVALUATION_STATUSES),
  /** Runs in all (cases × repetitions), graded so far, and passed of those. */
  total: z.number().int().nonnegative(),
  graded: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Timestamp.nullable(),
  links: z.strictObject({ self: z.url() }),
});

/** GET /v1/agents/:name/evaluations: one page, newest first; next_cursor continues it (null on the last page). */
export const EvaluationListSchema = z.strictObject({
  evaluations: z.array(EvaluationSummaryEntrySchema),
  next_cursor: z.string().nullable(),
});
export type EvaluationList = z.infer<typeof EvaluationListSchema>;

export { EvaluationComparisonSchema };
export type EvaluationComparison = z.infer<typeof EvaluationComparisonSchema>;

// ---- Inbound webhooks --------------------------------------------------------------------------------------------

/**
 * POST /v1/hooks/:hook_id: the sender gets a receipt, not the task (its answers end up in places like GitHub's
 * delivery log): 202 when the delivery started a task, 200 with the first delivery's task for a repeat.
 */
export const HookReceiptSchema = z.strictObject({
  hook_id: z.string(),
  delivery_id: z.string(),
  task_id: TaskId,
  status: z.enum(TASK_STATUSES),
  /** True for a repeat (the same delivery id or, for GitHub, the same signed body). */
  duplicate: z.boolean(),
});
export type HookReceipt = z.infer<typeof HookReceiptSchema>;

/** GitHub's ping: acknowledged, nothing started. */
export const HookPongSchema = z.strictObject({ hook_id: z.string(), status: z.literal("pong") });
export type HookPong = z.infer<typeof HookPongSchema>;

/** A delivery for an event the hook does not run on: acknowledged, nothing started. */
export const HookIgnoredSchema = z.strictObject({
  hook_id: z.string(),
  status: z.literal("ignored"),
  reason: z.string(),
});
export type HookIgnored = z.infer<typeof HookIgnoredSchema>;

export const HookResponseSchema = z.union([HookReceiptSchema, HookPongSchema, HookIgnoredSchema]);
export type HookResponse = z.infer<typeof HookResponseSchema>;

// ---- The tenant --------------------------------------------------------------------------------------------------

/** GET /v1/tenant (admin): who the key belongs to, the tenant's keys and its callback signing secret. */
export const TenantSchema = z.strictObject({
  tenant: z.string(),
  /** The request's key: its configured id, or key_<12 hex digits of its digest>. */
  key_id: z.string(),
  /** The tenant's keys: ids and scopes, never digests. */
  keys: z.array(
    z.strictObject({
      id: z.string(),
      scopes: z.array(z.enum(SCOPES)),
      /** The key's own limit on task creations a minute; null: the deployment's. */
      rate_limit_per_minute: z.number().int().positive().nullable(),
    }),
  ),
  default_rate_limit_per_minute: z.number().int().positive(),
  /** Standard Webhooks: verify callbacks with this; null when the deployment does not sign callbacks. */
  webhook_signing_secret: z.string().nullable(),
});
export type TenantView = z.infer<typeof TenantSchema>;

/** GET /v1/sessions/:id/artifacts: the session's run bundle (uploaded to R2 once it is closed). */
export const SessionArtifactListSchema = z.strictObject({ session_id: TaskId, artifacts: z.array(ArtifactSchema) });
export type SessionArtifactList = z.infer<typeof SessionArtifactListSchema>;

/** GET /v1/sessions/:id/workspace: the session's workspace, shared by its turns. */
export const SessionWorkspaceListSchema = z.strictObject({ session_id: TaskId, files: z.array(WorkspaceEntrySchema) });
export type SessionWorkspaceList = z.infer<typeof SessionWorkspaceListSchema>;

/** GET /v1/tasks/:id/replay: what a replay did differently from the task it replays (src/tasks/run-comparison.ts). */
export const ReplayComparisonSchema = z.strictObject({
  task_id: TaskId,
  /** The task it replays. */
  replay_of: TaskId,
  /** True when nothing differs. */
  identical: z.boolean(),
  differences: z.array(
    z.strictObject({
      /** What differs: status, result, model_calls, system_prompt, tools, tool_calls or tool_results. */
      what: z.enum(DIFFERENCE_KINDS),
      /** The model turn (1 first), or null for the run as a whole. */
      turn: z.number().int().positive().nullable(),
      original: JsonSchema,
      replay: JsonSchema,
    }),
  ),
});
export type ReplayComparison = z.infer<typeof ReplayComparisonSchema>;
