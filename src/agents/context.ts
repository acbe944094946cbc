// What an agent receives for one run (seed 000 AgentContext, adapted): the task, its workspace and configuration,
// the run's tools, and the durable runtime that executes steps, streams model calls and records events (its
// contract, AgentRuntime, is src/contracts/runtime.ts).
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { PriceTable } from "../config/prices.ts";
import type { AgentRuntime, RunLimits } from "../contracts/runtime.ts";
import type { SubagentHost } from "../contracts/subagents.ts";
import type { SkillCatalog } from "../skills/catalog.ts";
import type { Toolbox } from "../tools/toolbox.ts";

export interface AgentConfiguration {
  /** The model this run uses (agent pin → OUTPOST_DEFAULT_MODEL → DEFAULT_MODEL). */
  model: string;
  prices: PriceTable;
  /** The run's limits: the task's, else the agent's. The runtime enforces the budgets after every model call. */
  limits: RunLimits;
  /**
   * The prompt cache key of the run's agent version within its tenant (src/llm/prompt-cache.ts promptCacheKey): an
   * OpenAI-compatible agent that sends prompt_cache_key sends this; null for the other providers' runs.
   */
  cacheKey: string | null;
}

export interface AgentContext {
  taskId: string;
  /** The task's input (seed 003 Task.description). */
  input: string;
  /**
   * The folder every workspace tool resolves relative paths against: the task's virtual workspace root
   * ("/workspace"), or the agent's working directory in it ("/workspace/project").
   */
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
   * Set when the run continues a conversation: a fork of another task's checkpoint, or a session's next turn. The
   * conversation (already recorded as this object's messages, the turn's message last), the number of model turns
   * it had taken (steps are numbered on from there), and the turn max_turns counts from: 0 for a fork, whose limit
   * covers its origin's turns too; the turn's first for a session, whose every message gets max_turns of its own.
   */
  startFrom?: { messages: MessageParam[]; turn: number; countTurnsFrom?: number } | undefined;
  /** Seed 002 dry run: compose the first prompt, save it as dry_run_prompt.txt, and call no model. */
  dryRun: boolean;
  /** The task's sub-agents (child tasks in their own objects): a workflow runs its agent nodes as them. */
  subagents?: SubagentHost | null;
  /** The skill catalog (seed 002): the skills compiled into the Worker and those uploaded to R2. Loaded on call. */
  skills: () => Promise<SkillCatalog>;
}
