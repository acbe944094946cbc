// The task (seed 003 Task) as stored and as the API returns it, what creating, forking and resuming one return,
// and its statuses. A person's requests and decisions are src/approvals/requests.ts.
//
// The task view is a wire type: a zod schema, its type inferred, the responses that carry a task built on it
// (src/http/responses.ts). Like every wire schema it is built on first use (z.lazy): the Worker and the object only
// need its type, and the tests parse with it.

import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { type HumanDecision, ShownPendingInputSchema } from "../approvals/requests.ts";
import type { RuntimeAgentRecord } from "../contracts/agent-version.ts";
import type { SubagentOrigin } from "../contracts/subagents.ts";
import { AgentUsageSchema } from "../contracts/usage.ts";
import { ErrorInfoSchema } from "../errors/error-info.ts";
import { REDACTION_MODES, type RedactionMode } from "../events/redaction.ts";
import type { Faults } from "../faults/faults.ts";
import { type JsonObject, JsonSchema } from "../lib/json.ts";
import type { TaskPrincipal } from "./principal.ts";
import type { ReplayState, WorkflowTaskState } from "./task-state.ts";
import { WaitingForSchema } from "./waiting-for.ts";

export const TASK_STATUSES = ["pending", "running", "input_required", "completed", "failed", "canceled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/**
 * What an object's row holds: a task (one run of its input) or a chat session (src/sessions/: a series of turns on
 * one conversation, each an ordinary run). A session's row is `ready` between turns and `closed` once closed; while
 * a turn runs it goes through a task's statuses.
 */
export const RECORD_KINDS = ["task", "session"] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];
export type RecordStatus = TaskStatus | "ready" | "closed";
export const TERMINAL_STATUSES: ReadonlySet<RecordStatus> = new Set(["completed", "failed", "canceled", "closed"]);

/**
 * What a session does with a message that arrives while a turn is under way (LangGraph's multitask strategies):
 * `reject` it (409 session_busy), `enqueue` it to run after the turns before it, or `interrupt` the current turn,
 * keeping what that turn did, and run it next.
 */
export const BUSY_POLICIES = ["reject", "enqueue", "interrupt"] as const;
export type BusyPolicy = (typeof BUSY_POLICIES)[number];

/** The task statuses a callback can be sent for. */
export const CALLBACK_EVENTS = ["completed", "failed", "canceled", "input_required"] as const;
export type CallbackEvent = (typeof CALLBACK_EVENTS)[number];

/** Task metadata (seed 003: a replacing state field): what the request, a resume or the starting hook set. */
export const TaskMetadataSchema = z.lazy(() =>
  z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
);
export type TaskMetadata = z.infer<typeof TaskMetadataSchema>;

/**
 * Per-task limits (seed 004 max_turns, seed 003 max_iterations, and budgets). Absent fields fall back to the agent's
 * definition; a budget left unset is unlimited.
 */
export const TaskLimitsSchema = z.lazy(() =>
  z.strictObject({
    max_turns: z.number().int().positive().optional(),
    max_budget_usd: z.number().positive().optional(),
    max_tokens: z.number().int().positive().optional(),
  }),
);
export type TaskLimits = z.infer<typeof TaskLimitsSchema>;

/** Where a task reports its outcome (signed callbacks): the URL, and the statuses it reports. */
export const TaskWebhookSchema = z.lazy(() =>
  z.strictObject({ url: z.url(), events: z.array(z.enum(CALLBACK_EVENTS)).min(1) }),
);
export type TaskWebhook = z.infer<typeof TaskWebhookSchema>;

/** The inbound webhook delivery that started a task. */
export const HookTriggerSchema = z.lazy(() =>
  z.strictObject({
    hook_id: z.string(),
    delivery_id: z.string(),
    /** The sender's event name, where the scheme has one (GitHub's X-GitHub-Event). */
    event: z.string().nullable(),
  }),
);

/** The schedule (POST /v1/schedules) that started a task, and the due time the task is its run for. */
export const ScheduleTriggerSchema = z.lazy(() =>
  z.strictObject({
    kind: z.literal("schedule"),
    schedule_id: z.uuid({ version: "v4" }),
    /** The due time this run is for (with missed fires run once, the latest of them). */
    due_at: z.iso.datetime(),
    /** How many due times the run stands for: more than 1 when fires missed while the runtime was down run once. */
    due_times: z.number().int().positive(),
  }),
);

