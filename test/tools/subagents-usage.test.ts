// A tree's usage rolled up (issue 14 §2), through the API against the emulator: each child reports its usage and its
// subtree's with its end; the parent's run_finished carries its own, each child's (by agent and model), the tree's
// total, and recovery waste apart; final_summary.md shows it as tables. Every figure is checked against the tasks'
// own usage, read from each task.

import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type AgentUsage, type UsageRollup, UsageRollupSchema } from "../../src/contracts/usage.ts";
import { TaskResourceSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  type EventBody,
  fireTimers,
  parseEvent,
  readSse,
  type ScriptTurn,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

type TreeEvent = EventBody & { task_id?: string; depth?: number };

function delegate(agent: string, prompt: string) {
  return toolUse("Task", { agent, description: `do ${prompt.slice(0, 20)}`, prompt });
}

function answer(text: string, input: number, output: number): ScriptTurn {
  return { content: [{ type: "text", text }], usage: { input_tokens: input, output_tokens: output } };
}

async function treeEvents(id: string): Promise<TreeEvent[]> {
  return (await readSse(await api(`/v1/tasks/${id}/events`))).map((f) => parseEvent(f.data) as TreeEvent);
}

/** The task's own terminal event's rollup (not one of its sub-agents'), checked against the schema. */
async function rollupOf(id: string): Promise<{ usage: AgentUsage; rollup: UsageRollup | undefined }> {
  const end = (await treeEvents(id)).find((e) => e.event_type === "run_finished" && e.depth === undefined);
  const rollup = end?.payload.usage_rollup;
  return {
    usage: end?.payload.usage as AgentUsage,
    rollup: rollup === undefined ? undefined : UsageRollupSchema.parse(rollup),
  };
}

async function usageOf(id: string): Promise<AgentUsage> {
  return (await apiJson(`/v1/tasks/${id}`, TaskResourceSchema)).usage;
}

describe("the usage of a tree of tasks", () => {
  it("rolls each sub-agent's usage up into its parent's, by agent and model, with the tree's total", async () => {
    const grandchild = defineAgent({});
    const middle = defineAgent({ model: "claude-haiku-4-5", subagents: { enabled: true, agents: [grandchild] } });
    const leaf = defineAgent({ model: "claude-haiku-4-5" });
    const parent = defineAgent({ subagents: { enabled: true, max_parallel: 3, agents: [middle, leaf] } });
    const grandPrompt = `Grand ${uniqueMarker("usage-grand")}`;
    const middlePrompt = `Middle ${uniqueMarker("usage-middle")}`;
    const leafPrompts = [1, 2].map((i) => `Leaf ${i} ${uniqueMarker(`usage-leaf-${i}`)}`);
    await script(grandPrompt, [answer("grand done", 300, 30)]);
    await script(middlePrompt, [
      {
        content: [delegate(grandchild, grandPrompt)],
        stop_reason: "tool_use",
        usage: { input_tokens: 500, output_tokens: 50 },
      },
      answer("middle done", 600, 20),
    ]);
    for (const prompt of leafPrompts) await script(prompt, [answer("leaf done", 200, 20)]);
    const marker = uniqueMarker("usage-parent");
    await script(marker, [
      {
        content: [delegate(middle, middlePrompt), ...leafPrompts.map((p) => delegate(leaf, p))],
        stop_reason: "tool_use",
        usage: { input_tokens: 1000, output_tokens: 100 },
      },
      answer("all done", 1200, 10),
    ]);
    const task = await startTask(parent, `Usage ${marker}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");

    const { usage, rollup } = await rollupOf(task.id);
    if (!rollup) throw new Error("run_finished carries no usage_rollup");
    const own = await usageOf(task.id);
    expect(rollup.own).toEqual(own);
    expect(usage).toEqual(own);
    expect([own.input_tokens, own.output_tokens]).toEqual([2200, 110]);

    // Each child, as the child's own task shows its usage; the middle one's subtree is it and its grandchild.
    expect(rollup.subagents.map((s) => [s.agent, s.model, s.status])).toEqual([
      [middle, "claude-haiku-4-5", "completed"],
      [leaf, "claude-haiku-4-5", "completed"],
      [leaf, "claude-haiku-4-5", "completed"],
    ]);
    const children = await Promise.all(rollup.subagents.map((s) => usageOf(s.task_id)));
    expect(rollup.subagents.map((s) => s.usage)).toEqual(children);
    const middleId = rollup.subagents[0]?.task_id ?? "";
    const middleRollup = (await rollupOf(middleId)).rollup;
    const grandId = middleRollup?.subagents[0]?.task_id ?? "";
    const grand = await usageOf(grandId);
    expect(rollup.subagents[0]?.subtree.input_tokens).toBe(1100 + 300);
    expect(rollup.subagents[0]?.subtree).toEqual(middleRollup?.total);
    expect(rollup.subagents[1]?.subtree).toEqual(rollup.subagents[1]?.usage);

    // The tree's total is the sum of its five tasks, in tokens and in USD.
    const tasks = [own, ...children, grand];
    const sum = (pick: (u: AgentUsage) => number) => tasks.reduce((total, u) => total + pick(u), 0);
    expect(rollup.total).toMatchObject({
      input_tokens: 4000,
      output_tokens: 250,
      total_tokens: 4250,
      model_calls: 7,
      unpriced_models: [],
    });
    expect(rollup.total.input_tokens).toBe(sum((u) => u.input_tokens));
    expect(rollup.total.total_cost_usd).toBeCloseTo(
      sum((u) => u.total_cost_usd ?? Number.NaN),
      9,
    );
    // Haiku ($1/$5 per million) for the middle and leaf tasks, so the tree costs less than all on the parent's model.
    expect(children.map((u) => u.total_cost_usd)).toEqual([
      (1100 * 1 + 70 * 5) / 1e6,
      (200 * 1 + 20 * 5) / 1e6,
      (200 * 1 + 20 * 5) / 1e6,
    ]);

    // By agent and model: the two leaf tasks together.
    const defaultModel = (await apiJson(`/v1/tasks/${task.id}`, TaskResourceSchema)).model;
    const lines = rollup.by_agent_model.map((l) => [
      l.agent,
      l.model,
      l.tasks,
      l.usage.input_tokens,
      l.usage.output_tokens,
    ]);
    expect(lines).toEqual([
      [parent, defaultModel, 1, 2200, 110],
      [middle, "claude-haiku-4-5", 1, 1100, 70],
      [grandchild, defaultModel, 1, 300, 30],
      [leaf, "claude-haiku-4-5", 2, 400, 40],
    ]);
    expect(rollup.by_agent_model.reduce((n, l) => n + l.usage.total_tokens, 0)).toBe(rollup.total.total_tokens);

    // A task that delegated nothing keeps its run_finished as it was: no rollup.
    expect((await rollupOf(grandId)).rollup).toBeUndefined();

    const summary = await (await api(`/v1/tasks/${task.id}/artifacts/final_summary.md`)).text();
    expect(summary).toContain("## Usage of the task and its sub-agents");
    expect(summary).toContain(`| this task | ${parent} |`);
    expect(summary).toContain(`| ${middleId} with its sub-agents | | | | 1400 | 100 | 0 | 0 | 1500 |`);
    expect(summary).toContain(
      `| **Total** | | | | 4000 | 250 | 0 | 0 | 4250 | ${rollup.total.total_cost_usd?.toFixed(6)} | 0 | 0 | 0.000000 |`,
    );
    expect(summary).toContain(`| ${leaf} | claude-haiku-4-5 | 2 | 400 | 40 | 0 | 0 | 440 | 0.000600 |`);
  });

  it("counts a sub-agent's recovery waste apart from the tree's totals", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const prompt = `Slow ${uniqueMarker("usage-recovery")}`;
    const text = Array.from({ length: 60 }, (_, i) => `r${i}`).join(" ");
    await script(prompt, [{ content: [{ type: "text", text }], usage: { input_tokens: 400 } }], {
      token_delay_ms: 25,
    });
    const marker = uniqueMarker("usage-recovery-parent");
    await script(marker, [
      { content: [delegate(child, prompt)], stop_reason: "tool_use", usage: { input_tokens: 100, output_tokens: 10 } },
      answer("done", 150, 5),
    ]);
    const task = await startTask(parent, `Recover ${marker}`);
    let childId = "";
    // Evicted while the child's answer streams: its call is issued again, and the cut one is waste.
    await readSse(await api(`/v1/tasks/${task.id}/events`), (frame) => {
      const event = parseEvent(frame.data) as TreeEvent;
      if (event.event_type === "subagent_started") childId = String(event.payload.child_task_id);
      return event.task_id !== undefined && event.event_type === "llm_text_delta";
    });
    await abortAllDurableObjects();
    expect(await fireTimers(childId, ["heartbeat"])).toBe(true);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");

    const { rollup } = await rollupOf(task.id);
    const own = await usageOf(task.id);
    const childUsage = await usageOf(childId);
    expect(childUsage.recovery.attempts).toBe(1);
    expect(childUsage.recovery.input_tokens).toBe(400);
    expect(rollup?.total.recovery).toEqual({
      attempts: own.recovery.attempts + 1,
      input_tokens: own.recovery.input_tokens + 400,
      output_tokens: own.recovery.output_tokens + childUsage.recovery.output_tokens,
      cost_usd: expect.closeTo((own.recovery.cost_usd ?? 0) + (childUsage.recovery.cost_usd ?? 0), 9),
    });
    // The totals count each call once: the parent's two and the child's one that finished.
    expect(rollup?.total.input_tokens).toBe(own.input_tokens + 400);
    expect(rollup?.total.model_calls).toBe(3);
  });
});
