// The operator's default tree budget (OUTPOST_DEFAULT_TREE_BUDGET_USD, src/subagents/tree-limits.ts) on a real tree:
// a root task whose request and agent set no USD budget shares it among its sub-agents, as it would its own
// max_budget_usd (src/subagents/tree-budget.ts), and they stop at it; the root's own calls are not stopped by it.
// This file runs in the project "tree-budget" of vitest.config.ts, the "workers" deployment with the setting at
// DEFAULT_TREE_BUDGET_USD: every other test's roots have no such budget.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TaskResourceSchema } from "../../src/http/responses.ts";
import {
  apiJson,
  defineAgent,
  events,
  ofType,
  type ScriptTurn,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** vitest.config.ts's value for this project. */
const DEFAULT_TREE_BUDGET_USD = 0.01;
/** The price of the agents' model (claude-sonnet-5-5, src/config/prices.ts), USD per million tokens. */
const INPUT_PER_MILLION = 2;
const OUTPUT_PER_MILLION = 10;

const delegate = (agent: string, prompt: string) => toolUse("Task", { agent, description: "a part", prompt });

async function childIds(parentId: string): Promise<string[]> {
  return ofType(await events(parentId), "subagent_started").map((e) => String(e.payload.child_task_id));
}

describe("OUTPOST_DEFAULT_TREE_BUDGET_USD", () => {
  it("is this project's setting", () => {
    expect(env.OUTPOST_DEFAULT_TREE_BUDGET_USD).toBe(String(DEFAULT_TREE_BUDGET_USD));
  });

  it("gives a root with no budget of its own the default tree budget, at which its sub-agents stop", async () => {
    const child = defineAgent({});
    // No maxBudgetUsd on the agent, none on the task: the default is the tree's budget.
    const root = defineAgent({ subagents: { enabled: true, max_parallel: 1, agents: [child] } });
    const part = `Part ${uniqueMarker("default-budget-child")}`;
    // The first child's one call costs $0.01 (1,000 output tokens), more than its share: checked before each call, it
    // runs, and leaves nothing of the tree's budget for a second.
    await script(part, [
      { content: [{ type: "text", text: "part done" }], usage: { input_tokens: 0, output_tokens: 1_000 } },
    ]);
    const marker = uniqueMarker("default-budget-root");
    // The root's first call costs $0.002 (1,000 input tokens).
    const delegations: ScriptTurn = {
      content: [delegate(child, `${part} #1`), delegate(child, `${part} #2`)],
      stop_reason: "tool_use",
      usage: { input_tokens: 1_000, output_tokens: 0 },
    };
    await script(marker, [delegations, { content: [{ type: "text", text: "all done" }] }]);

    const task = await startTask(root, `Split ${marker}`);
    expect(task.limits.max_budget_usd ?? null).toBeNull();
    const finished = await waitForTask(task.id, 30);
    // The root's own calls are not stopped by the tree's budget: it bounds what its sub-agents spend.
    expect(finished.status).toBe("completed");

    const [first, ...others] = await childIds(task.id);
    expect(others).toEqual([]);
    const rootSpent = (1_000 * INPUT_PER_MILLION) / 1_000_000;
    const started = await apiJson(`/v1/tasks/${first}`, TaskResourceSchema);
    expect(started.limits.max_budget_usd).toBeCloseTo(DEFAULT_TREE_BUDGET_USD - rootSpent, 10);
    expect(started.usage.total_cost_usd).toBeCloseTo((1_000 * OUTPUT_PER_MILLION) / 1_000_000, 10);
    expect(await toolResults(task.id, 2)).toEqual([
      expect.objectContaining({ content: "part done", is_error: false }),
      expect.objectContaining({
        is_error: true,
        content: `This task's budget of $${DEFAULT_TREE_BUDGET_USD} is spent or held by its running sub-agents; do the rest yourself.`,
      }),
    ]);
  });

  it("leaves a root's own budget in place of the default", async () => {
    const child = defineAgent({});
    const root = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const part = `Part ${uniqueMarker("own-budget-child")}`;
    await script(part, [{ content: [{ type: "text", text: "part done" }] }]);
    const marker = uniqueMarker("own-budget-root");
    await script(marker, [
      { content: [delegate(child, part)], stop_reason: "tool_use", usage: { input_tokens: 0, output_tokens: 0 } },
      { content: [{ type: "text", text: "all done" }] },
    ]);
    const task = await startTask(root, `Split ${marker}`, { max_budget_usd: 3 });
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const [first] = await childIds(task.id);
    expect((await apiJson(`/v1/tasks/${first}`, TaskResourceSchema)).limits.max_budget_usd).toBe(3);
  });
});
