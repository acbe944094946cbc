// A task's budgets over its tree of sub-agents (src/subagents/tree-budget.ts): each child starts with its share of
// what the parent has left (what neither the parent nor its ended children spent, nor its running children hold),
// the children's spending counts against the parent's next model call, and a delegation with nothing left is
// refused. Through the API against the emulator, with token budgets (each call's tokens are scripted).
import { describe, expect, it } from "vitest";
import { TaskResourceSchema } from "../../src/http/responses.ts";
import { childBudget, rootBudgets } from "../../src/subagents/tree-budget.ts";
import {
  apiJson,
  defineAgent,
  events,
  ofType,
  type ScriptTurn,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const delegate = (agent: string, prompt: string) => toolUse("Task", { agent, description: "a part", prompt });
/** A scripted reply using exactly `tokens` tokens (half input, half output). */
const costing = (turn: Omit<ScriptTurn, "usage">, tokens: number): ScriptTurn => ({
  ...turn,
  usage: { input_tokens: tokens / 2, output_tokens: tokens / 2 },
});
const answer = (text: string, tokens: number) => costing({ content: [{ type: "text", text }] }, tokens);

async function childLimits(parentId: string): Promise<(number | undefined)[]> {
  const started = ofType(await events(parentId), "subagent_started");
  return Promise.all(
    started.map(
      async (e) =>
        (await apiJson(`/v1/tasks/${e.payload.child_task_id}`, TaskResourceSchema)).limits.max_tokens ?? undefined,
    ),
  );
}

describe("childBudget", () => {
  it("shares what is left among the places filled at once, and refuses when nothing is", () => {
    const budgets = { maxBudgetUsd: 1, maxTokens: 1000 };
    const zero = { cost_usd: 0, tokens: 0 };
    expect(
      childBudget({ budgets, own: { cost_usd: 0.2, tokens: 200 }, delegated: zero, reserved: zero, places: 2 }),
    ).toEqual({
      budget: { max_budget_usd: 0.4, max_tokens: 400 },
    });
    expect(
      childBudget({
        budgets: { maxBudgetUsd: null, maxTokens: 1000 },
        own: { cost_usd: 0, tokens: 200 },
        delegated: { cost_usd: 0, tokens: 150 },
        reserved: { cost_usd: 0, tokens: 400 },
        places: 0,
      }),
    ).toEqual({ budget: { max_tokens: 250 } });
    expect(
      childBudget({ budgets, own: { cost_usd: 1, tokens: 10 }, delegated: zero, reserved: zero, places: 1 }),
    ).toEqual({
      refusal: "This task's budget of $1 is spent or held by its running sub-agents; do the rest yourself.",
    });
    expect(
      childBudget({ budgets, own: zero, delegated: zero, reserved: { cost_usd: 0, tokens: 1000 }, places: 1 }),
    ).toEqual({
      refusal: "This task's budget of 1000 tokens is spent or held by its running sub-agents; do the rest yourself.",
    });
  });
});

describe("rootBudgets", () => {
  it("gives a root without a USD budget the deployment's default tree budget, and changes nothing else", () => {
    const none = { maxBudgetUsd: null, maxTokens: null };
    expect(rootBudgets(none, 5)).toEqual({ maxBudgetUsd: 5, maxTokens: null });
    expect(rootBudgets({ maxBudgetUsd: null, maxTokens: 1000 }, 5)).toEqual({ maxBudgetUsd: 5, maxTokens: 1000 });
    // The root's own budget wins, lower or higher; no default (or a child, which is given none) changes nothing.
    expect(rootBudgets({ maxBudgetUsd: 2, maxTokens: null }, 5)).toEqual({ maxBudgetUsd: 2, maxTokens: null });
    expect(rootBudgets({ maxBudgetUsd: 9, maxTokens: null }, 5)).toEqual({ maxBudgetUsd: 9, maxTokens: null });
    expect(rootBudgets(none, null)).toEqual(none);
  });
});

describe("a budget over a tree of sub-agents", () => {
  it("starts each child with its share of what is left, and the tree stays within the parent's budget", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, max_parallel: 2, agents: [child] } });
    const part = `Part ${uniqueMarker("share-child")}`;
    await script(part, [answer("part done", 150)]);
    const marker = uniqueMarker("share-parent");
    const calls = [1, 2, 3].map((i) => delegate(child, `${part} #${i}`));
    await script(marker, [costing({ content: calls, stop_reason: "tool_use" }, 200), answer("all done", 200)]);
    const task = await startTask(parent, `Split ${marker}`, { max_tokens: 1000 });
    const finished = await waitForTask(task.id, 30);
    expect(finished.status).toBe("completed");
    // 800 left after the parent's first call: the first two share it. The third starts alone when the run comes back
    // after an end: 250 if the other child still holds its 400 (150 spent), 500 if both have ended (300 spent). Which
    // one it was is in the parent's log: the children's ends before the third start.
    const log = await events(task.id);
    const thirdStart = ofType(log, "subagent_started")[2]?.seq ?? 0;
    const endedBefore = ofType(log, "subagent_finished").filter((e) => e.seq < thirdStart).length;
    expect(await childLimits(task.id)).toEqual([400, 400, endedBefore === 2 ? 500 : 250]);
    expect(endedBefore).toBeGreaterThanOrEqual(1);
    // The parent's own run_finished: its stream carries its children's too.
    const [finishedEvent] = ofType(await events(task.id), "run_finished").filter(
      (e) => ((e as { task_id?: string }).task_id ?? task.id) === task.id,
    );
    const rollup = finishedEvent?.payload.usage_rollup as { total: { total_tokens: number } } | undefined;
    expect(rollup?.total.total_tokens).toBe(200 + 3 * 150 + 200);
  });

  it("counts what the children spent against the parent's next model call", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const part = `Costly ${uniqueMarker("spend-child")}`;
    await script(part, [answer("spent it", 900)]);
    const marker = uniqueMarker("spend-parent");
    await script(marker, [
      costing({ content: [delegate(child, part)], stop_reason: "tool_use" }, 200),
      answer("x", 10),
    ]);
    const task = await startTask(parent, `Spend ${marker}`, { max_tokens: 1000 });
    const failed = await waitForTask(task.id, 30);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({
      code: "max_tokens",
      message: "max_tokens limit reached: the task's model calls and its sub-agents' used 1100 tokens of 1000.",
    });
    // The one child had the whole 800 left to it, and used 900 in its one call (a budget is checked before a call).
    expect(await childLimits(task.id)).toEqual([800]);
  });

  it("starts no child when what is left is spent, and the parent stops at its next call", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, max_parallel: 1, agents: [child] } });
    const part = `All of it ${uniqueMarker("spent-child")}`;
    await script(part, [answer("took it all", 800)]);
    const marker = uniqueMarker("spent-parent");
    const calls = [delegate(child, `${part} #1`), delegate(child, `${part} #2`)];
    await script(marker, [costing({ content: calls, stop_reason: "tool_use" }, 200), answer("done", 10)]);
    const task = await startTask(parent, `Spent ${marker}`, { max_tokens: 1000 });
    const failed = await waitForTask(task.id, 30);
    expect(failed.status).toBe("failed");
    expect(failed.error?.message).toBe(
      "max_tokens limit reached: the task's model calls and its sub-agents' used 1000 tokens of 1000.",
    );
    // One place at a time: the first child had all 800 and spent it; the second found nothing left and never started.
    expect(await childLimits(task.id)).toEqual([800]);
  });
});
