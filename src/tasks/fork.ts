// Forking a task from one of its checkpoints (POST /v1/tasks/:id/fork, seed 003 human feedback): the rules that
// decide whether a new task may continue the origin's conversation there, and what it starts with. Which agent runs
// it (the checkpoint's, or the one state_updates hands it to) and on which model; where messages may be appended;
// and the origin's tool calls pending at the checkpoint: the fork inherits the results of those that settled, refuses
// to start while the origin still runs one (tool_call_in_flight), and runs one that the origin started and never
// finished only after a person approves (its outcome is unknown). The origin's side of that ledger is here too.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import type { Json, JsonObject } from "../lib/json.ts";
import type { RecordStatus, TaskView, ToolCallLedger } from "./task.ts";
import { type NewTask, type TaskAgent, taskModel } from "./task-init.ts";
import { requirePricedBudget, stricterRedaction } from "./task-limits.ts";
import { FORK_STATE_KEY, type TaskState } from "./task-state.ts";

/** What the rules read of a checkpoint (src/runtime/checkpoints.ts's Checkpoint, as forkPoint() returns it). */
export interface ForkPoint {
  checkpoint_id: string;
  state: {
    /** The conversation up to the checkpoint, unredacted: the model's own context. */
    messages: readonly MessageParam[];
    next_action: string;
    current_agent: string;
    metadata: Readonly<Record<string, unknown>>;
  };
}

/** The request's state_updates: messages are appended, the agent and metadata replace the checkpoint's. */
export interface ForkUpdates {
  messages?: readonly MessageParam[] | undefined;
  current_agent?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

export interface ForkRequest {
  /** The task forked from. */
  origin: TaskView;
  checkpoint: ForkPoint;
  updates: ForkUpdates;
  /** The agent of that name the request's tenant may see, if any. */
  agent: (name: string) => Promise<TaskAgent | undefined>;
  /** A version of the tenant's own agent of that name (PUT /v1/agents/:name), if it has it. */
  agentVersion: (name: string, version: number) => Promise<TaskAgent | undefined>;
  env: Pick<Env, "OUTPOST_DEFAULT_MODEL" | "OUTPOST_PRICES">;
  /** The origin's ledger of these tool calls (its object's toolCallLedger). */
  ledger: (toolUseIds: string[]) => Promise<ToolCallLedger>;
}

/**
 * Judges a fork request (a 4xx ApiError naming the field when it breaks a rule) and returns the new task, but for
 * its id: the rate limit and the Idempotency-Key are checked after the rules.
 */
export async function planFork(request: ForkRequest): Promise<Omit<NewTask, "id" | "fingerprint" | "tenant">> {
  const { origin, checkpoint, updates, env } = request;
  const agentName = updates.current_agent ?? checkpoint.state.current_agent;
  // Another tenant's agent is answered like an unknown one, and so is the checkpoint's own agent once a deploy
  // has taken it from this tenant. A fork that keeps its agent keeps the version of the tenant's own agent that its
  // origin ran (as it keeps its model); one handed to an agent, even the same one, takes its current version.
  const keepsVersion = updates.current_agent === undefined && origin.agent_version !== null;
  const agent = keepsVersion
    ? await request.agentVersion(agentName, origin.agent_version as number)
    : await request.agent(agentName);
  if (!agent) {
    throw new ApiError(
      "agent_not_found",
      `No agent named "${agentName}".`,
      updates.current_agent ? "state_updates.current_agent" : "checkpoint_id",
    );
  }
  // A fork that keeps its agent keeps its model; one handed to another agent takes that agent's.
  const model = updates.current_agent ? taskModel(agent, env) : origin.model;
  requirePricedBudget({
    limits: origin.limits,
    agent,
    model,
    prices: env.OUTPOST_PRICES,
    field: "state_updates.current_agent",
    nameAgent: true,
  });
  // A fork between a model turn and its tool calls inherits the calls its origin already ran (the ledger).
  const pending = checkpoint.state.next_action === "tool_calls" ? checkpoint.state.messages.at(-1) : undefined;
  const pendingIds = Array.isArray(pending?.content)
    ? pending.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []))
    : [];
  if (pendingIds.length > 0 && updates.messages?.length) {
    throw new ApiError(
      "validation_failed",
      "This checkpoint is between a model turn and its tool calls; messages can be added at a model_turn or finish checkpoint.",
      "state_updates.messages",
    );
  }
  if (checkpoint.state.next_action === "finish" && !updates.messages?.some((m) => m.role === "user")) {
    throw new ApiError(
      "validation_failed",
      "This checkpoint holds the model's final answer: add a user message (state_updates.messages) to continue from it.",
      "state_updates.messages",
    );
  }
  let ledger: ToolCallLedger = { settled: {}, in_flight: [], uncertain: {} };
  if (pendingIds.length > 0) {
    ledger = await request.ledger(pendingIds);
    // A call the origin runs (or is about to) has no known outcome yet: a fork now would be a second run of it.
    if (ledger.in_flight.length > 0) {
      throw new ApiError(
        "tool_call_in_flight",
        `Task ${origin.id} is still running this checkpoint's tool calls (${ledger.in_flight.join(", ")}); fork from it once they have settled, or from another checkpoint.`,
        "checkpoint_id",
        { tool_use_ids: ledger.in_flight },
      );
    }
  }
  return {
    agent,
    model,
    webhook: origin.webhook,
    // Never looser than the agent it moves to (a fork onto a redacting agent is redacted too).
    redactionMode: stricterRedaction(origin.redaction_mode, agent.redactionMode),
    input: origin.input,
    metadata: updates.metadata ?? origin.metadata,
    tags: origin.tags,
    parentTaskId: origin.id,
    // Inherited as they are; the run takes the smaller of these and the new agent's (runLimits).
    limits: origin.limits,
    fork: {
      task_id: origin.id,
      checkpoint_id: checkpoint.checkpoint_id,
      // Seed 003 State: messages follow the append reducer.
      messages: [...checkpoint.state.messages, ...(updates.messages ?? [])],
      turn: typeof checkpoint.state.metadata.turn === "number" ? checkpoint.state.metadata.turn : 0,
      settled: ledger.settled,
      uncertain: ledger.uncertain,
    },
  };
}

