// The limits on a whole tree of sub-agents, beyond each task's own (depth, delegations per task, budgets): how many
// tasks one root's tree may start (OUTPOST_MAX_TREE_SUBAGENTS), counted in the root's object at every depth, and the
// operator's default tree budget. Before a child starts, the task that delegates asks its root for a place (reserved
// at once, so children starting together anywhere in the tree cannot overshoot; asked again for the same child, the
// root finds the place it gave), then takes a token of its root's principal: the command of src/commands/children.ts.
import { z } from "zod";
import type { TreeAdmission } from "../contracts/subagents.ts";
import type { Env } from "../env.ts";
import { ConfigError } from "../errors.ts";
import { type StateKey, stateKey, stateKeyFamily } from "../lib/state-key.ts";
import type { TaskState } from "../tasks/task-state.ts";

/** Tasks one tree may start, its root not counted, unless OUTPOST_MAX_TREE_SUBAGENTS says otherwise. */
export const DEFAULT_MAX_TREE_SUBAGENTS = 50;
/**
 * The highest OUTPOST_MAX_TREE_SUBAGENTS: each place is a row of the root's state, and 16 children of 16 tasks of 16
 * tasks (max_parallel at every depth) is already 4,368 tasks running at once.
 */
export const MAX_TREE_SUBAGENTS_SETTING = 10_000;

/** The tree's size limit: OUTPOST_MAX_TREE_SUBAGENTS, a whole number from 1 to 10,000, else a ConfigError. */
export function maxTreeSubagents(env: Pick<Env, "OUTPOST_MAX_TREE_SUBAGENTS">): number {
  const text = env.OUTPOST_MAX_TREE_SUBAGENTS?.trim();
  if (!text) return DEFAULT_MAX_TREE_SUBAGENTS;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > MAX_TREE_SUBAGENTS_SETTING) {
    throw new ConfigError(
      `OUTPOST_MAX_TREE_SUBAGENTS must be a whole number of tasks from 1 to ${MAX_TREE_SUBAGENTS_SETTING}, not "${text}".`,
    );
  }
  return value;
}

/**
 * The default tree budget in USD (OUTPOST_DEFAULT_TREE_BUDGET_USD) for a root whose task and agent set none; null when
 * unset. Anything but a positive number is a ConfigError.
 */
export function defaultTreeBudgetUsd(env: Pick<Env, "OUTPOST_DEFAULT_TREE_BUDGET_USD">): number | null {
  const text = env.OUTPOST_DEFAULT_TREE_BUDGET_USD?.trim();
  if (!text) return null;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    throw new ConfigError(`OUTPOST_DEFAULT_TREE_BUDGET_USD must be a positive number of USD, not "${text}".`);
  }
  return value;
}

/** In a root: how many places its tree has given. */
const TREE_SIZE_KEY: StateKey<{ started: number }> = stateKey(
  "tree_size",
  z.lazy(() => z.object({ started: z.number().int().nonnegative() })),
);
/** In a root: each child task given a place, by its id (asked again, the same child keeps it). */
const TREE_MEMBER_KEY = stateKeyFamily("tree_member:", z.literal(true));

export function treeFullRefusal(limit: number): string {
  return `This task's tree has started ${limit} sub-agents, as many as one tree may; do the rest yourself.`;
}

/** The places of a root's tree, in the root's object. Synchronous: two children asking at once are served in turn. */
export class TreePlaces {
  private readonly deps: {
    state: Pick<TaskState, "get" | "put" | "delete">;
    transaction: <T>(fn: () => T) => T;
    /** Whether the object holds a task: one that does not (an expired root) is not read, nor written to. */
    holds: () => boolean;
    /** Whether the root has ended: its tree starts nothing more. */
    ended: () => boolean;
  };

  constructor(deps: TreePlaces["deps"]) {
    this.deps = deps;
  }

  /** A place for the child, unless the tree has started `limit` tasks (maxTreeSubagents, read by the asking task). */
  admit(childId: string, limit: number): TreeAdmission {
    const { state } = this.deps;
    if (!this.deps.holds()) {
      return { admitted: false, refusal: "The task at the root of this tree is gone; do the rest yourself." };
    }
    if (state.get(TREE_MEMBER_KEY(childId))) return { admitted: true };
    if (this.deps.ended()) {
      return { admitted: false, refusal: "The task at the root of this tree has ended; do the rest yourself." };
    }
    const started = state.get(TREE_SIZE_KEY)?.started ?? 0;
    if (started >= limit) return { admitted: false, refusal: treeFullRefusal(limit) };
    this.deps.transaction(() => {
      state.put(TREE_MEMBER_KEY(childId), true);
      state.put(TREE_SIZE_KEY, { started: started + 1 });
    });
    return { admitted: true };
  }

  /** Gives back the place of a child that did not start after all (its key had no token left). */
  release(childId: string): void {
    const { state } = this.deps;
    if (!this.deps.holds() || !state.get(TREE_MEMBER_KEY(childId))) return;
    const started = state.get(TREE_SIZE_KEY)?.started ?? 1;
    this.deps.transaction(() => {
      state.delete(TREE_MEMBER_KEY(childId));
      state.put(TREE_SIZE_KEY, { started: Math.max(0, started - 1) });
    });
  }

  /** How many places the tree has given. */
  size(): number {
    return this.deps.state.get(TREE_SIZE_KEY)?.started ?? 0;
  }
}

/** The places of the tree a task belongs to: its own when it is the root, else its root's, over RPC. */
export interface TreeRoot {
  admit(childId: string, limit: number): TreeAdmission | Promise<TreeAdmission>;
  release(childId: string): void | Promise<void>;
}
