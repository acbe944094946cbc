// A task and what hangs off it: the resource and its receipts, a decision's receipt, an invocation, its messages,
// sub-agents, checkpoints, trace, deliveries, artifacts, workspace and replay comparison.

import { z } from "zod";
import { HumanDecisionSchema } from "../../approvals/requests.ts";
import { DeliverySchema } from "../../callbacks/delivery.ts";
import { CallbackPayloadSchema } from "../../callbacks/payload.ts";
import { ExecutionResultSchema } from "../../contracts/execution-result.ts";
import type { TraceLog } from "../../contracts/trace.ts";
import { JsonSchema } from "../../lib/json.ts";
import { CheckpointSchema, CheckpointSummarySchema } from "../../runtime/checkpoints.ts";
import { StoredMessageSchema } from "../../runtime/conversation.ts";
import { DIFFERENCE_KINDS } from "../../tasks/run-comparison.ts";
import { TASK_STATUSES, TaskViewSchema } from "../../tasks/task.ts";
import { Count, TaskId, Timestamp } from "./common.ts";

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
