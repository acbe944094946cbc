// Issue 36, item 2, "start a task" through a sub-agent: a parent model's Task tool call starts a child task, under
// the principal of the key that started the tree's root, whichever door started it. Each row shows a check holding
// for a tree whose root one door started: a child past the key's rate, a child past OUTPOST_MAX_TREE_SUBAGENTS (unset
// in the test deployment: its default, 50), and a prompt over the cap are each refused as a tool error (the Task
// call's is_error result, read in the model's next request), no child starts for it, and the parent's run goes on to
// complete. The tree rows hold the root on a question (AskUser) while they take the tree's first 49 places through
// the root's own admitToTree, as 49 children would take them (test/subagents/tree-limits.test.ts drives the same
// RPC), so that one real child fills the tree and the next is refused.
import { describe, expect, it } from "vitest";
import {
  api,
  defineAgent,
  done,
  events,
  ofType,
  pendingRequestId,
  script,
  stubFor,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";
import { KEYS, LIMITED, START_DOORS, type StartDoor, setBucket, startThrough } from "./doors.ts";
import { type Row, rowName } from "./outcome.ts";

/** OUTPOST_MAX_TREE_SUBAGENTS's default: the test deployment sets none (vitest.config.ts). */
const TREE_LIMIT = 50;

const leaf = defineAgent({ description: "Does a part.", allowedTools: [] });
/** Delegates; two children may run at once, so a turn's two Task calls start together, in their order. */
const parent = defineAgent({ subagents: { enabled: true, max_parallel: 2, agents: [leaf] } });
/** Asks a question first (the tree rows' gate), then delegates. */
const asking = defineAgent({
  allowedTools: ["AskUser", "Task"],
  subagents: { enabled: true, max_parallel: 2, agents: [leaf] },
});

const delegate = (prompt: string) => toolUse("Task", { agent: leaf, description: "a part", prompt });

/** Two prompts the leaf answers "ok" to. */
async function parts(label: string): Promise<[string, string]> {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
  return [`Part one ${marker}`, `Part two ${marker}`];
}

/** The children a task started, in order (its own subagent_started events, not its children's). */
async function childrenOf(id: string, key: string): Promise<string[]> {
  return ofType(await events(id, key), "subagent_started")
    .filter((e) => ((e as { task_id?: string }).task_id ?? id) === id)
    .map((e) => String(e.payload.child_task_id));
}

const COMMAND = "start a task";
const adapterOf = (door: StartDoor) => `a sub-agent (the Task tool) of a root started through ${door.adapter}`;

function rateRow(door: StartDoor): Row {
  return {
    command: COMMAND,
    adapter: adapterOf(door),
    check: "rate",
    behaviour:
      "with the root's key down to its last token of 3 a minute, the first child takes it, the second is a tool error, and the parent completes",
    run: async () => {
      const [one, two] = await parts("sub-rate-leaf");
      const marker = uniqueMarker("sub-rate-root");
      await script(marker, [{ content: [delegate(one), delegate(two)], stop_reason: "tool_use" }, done]);
      // The root takes one of the two tokens left; its children carry its key's principal.
      await setBucket(LIMITED.id, 2);
      const root = await startThrough(door, parent, `Delegate ${marker}`, LIMITED.key, LIMITED.tenant);
      expect(root.outcome.ok).toBe(true);
      expect((await waitForTask(root.id, 30, LIMITED.key)).status).toBe("completed");
      expect(await toolResults(root.id, 2, LIMITED.key)).toEqual([
        expect.objectContaining({ content: "ok", is_error: false }),
        expect.objectContaining({
          is_error: true,
          content: expect.stringMatching(
            /^The API key that started this task's tree may create 3 tasks a minute, its sub-agents included, and has none left/,
          ),
        }),
      ]);
      expect(await childrenOf(root.id, LIMITED.key)).toHaveLength(1);
    },
  };
}

function treeRow(door: StartDoor): Row {
  return {
    command: COMMAND,
    adapter: adapterOf(door),
    check: "tree limit",
    behaviour: `a child that would be the tree's task number ${TREE_LIMIT + 1} is a tool error, and the parent completes`,
    run: async () => {
      const [one, two] = await parts("sub-tree-leaf");
      const marker = uniqueMarker("sub-tree-root");
      await script(marker, [
        { content: [toolUse("AskUser", { question: "Go on?" })], stop_reason: "tool_use" },
        { content: [delegate(one), delegate(two)], stop_reason: "tool_use" },
        done,
      ]);
      const root = await startThrough(door, asking, `Grow ${marker}`, KEYS.admin);
      expect(root.outcome.ok).toBe(true);
      const waiting = await waitForTask(root.id);
      expect(waiting.status).toBe("input_required");
      for (let i = 0; i < TREE_LIMIT - 1; i++) {
        expect(await stubFor(root.id).admitToTree(`taken-${i}`, TREE_LIMIT)).toEqual({ admitted: true });
      }
      const resumed = await api(`/v1/tasks/${root.id}/resume`, {
        method: "POST",
        body: JSON.stringify({ request_id: pendingRequestId(waiting), action: "approve", message: "Yes." }),
      });
      expect(resumed.status).toBe(200);
      expect((await waitForTask(root.id, 30)).status).toBe("completed");
      expect(await toolResults(root.id, 3, KEYS.admin)).toEqual([
        expect.objectContaining({ content: "ok", is_error: false }),
        expect.objectContaining({
          is_error: true,
          content: expect.stringMatching(new RegExp(`^This task's tree has started ${TREE_LIMIT} sub-agents`)),
        }),
      ]);
      expect(await childrenOf(root.id, KEYS.admin)).toHaveLength(1);
    },
  };
}

const sizeRow: Row = {
  command: COMMAND,
  adapter: adapterOf(START_DOORS.v1Tasks),
  check: "size cap",
  behaviour:
    "a Task call whose prompt is over 100,000 characters is a tool error, starts no child, and the parent completes",
  run: async () => {
    const marker = uniqueMarker("sub-size-root");
    await script(marker, [{ content: [delegate("p".repeat(100_001))], stop_reason: "tool_use" }, done]);
    const root = await startThrough(START_DOORS.v1Tasks, parent, `Delegate ${marker}`, KEYS.admin);
    expect(root.outcome.ok).toBe(true);
    expect((await waitForTask(root.id)).status).toBe("completed");
    expect(await toolResults(root.id, 2, KEYS.admin)).toEqual([
      expect.objectContaining({ is_error: true, content: expect.stringMatching(/prompt/) }),
    ]);
    expect(await childrenOf(root.id, KEYS.admin)).toEqual([]);
  },
};

const { v1Tasks, v1Invoke, a2aJsonRpc, a2aRest, mcp, mcpTask } = START_DOORS;
const rows: Row[] = [
  ...[v1Tasks, v1Invoke, a2aJsonRpc, a2aRest, mcp, mcpTask].map(rateRow),
  // MCP's held-open call answers only once the root ends, which waits for the answer to its question: the
  // task-augmented call is the MCP door here.
  ...[v1Tasks, v1Invoke, a2aJsonRpc, a2aRest, mcpTask].map(treeRow),
  sizeRow,
];

describe("start a task through a sub-agent, for a root started on every door", () => {
  for (const row of rows) it(rowName(row), row.run, 60_000);
});
