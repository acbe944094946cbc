// Sub-agents (seed 003 SubAgentSession, seed 004 SubagentConfig): what a run's Task tool asks of its task's object,
// and what a child task reports to its parent's object when it ends. Each sub-agent is a child task in its own
// Durable Object; its parent records every delegation under the Task call's tool_use id, so a replayed run finds the
// child it started and the outcome the child reported, never starting or counting one twice.

import type { JsonObject } from "../lib/json.ts";
import type { SubtreeUsage } from "./usage.ts";

/** A delegation the model asked for with the Task tool. */
export interface SubagentRequest {
  tool_use_id: string;
  agent: string;
  description: string;
  prompt: string;
}

/** How a delegation ended, as the parent's model gets it. */
export interface SubagentOutcome {
  status: "completed" | "failed" | "canceled";
  /** Seed 003 SubAgentSession.summary: the child's answer, or why it did not answer. */
  summary: string;
  is_error: boolean;
}

/** A delegation as the parent keeps it. */
export interface SubagentRecord extends SubagentRequest {
  /** Null when it was refused before any child started (an agent it may not delegate to, a limit). */
  child_task_id: string | null;
  /** The version of the tenant's own agent (PUT /v1/agents/:name) the child runs; null for the Worker's agent. */
  agent_version: number | null;
  depth: number;
  created_at: string;
  outcome: SubagentOutcome | null;
  /** What the child reported of its usage and its subtree's with its end (the parent's usage rollup). */
  usage?: SubtreeUsage;
  /** The budget the child was started with, carved out of the parent's (src/subagents/tree-budget.ts). */
  budget?: { max_budget_usd?: number; max_tokens?: number };
  /** What the child waits for from a person, as it last reported; absent or null when nothing. */
  waiting?: SubagentWaitReport["pending"];
}

/** A child's request as its parent keeps it: the fields the parent's events name, and the rest as JSON. */
export type WaitingRequest = JsonObject & {
  request_id: string;
  kind: "approval" | "question";
  tool_name: string;
  question: string | null;
};

/** What a child waits for, as its parent shows it: the child's pending_input (redacted), or null when it waits for none. */
export interface SubagentWaitReport {
  child_task_id: string;
  tool_use_id: string;
  /** The child's PendingInput (src/approvals/requests.ts) as its view shows it; null once it no longer waits. */
  pending: WaitingRequest | null;
}

/** What the Task tool uses of its task's object. */
export interface SubagentHost {
  /** The delegation made for this Task call, if any. */
  get(toolUseId: string): SubagentRecord | undefined;
  /** Delegations started and not yet ended. */
  running(): number;
  /**
   * Records the delegation, then starts its child task (or records why it cannot). Idempotent per tool_use id.
   * `places`: how many of the turn's delegations start together with this one (its budget's share, default 1).
   */
  start(request: SubagentRequest, places?: number): Promise<void>;
  /** What the task's ended delegations spent, their subtrees included: it counts against the task's budgets. */
  spent(): { cost_usd: number; tokens: number };
}

/** A child task's end, sent to its parent's object until acknowledged (the same report again changes nothing). */
export interface SubagentReport {
  child_task_id: string;
  tool_use_id: string;
  outcome: SubagentOutcome;
  /** The child's usage and its subtree's (absent from a child running code from before rollups). */
  usage?: SubtreeUsage;
}

/** Whether a child may start: a place in its root's tree, or why not, for the delegating model (RPC admitToTree). */
export type TreeAdmission = { admitted: true } | { admitted: false; refusal: string };

/** What a child task knows of its place in the tree (its state, from its creation). */
export interface SubagentOrigin {
  parent_task_id: string;
  tool_use_id: string;
  depth: number;
  /**
   * The root of its tree, whose object counts the tree's tasks (src/subagents/tree-limits.ts). Absent in a child
   * started before trees were counted: its parent stands in for it.
   */
  root_task_id?: string;
}
