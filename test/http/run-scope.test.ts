// A key that may act but not read (scope `run` alone, test-run-key in vitest.config.ts) gets from every POST only
// what it may read, which is nothing of the task's content: ids, status, last_event_seq and links for a task, which
// request was answered and how for a decision, and a delivery's id and status without its payload. Keys with `read`
// (or `admin`) keep getting the whole task.
import { describe, expect, it } from "vitest";
import {
  CheckpointListSchema,
  DeliveryReceiptSchema,
  ResumedTaskReceiptSchema,
  TaskReceiptSchema,
} from "../../src/http/responses.ts";
import { deliveriesUntil, inbox, receiver } from "../support/callback-helpers.ts";
import {
  api,
  apiJson,
  BASE,
  defineAgent,
  done,
  expectError,
  ISO_TIME,
  parseBody,
  pendingRequestId,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const RUN_KEY = "test-run-key";

function links(id: string): Record<string, string> {
  const self = `${BASE}/v1/tasks/${id}`;
  return {
    self,
    events: `${self}/events`,
    messages: `${self}/messages`,
    artifacts: `${self}/artifacts`,
    workspace: `${self}/workspace`,
    checkpoints: `${self}/checkpoints`,
    trace: `${self}/trace`,
    resume: `${self}/resume`,
    cancel: `${self}/cancel`,
    deliveries: `${self}/deliveries`,
  };
}

/** The whole of what a run-only key gets back about a task. */
function receipt(id: string, status: string, parentTaskId: string | null = null): Record<string, unknown> {
  return { id, status, parent_task_id: parentTaskId, last_event_seq: expect.any(Number), links: links(id) };
}

/** A task of a manual-approval agent, waiting for a person to approve its first tool call. */
async function waitingTask(label: string): Promise<{ id: string; requestId: string }> {
  const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
  const marker = uniqueMarker(label);
  const call = toolUse("TodoWrite", { todos: [{ content: `private plan ${marker}`, status: "pending" }] });
  await script(marker, [{ content: [call], stop_reason: "tool_use" }, done]);
  const task = await startTask(agent, `plan ${marker}`);
  const waiting = await waitForTask(task.id);
  expect(waiting.status).toBe("input_required");
  return { id: task.id, requestId: pendingRequestId(waiting) };
}

describe("responses to a run-only key", () => {
  it("answer a task creation, and its idempotent replay, with ids, status and links only", async () => {
    const marker = uniqueMarker("run-create");
    await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
    const body = JSON.stringify({ input: `secret input ${marker}`, metadata: { customer: "acme" } });
    const headers = { "idempotency-key": `run-${crypto.randomUUID()}` };
    const res = await api("/v1/agents/assistant/tasks", { method: "POST", body, headers, key: RUN_KEY });
    expect(res.status).toBe(202);
    const created = await parseBody(res, TaskReceiptSchema);
    expect(created).toStrictEqual(receipt(created.id, "pending"));
    expect(res.headers.get("location")).toBe(links(created.id).self);
    // The replay is cut the same way, although the object stored the whole task as the original response.
    const again = await api("/v1/agents/assistant/tasks", { method: "POST", body, headers, key: RUN_KEY });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await parseBody(again, TaskReceiptSchema)).toStrictEqual(receipt(created.id, "pending"));
    // The same task read with a key that may read shows its content.
    const whole = await waitForTask(created.id);
    expect(whole).toMatchObject({ input: `secret input ${marker}`, metadata: { customer: "acme" } });
  });

  it("answer a resume with the task's status and which request was decided, how, by whom and when", async () => {
    const task = await waitingTask("run-resume");
    const res = await api(`/v1/tasks/${task.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: task.requestId, action: "approve" }),
      key: RUN_KEY,
    });
    expect(res.status).toBe(200);
    expect(await parseBody(res, ResumedTaskReceiptSchema)).toStrictEqual({
      ...receipt(task.id, "running"),
      decision: {
        request_id: task.requestId,
        action: "approve",
        decided_by: "runner",
        decided_at: expect.stringMatching(ISO_TIME),
      },
    });
  });

  it("answer a resume for another request without the input the task waits for", async () => {
    const task = await waitingTask("run-changed");
    const res = await api(`/v1/tasks/${task.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: "toolu_not_this_one", action: "approve" }),
      key: RUN_KEY,
    });
    // Exactly code, message, request_id and field: no pending_input beside them, and a message that does not name
    // the request waiting now (the key could answer it blind).
    const body = await expectError(res, 409, "pending_input_changed", "request_id");
    expect(body.error.message).not.toContain(task.requestId);
    expect(body.error.message).not.toContain("TodoWrite");
  });

  it("refuse callbacks, which would carry what the key may not read, with 403 naming webhook", async () => {
    const res = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: "x", webhook: { url: "https://example.com/hook" } }),
      key: RUN_KEY,
    });
    await expectError(res, 403, "insufficient_scope", "webhook");
  });

  it("answer a cancel with ids, status and links only", async () => {
    const task = await waitingTask("run-cancel");
    const res = await api(`/v1/tasks/${task.id}/cancel`, { method: "POST", key: RUN_KEY });
    expect(res.status).toBe(200);
    expect(await parseBody(res, TaskReceiptSchema)).toStrictEqual(receipt(task.id, "canceled"));
  });

  it("answer a fork with the new task's ids, status and links only", async () => {
    const marker = uniqueMarker("run-fork");
    await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }, done]);
    const origin = await startTask("assistant", `say ${marker}`);
    expect((await waitForTask(origin.id)).status).toBe("completed");
    const list = await apiJson(`/v1/tasks/${origin.id}/checkpoints`, CheckpointListSchema);
    const res = await api(`/v1/tasks/${origin.id}/fork`, {
      method: "POST",
      body: JSON.stringify({ checkpoint_id: list.checkpoints[0]?.checkpoint_id }),
      key: RUN_KEY,
    });
    expect(res.status).toBe(202);
    const fork = await parseBody(res, TaskReceiptSchema);
    expect(fork).toStrictEqual(receipt(fork.id, "pending", origin.id));
  });

  it("answer a redelivery with the delivery's id and status, never its payload", async () => {
    const name = inbox("run-redeliver");
    const marker = `[${name}]`;
    await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
    const task = await startTask("assistant", `say ${marker}`, { webhook: { url: `${receiver}/r/${name}` } });
    const [delivery] = await deliveriesUntil(task.id, (l) => l[0]?.status === "delivered");
    const res = await api(`/v1/tasks/${task.id}/deliveries/${delivery?.id}/redeliver`, {
      method: "POST",
      key: RUN_KEY,
    });
    expect(res.status).toBe(202);
    expect(await parseBody(res, DeliveryReceiptSchema)).toStrictEqual({
      id: delivery?.id,
      event_type: "task.completed",
      event_seq: delivery?.event_seq,
      status: "pending",
      next_attempt_at: expect.stringMatching(ISO_TIME),
      created_at: delivery?.created_at,
    });
  });
});
