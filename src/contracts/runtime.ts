// The contract between a run and the code it runs: the durable primitives the runtime gives an agent
// (AgentRuntime), the narrower part a tool gets (ToolRuntime), and the shapes they pass. Implemented by
// src/runtime/run-runtime.ts; used by src/agents and src/tools, which therefore never import each other's
// implementation of it. A leaf: it imports nothing from the rest of src/ but other contracts and lib/ (and SDK types).
import type {
  Message,
  MessageCreateParamsBase,
  MessageParam,
  RawMessageStreamEvent,
} from "@anthropic-ai/sdk/resources/messages";
import type { TypedState } from "../lib/state-key.ts";
import type { CallSite, CustomEventType, EventPayload, EventType } from "./events.ts";
import type { AgentUsage } from "./usage.ts";

/** What `query()` yields (FR-005): each raw stream event as it arrives, then the assembled assistant message. */
export type AgentMessage =
  | { type: "stream_event"; event: RawMessageStreamEvent }
  | { type: "assistant"; message: Message; request_id: string | null };

export interface StepInfo {
  /** 1 for the first try; higher when an interruption (eviction, restart) or a broken stream made it run again. */
  attempt: number;
  spanId: string;
}

export interface StepOptions {
  /**
   * A step that is one model call (a model turn): when the call fails in a way a later try may not repeat (429, 529,
   * 5xx, a lost or broken connection, a timeout), the runtime tries it again as the step's next attempt, waiting
   * inside the run at first and then on the object's provider_wait timer, until the call's horizon
   * (src/runtime/provider-retry.ts). The provider's clients make no retries of their own.
   */
  providerRetries?: boolean;
}

export interface ModelCallOptions {
  turnIndex: number;
  callSite?: CallSite;
  attempt?: number;
  spanId?: string;
  /** One of several calls of one call site in one turn (a summary written in parts): its files are named by it. */
  part?: number;
}

/** What the run will do next from a checkpoint: a workflow's checkpoint is before a node (`run_node`). */
export type NextAction = "model_turn" | "tool_calls" | "finish" | "run_node";

/** The State fields a checkpoint records beside the conversation when the run sets them (a workflow does). */
export interface CheckpointStateFields {
  current_agent: string;
  routing_key: string | null;
}

/** The run's limits: the task's, else the agent's. The runtime enforces the budgets after every model call. */
export interface RunLimits {
  /** Model turns (seed 004 max_turns, seed 003 max_iterations). */
  maxTurns: number;
  /** Total cost of the task's model calls, USD; null for no limit. */
  maxBudgetUsd: number | null;
  /** Total tokens of the task's model calls (input, output and cache); null for no limit. */
  maxTokens: number | null;
}

/** The skill runtime's fields of a model call's transcript record (seed 002 LlmTranscriptRecord). */
export interface SkillTranscriptFields {
  budget: {
    max_context_tokens: number;
    response_headroom_tokens: number;
    allocated_prompt_tokens: number;
    allocated_disclosure_tokens: number;
  } | null;
  disclosed_paths: string[];
  decode_success: boolean;
  selected_skill: string | null;
  raw_action_types: string[];
  planned_action_types: string[];
  required_disclosure_paths: string[];
  response_kind: "skill_call" | "tool_call" | "response" | null;
  response_kind_reason: string | null;
  finish_summary: string | null;
  decode_error: string | null;
}

/**
 * The part of the runtime the run's tools use: the Toolbox (steps, events, checkpoints, the state that holds
 * people's decisions) and the built-in tools (artifacts, events, state, cancellation). Tests of tools stub only this.
 */
export interface ToolRuntime {
  /** Aborted when the task is canceled. */
  readonly signal: AbortSignal;
  /**
   * Runs `fn` once and persists its JSON result under `name`. When the run replays after an eviction or a restart,
   * a completed step returns its stored result without running again; an interrupted one runs again with a higher
   * attempt. Steps run one at a time, and the code between them must be deterministic.
   */
  step<T>(name: string, fn: (info: StepInfo) => Promise<T>, options?: StepOptions): Promise<T>;
  /** Adds a file to the run bundle (runs/<task_id>/<path>). */
  artifact(path: string, content: string): Promise<void>;
  /**
   * Records a checkpoint (seed 003) at `position` covering the conversation so far, and emits checkpoint_saved. A
   * position already recorded (a replay) records nothing.
   */
  checkpoint(
    position: string,
    nextAction: NextAction,
    metadata?: Record<string, unknown>,
    awaitingHuman?: boolean,
    fields?: CheckpointStateFields,
  ): void;
  /**
   * Appends an event to the task's log: a type of the catalog (src/contracts/events.ts) with its payload, or an
   * agent's own `custom_…` type with any JSON object.
   */
  emit<T extends EventType | CustomEventType>(eventType: T, payload: EventPayload<T>, spanId?: string): void;
  /** The agent's own small key/value state, kept with the task across evictions: any name but Outpost's keys. */
  state: AgentState;
  /**
   * Outpost's own keys of the task's state, each typed by its StateKey (src/lib/state-key.ts): people's decisions, a
   * fork's origin, the TodoWrite list. A write is checked against the key's schema.
   */
  taskState: Pick<TypedState, "get" | "put">;
}

/**
 * An agent's state by names it chooses (runtime.state). A name Outpost keeps for itself (a registered StateKey, e.g.
 * `pending_input`) is refused: get and put throw.
 */
export interface AgentState {
  get<T>(key: string): T | undefined;
  put(key: string, value: unknown): void;
}

/** The durable primitives a run is built from: the tools' part, and model calls, the conversation and usage. */
export interface AgentRuntime extends ToolRuntime {
  /** Streams one model call; every event, delta, artifact and the usage are recorded. */
  streamModel(params: MessageCreateParamsBase, options: ModelCallOptions): AsyncGenerator<AgentMessage, void>;
  /** Records message `index` of the conversation (idempotent, so replays do not duplicate it). */
  recordMessage(index: number, message: MessageParam): void;
  /** Adds the skill runtime's fields to a model call's transcript record (seed 002 LlmTranscriptRecord). */
  annotateTranscript(
    turnIndex: number,
    callSite: NonNullable<ModelCallOptions["callSite"]>,
    fields: SkillTranscriptFields,
  ): void;
  /** Usage of every model call of this task so far (tokens, cost, calls). */
  usage(): AgentUsage;
}
