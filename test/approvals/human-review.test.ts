// Human in the loop (seed 004 permission modes, seed 003 human feedback): a tool call that needs approval, or the
// agent's own question, puts the task in input_required with the request stored and no alarm kept; a person's
// POST /v1/tasks/:id/resume approves, rejects or modifies it, every decision on record with the key that made it.

import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { PENDING_INPUT_KEY } from "../../src/approvals/requests.ts";
import { ConfigError } from "../../src/errors.ts";
import {
  CheckpointListSchema,
  CheckpointSchema,
  MessageListSchema,
  ResumedTaskSchema,
  type TaskResource,
  TaskResourceSchema,
} from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  type EventBody,
  editTaskState,
  events,
  expectError,
  fireTimers,
  modelRequest,
  ofType,
  parseBody,
  parseEvent,
  readSse,
  script,
  settledAlarm,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** The log of a task that is still open, read up to its input_requested event (its stream stays open while it waits). */
async function logUntilWaiting(id: string): Promise<EventBody[]> {
  const frames = await readSse(await api(`/v1/tasks/${id}/events`), (f) => f.event === "input_requested");
  return frames.map((f) => parseEvent(f.data));
}

const todoCall = toolUse("TodoWrite", { todos: [{ content: "Book the venue", status: "pending" }] });

async function resume(id: string, body: Record<string, unknown>, key?: string): Promise<Response> {
  return api(`/v1/tasks/${id}/resume`, { method: "POST", body: JSON.stringify(body), ...(key ? { key } : {}) });
}

/** The id of the request a waiting task shows: what a reviewer's decision names. */
function requestOf(task: TaskResource): string {
  const id = task.pending_input?.request_id;
  if (typeof id !== "string") throw new Error(`task ${task.id} shows no pending request`);
  return id;
}