/** What the origin's ledger reads: its step journal, its workspace's committed calls, and its own fork origin. */
export interface LedgerSources {
  journal: { settledToolCalls(toolUseIds: readonly string[]): Promise<{ settled: JsonObject; started: string[] }> };
  workspace: { settled<T>(key: string): T | undefined };
  state: Pick<TaskState, "get">;
}

/**
 * What a task knows of these tool calls, for a fork of one of its checkpoints (ToolCallLedger); null when its journal
 * cannot be read. A call is settled when its step completed, or when its workspace changes and result committed
 * before an eviction cut the step short. While the task runs, an unsettled call is in flight: it runs now or will
 * (the heartbeat resumes it), and a fork must not run it too. Once the task has stopped, a call that started and
 * never finished has an unknown outcome.
 */
export async function toolCallLedger(
  sources: LedgerSources,
  task: { id: string; status: RecordStatus },
  toolUseIds: string[],
): Promise<ToolCallLedger | null> {
  let journal: { settled: JsonObject; started: string[] };
  try {
    journal = await sources.journal.settledToolCalls(toolUseIds);
  } catch (error) {
    // A spilled result gone from R2 means the task is being deleted (retention): never guess it did not run.
    console.error("settled tool calls unreadable:", error instanceof Error ? error.message : error);
    return null;
  }
  const settled: JsonObject = { ...journal.settled };
  for (const id of toolUseIds) {
    // A tool's result as its step committed it (JSON, like the journal's).
    const committed = id in settled ? undefined : sources.workspace.settled<{ content: Json; is_error: boolean }>(id);
    if (committed) settled[id] = { content: committed.content, is_error: committed.is_error };
  }
  const running = task.status === "pending" || task.status === "running";
  const inherited = sources.state.get(FORK_STATE_KEY)?.uncertain ?? {};
  const ledger: ToolCallLedger = { settled, in_flight: [], uncertain: {} };
  for (const id of toolUseIds) {
    if (id in settled) continue;
    if (running) ledger.in_flight.push(id);
    else if (journal.started.includes(id)) ledger.uncertain[id] = inherited[id] ?? task.id;
    // Inherited as uncertain and not run here either (this task stopped before it, or waits for its approval).
    else if (inherited[id]) ledger.uncertain[id] = inherited[id];
  }
  return ledger;
}
