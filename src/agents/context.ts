// What an agent receives for one run (seed 000 AgentContext, adapted): the task, its workspace and configuration,
// and the durable runtime that executes steps, streams model calls and records events.
import type { MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { PriceTable } from "../config/prices.ts";
import type { AgentMessage } from "../llm/anthropic.ts";
import type { SkillTranscriptFields } from "../runs/transcript.ts";
import type { NextAction } from "../runtime/checkpoints.ts";
import type { SkillCatalog } from "../skills/catalog.ts";
import type { Toolbox } from "../tools/toolbox.ts";
import type { AgentUsage } from "./result.ts";

export interface AgentConfiguration {
  /** The model this run uses (agent pin → OUTPOST_DEFAULT_MODEL → DEFAULT_MODEL). */
  model: string;
  prices: PriceTable;
  /** The run's limits: the task's, else the agent's. The runtime enforces the budgets after every model call. */
  limits: RunLimits;
}

export interface RunLimits {
  /** Model turns (seed 004 max_turns, seed 003 max_iterations). */
  maxTurns: number;
  /** Total cost of the task's model calls, USD; null for no limit. */
  maxBudgetUsd: number | null;
  /** Total tokens of the task's model calls (input, output and cache); null for no limit. */
  maxTokens: number | null;
}

export interface AgentContext {
  taskId: string;
  /** The task's input (seed 003 Task.description). */
  input: string;
  /** The task's virtual workspace root: the folder every workspace tool resolves paths against. */
  workspace: string;
  /** The git branch, when the caller gave one in metadata.branch (seed 000 AgentContext.branch). */
  branch: string | undefined;
  config: AgentConfiguration;
  /** The caller's metadata and anything else a custom agent needs. */
  extra: Readonly<Record<string, unknown>>;
  runtime: AgentRuntime;
  /** The run's tools: definitions for the model, and calls with permission checks, timeouts and fallbacks. */
  tools: Toolbox;
  /**
   * Set when the task is a fork of another task's checkpoint: the conversation to continue from (already recorded
   * as this task's messages) and the number of model turns it had taken.
   */
  startFrom?: { messages: MessageParam[]; turn: number } | undefined;
  /** Seed 002 dry run: compose the first prompt, save it as dry_run_prompt.txt, and call no model. */
  dryRun: boolean;
  /** The skill catalog (seed 002): the skills compiled into the Worker and those uploaded to R2. Loaded on call. */
  skills: () => Promise<SkillCatalog>;
}

export interface StepInfo {
  /** 1 for the first try; higher when an interruption (eviction, restart) made the step run again. */
  attempt: number;
  spanId: string;
}

export interface ModelCallOptions {
  turnIndex: number;
  callSite?: "decision_loop" | "final_answer_synthesis" | "unspecified";
  attempt?: number;
  spanId?: string;
}

/** The durable primitives a run is built from. Implemented by src/runtime/run-runtime.ts. */
export interface AgentRuntime {
  /** Aborted when the task is canceled. */
  readonly signal: AbortSignal;
  /**
   * Runs `fn` once and persists its JSON result under `name`. When the run replays after an eviction or a restart,
   * a completed step returns its stored result without running again; an interrupted one runs again with a higher
   * attempt. Steps run one at a time, and the code between them must be deterministic.
   */
  step<T>(name: string, fn: (info: StepInfo) => Promise<T>): Promise<T>;
  /** Streams one model call; every event, delta, artifact and the usage are recorded. */
  streamModel(params: MessageCreateParamsBase, options: ModelCallOptions): AsyncGenerator<AgentMessage, void>;
  /** Records message `index` of the conversation (idempotent, so replays do not duplicate it). */
  recordMessage(index: number, message: MessageParam): void;
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
  ): void;
  /** Adds the skill runtime's fields to a model call's transcript record (seed 002 LlmTranscriptRecord). */
  annotateTranscript(
    turnIndex: number,
    callSite: NonNullable<ModelCallOptions["callSite"]>,
    fields: SkillTranscriptFields,
  ): void;
  /** Appends an event to the task's log. */
  emit(eventType: string, payload: Record<string, unknown>, spanId?: string): void;
  /** Usage of every model call of this task so far (tokens, cost, calls). */
  usage(): AgentUsage;
  /** Small per-task key/value state that survives evictions (e.g. the TodoWrite list). */
  state: {
    get<T>(key: string): T | undefined;
    put(key: string, value: unknown): void;
  };
}
