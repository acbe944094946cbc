// Human in the loop (seed 004 permission modes, seed 003 human feedback): a tool call that needs approval, or the
// agent's own question, puts the task in input_required with the request stored and no alarm kept; a person's
// POST /v1/tasks/:id/resume approves, rejects or modifies it, every decision on record with the key that made it.
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Agent } from "../src/agents/agent.ts";
import { ConfigError } from "../src/errors.ts";
import {
  api,
  defineAgent,
  done,
  type EventBody,
  events,
  expectError,
  modelRequest,
  ofType,
  readSse,
  script,
  startTask,
  stubFor,
  type TaskBody,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "./helpers.ts";

/** The log of a task that is still open, read up to its input_requested event (its stream stays open while it waits). */
async function logUntilWaiting(id: string): Promise<EventBody[]> {
  const frames = await readSse(await api(`/v1/tasks/${id}/events`), (f) => f.event === "input_requested");
  return frames.map((f) => JSON.parse(f.data) as EventBody);
}

const todoCall = toolUse("TodoWrite", { todos: [{ content: "Book the venue", status: "pending" }] });

async function resume(id: string, body: Record<string, unknown>, key?: string): Promise<Response> {
  return api(`/v1/tasks/${id}/resume`, { method: "POST", body: JSON.stringify(body), ...(key ? { key } : {}) });
}

/** Starts a task whose first turn calls `call`, and waits until it asks for input. */
async function waitingTask(agent: string, label: string, call = todoCall): Promise<TaskBody> {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [call], stop_reason: "tool_use" }, done]);
  const task = await startTask(agent, `plan ${marker}`);
  const waiting = await waitForTask(task.id);
  expect(waiting.status).toBe("input_required");
  return waiting;
}