/** Starts a task whose first turn calls `call`, and waits until it asks for input. */
async function waitingTask(agent: string, label: string, call = todoCall): Promise<TaskResource> {
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
    // The request is named by the waiting call's id, in the task and in the event alike.
    const pending = task.pending_input;
    expect(pending?.request_id).toBe(pending?.tool_use_id);
    const log = await logUntilWaiting(task.id);
    expect(ofType(log, "input_requested").map((e) => e.payload.request_id)).toEqual([pending?.request_id]);
    expect(ofType(log, "tool_call_started")).toHaveLength(0);
    // None once its listing in the tenant's directory says it waits.
    expect(await settledAlarm(task.id, null)).toBeNull();
    // The wait is a checkpoint of its own (seed 003 awaiting_human).
    const list = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    expect(list.checkpoints.at(-1)).toMatchObject({ awaiting_human: true, next_action: "tool_calls" });
    expect(list.checkpoints.filter((c) => c.awaiting_human)).toHaveLength(1);
  });

  it("approves: the call runs, the run completes, and the decision names the key that made it", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-approve");
    const res = await resume(task.id, { request_id: requestOf(task), action: "approve" }, "test-key-2");
    expect(res.status).toBe(200);
    expect((await parseBody(res, ResumedTaskSchema)).status).toBe("running");
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
    expect(
      (await resume(task.id, { request_id: requestOf(task), action: "reject", message: "Not that venue." })).status,
    ).toBe(200);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "todo_list_updated")).toHaveLength(0);
    expect(ofType(log, "tool_denied")[0]?.payload).toMatchObject({ reason: "rejected_by_reviewer" });
    const messages = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    expect(JSON.stringify(messages.messages[2]?.content)).toContain(
      "A reviewer rejected this call to TodoWrite: Not that venue.",
    );
  });

  it("modifies: the call runs with the reviewer's arguments; modify without them is refused", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-modify");
    await expectError(
      await resume(task.id, { request_id: requestOf(task), action: "modify" }),
      400,
      "validation_failed",
      "tool_input",
    );
    // Arguments go with modify only: an approval does not silently drop them.
    await expectError(
      await resume(task.id, { request_id: requestOf(task), action: "approve", tool_input: { todos: [] } }),
      400,
      "validation_failed",
      "tool_input",
    );
    const changed = { todos: [{ content: "Book the park", status: "in_progress" }] };
    expect((await resume(task.id, { request_id: requestOf(task), action: "modify", tool_input: changed })).status).toBe(
      200,
    );
    expect((await waitForTask(task.id)).status).toBe("completed");
    const [updated] = ofType(await events(task.id), "todo_list_updated");
    expect(updated?.payload.todos).toEqual(changed.todos);
  });

  it("modifies the state: the reviewer's messages follow the turn's tool results once, and metadata replaces", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-state");
    await expectError(
      await resume(task.id, {
        request_id: requestOf(task),
        action: "modify",
        state_updates: { current_agent: "assistant" },
      }),
      400,
      "validation_failed",
      "state_updates.current_agent",
    );
    await expectError(
      await resume(task.id, {
        request_id: requestOf(task),
        action: "modify",
        state_updates: { messages: [{ role: "assistant", content: "x" }] },
      }),
      400,
      "validation_failed",
      "state_updates.messages.0.role",
    );
    const updates = {
      messages: [{ role: "user", content: "Use the blue room." }],
      metadata: { room: "blue", reviewed: true },
    };
    // modify with state_updates alone runs the call with the model's own arguments.
    expect(
      (await resume(task.id, { request_id: requestOf(task), action: "modify", state_updates: updates })).status,
    ).toBe(200);
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
      { type: "text", text: "Use the blue room.", cache_control: { type: "ephemeral" } },
    ]);
    expect(JSON.stringify(request.messages).split("Use the blue room.")).toHaveLength(2);
    // The turn's checkpoint holds the same conversation, without the request's cache breakpoint.
    const list = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    const tools = list.checkpoints.find((c) => c.position === "turn_1_tools");
    const checkpoint = await apiJson(`/v1/tasks/${task.id}/checkpoints/${tools?.checkpoint_id}`, CheckpointSchema);
    const sent = request.messages.at(-1)?.content as Record<string, unknown>[];
    expect(checkpoint.state.messages.at(-1)?.content).toEqual(
      sent.map(({ cache_control: _marker, ...block }) => block),
    );
  });

  it("answers 409 task_not_waiting to a decision on a request the task never made, before and after it ends", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-double");
    expect((await resume(task.id, { request_id: requestOf(task), action: "approve" })).status).toBe(200);
    await expectError(await resume(task.id, { request_id: "toolu_never", action: "approve" }), 409, "task_not_waiting");
    await waitForTask(task.id);
    await expectError(await resume(task.id, { request_id: "toolu_never", action: "approve" }), 409, "task_not_waiting");
    await expectError(
      await resume(crypto.randomUUID(), { request_id: "toolu_x", action: "approve" }),
      404,
      "task_not_found",
      "id",
    );
    await expectError(
      await resume(task.id, { request_id: requestOf(task), action: "maybe" }),
      400,
      "validation_failed",
      "action",
    );
    await expectError(await resume(task.id, { action: "approve" }), 400, "validation_failed", "request_id");
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

describe("decisions name the request they answer", () => {
  /** A task whose first turn makes two calls that both wait for approval, waiting on the first. */
  async function twoCallTask(label: string): Promise<TaskResource> {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const marker = uniqueMarker(label);
    const read = toolUse("TodoWrite", { todos: [{ content: "Read the logs", status: "pending" }] });
    const drop = toolUse("TodoWrite", { todos: [{ content: "Delete the production database", status: "pending" }] });
    await script(marker, [{ content: [read, drop], stop_reason: "tool_use" }, done]);
    const task = await waitForTask((await startTask(agent, `ops ${marker}`)).id);
    expect(task.pending_input).toMatchObject({ input: { todos: [{ content: "Read the logs" }] } });
    return task;
  }

  /** Waits until the task waits for a request other than `previous`. */
  async function nextRequest(id: string, previous: string): Promise<TaskResource> {
    for (let i = 0; i < 100; i++) {
      const task = await waitForTask(id);
      const current = task.pending_input?.request_id;
      if (task.status !== "running" && current !== previous) return task;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("the task never moved on to another request");
  }

  it("never applies a reviewer's approval to a call they were not shown", async () => {
    const first = await twoCallTask("hitl-two-reviewers");
    const seen = requestOf(first);
    // Reviewer A approves "Read the logs"; the task moves on to the second call.
    expect((await resume(first.id, { request_id: seen, action: "approve" })).status).toBe(200);
    const second = await nextRequest(first.id, seen);
    expect(second.pending_input).toMatchObject({ input: { todos: [{ content: "Delete the production database" }] } });
    // Reviewer B was shown "Read the logs" too: their approval is that decision again, and approves nothing else.
    const replay = await resume(first.id, { request_id: seen, action: "approve" }, "test-key-2");
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const replayed = await parseBody(replay, ResumedTaskSchema);
    expect(replayed.status).toBe("input_required");
    expect(replayed.decision).toMatchObject({ request_id: seen, action: "approve" });
    expect(String(replayed.decision.decided_by)).not.toBe("");
    expect((await waitForTask(first.id)).pending_input).toMatchObject({ request_id: requestOf(second) });
    // A decision naming a request the task does not wait for shows what it does wait for.
    await expectError(
      await resume(first.id, { request_id: "toolu_not_shown", action: "approve" }),
      409,
      "pending_input_changed",
      "request_id",
      {
        pending_input: expect.objectContaining({
          request_id: requestOf(second),
          input: { todos: [{ content: "Delete the production database", status: "pending" }] },
        }),
      },
    );
    // Another answer to the request already answered is refused with the recorded decision.
    await expectError(
      await resume(first.id, { request_id: seen, action: "reject", message: "No." }),
      409,
      "already_decided",
      "request_id",
      { decision: expect.objectContaining({ request_id: seen, action: "approve" }) },
    );
    // The dangerous call is still waiting, and a rejection of it by name ends it.
    expect(
      (await resume(first.id, { request_id: requestOf(second), action: "reject", message: "Never." })).status,
    ).toBe(200);
    expect((await waitForTask(first.id)).status).toBe("completed");
    const log = await events(first.id);
    expect(ofType(log, "human_decision").map((e) => [e.payload.request_id, e.payload.action])).toEqual([
      [seen, "approve"],
      [requestOf(second), "reject"],
    ]);
    expect(ofType(log, "todo_list_updated").map((e) => e.payload.todos)).toEqual([
      [{ content: "Read the logs", status: "pending" }],
    ]);
  });

  it("takes exactly one of two different answers sent at once to the same request", async () => {
    const task = await waitingTask(defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" }), "hitl-race");
    const request_id = requestOf(task);
    const answers = await Promise.all([
      resume(task.id, { request_id, action: "approve" }),
      resume(task.id, { request_id, action: "reject", message: "No." }, "test-key-2"),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const refused = answers.find((r) => r.status === 409);
    if (!refused) throw new Error("no answer was refused");
    await expectError(refused, 409, "already_decided", "request_id", { decision: expect.any(Object) });
    expect((await waitForTask(task.id)).status).toBe("completed");
    expect(ofType(await events(task.id), "human_decision")).toHaveLength(1);
  });

  it("answers a question by its request id; a repeated answer is a replay, another answer a conflict", async () => {
    const agent = defineAgent({ allowedTools: ["AskUser"] });
    const task = await waitingTask(agent, "hitl-ask-id", toolUse("AskUser", { question: "Which city?" }));
    const request_id = requestOf(task);
    await expectError(
      await resume(task.id, { request_id: `${request_id}x`, action: "approve", message: "Lisbon" }),
      409,
      "pending_input_changed",
      "request_id",
      { pending_input: expect.objectContaining({ request_id, question: "Which city?" }) },
    );
    const first = await resume(task.id, { request_id, action: "approve", message: "Lisbon" });
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const original = (await parseBody(first, ResumedTaskSchema)).decision;
    const again = await resume(task.id, { request_id, action: "approve", message: "Lisbon" });
    expect(again.status).toBe(200);
    expect((await parseBody(again, ResumedTaskSchema)).decision).toEqual(original);
    await expectError(
      await resume(task.id, { request_id, action: "approve", message: "Porto" }),
      409,
      "already_decided",
      "request_id",
      { decision: expect.objectContaining({ request_id, message: "Lisbon" }) },
    );
    expect((await waitForTask(task.id)).status).toBe("completed");
    const messages = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    expect(JSON.stringify(messages.messages[2]?.content)).toContain("Lisbon");
    expect(JSON.stringify(messages.messages)).not.toContain("Porto");
  });
});

describe("questions, cancels, evictions and timeouts", () => {
  it("asks the person a question with AskUser and gives the model the answer", async () => {
    const agent = defineAgent({ allowedTools: ["AskUser"] });
    const task = await waitingTask(agent, "hitl-ask", toolUse("AskUser", { question: "Which city?" }));
    expect(task.pending_input).toMatchObject({ kind: "question", question: "Which city?" });
    await expectError(
      await resume(task.id, { request_id: requestOf(task), action: "approve" }),
      400,
      "validation_failed",
      "message",
    );
    expect((await resume(task.id, { request_id: requestOf(task), action: "approve", message: "Lisbon" })).status).toBe(
      200,
    );
    expect((await waitForTask(task.id)).status).toBe("completed");
    const messages = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    expect(JSON.stringify(messages.messages[2]?.content)).toContain("Lisbon");
  });

  it("cancels a task that waits for a person", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-cancel");
    const res = await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" });
    expect(res.status).toBe(200);
    expect((await parseBody(res, TaskResourceSchema)).status).toBe("canceled");
    await expectError(
      await resume(task.id, { request_id: requestOf(task), action: "approve" }),
      409,
      "task_not_waiting",
    );
  });

  it("resumes after the object was evicted during the wait", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const task = await waitingTask(agent, "hitl-evict");
    await abortAllDurableObjects();
    expect((await resume(task.id, { request_id: requestOf(task), action: "approve" })).status).toBe(200);
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
    const expiresAt = task.pending_input?.expires_at;
    expect(expiresAt).toEqual(expect.any(String));
    expect(await settledAlarm(task.id, Date.parse(String(expiresAt)))).toBe(Date.parse(String(expiresAt)));
    // Move the deadline into the past, then fire the alarm as the platform would.
    await editTaskState(task.id, (sql) => {
      sql.exec(
        "UPDATE task_state SET value = json_set(value, '$.expires_at', ?) WHERE key = ?",
        new Date(Date.now() - 1000).toISOString(),
        PENDING_INPUT_KEY.name,
      );
    });
    expect(await fireTimers(task.id, ["approval_deadline"])).toBe(true);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const [decision] = ofType(await events(task.id), "human_decision");
    expect(decision?.payload).toMatchObject({ action: "reject", decided_by: "timeout", request_id: requestOf(task) });
    // A person who answers after the deadline learns what the timeout decided; their approval runs nothing.
    await expectError(
      await resume(task.id, { request_id: requestOf(task), action: "approve" }),
      409,
      "already_decided",
      "request_id",
      { decision: expect.objectContaining({ request_id: requestOf(task), action: "reject", decided_by: "timeout" }) },
    );

    const failing = defineAgent({
      allowedTools: ["TodoWrite"],
      permissionMode: "manual",
      approvalTimeoutSeconds: 3600,
      onApprovalTimeout: "fail",
    });
    const other = await waitingTask(failing, "hitl-timeout-fail");
    const otherExpiresAt = Date.parse(String(other.pending_input?.expires_at));
    expect(await settledAlarm(other.id, otherExpiresAt)).toBe(otherExpiresAt);
    await editTaskState(other.id, (sql) => {
      sql.exec(
        "UPDATE task_state SET value = json_set(value, '$.expires_at', ?) WHERE key = ?",
        new Date(Date.now() - 1000).toISOString(),
        PENDING_INPUT_KEY.name,
      );
    });
    expect(await fireTimers(other.id, ["approval_deadline"])).toBe(true);
    const failed = await waitForTask(other.id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({ code: "approval_timeout" });
    // The timeout's decision is on record too, before the run's end.
    const log = await events(other.id);
    expect(ofType(log, "human_decision")[0]?.payload).toMatchObject({ action: "fail", decided_by: "timeout" });
    expect(log.findIndex((e) => e.event_type === "human_decision")).toBe(log.length - 2);
    await expectError(
      await resume(other.id, { request_id: requestOf(other), action: "approve" }),
      409,
      "already_decided",
      "request_id",
      { decision: expect.objectContaining({ action: "fail", decided_by: "timeout" }) },
    );
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
