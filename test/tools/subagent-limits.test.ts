// The limits on a tree of sub-agents (src/subagents/delegations.ts): delegations nest at most MAX_SUBAGENT_DEPTH deep
// and one task delegates at most MAX_SUBAGENTS_PER_TASK times, so a model cannot fork-bomb. A refused delegation
// starts no child and answers the Task call with an is_error result the model can act on.
import { describe, expect, it } from "vitest";
import { MAX_SUBAGENT_DEPTH, MAX_SUBAGENTS_PER_TASK } from "../../src/subagents/delegations.ts";
import {
  defineAgent,
  done,
  events,
  ofType,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const delegate = (agent: string, prompt: string) => toolUse("Task", { agent, description: "go deeper", prompt });

describe("sub-agent limits", () => {
  it(`refuses a delegation past depth ${MAX_SUBAGENT_DEPTH}, and every level above it completes`, async () => {
    // A chain of agents, each of which may delegate to the next (an agent may not reach itself): each level's script
    // delegates to the next level's agent.
    const levels = Array.from({ length: MAX_SUBAGENT_DEPTH + 2 }, (_, i) => `Level ${i} ${uniqueMarker(`depth-${i}`)}`);
    const chain: string[] = [];
    for (let i = levels.length - 1; i >= 0; i--) {
      const below = chain[0];
      chain.unshift(defineAgent(below ? { subagents: { enabled: true, agents: [below] } } : {}));
    }
    for (const [i, prompt] of levels.entries()) {
      const next = levels[i + 1];
      if (next === undefined) break;
      await script(prompt, [{ content: [delegate(chain[i + 1] as string, next)], stop_reason: "tool_use" }, done]);
    }
    const root = await startTask(chain[0] as string, levels[0] as string);
    expect((await waitForTask(root.id, 60)).status).toBe("completed");

    // Walk down the tree: levels 1..MAX each started a child; the deepest one's delegation was refused.
    let id = root.id;
    for (let depth = 1; depth <= MAX_SUBAGENT_DEPTH; depth++) {
      const [started] = ofType(await events(id), "subagent_started");
      expect(started?.payload.depth).toBe(depth);
      id = String(started?.payload.child_task_id);
      expect((await waitForTask(id, 30)).status).toBe("completed");
    }
    expect(ofType(await events(id), "subagent_started")).toEqual([]);
    const [refused] = await toolResults(id, 2);
    expect(refused).toMatchObject({
      is_error: true,
      content: `Sub-agents may nest ${MAX_SUBAGENT_DEPTH} deep; this one would be at depth ${MAX_SUBAGENT_DEPTH + 1}. Do the work yourself.`,
    });
  }, 90_000);

  it(`refuses a task's delegation number ${MAX_SUBAGENTS_PER_TASK + 1}`, async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, max_parallel: 16, agents: [child] } });
    const prompt = `Quick ${uniqueMarker("fan-child")}`;
    await script(prompt, [{ content: [{ type: "text", text: "ok" }] }]);
    const marker = uniqueMarker("fan-parent");
    const calls = Array.from({ length: MAX_SUBAGENTS_PER_TASK + 1 }, (_, i) => delegate(child, `${prompt} #${i}`));
    await script(marker, [{ content: calls, stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Fan out ${marker}`);
    let status = (await waitForTask(task.id, 60)).status;
    if (status === "running") status = (await waitForTask(task.id, 60)).status;
    expect(status).toBe("completed");
    const results = await toolResults(task.id, 2);
    expect(results).toHaveLength(MAX_SUBAGENTS_PER_TASK + 1);
    expect(results.slice(0, MAX_SUBAGENTS_PER_TASK).every((r) => r.content === "ok" && !r.is_error)).toBe(true);
    expect(results.at(-1)).toMatchObject({
      is_error: true,
      content: `A task may delegate at most ${MAX_SUBAGENTS_PER_TASK} times; do the rest yourself.`,
    });
    expect(ofType(await events(task.id), "subagent_started")).toHaveLength(MAX_SUBAGENTS_PER_TASK);
  }, 150_000);
});