describe("permission modes", () => {
  it("holds a call in manual mode: input_required, the request stored and announced, no alarm kept", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-wait");
    expect(task.pending_input).toMatchObject({
      kind: "approval",
      tool_name: "TodoWrite",
      input: { todos: [{ content: "Book the venue", status: "pending" }] },
      question: null,
      expires_at: null,
    });
    const log = await logUntilWaiting(task.id);
    expect(ofType(log, "input_requested")).toHaveLength(1);
    expect(ofType(log, "tool_call_started")).toHaveLength(0);
    const alarm = await runInDurableObject(stubFor(task.id), (_i, state) => state.storage.getAlarm());
    expect(alarm).toBeNull();
    // The wait is a checkpoint of its own (seed 003 awaiting_human).
    const list = (await (await api(`/v1/tasks/${task.id}/checkpoints`)).json()) as {
      checkpoints: { position: string; awaiting_human: boolean; next_action: string }[];
    };
    expect(list.checkpoints.at(-1)).toMatchObject({ awaiting_human: true, next_action: "tool_calls" });
    expect(list.checkpoints.filter((c) => c.awaiting_human)).toHaveLength(1);
  });

  it("approves: the call runs, the run completes, and the decision names the key that made it", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-approve");
    const res = await resume(task.id, { action: "approve" }, "test-key-2");
    expect(res.status).toBe(200);
    expect(((await res.json()) as TaskBody).status).toBe("running");
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "todo_list_updated")).toHaveLength(1);
    const [decision] = ofType(log, "human_decision");
    expect(decision?.payload).toMatchObject({ action: "approve", tool_name: "TodoWrite", kind: "approval" });
    expect(String(decision?.payload.decided_by)).toMatch(/^key_[0-9a-f]{12}$/);
    expect(decision?.payload.decided_at).toEqual(expect.any(String));
    // A different key leaves a different fingerprint; the key itself is never recorded.
    expect(JSON.stringify(log)).not.toContain("test-key-2");
  });

  it("rejects: the model gets the reviewer's message as an error result and the tool never runs", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-reject");
    expect((await resume(task.id, { action: "reject", message: "Not that venue." })).status).toBe(200);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "todo_list_updated")).toHaveLength(0);
    expect(ofType(log, "tool_denied")[0]?.payload).toMatchObject({ reason: "rejected_by_reviewer" });
    const messages = (await (await api(`/v1/tasks/${task.id}/messages`)).json()) as {
      messages: { content: unknown }[];
    };
    expect(JSON.stringify(messages.messages[2]?.content)).toContain(
      "A reviewer rejected this call to TodoWrite: Not that venue.",
    );
  });

  it("modifies: the call runs with the reviewer's arguments; modify without them is refused", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-modify");
    await expectError(await resume(task.id, { action: "modify" }), 400, "validation_failed", "tool_input");
    // Arguments go with modify only: an approval does not silently drop them.
    await expectError(
      await resume(task.id, { action: "approve", tool_input: { todos: [] } }),
      400,
      "validation_failed",
      "tool_input",
    );
    const changed = { todos: [{ content: "Book the park", status: "in_progress" }] };
    expect((await resume(task.id, { action: "modify", tool_input: changed })).status).toBe(200);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const [updated] = ofType(await events(task.id), "todo_list_updated");
    expect(updated?.payload.todos).toEqual(changed.todos);
  });

  it("modifies the state: the reviewer's messages follow the turn's tool results once, and metadata replaces", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-state");
    await expectError(
      await resume(task.id, { action: "modify", state_updates: { current_agent: "assistant" } }),
      400,
      "validation_failed",
      "state_updates.current_agent",
    );
    await expectError(
      await resume(task.id, { action: "modify", state_updates: { messages: [{ role: "assistant", content: "x" }] } }),
      400,
      "validation_failed",
      "state_updates.messages.0.role",
    );
    const updates = {
      messages: [{ role: "user", content: "Use the blue room." }],
      metadata: { room: "blue", reviewed: true },
    };
    // modify with state_updates alone runs the call with the model's own arguments.
    expect((await resume(task.id, { action: "modify", state_updates: updates })).status).toBe(200);
    // Evicted right after the decision, wherever the run stands: the replay adds the text exactly once.
    await abortAllDurableObjects();
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    expect(finished.metadata).toEqual(updates.metadata);
    const log = await events(task.id);
    expect(ofType(log, "todo_list_updated")[0]?.payload.todos).toEqual([
      { content: "Book the venue", status: "pending" },
    ]);
    expect(ofType(log, "human_decision")[0]?.payload).toMatchObject({ action: "modify", state_updates: updates });
    const request = await modelRequest(task.id, 2);
    expect(request.messages.at(-1)?.content).toEqual([
      expect.objectContaining({ type: "tool_result", is_error: false }),
      { type: "text", text: "Use the blue room." },
    ]);
    expect(JSON.stringify(request.messages).split("Use the blue room.")).toHaveLength(2);
    // The turn's checkpoint holds the same conversation.
    const list = (await (await api(`/v1/tasks/${task.id}/checkpoints`)).json()) as {
      checkpoints: { checkpoint_id: string; position: string }[];
    };
    const tools = list.checkpoints.find((c) => c.position === "turn_1_tools");
    const checkpoint = (await (await api(`/v1/tasks/${task.id}/checkpoints/${tools?.checkpoint_id}`)).json()) as {
      state: { messages: { content: unknown }[] };
    };
    expect(checkpoint.state.messages.at(-1)?.content).toEqual(request.messages.at(-1)?.content);
  });

  it("answers 409 task_not_waiting to a resume of a task that waits for nothing, including a second resume", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-double");
    expect((await resume(task.id, { action: "approve" })).status).toBe(200);
    await expectError(await resume(task.id, { action: "approve" }), 409, "task_not_waiting");
    await waitForTask(task.id);
    await expectError(await resume(task.id, { action: "approve" }), 409, "task_not_waiting");
    await expectError(await resume(crypto.randomUUID(), { action: "approve" }), 404, "task_not_found", "id");
    await expectError(await resume(task.id, { action: "maybe" }), 400, "validation_failed", "action");
  });

  it("lets acceptEdits run edits and hold everything else; per-tool rules override the mode", async () => {
    const edits = defineAgent({
      allowedTools: ["Write", "TodoWrite"],
      fileSystem: { write: true },
      permissionMode: "acceptEdits",
    });
    const marker = uniqueMarker("hitl-edits");
    await script(marker, [
      { content: [toolUse("Write", { file_path: "a.txt", content: "a" }), todoCall], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(edits, `edit ${marker}`);
    const waiting = await waitForTask(task.id);
    expect(waiting.status).toBe("input_required");
    expect(waiting.pending_input).toMatchObject({ tool_name: "TodoWrite" });
    expect(ofType(await logUntilWaiting(task.id), "tool_call_completed").map((e) => e.payload.tool_name)).toEqual([
      "Write",
    ]);

    const ruled = defineAgent({
      allowedTools: ["TodoWrite"],
      permissionMode: "manual",
      toolPermissions: { TodoWrite: "allow" },
    });
    const marker2 = uniqueMarker("hitl-rule");
    await script(marker2, [{ content: [todoCall], stop_reason: "tool_use" }, done]);
    expect((await waitForTask((await startTask(ruled, `rule ${marker2}`)).id)).status).toBe("completed");
  });
});

describe("questions, cancels, evictions and timeouts", () => {
  it("asks the person a question with AskUser and gives the model the answer", async () => {
    const agent = defineAgent({ allowedTools: ["AskUser"] });
    const task = await waitingTask(agent, "hitl-ask", toolUse("AskUser", { question: "Which city?" }));
    expect(task.pending_input).toMatchObject({ kind: "question", question: "Which city?" });
    await expectError(await resume(task.id, { action: "approve" }), 400, "validation_failed", "message");
    expect((await resume(task.id, { action: "approve", message: "Lisbon" })).status).toBe(200);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const messages = (await (await api(`/v1/tasks/${task.id}/messages`)).json()) as {
      messages: { content: unknown }[];
    };
    expect(JSON.stringify(messages.messages[2]?.content)).toContain("Lisbon");
  });

  it("cancels a task that waits for a person", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-cancel");
    const res = await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as TaskBody).status).toBe("canceled");
    await expectError(await resume(task.id, { action: "approve" }), 409, "task_not_waiting");
  });

  it("resumes after the object was evicted during the wait", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-evict");
    await abortAllDurableObjects();
    expect((await resume(task.id, { action: "approve" })).status).toBe(200);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "todo_list_updated")).toHaveLength(1);
    expect(ofType(log, "step_resumed")).toHaveLength(0);
  });

  it("ends the wait at the approval timeout: as a rejection, or as a failure", async () => {
    const rejecting = defineAgent({
      allowedTools: ["TodoWrite"],
      permissionMode: "manual",
      approvalTimeoutSeconds: 3600,
    });
    const task = await waitingTask(rejecting, "hitl-timeout-reject");
    const expiresAt = (task.pending_input as { expires_at?: string } | null)?.expires_at;
    expect(expiresAt).toEqual(expect.any(String));
    const alarm = await runInDurableObject(stubFor(task.id), (_i, state) => state.storage.getAlarm());
    expect(alarm).toBe(Date.parse(String(expiresAt)));
    // Move the deadline into the past, then fire the alarm as the platform would.
    await runInDurableObject(stubFor(task.id), (_i, state) => {
      state.storage.sql.exec(
        "UPDATE task_state SET value = json_set(value, '$.expires_at', ?) WHERE key = 'pending_input'",
        new Date(Date.now() - 1000).toISOString(),
      );
    });
    expect(await runDurableObjectAlarm(stubFor(task.id))).toBe(true);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const [decision] = ofType(await events(task.id), "human_decision");
    expect(decision?.payload).toMatchObject({ action: "reject", decided_by: "timeout" });

    const failing = defineAgent({
      allowedTools: ["TodoWrite"],
      permissionMode: "manual",
      approvalTimeoutSeconds: 3600,
      onApprovalTimeout: "fail",
    });
    const other = await waitingTask(failing, "hitl-timeout-fail");
    await runInDurableObject(stubFor(other.id), (_i, state) => {
      state.storage.sql.exec(
        "UPDATE task_state SET value = json_set(value, '$.expires_at', ?) WHERE key = 'pending_input'",
        new Date(Date.now() - 1000).toISOString(),
      );
    });
    expect(await runDurableObjectAlarm(stubFor(other.id))).toBe(true);
    const failed = await waitForTask(other.id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({ code: "approval_timeout" });
    // The timeout's decision is on record too, before the run's end.
    const log = await events(other.id);
    expect(ofType(log, "human_decision")[0]?.payload).toMatchObject({ action: "fail", decided_by: "timeout" });
    expect(log.findIndex((e) => e.event_type === "human_decision")).toBe(log.length - 2);
  });

  it("refuses bad permission settings when the agent is defined", () => {
    class Bad extends Agent {}
    const make = (extra: Record<string, unknown>) => () =>
      new Bad({ name: "bad_permissions", systemPrompt: "x", allowedTools: ["TodoWrite"], ...extra });
    expect(make({ permissionMode: "sometimes" })).toThrow(ConfigError);
    expect(make({ toolPermissions: { TodoWrite: "maybe" } })).toThrow(ConfigError);
    expect(make({ toolPermissions: { Bash: "ask" } })).toThrow("names a tool the agent does not have");
    expect(make({ approvalTimeoutSeconds: 0 })).toThrow(ConfigError);
  });
});
