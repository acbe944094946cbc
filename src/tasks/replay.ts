// Replaying a task (POST /v1/tasks/:id/replay, issue 17 §3): its agent's current definition runs again on the same
// input, offline and deterministically. Each model call answers with the recorded task's response for that turn (a
// replay provider: src/llm/replay-provider.ts) and each tool call with the recorded result, through the fork
// machinery that already hands a fork its origin's settled calls, so nothing leaves the Worker and nothing runs
// twice. What differs from the recorded run (the prompt sent, the calls made, their results, the answer) is what a
// prompt or code change did: src/tasks/run-comparison.ts reports it. The recording is read through ReplayRequest:
// from the task's own object, or from its run bundle uploaded to POST /v1/replays (src/http/bundle-replay.ts),
// where the task may not exist at all.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { ApiError } from "../errors.ts";
import type { TaskView, ToolCallLedger } from "./task.ts";
import type { NewTask, TaskAgent } from "./task-init.ts";
import type { ReplayState } from "./task-state.ts";

/** The checkpoint after the first model call: what comes before its response is what the run started from. */
const FIRST_TURN = "turn_1_model";

/** A replay's state as ReplayState keeps it, past which a recording is too large to replay (a state row's limit). */
const MAX_RECORDING_CHARS = 1_500_000;

/** What a replay reads of the task it replays. */
export type ReplayOrigin = Pick<
  TaskView,
  "id" | "workflow" | "assigned_agent" | "model" | "redaction_mode" | "input" | "metadata" | "tags" | "limits"
>;

export interface ReplayRequest {
  /** The task replayed. */
  origin: ReplayOrigin;
  /** Its checkpoints, oldest first (the object's checkpointList). */
  checkpoints: readonly { checkpoint_id: string; position: string; message_count: number }[];
  /** A checkpoint's conversation, unredacted (the object's forkPoint). */
  checkpoint: (id: string) => Promise<{ state: { messages: readonly MessageParam[] } } | null>;
  /** The agent of that name the request's tenant may see now, if any. */
  agent: (name: string) => Promise<TaskAgent | undefined>;
  /** The origin's ledger of these tool calls (its object's toolCallLedger). */
  ledger: (toolUseIds: string[]) => Promise<ToolCallLedger>;
  /** Replay with this agent rather than the recorded one (named by the request's `field`). */
  agentName?: { name: string; field: string } | undefined;
  /**
   * Where the recording comes from: the task's object (the default), or an uploaded bundle, whose task need not
   * exist here; a bundle's replay names it in its trigger, and has no parent task.
   */
  source?: "bundle" | undefined;
}

/** The replay task, but for its id: a 4xx ApiError when the task cannot be replayed. */
export async function planReplay(
  request: ReplayRequest,
): Promise<Omit<NewTask, "id" | "fingerprint" | "tenant"> & { replay: ReplayState }> {
  const { origin } = request;
  if (origin.workflow !== null) {
    throw new ApiError("replay_unavailable", `Task ${origin.id} is a run of a workflow; replay runs one agent's task.`);
  }
  const first = request.checkpoints.find((c) => c.position === FIRST_TURN);
  const last = request.checkpoints.at(-1);
  const recording = last ? await request.checkpoint(last.checkpoint_id) : null;
  if (!first || !recording) {
    throw new ApiError("replay_unavailable", `Task ${origin.id} recorded no model call to replay.`);
  }
  const messages = [...recording.state.messages];
  const start = first.message_count - 1;
  const responses = messages.slice(start).filter((m) => m.role === "assistant");
  const replay: ReplayState = { task_id: origin.id, responses };
  if (JSON.stringify(replay).length > MAX_RECORDING_CHARS) {
    throw new ApiError("replay_unavailable", `Task ${origin.id}'s recording is too large to replay.`);
  }
  // Every tool call of the recording, by the model turn that asked for it.
  const turns: Record<string, number> = {};
  for (const [index, response] of responses.entries()) {
    if (typeof response.content === "string") continue;
    for (const block of response.content) if (block.type === "tool_use") turns[block.id] = index + 1;
  }
  const ledger = Object.keys(turns).length > 0 ? await request.ledger(Object.keys(turns)) : null;
  // A call with no recorded result (cut short, or never run) is not run by the replay unless a person approves it,
  // as a fork asks before running a call whose outcome is unknown.
  const uncertain: Record<string, string> = { ...ledger?.uncertain };
  for (const id of Object.keys(turns))
    if (!(id in (ledger?.settled ?? {})) && !uncertain[id]) uncertain[id] = origin.id;
  const { name, field } = request.agentName ?? { name: origin.assigned_agent, field: "id" };
  const agent = await request.agent(name);
  if (!agent) throw new ApiError("agent_not_found", `No agent named "${name}".`, field);
  return {
    agent,
    model: origin.model,
    redactionMode: origin.redaction_mode,
    input: origin.input,
    metadata: origin.metadata,
    tags: origin.tags,
    parentTaskId: request.source === "bundle" ? null : origin.id,
    limits: origin.limits,
    trigger: { kind: "replay", task_id: origin.id, ...(request.source ? { source: request.source } : {}) },
    fork: {
      task_id: origin.id,
      checkpoint_id: first.checkpoint_id,
      messages: messages.slice(0, start),
      turn: 0,
      settled: ledger?.settled ?? {},
      settled_turns: turns,
      uncertain,
    },
    replay,
  };
}
