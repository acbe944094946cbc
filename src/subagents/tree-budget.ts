// A task's budgets (max_budget_usd, max_tokens) over its tree of sub-agents: what its children spent counts against
// them, and each child starts with a budget of its own carved out of what is left. A child's budget is its share of
// what neither the task nor its ended children spent, nor its running children hold: what is left, divided among
// the places the child's turn fills at once (the turn's delegations starting together, at most max_parallel less
// those running). Every budget handed out is at most what was left, so the tree cannot spend more than its root's
// budget but by what a single call can (each task checks before each model call, as a task alone does). A running
// child's budget counts as spent until it ends; then what it really spent does. A root with no USD budget of its own
// shares the deployment's default tree budget (OUTPOST_DEFAULT_TREE_BUDGET_USD) among its children the same way.

/** What a tree spent or holds: USD (calls whose model has no price count nothing) and tokens. */
export interface Spend {
  cost_usd: number;
  tokens: number;
}

/** A child's budget: the task limits it is started with (absent: no limit of that kind). */
export interface ChildBudget {
  max_budget_usd?: number;
  max_tokens?: number;
}

/** The budgets of the task that delegates, as its run enforces them (null: none). */
export interface Budgets {
  maxBudgetUsd: number | null;
  maxTokens: number | null;
}

export const NO_SPEND: Spend = { cost_usd: 0, tokens: 0 };

/**
 * The budgets a task's delegations are carved out of: its own, but for a root whose task and agent set no USD budget,
 * `defaultTreeUsd` (the deployment's default tree budget; null for none, and for a child, whose budget is already a
 * share of its root's). The root's own model calls are not stopped by it: it bounds what its sub-agents may spend.
 */
export function rootBudgets(budgets: Budgets, defaultTreeUsd: number | null): Budgets {
  if (budgets.maxBudgetUsd !== null || defaultTreeUsd === null) return budgets;
  return { ...budgets, maxBudgetUsd: defaultTreeUsd };
}

export function addSpend(a: Spend, b: Spend): Spend {
  return { cost_usd: a.cost_usd + b.cost_usd, tokens: a.tokens + b.tokens };
}

/** What a running child holds: its budget, or nothing of a kind it has no limit of. */
export function held(budget: ChildBudget | undefined): Spend {
  return { cost_usd: budget?.max_budget_usd ?? 0, tokens: budget?.max_tokens ?? 0 };
}

/**
 * The budget of a child about to start, or why none can: `own` is the task's own spending, `delegated` what its
 * ended children's subtrees spent, `reserved` what its running children hold, `places` how many children start
 * together now (at least 1).
 */
export function childBudget(check: {
  budgets: Budgets;
  own: Spend;
  delegated: Spend;
  reserved: Spend;
  places: number;
}): { budget: ChildBudget } | { refusal: string } {
  const { budgets, own, delegated, reserved } = check;
  const places = Math.max(1, check.places);
  const budget: ChildBudget = {};
  if (budgets.maxBudgetUsd !== null) {
    const left = budgets.maxBudgetUsd - own.cost_usd - delegated.cost_usd - reserved.cost_usd;
    if (left <= 0) {
      return {
        refusal: `This task's budget of $${budgets.maxBudgetUsd} is spent or held by its running sub-agents; do the rest yourself.`,
      };
    }
    budget.max_budget_usd = left / places;
  }
  if (budgets.maxTokens !== null) {
    const left = budgets.maxTokens - own.tokens - delegated.tokens - reserved.tokens;
    const share = Math.floor(left / places);
    if (share < 1) {
      return {
        refusal: `This task's budget of ${budgets.maxTokens} tokens is spent or held by its running sub-agents; do the rest yourself.`,
      };
    }
    budget.max_tokens = share;
  }
  return { budget };
}