/** The evaluation run (POST /v1/agents/:name/evaluations) a task is one run of: its case and repetition. */
export const EvaluationTriggerSchema = z.lazy(() =>
  z.strictObject({
    kind: z.literal("evaluation"),
    evaluation_id: z.uuid({ version: "v4" }),
    /** The test case's name. */
    case: z.string(),
    /** 1 to the evaluation's repeat. */
    repetition: z.number().int().positive(),
  }),
);

/** The recorded task a replay (POST /v1/tasks/:id/replay) runs its agent's current definition against. */
export const ReplayTriggerSchema = z.lazy(() =>
  z.strictObject({
    kind: z.literal("replay"),
    task_id: z.uuid({ version: "v4" }),
    /** `bundle`: replayed from the task's run bundle (POST /v1/replays); absent: from the task itself. */
    source: z.literal("bundle").optional(),
  }),
);

/**
 * What started a task other than a request to the API: an inbound webhook delivery (no `kind`, the shape it had
 * before schedules), a schedule (`kind: "schedule"`), an evaluation run (`kind: "evaluation"`), or a replay
 * (`kind: "replay"`).
 */
export const TaskTriggerSchema = z.lazy(() =>
  z.union([HookTriggerSchema, ScheduleTriggerSchema, EvaluationTriggerSchema, ReplayTriggerSchema]),
);
export type TaskTrigger = z.infer<typeof TaskTriggerSchema>;

/** The task as its object returns it (seed 003 Task): what GET /v1/tasks/:id shows, without its links. */
export const TaskViewSchema = z.lazy(() =>
  z.strictObject({
    id: z.uuid({ version: "v4" }),
    /** Seed 004: the validated answer of an agent with a response_format, once the task has completed; else null. */
    structured_output: JsonSchema.nullable(),
    /** seed 003 Task.assigned_agent */
    assigned_agent: z.string(),
    /** The version of a tenant's own agent (PUT /v1/agents/:name) the task runs; null for an agent of the Worker. */
    agent_version: z.number().int().positive().nullable(),
    /** The workflow the task runs (POST /v1/workflows/:name/tasks); null for a task of one agent. */
    workflow: z.string().nullable(),
    /** seed 003 Task.description: what the task was asked to do. */
    input: z.string(),
    metadata: TaskMetadataSchema,
    status: z.enum(TASK_STATUSES),
    model: z.string(),
    /** The final answer of a completed task; null otherwise. */
    result: z.string().nullable(),
    /** Why a failed task failed; null otherwise (codes: docs/reference/errors.md#failed-tasks). */
    error: ErrorInfoSchema.nullable(),
    usage: AgentUsageSchema,
    created_at: z.iso.datetime(),
    started_at: z.iso.datetime().nullable(),
    completed_at: z.iso.datetime().nullable(),
    retention_days: z.number().int().positive(),
    /** The task a fork continues (POST /v1/tasks/:id/fork); null otherwise. */
    parent_task_id: z.uuid({ version: "v4" }).nullable(),
    /** The limits the caller set for this task (the agent's own apply where a field is absent). */
    limits: TaskLimitsSchema,
    /** Labels for the retention policy's by_task rules (e.g. "critical", "debug"). */
    tags: z.array(z.string()),
    /** When the task and its R2 objects are deleted (completed_at + retention_days); null while it runs. */
    expires_at: z.iso.datetime().nullable(),
    /** What the task waits for while its status is input_required (an approval or a question); null otherwise. */
    pending_input: ShownPendingInputSchema.nullable(),
    /**
     * What a running task waits for other than a person: `{kind: "provider", until, attempts, last_error}` while a
     * model call waits out its provider's outage or rate limit (docs/provider-waits.md); null otherwise.
     */
    waiting_for: WaitingForSchema.nullable(),
    /** Sequence number of the newest event. */
    last_event_seq: z.number().int().nonnegative(),
    /** Seed 002 redaction_mode: "redacted" keeps prompts and responses out of the task's event stream. */
    redaction_mode: z.enum(REDACTION_MODES),
    /** Seed 002 dry run: the prompt is composed and saved as dry_run_prompt.txt; no model is called. */
    dry_run: z.boolean(),
    /** Where the task reports its outcome (signed callbacks), or null. */
    webhook: TaskWebhookSchema.nullable(),
    /** The inbound webhook delivery or the schedule that started the task, or null for one started through the API. */
    trigger: TaskTriggerSchema.nullable(),
  }),
);
export type TaskView = z.infer<typeof TaskViewSchema>;

