// The limits on a whole tree of sub-agents (src/subagents/tree-limits.ts): the tasks one root's tree may start,
// counted in the root's object at every depth, and the creation rate of the key that started the root, which every
// child of the tree takes a token from. A child refused by either is a tool error its parent's model reads; the run
// goes on.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.ts";
import { SessionResourceSchema, TaskResourceSchema } from "../../src/http/responses.ts";
import {
  DEFAULT_MAX_TREE_SUBAGENTS,
  defaultTreeBudgetUsd,
  maxTreeSubagents,
  treeFullRefusal,
} from "../../src/subagents/tree-limits.ts";
import {
  api,
  defineAgent,
  done,
  events,
  expectError,
  ofType,
  parseBody,
  script,
  startTask,
  stubFor,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const delegate = (agent: string, prompt: string) => toolUse("Task", { agent, description: "a part", prompt });

/** The tree's size as its root keeps it (tree_size in its state), and how many places it holds. */
function treeSize(rootId: string): Promise<{ size: unknown; places: number }> {
  return runInDurableObject(stubFor(rootId), (_instance, state) => {
    const sql = state.storage.sql;
    const size = sql.exec<{ value: string }>("SELECT value FROM task_state WHERE key = 'tree_size'").toArray()[0];
    const places = sql.exec("SELECT key FROM task_state WHERE key LIKE 'tree_member:%'").toArray().length;
    return { size: size ? JSON.parse(size.value) : null, places };
  });
}

/** The ids of the children a task started, in order (its own subagent_started events, not its children's). */
async function childrenOf(id: string, key?: string): Promise<string[]> {
  return ofType(await events(id, key), "subagent_started")
    .filter((e) => ((e as { task_id?: string }).task_id ?? id) === id)
    .map((e) => String(e.payload.child_task_id));
}

describe("the tasks of one tree", () => {
  it(`refuses a grandchild that would be the tree's task number ${DEFAULT_MAX_TREE_SUBAGENTS + 1}, as a tool error the run goes on from`, async () => {
    const leaf = defineAgent({});
    const middle = defineAgent({ subagents: { enabled: true, max_parallel: 16, agents: [leaf] } });
    const root = defineAgent({ subagents: { enabled: true, max_parallel: 1, agents: [middle] } });
    const part = `Leaf ${uniqueMarker("tree-leaf")}`;
    await script(part, [{ content: [{ type: "text", text: "ok" }] }]);
    // The first middle child fills the tree to one below its limit (itself and its leaves)…
    const first = `First ${uniqueMarker("tree-first")}`;
    const leaves = DEFAULT_MAX_TREE_SUBAGENTS - 3;
    const fan = Array.from({ length: leaves }, (_, i) => delegate(leaf, `${part} a${i}`));
    await script(first, [{ content: fan, stop_reason: "tool_use" }, done]);
    // …the second takes the place left, and one of its two leaves finds the tree full.
    const second = `Second ${uniqueMarker("tree-second")}`;
    await script(second, [
      { content: [delegate(leaf, `${part} b0`), delegate(leaf, `${part} b1`)], stop_reason: "tool_use" },
      done,
    ]);
    const marker = uniqueMarker("tree-root");
    await script(marker, [
      { content: [delegate(middle, first)], stop_reason: "tool_use" },
      { content: [delegate(middle, second)], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(root, `Grow ${marker}`);
    expect((await waitForTask(task.id, 60)).status).toBe("completed");

    const [firstChild, secondChild] = await childrenOf(task.id);
    expect((await childrenOf(firstChild as string)).length).toBe(leaves);
    expect((await childrenOf(secondChild as string)).length).toBe(1);
    expect((await waitForTask(secondChild as string)).status).toBe("completed");
    expect(await toolResults(secondChild as string, 2)).toEqual([
      expect.objectContaining({ content: "ok", is_error: false }),
      expect.objectContaining({
        is_error: true,
        content: `This task's tree has started ${DEFAULT_MAX_TREE_SUBAGENTS} sub-agents, as many as one tree may; do the rest yourself.`,
      }),
    ]);
    // The root counted every task of its tree, at every depth.
    expect(await treeSize(task.id)).toEqual({
      size: { started: DEFAULT_MAX_TREE_SUBAGENTS },
      places: DEFAULT_MAX_TREE_SUBAGENTS,
    });
  }, 120_000);

  it("never overshoots when children in different objects delegate at the same time", async () => {
    const leaf = defineAgent({});
    const middle = defineAgent({ subagents: { enabled: true, max_parallel: 16, agents: [leaf] } });
    const root = defineAgent({ subagents: { enabled: true, max_parallel: 2, agents: [middle] } });
    const part = `Leaf ${uniqueMarker("race-leaf")}`;
    await script(part, [{ content: [{ type: "text", text: "ok" }] }]);
    // Two middle children fan out 30 leaves each at once: 2 + 60 tasks asked for, 50 places.
    const branches = ["x", "y"].map((name) => `Branch ${name} ${uniqueMarker("race-branch")}`);
    for (const [b, branch] of branches.entries()) {
      const fan = Array.from({ length: 30 }, (_, i) => delegate(leaf, `${part} ${b}-${i}`));
      await script(branch, [{ content: fan, stop_reason: "tool_use" }, done]);
    }
    const marker = uniqueMarker("race-root");
    await script(marker, [{ content: branches.map((b) => delegate(middle, b)), stop_reason: "tool_use" }, done]);
    const task = await startTask(root, `Race ${marker}`);
    expect((await waitForTask(task.id, 60)).status).toBe("completed");

    const middles = await childrenOf(task.id);
    expect(middles).toHaveLength(2);
    const results = (await Promise.all(middles.map((id) => toolResults(id, 2)))).flat();
    const refused = results.filter((r) => r.is_error);
    expect(results.length - refused.length).toBe(DEFAULT_MAX_TREE_SUBAGENTS - 2);
    expect(new Set(refused.map((r) => r.content))).toEqual(new Set([treeFullRefusal(DEFAULT_MAX_TREE_SUBAGENTS)]));
    expect(refused).toHaveLength(60 - (DEFAULT_MAX_TREE_SUBAGENTS - 2));
    expect(await treeSize(task.id)).toEqual({
      size: { started: DEFAULT_MAX_TREE_SUBAGENTS },
      places: DEFAULT_MAX_TREE_SUBAGENTS,
    });
  }, 120_000);

  it("keeps a child's place when it asks again, gives back a place, and gives none once the root has ended", async () => {
    // A session is a root that waits between its turns: its object answers for its tree as a task's does.
    const agent = defineAgent({});
    const created = await api(`/v1/agents/${agent}/sessions`, { method: "POST", body: "{}" });
    const { id } = await parseBody(created, SessionResourceSchema);
    const root = stubFor(id);
    expect(await root.admitToTree("child-a", 2)).toEqual({ admitted: true });
    expect(await root.admitToTree("child-a", 2)).toEqual({ admitted: true });
    expect(await root.admitToTree("child-b", 2)).toEqual({ admitted: true });
    expect(await root.admitToTree("child-c", 2)).toEqual({ admitted: false, refusal: treeFullRefusal(2) });
    await root.leaveTree("child-b");
    expect(await root.admitToTree("child-c", 2)).toEqual({ admitted: true });
    expect(await treeSize(id)).toEqual({ size: { started: 2 }, places: 2 });
    expect((await api(`/v1/sessions/${id}`, { method: "DELETE" })).status).toBe(200);
    expect(await root.admitToTree("child-d", 5)).toEqual({
      admitted: false,
      refusal: "The task at the root of this tree has ended; do the rest yourself.",
    });
    expect(await stubFor(crypto.randomUUID()).admitToTree("child-e", 5)).toEqual({
      admitted: false,
      refusal: "The task at the root of this tree is gone; do the rest yourself.",
    });
  });
});

describe("the tree settings", () => {
  it("read OUTPOST_MAX_TREE_SUBAGENTS and OUTPOST_DEFAULT_TREE_BUDGET_USD, and refuse a value that is neither", () => {
    expect(maxTreeSubagents({})).toBe(DEFAULT_MAX_TREE_SUBAGENTS);
    expect(maxTreeSubagents({ OUTPOST_MAX_TREE_SUBAGENTS: " 200 " })).toBe(200);
    for (const bad of ["0", "-1", "2.5", "many", "10001"]) {
      expect(() => maxTreeSubagents({ OUTPOST_MAX_TREE_SUBAGENTS: bad })).toThrow(
        new ConfigError(`OUTPOST_MAX_TREE_SUBAGENTS must be a whole number of tasks from 1 to 10000, not "${bad}".`),
      );
    }
    expect(defaultTreeBudgetUsd({})).toBeNull();
    expect(defaultTreeBudgetUsd({ OUTPOST_DEFAULT_TREE_BUDGET_USD: "" })).toBeNull();
    expect(defaultTreeBudgetUsd({ OUTPOST_DEFAULT_TREE_BUDGET_USD: "2.5" })).toBe(2.5);
    for (const bad of ["0", "-3", "lots", "Infinity"]) {
      expect(() => defaultTreeBudgetUsd({ OUTPOST_DEFAULT_TREE_BUDGET_USD: bad })).toThrow(
        new ConfigError(`OUTPOST_DEFAULT_TREE_BUDGET_USD must be a positive number of USD, not "${bad}".`),
      );
    }
  });
});

describe("the rate of the key that started the tree", () => {
  it("gives a key allowed 3 tasks a minute a root and two descendants; the extra children are tool errors", async () => {
    // vitest.config.ts: this key may create 3 tasks a minute. The root takes the first token.
    const key = "test-limited-key";
    const leaf = defineAgent({});
    const middle = defineAgent({ subagents: { enabled: true, max_parallel: 4, agents: [leaf] } });
    const root = defineAgent({ subagents: { enabled: true, max_parallel: 4, agents: [middle, leaf] } });
    const part = `Leaf ${uniqueMarker("rate-leaf")}`;
    await script(part, [{ content: [{ type: "text", text: "ok" }] }]);
    const branch = `Branch ${uniqueMarker("rate-branch")}`;
    await script(branch, [
      { content: [delegate(leaf, `${part} 1`), delegate(leaf, `${part} 2`)], stop_reason: "tool_use" },
      done,
    ]);
    const marker = uniqueMarker("rate-root");
    await script(marker, [
      { content: [delegate(middle, branch)], stop_reason: "tool_use" },
      { content: [delegate(leaf, `${part} 3`)], stop_reason: "tool_use" },
      done,
    ]);
    const created = await api(`/v1/agents/${root}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: `Grow ${marker}` }),
      key,
    });
    expect(created.status).toBe(202);
    const { id } = await parseBody(created, TaskResourceSchema);
    expect((await waitForTask(id, 60, key)).status).toBe("completed");

    const refused = {
      is_error: true,
      content:
        "The API key that started this task's tree may create 3 tasks a minute, its sub-agents included, and has none left for now; do the rest yourself.",
    };
    // The child took the second token, its first child the third: the grandchild after it is refused…
    const [child] = await childrenOf(id, key);
    expect((await childrenOf(child as string, key)).length).toBe(1);
    expect(await toolResults(child as string, 2, key)).toEqual([
      expect.objectContaining({ content: "ok", is_error: false }),
      expect.objectContaining(refused),
    ]);
    // …and so is the root's own next delegation, and the key's next task.
    expect(await toolResults(id, 3, key)).toEqual([expect.objectContaining(refused)]);
    expect(await childrenOf(id, key)).toEqual([child]);
    await expectError(
      await api(`/v1/agents/${root}/tasks`, { method: "POST", body: JSON.stringify({ input: "more" }), key }),
      429,
      "rate_limited",
    );
  }, 60_000);
});
