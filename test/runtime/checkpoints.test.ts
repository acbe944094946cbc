// Checkpoints (seed 003): a run records one after every step of the default loop; a client lists them, reads one
// with its state, and forks a new task from it (POST /v1/tasks/:id/fork), optionally appending messages or handing
// the conversation to another agent.

import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TaskObject } from "../../durable-objects/task-object.ts";
import {
  CheckpointListSchema,
  CheckpointSchema,
  MessageListSchema,
  type TaskResource,
  TaskResourceSchema,
} from "../../src/http/responses.ts";
import type { CheckpointSummary } from "../../src/runtime/checkpoints.ts";
import type { TaskHost } from "../../src/task-host/task-host.ts";
import {
  api,
  apiJson,
  blocksOfType,
  defineAgent,
  emulatorRequests,
  events,
  expectError,
  ISO_TIME,
  ofType,
  parseBody,
  pendingRequestId,
  type ScriptTurn,
  script,
  startTask,
  stubFor,
  toolUse,
  UUID_V4,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "../support/helpers.ts";

const turns: ScriptTurn[] = [
  {
    content: [toolUse("TodoWrite", { todos: [{ content: "Pack food", status: "pending" }] })],
    stop_reason: "tool_use",
  },
  { content: [{ type: "text", text: "1. Pack food." }] },
  { content: [{ type: "text", text: "Shorter: pack food." }] },
];

async function checkpoints(id: string): Promise<CheckpointSummary[]> {
  const res = await api(`/v1/tasks/${id}/checkpoints`);
  expect(res.status).toBe(200);
  return (await parseBody(res, CheckpointListSchema)).checkpoints;
}

async function plannerRun(label: string): Promise<{ marker: string; task: TaskResource; list: CheckpointSummary[] }> {
  const marker = uniqueMarker(label);
  await script(marker, turns);
  const task = await startTask("planner", `plan a picnic ${marker}`);
  expect((await waitForTask(task.id)).status).toBe("completed");
  return { marker, task, list: await checkpoints(task.id) };
}

async function fork(id: string, body: Record<string, unknown>): Promise<Response> {
  return api(`/v1/tasks/${id}/fork`, { method: "POST", body: JSON.stringify(body) });
}

describe("checkpoints", () => {
  it("records one after every step, in strictly increasing sequence, each with its place in the run", async () => {
    const { task, list } = await plannerRun("cp-list");
    expect(list.map((c) => [c.position, c.next_action, c.message_count])).toEqual([
      ["start", "model_turn", 1],
      ["turn_1_model", "tool_calls", 2],
      ["turn_1_tools", "model_turn", 3],
      ["turn_2_model", "finish", 4],
    ]);
    const sequences = list.map((c) => c.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(4);
    for (const c of list) {
      expect(c.checkpoint_id).toMatch(UUID_V4);
      expect(c.task_id).toBe(task.id);
      expect(c.created_at).toMatch(ISO_TIME);
      expect(c.awaiting_human).toBe(false);
    }
    const saved = ofType(await events(task.id), "checkpoint_saved");
    expect(saved.map((e) => e.payload.checkpoint_id)).toEqual(list.map((c) => c.checkpoint_id));
  });

  it("returns a checkpoint's seed 003 state: the messages up to it, and what comes next", async () => {
    const { task, list } = await plannerRun("cp-get");
    const tools = list.find((c) => c.position === "turn_1_tools");
    const res = await api(`/v1/tasks/${task.id}/checkpoints/${tools?.checkpoint_id}`);
    expect(res.status).toBe(200);
    const full = await parseBody(res, CheckpointSchema);
    expect(full).toMatchObject({ checkpoint_id: tools?.checkpoint_id, task_id: task.id, position: "turn_1_tools" });
    expect(full.state).toMatchObject({
      next_action: "model_turn",
      current_agent: "planner",
      routing_key: null,
      metadata: { turn: 1 },
    });
    expect(full.state.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const messages = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    expect(full.state.messages.map((m) => m.content)).toEqual(messages.messages.slice(0, 3).map((m) => m.content));
  });

  it("records a replayed position once, and remembers nothing a rolled-back transaction wrote", async () => {
    const { task, list } = await plannerRun("cp-replay");
    await runInDurableObject(stubFor(task.id), (instance: TaskObject) => {
      const { host } = instance as unknown as { host: TaskHost };
      const state = { next_action: "model_turn" as const, current_agent: "planner", routing_key: null, metadata: {} };
      // A step run again after a crash records its checkpoint again: nothing new, and no summary to announce.
      expect(host.checkpoints.record("turn_1_tools", state)).toBeNull();
      const next = host.checkpoints.record("after_the_run", state);
      expect(next).toMatchObject({ position: "after_the_run", sequence: (list.at(-1)?.sequence ?? 0) + 1 });
      expect(host.checkpoints.list().map((c) => c.position)).toEqual([...list.map((c) => c.position), "after_the_run"]);
      // The conversation the next model call would send, after a transaction that recorded a message and failed.
      const before = host.conversation.contextMessages().length;
      host.state.agent.put("probe", "committed");
      expect(() =>
        host.supervisor.transaction(() => {
          host.conversation.record(before, { role: "user", content: "never committed" });
          host.state.agent.put("probe", "never committed");
          throw new Error("rolled back");
        }),
      ).toThrow("rolled back");
      expect(host.conversation.count()).toBe(before);
      expect(host.conversation.contextMessages()).toHaveLength(before);
      expect(host.state.agent.get("probe")).toBe("committed");
    });
  });

  it("answers 404 for an unknown checkpoint or task", async () => {
    const { task } = await plannerRun("cp-404");
    await expectError(
      await api(`/v1/tasks/${task.id}/checkpoints/${crypto.randomUUID()}`),
      404,
      "checkpoint_not_found",
      "checkpoint_id",
    );
    await expectError(await api(`/v1/tasks/${crypto.randomUUID()}/checkpoints`), 404, "task_not_found", "id");
  });
});

describe("forks", () => {
  it("continues from a checkpoint in a new task whose parent is the original, re-running nothing before it", async () => {
    const { task, list } = await plannerRun("fork-model");
    const at = list.find((c) => c.position === "turn_1_tools");
    const res = await fork(task.id, { checkpoint_id: at?.checkpoint_id });
    expect(res.status).toBe(202);
    const forked = await parseBody(res, TaskResourceSchema);
    expect(res.headers.get("location")).toBe(forked.links.self);
    expect(forked).toMatchObject({ parent_task_id: task.id, assigned_agent: "planner", input: task.input });
    const done = await waitForTask(forked.id);
    expect(done.status).toBe("completed");
    expect(done.result).toBe("1. Pack food.");
    // One model call, the second turn; no tool ran again.
    const log = await events(forked.id);
    expect(ofType(log, "llm_request_sent").map((e) => e.payload.turn_index)).toEqual([2]);
    expect(ofType(log, "tool_call_started")).toHaveLength(0);
    expect(ofType(log, "task_created")[0]?.payload.forked_from).toEqual({
      task_id: task.id,
      checkpoint_id: at?.checkpoint_id,
    });
    expect(await emulatorRequests(forked.id)).toHaveLength(1);
    const messages = await apiJson(`/v1/tasks/${forked.id}/messages`, MessageListSchema);
    expect(messages.messages).toHaveLength(4);
  });

  it("never runs a tool call twice: a fork between a model turn and its tools reuses the origin's settled results", async () => {
    const { task, list } = await plannerRun("fork-settled");
    const at = list.find((c) => c.position === "turn_1_model");
    const forked = await parseBody(await fork(task.id, { checkpoint_id: at?.checkpoint_id }), TaskResourceSchema);
    const done = await waitForTask(forked.id);
    expect(done.status).toBe("completed");
    const log = await events(forked.id);
    expect(ofType(log, "tool_call_started")).toHaveLength(0);
    expect(ofType(log, "todo_list_updated")).toHaveLength(0);
    expect(ofType(log, "task_created")[0]?.payload.settled_tool_calls).toHaveLength(1);
    // The fork's conversation carries the origin's tool result.
    const original = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    const copy = await apiJson(`/v1/tasks/${forked.id}/messages`, MessageListSchema);
    expect(copy.messages[2]?.content).toEqual(original.messages[2]?.content);
  });

  it("refuses 409 tool_call_in_flight while the origin runs the checkpoint's call, and inherits it once settled", async () => {
    const agent = defineAgent({ bash: { enabled: true } });
    const marker = uniqueMarker("fork-in-flight");
    await script(marker, [
      { content: [toolUse("Bash", { command: "sleep 1.5; echo ran" })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Finished." }] },
    ]);
    const task = await startTask(agent, `work ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "tool_call_started");
    const at = (await checkpoints(task.id)).find((c) => c.position === "turn_1_model");
    const body = JSON.stringify({ checkpoint_id: at?.checkpoint_id });
    const messages = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    const callId = blocksOfType(messages.messages[1], "tool_use")[0]?.id;
    await expectError(
      await api(`/v1/tasks/${task.id}/fork`, { method: "POST", body }),
      409,
      "tool_call_in_flight",
      "checkpoint_id",
      { tool_use_ids: [callId] },
    );
    expect((await waitForTask(task.id)).status).toBe("completed");
    const forked = await parseBody(await fork(task.id, { checkpoint_id: at?.checkpoint_id }), TaskResourceSchema);
    expect((await waitForTask(forked.id)).status).toBe("completed");
    const log = await events(forked.id);
    expect(ofType(log, "task_created")[0]?.payload).toMatchObject({
      settled_tool_calls: [callId],
      uncertain_tool_calls: [],
    });
    expect(ofType(log, "tool_call_started")).toHaveLength(0);
  });

  it("asks a person before running again a call its origin was cut short in, and runs it once approved", async () => {
    const agent = defineAgent({ bash: { enabled: true }, fileSystem: { read: true, write: true } });
    const marker = uniqueMarker("fork-unsettled");
    await script(marker, [
      { content: [toolUse("Bash", { command: "sleep 2; echo ran >> ran.txt" })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Finished." }] },
    ]);
    const task = await startTask(agent, `work ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "tool_call_started");
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await waitForTask(task.id)).status).toBe("canceled");
    const at = (await checkpoints(task.id)).find((c) => c.position === "turn_1_model");

    // The agent asks for no approvals; the unknown outcome does.
    const approved = await parseBody(await fork(task.id, { checkpoint_id: at?.checkpoint_id }), TaskResourceSchema);
    const waiting = await waitForTask(approved.id);
    expect(waiting.status).toBe("input_required");
    expect(waiting.pending_input).toMatchObject({
      kind: "approval",
      tool_name: "Bash",
      reason: expect.stringContaining("may or may not have taken effect"),
    });
    const request_id = pendingRequestId(waiting);
    const decision = JSON.stringify({ request_id, action: "approve" });
    expect((await api(`/v1/tasks/${approved.id}/resume`, { method: "POST", body: decision })).status).toBe(200);
    expect((await waitForTask(approved.id, 30)).status).toBe("completed");
    const log = await events(approved.id);
    expect(ofType(log, "task_created")[0]?.payload.uncertain_tool_calls).toEqual([request_id]);
    const types = log.map((e) => e.event_type).filter((t) => t.startsWith("tool_") || t === "llm_request_sent");
    expect(types).toEqual(["tool_call_started", "tool_call_completed", "llm_request_sent"]);
    expect(await (await api(`/v1/tasks/${approved.id}/workspace/ran.txt`)).text()).toBe("ran\n");

    // Rejected: the call does not run, and the model learns that it may have taken effect in the origin.
    const rejected = await parseBody(await fork(task.id, { checkpoint_id: at?.checkpoint_id }), TaskResourceSchema);
    expect((await waitForTask(rejected.id)).status).toBe("input_required");
    const no = JSON.stringify({ request_id, action: "reject" });
    expect((await api(`/v1/tasks/${rejected.id}/resume`, { method: "POST", body: no })).status).toBe(200);
    expect((await waitForTask(rejected.id, 30)).status).toBe("completed");
    expect(ofType(await events(rejected.id), "tool_call_started")).toHaveLength(0);
    const request = (await (
      await api(`/v1/tasks/${rejected.id}/artifacts/artifacts/llm/decision_loop_turn_2_attempt_1_request.txt`)
    ).json()) as { messages: { content: unknown }[] };
    expect(JSON.stringify(request.messages.at(-1)?.content)).toContain("may or may not have taken effect there");
  }, 60_000);

  it("appends state_updates.messages and can hand the conversation to another agent", async () => {
    const { task, list } = await plannerRun("fork-update");
    const last = list.find((c) => c.position === "turn_2_model");
    const appended = await parseBody(
      await fork(task.id, {
        checkpoint_id: last?.checkpoint_id,
        state_updates: { messages: [{ role: "user", content: "Make it shorter." }], metadata: { reviewer: "ana" } },
      }),
      TaskResourceSchema,
    );
    const done = await waitForTask(appended.id);
    expect(done.result).toBe("Shorter: pack food.");
    expect(done.metadata).toEqual({ reviewer: "ana" });
    const full = await parseBody(
      await api(`/v1/tasks/${appended.id}/checkpoints/${(await checkpoints(appended.id))[0]?.checkpoint_id}`),
      CheckpointSchema,
    );
    expect(full.state.messages.at(-1)).toEqual({ role: "user", content: "Make it shorter." });

    const handed = await fork(task.id, {
      checkpoint_id: last?.checkpoint_id,
      state_updates: { messages: [{ role: "user", content: "Answer briefly." }], current_agent: "assistant" },
    });
    expect((await parseBody(handed, TaskResourceSchema)).assigned_agent).toBe("assistant");
  });

  it("rejects a bad fork request with the field named", async () => {
    const { task, list } = await plannerRun("fork-bad");
    const id = list[0]?.checkpoint_id;
    await expectError(await fork(task.id, { checkpoint_id: "nope" }), 400, "validation_failed", "checkpoint_id");
    await expectError(
      await fork(task.id, { checkpoint_id: crypto.randomUUID() }),
      404,
      "checkpoint_not_found",
      "checkpoint_id",
    );
    await expectError(
      await fork(task.id, { checkpoint_id: id, state_updates: { next_action: "finish" } }),
      400,
      "validation_failed",
      "state_updates.next_action",
    );
    await expectError(
      await fork(task.id, { checkpoint_id: id, state_updates: { current_agent: "nobody" } }),
      404,
      "agent_not_found",
      "state_updates.current_agent",
    );
    await expectError(await fork(crypto.randomUUID(), { checkpoint_id: id }), 404, "task_not_found", "id");
    // A finish checkpoint holds the final answer: there is nothing to continue without a new user message.
    const finish = list.find((c) => c.next_action === "finish")?.checkpoint_id;
    expect(finish).toBeDefined();
    await expectError(
      await fork(task.id, { checkpoint_id: finish }),
      400,
      "validation_failed",
      "state_updates.messages",
    );
    await expectError(
      await fork(task.id, {
        checkpoint_id: finish,
        state_updates: { messages: [{ role: "assistant", content: "More." }] },
      }),
      400,
      "validation_failed",
      "state_updates.messages",
    );

    // A task with a cost budget cannot be handed to an agent whose model has no price: the budget would not hold.
    const marker = uniqueMarker("fork-budget");
    await script(marker, turns);
    const budgeted = await startTask("planner", `plan ${marker}`, { max_budget_usd: 5 });
    expect((await waitForTask(budgeted.id)).status).toBe("completed");
    const first = (await checkpoints(budgeted.id))[0]?.checkpoint_id;
    const unpriced = defineAgent({ model: "mystery-fork-1" });
    await expectError(
      await fork(budgeted.id, { checkpoint_id: first, state_updates: { current_agent: unpriced } }),
      400,
      "validation_failed",
      "state_updates.current_agent",
    );
    expect(
      (await fork(budgeted.id, { checkpoint_id: first, state_updates: { current_agent: "assistant" } })).status,
    ).toBe(202);
  });

  it("replays a fork from its own fork point after an interruption: no duplicated messages, no tool twice", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const marker = uniqueMarker("fork-resume");
    await script(marker, turns.slice(0, 2));
    const origin = await startTask(agent, `plan ${marker}`);
    expect((await waitForTask(origin.id)).status).toBe("input_required");
    const start = (await checkpoints(origin.id)).find((c) => c.position === "start");
    const forked = await parseBody(await fork(origin.id, { checkpoint_id: start?.checkpoint_id }), TaskResourceSchema);
    // The fork's own first turn asks for approval; the resume relaunches the fork from its fork point.
    const waiting = await waitForTask(forked.id);
    expect(waiting.status).toBe("input_required");
    const request_id = pendingRequestId(waiting);
    const body = JSON.stringify({ request_id, action: "approve" });
    expect((await api(`/v1/tasks/${forked.id}/resume`, { method: "POST", body })).status).toBe(200);
    expect((await waitForTask(forked.id)).status).toBe("completed");
    const log = await events(forked.id);
    expect(ofType(log, "todo_list_updated")).toHaveLength(1);
    const messages = await apiJson(`/v1/tasks/${forked.id}/messages`, MessageListSchema);
    expect(messages.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("refuses messages that are not text, and messages added between a model turn and its tool calls", async () => {
    const { task, list } = await plannerRun("fork-guard");
    const finish = list.find((c) => c.position === "turn_2_model")?.checkpoint_id;
    const between = list.find((c) => c.position === "turn_1_model")?.checkpoint_id;
    const injected = [{ role: "assistant", content: [{ type: "tool_use", id: "x", name: "TodoWrite", input: {} }] }];
    await expectError(
      await fork(task.id, { checkpoint_id: finish, state_updates: { messages: injected } }),
      400,
      "validation_failed",
      "state_updates.messages.0.content",
    );
    await expectError(
      await fork(task.id, { checkpoint_id: between, state_updates: { messages: [{ role: "user", content: "hi" }] } }),
      400,
      "validation_failed",
      "state_updates.messages",
    );
  });
});