export interface TaskInit {
  id: string;
  /** Whose task it is; its object's name includes it (taskObjectName). */
  tenant: string;
  webhook?: TaskWebhook | null;
  trigger?: TaskTrigger | null;
  redactionMode?: RedactionMode;
  dryRun?: boolean;
  /**
   * For a task created under an Idempotency-Key: the request's fingerprint. A repeat with the same fingerprint
   * replays the original response; another fingerprint is a mismatch.
   */
  fingerprint?: string;
  agent: string;
  /** A tenant's own agent: the version the task runs, kept with the task (RUNTIME_AGENT_STATE_KEY). */
  runtimeAgent?: RuntimeAgentRecord;
  input: string;
  metadata: Record<string, unknown>;
  model: string;
  retentionDays: number;
  /** Whether the caller chose retention_days (then the policy's status rules do not change it). */
  retentionExplicit: boolean;
  tags: string[];
  parentTaskId: string | null;
  limits?: TaskLimits;
  /** A fork (POST /v1/tasks/:id/fork): the checkpoint's conversation, with any appended messages, to continue. */
  fork?: ForkOrigin;
  /** Files to put in the workspace before the run starts: workspace path ("/src/a.ts") → UTF-8 content. */
  files?: Record<string, string>;
  /** A sub-agent's child task: its parent, the Task call it answers, its depth. */
  subagent?: SubagentOrigin;
  /**
   * Who started the task's tree (src/tasks/principal.ts): the key (or hook) whose creation rate its sub-agents count
   * against. A child carries its root's.
   */
  principal?: TaskPrincipal;
  /** A workflow's run: the workflow, and for a fork of one of its checkpoints, where it starts. */
  workflow?: WorkflowTaskState;
  /** Seed 004's startup warnings about the task's agent and files (rule 4), recorded in its first event. */
  warnings?: string[];
  /**
   * seed 004 invoke_once: the conversation the task continues, its input being the next user message. Recorded as
   * the task's first messages; the run starts from them.
   */
  context?: MessageParam[];
  /** A chat session (src/sessions/) rather than a task: no run until its first message; `input` is empty. */
  session?: { busy: BusyPolicy };
  /** A replay: the recorded task's responses, which its model calls answer with (src/llm/replay-provider.ts). */
  replay?: ReplayState;
  /** Faults its runs inject (src/faults/), kept in its state (FAULT_STATE_KEY). */
  faults?: Faults;
  /**
   * Listed in its tenant's directory before its creation is answered, instead of up to REPORT_INTERVAL_MS later: a
   * task a later request finds through a listing (an A2A context's newest task, which a follow-up message continues).
   */
  listAtOnce?: boolean;
}

export interface ForkOrigin {
  task_id: string;
  checkpoint_id: string;
  messages: MessageParam[];
  /** Model turns the conversation had taken at the checkpoint. */
  turn: number;
  /** Results of the pending tool calls (a tool_calls checkpoint) that the origin already ran: never run twice. */
  settled: Record<string, unknown>;
  /** The model turn of each settled call, where it is not `turn` (a replay settles every turn's calls). */
  settled_turns?: Record<string, number>;
  /**
   * Pending calls the origin started and never finished (it was canceled, failed or crashed during them): whether
   * they took effect is unknown, so the fork asks a person before running them again. By tool_use id, the task
   * whose idempotency keys the call was sent with (the origin, or the task it inherited the call from).
   */
  uncertain?: Record<string, string>;
}

/**
 * What a task knows of some of its tool calls (for a fork of one of its checkpoints): the results of the settled
 * ones, the ones it is running or about to run (a fork now could run them a second time), and the ones it started
 * and never finished, with the task whose keys they were sent under.
 */
export interface ToolCallLedger {
  /** By tool_use id, the result the call returned (JSON, so that RPC carries the ledger typed). */
  settled: JsonObject;
  in_flight: string[];
  uncertain: Record<string, string>;
}

/**
 * What start() did: created the task, found it created by the same request before, or could not (workspace_full:
 * its seed files do not fit the workspace, which the Worker checks first; `message` says which limit).
 */
export type StartOutcome<View = TaskView> =
  | { outcome: "created" | "replayed"; task: View }
  | { outcome: "mismatch"; task?: undefined }
  | { outcome: "expired"; task?: undefined }
  | { outcome: "workspace_full"; message: string; task?: undefined };

/** What a resume did: recorded the decision now, or found the same decision recorded before (a replay). */
export interface ResumeOutcome {
  task: TaskView;
  decision: HumanDecision;
  replayed: boolean;
}

export function isTerminal(status: RecordStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}
