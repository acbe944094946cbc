// Starting a sub-agent, the command a task's delegation (the model's Task call, src/subagents/delegations.ts) passes
// before its child starts: the child acts as the principal its tree's root kept (src/commands/principal.ts
// treePrincipal), so it takes a place in the tree (OUTPOST_MAX_TREE_SUBAGENTS, counted in the root:
// src/subagents/tree-limits.ts) and a token of the creation rate of the key, or hook, that started the root, as a task
// that key created would. A refusal is text for the delegating model (the Task call's is_error result): the run goes
// on. A place is reserved before the token is asked for, and given back when there is no token.
import type { Env } from "../env.ts";
import { maxTreeSubagents, type TreeRoot } from "../subagents/tree-limits.ts";
import type { TaskPrincipal } from "../tasks/principal.ts";
import { treePrincipal } from "./principal.ts";
import { takeCreationToken } from "./rate.ts";

/** What a task that delegates gives the command before each child starts. */
export interface ChildGateDeps {
  env: Pick<Env, "OUTPOST_MAX_TREE_SUBAGENTS" | "RATE_LIMITER">;
  /** The places of the task's tree: its own when it is the root, else its root's, over RPC. */
  root: () => TreeRoot;
  /** The id of the tree's root task. */
  rootTaskId: () => string;
  /** The principal the root kept; a tree whose root has none (created before principals) takes no token. */
  principal: () => TaskPrincipal | undefined;
}

/** Admits the child into its tree as the root's principal; null when it may start, else the refusal for the model. */
export async function admitChild(deps: ChildGateDeps, childId: string): Promise<string | null> {
  // Read here, so that a bad setting fails the delegating run (config_error), not the root's RPC.
  const limit = maxTreeSubagents(deps.env);
  const root = deps.root();
  const admission = await root.admit(childId, limit);
  if (!admission.admitted) return admission.refusal;
  const kept = deps.principal();
  if (!kept) return null;
  const principal = treePrincipal(kept, deps.rootTaskId());
  const token = await takeCreationToken(deps.env, principal);
  if (token.allowed) return null;
  await root.release(childId);
  return rateRefusal(principal);
}

/** A child refused for its tree's rate, in words for the delegating model. */
export function rateRefusal(principal: Pick<TaskPrincipal, "rate_bucket" | "rate_limit_per_minute">): string {
  const perMinute = principal.rate_limit_per_minute;
  return principal.rate_bucket.startsWith("hook:")
    ? `The hook that started this task's tree may start ${perMinute} runs a minute, its sub-agents included, and has none left for now; do the rest yourself.`
    : `The API key that started this task's tree may create ${perMinute} tasks a minute, its sub-agents included, and has none left for now; do the rest yourself.`;
}
