// A task's limits and redaction mode against its agent's: a task may tighten them, never loosen them. The API refuses
// a request that would loosen one (a client must not believe it got what it asked for), and the run takes the
// stricter of the two as well, so that a task moved onto another agent (a fork with state_updates.current_agent,
// which inherits its origin's limits and mode) never runs past that agent's either. A cost budget needs its model's
// price: creations and forks check it here (requirePricedBudget), with the run's own rule for whose budget it is.
import { unpricedBudget } from "../config/prices.ts";
import type { RunLimits } from "../contracts/runtime.ts";
import { ApiError } from "../errors.ts";
import type { RedactionMode } from "../events/redaction.ts";
import type { TaskLimits } from "./task.ts";

/** The longest input a task takes, in characters: the same bound on every way a run starts (src/commands/runs.ts). */
export const MAX_INPUT_CHARS = 100_000;

/** What the comparisons read of an agent (an Agent has these members). */
export interface AgentLimits {
  readonly name: string;
  readonly maxTurns: number;
  readonly maxBudgetUsd: number | null;
  readonly redactionMode: RedactionMode;
}

/** A task limit the client asked for, by its request field (max_turns and max_iterations are both model turns). */
export interface RequestedLimits {
  max_turns?: number | undefined;
  max_iterations?: number | undefined;
  max_budget_usd?: number | undefined;
  redaction_mode?: RedactionMode | undefined;
}

/**
 * The first requested limit or mode that is looser than the agent's, as the field to name and why; null when every
 * one tightens or keeps the agent's.
 *
 * max_tokens is not compared: a task's max_tokens is a budget of total tokens over all of its model calls, while an
 * agent's maxTokens is the output limit of each single call. The agent has no total-token budget, so any task
 * max_tokens only tightens what the agent allows.
 */
export function loosenedLimit(
  requested: RequestedLimits,
  agent: AgentLimits,
): { field: string; message: string } | null {
  for (const field of ["max_turns", "max_iterations"] as const) {
    const turns = requested[field];
    if (turns !== undefined && turns > agent.maxTurns) {
      return {
        field,
        message: `${field} is ${turns}, above the ${agent.maxTurns} model turns of the agent "${agent.name}" (its maxTurns); a task may lower its agent's limits, never raise them.`,
      };
    }
  }
  const budget = requested.max_budget_usd;
  if (budget !== undefined && agent.maxBudgetUsd !== null && budget > agent.maxBudgetUsd) {
    return {
      field: "max_budget_usd",
      message: `max_budget_usd is ${budget}, above the $${agent.maxBudgetUsd} budget of the agent "${agent.name}" (its maxBudgetUsd); a task may lower its agent's limits, never raise them.`,
    };
  }
  if (requested.redaction_mode === "full" && agent.redactionMode === "redacted") {
    return {
      field: "redaction_mode",
      message: `The agent "${agent.name}" keeps prompts and responses out of its tasks' events (redactionMode "redacted"); a task cannot ask for "full".`,
    };
  }
  return null;
}

/** The limits a run enforces: for each, the smaller of the task's and the agent's (see loosenedLimit on max_tokens). */
export function runLimits(task: TaskLimits, agent: AgentLimits): RunLimits {
  const budgets = [task.max_budget_usd, agent.maxBudgetUsd ?? undefined].filter((b): b is number => b !== undefined);
  return {
    // Seed 004 max_turns and seed 003 max_iterations are the same limit here: model turns.
    maxTurns: Math.min(task.max_turns ?? agent.maxTurns, agent.maxTurns),
    maxBudgetUsd: budgets.length > 0 ? Math.min(...budgets) : null,
    maxTokens: task.max_tokens ?? null,
  };
}

/**
 * The budget check of a task's creation and of a fork: the run's cost budget (runLimits: the task's, else its
 * agent's) needs the price of `model`; without one the request is refused (400 validation_failed naming `field`)
 * rather than run without a limit. `nameAgent` names the agent in the message, for a request that chose it (a fork).
 */
export function requirePricedBudget(check: {
  limits: TaskLimits;
  agent: AgentLimits;
  model: string;
  prices: string | undefined;
  field: string;
  nameAgent?: boolean;
}): void {
  const unpriced = unpricedBudget({
    budget: runLimits(check.limits, check.agent).maxBudgetUsd,
    model: check.model,
    prices: check.prices,
    ...(check.nameAgent ? { agent: check.agent.name } : {}),
  });
  if (unpriced) throw new ApiError("validation_failed", unpriced, check.field);
}

/** The stricter of two redaction modes: "redacted" wins. */
export function stricterRedaction(a: RedactionMode, b: RedactionMode): RedactionMode {
  return a === "redacted" || b === "redacted" ? "redacted" : "full";
}
