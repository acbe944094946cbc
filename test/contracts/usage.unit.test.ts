// The usage arithmetic of a tree of tasks (src/contracts/usage.ts): sums of usages, and a parent's rollup from its
// children's reports. The end-to-end figures are in test/tools/subagents-usage.test.ts.
import { describe, expect, it } from "vitest";
import {
  type AgentUsage,
  addCallUsage,
  emptyUsage,
  type SubtreeUsage,
  sumUsage,
  usageRollup,
} from "../../src/contracts/usage.ts";

function usage(input: number, output: number, cost: number | null, extra: Partial<AgentUsage> = {}): AgentUsage {
  return {
    ...emptyUsage(),
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    total_cost_usd: cost,
    model_calls: 1,
    ...extra,
  };
}

function leaf(agent: string, model: string, own: AgentUsage): SubtreeUsage {
  return { agent, model, own, by_agent_model: [{ agent, model, tasks: 1, usage: own }], total: own };
}

describe("sumUsage", () => {
  it("adds tokens, calls, time and recovery, and keeps the cost exact to the nanodollar", () => {
    const a = usage(100, 10, 0.1, {
      duration_ms: 5,
      recovery: { attempts: 1, input_tokens: 7, output_tokens: 2, cost_usd: 0.2 },
    });
    const b = usage(200, 20, 0.2, {
      duration_ms: 7,
      web_search_requests: 2,
      recovery: { attempts: 2, input_tokens: 3, output_tokens: 1, cost_usd: 0.1 },
    });
    expect(sumUsage(a, b)).toEqual({
      input_tokens: 300,
      output_tokens: 30,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      total_tokens: 330,
      total_cost_usd: 0.3,
      unpriced_models: [],
      model_calls: 2,
      web_search_requests: 2,
      duration_ms: 12,
      recovery: { attempts: 3, input_tokens: 10, output_tokens: 3, cost_usd: 0.3 },
    });
  });

  it("makes the cost unknown when either is, and lists each unpriced model once", () => {
    const a = usage(1, 1, null, { unpriced_models: ["m1"], recovery: { ...emptyUsage().recovery, cost_usd: null } });
    const b = usage(1, 1, null, { unpriced_models: ["m2", "m1"] });
    const sum = sumUsage(a, b);
    expect([sum.total_cost_usd, sum.unpriced_models, sum.recovery.cost_usd]).toEqual([null, ["m1", "m2"], null]);
    expect(sumUsage(usage(1, 1, 0.5), b).total_cost_usd).toBeNull();
    expect("web_search_requests" in sumUsage(usage(1, 1, 0), usage(1, 1, 0))).toBe(false);
  });
});

describe("cache writes for an hour", () => {
  const call = (hour: number) => ({
    model: "m",
    input_tokens: 10,
    output_tokens: 5,
    cache_creation_input_tokens: 300,
    ...(hour > 0 ? { cache_creation_1h_input_tokens: hour } : {}),
    cache_read_input_tokens: 1000,
    cost_usd: 0.001,
  });

  it("are counted apart in a task's usage and in a tree's sum, and left out while there are none", () => {
    const once = addCallUsage(emptyUsage(), call(0));
    expect("cache_creation_1h_input_tokens" in once).toBe(false);
    const twice = addCallUsage(once, call(300));
    expect(twice).toMatchObject({
      input_tokens: 20,
      cache_creation_input_tokens: 600,
      cache_creation_1h_input_tokens: 300,
      cache_read_input_tokens: 2000,
      total_tokens: 2630,
    });
    expect(sumUsage(twice, addCallUsage(emptyUsage(), call(100))).cache_creation_1h_input_tokens).toBe(400);
    expect("cache_creation_1h_input_tokens" in sumUsage(once, once)).toBe(false);
  });
});

describe("usageRollup", () => {
  it("totals the task and each child's subtree, and groups the tree by agent and model", () => {
    const own = usage(1000, 100, 0.01);
    const grand = usage(300, 30, 0.003);
    const middleOwn = usage(500, 50, 0.005);
    const middle: SubtreeUsage = {
      agent: "middle",
      model: "haiku",
      own: middleOwn,
      by_agent_model: [
        { agent: "middle", model: "haiku", tasks: 1, usage: middleOwn },
        { agent: "lead", model: "sonnet", tasks: 1, usage: grand },
      ],
      total: sumUsage(middleOwn, grand),
    };
    const leafUsage = usage(200, 20, 0.002);
    const rollup = usageRollup({ agent: "lead", model: "sonnet", usage: own }, [
      { task_id: "t1", tool_use_id: "u1", status: "completed", usage: middle },
      { task_id: "t2", tool_use_id: "u2", status: "failed", usage: leaf("leaf", "haiku", leafUsage) },
    ]);
    expect(rollup.own).toBe(own);
    expect(rollup.total).toMatchObject({
      input_tokens: 2000,
      output_tokens: 200,
      total_cost_usd: 0.02,
      model_calls: 4,
    });
    // The grandchild runs the parent's agent and model: they share a line.
    expect(rollup.by_agent_model.map((l) => [l.agent, l.model, l.tasks, l.usage.input_tokens])).toEqual([
      ["lead", "sonnet", 2, 1300],
      ["middle", "haiku", 1, 500],
      ["leaf", "haiku", 1, 200],
    ]);
    expect(
      rollup.subagents.map((s) => [s.task_id, s.agent, s.status, s.usage.input_tokens, s.subtree.input_tokens]),
    ).toEqual([
      ["t1", "middle", "completed", 500, 800],
      ["t2", "leaf", "failed", 200, 200],
    ]);
  });

  it("is the task alone when no child has reported", () => {
    const own = usage(10, 1, 0.001);
    expect(usageRollup({ agent: "a", model: "m", usage: own }, [])).toEqual({
      agent: "a",
      model: "m",
      own,
      by_agent_model: [{ agent: "a", model: "m", tasks: 1, usage: own }],
      total: own,
      subagents: [],
    });
  });
});
