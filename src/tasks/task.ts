// The task (seed 003 Task) as stored and as the API returns it, what creating, forking and resuming one return,
// and its statuses. A person's requests and decisions are src/approvals/requests.ts.

import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { HumanDecision, PendingInput } from "../approvals/requests.ts";
import type { AgentUsage } from "../contracts/usage.ts";
import type { ErrorInfo } from "../errors.ts";
import type { RedactionMode } from "../events/redaction.ts";

export const TASK_STATUSES = ["pending", "running", "input_required", "completed", "failed", "canceled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "canceled"]);

/**
 * Per-task limits (seed 004 max_turns, seed 003 max_iterations, and budgets). Absent fields fall back to the agent's
 * definition; a budget left unset is unlimited.
 */
export interface TaskLimits {
  max_turns?: number;
  max_budget_usd?: number;
  max_tokens?: number;
}

export interface TaskView {
  id: string;
  /** seed 003 Task.assigned_agent */
  assigned_agent: string;
  /** seed 003 Task.description: what the task was asked to do. */
  input: string;
  metadata: Record<string, unknown>;
  status: TaskStatus;
  model: string;
  result: string | null;
  error: ErrorInfo | null;
  usage: AgentUsage;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  retention_days: number;
  parent_task_id: string | null;
  /** The limits the caller set for this task (the agent's own apply where a field is absent). */
  limits: TaskLimits;
  /** Labels for the retention policy's by_task rules (e.g. "critical", "debug"). */
  tags: string[];
  /** When the task and its R2 objects are deleted (completed_at + retention_days); null while it runs. */
  expires_at: string | null;
  /** What the task waits for while its status is input_required (an approval or a question); null otherwise. */
  pending_input: PendingInput | null;
  /** Sequence number of the newest event. */
  last_event_seq: number;
  /** Seed 002 redaction_mode: "redacted" keeps prompts and responses out of the task's event stream. */
  redaction_mode: RedactionMode;
  /** Seed 002 dry run: the prompt is composed and saved as dry_run_prompt.txt; no model is called. */
  dry_run: boolean;
  /** Where the task reports its outcome (signed callbacks), or null. */
  webhook: TaskWebhook | null;
  /** The inbound webhook delivery that started the task, or null for one started through the API. */
  trigger: TaskTrigger | null;
}

/** The task statuses a callback can be sent for. */
export const CALLBACK_EVENTS = ["completed", "failed", "canceled", "input_required"] as const;
export type CallbackEvent = (typeof CALLBACK_EVENTS)[number];

export interface TaskWebhook {
  url: string;
  events: CallbackEvent[];
}

export interface TaskTrigger {
  hook_id: string;
  delivery_id: string;
  /** The sender's event name, where the scheme has one (GitHub's X-GitHub-Event). */
  event: string | null;
}

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
}

export interface ForkOrigin {
  task_id: string;
  checkpoint_id: string;
  messages: MessageParam[];
  /** Model turns the conversation had taken at the checkpoint. */
  turn: number;
  /** Results of the pending tool calls (a tool_calls checkpoint) that the origin already ran: never run twice. */
  settled: Record<string, unknown>;
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
  settled: Record<string, unknown>;
  in_flight: string[];
  uncertain: Record<string, string>;
}

/**
 * What start() did: created the task, found it created by the same request before, or could not (workspace_full:
 * its seed files do not fit the workspace, which the Worker checks first; `message` says which limit).
 */
export type StartOutcome =
  | { outcome: "created" | "replayed"; task: TaskView }
  | { outcome: "mismatch" | "expired"; task?: undefined }
  | { outcome: "workspace_full"; message: string; task?: undefined };

/** What a resume did: recorded the decision now, or found the same decision recorded before (a replay). */
export interface ResumeOutcome {
  task: TaskView;
  decision: HumanDecision;
  replayed: boolean;
}

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}
