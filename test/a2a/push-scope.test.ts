// Issue 36 finding 1: a push config carries the task's result, so asking for one needs the `read` scope on every way
// in. A message that carries one (SendMessage's configuration.taskPushNotificationConfig, a new task's or a reply's)
// is refused exactly as CreateTaskPushNotificationConfig without `read` is, on both bindings, before anything starts
// or is decided.
import { describe, expect, it } from "vitest";
import { derivedTaskId } from "../../src/tasks/task-ids.ts";
import { receiver } from "../support/callback-helpers.ts";
import { api, defineAgent, script, toolUse, uniqueMarker, waitForTask } from "../support/helpers.ts";
import { a2aCall, BINDINGS, type Binding, restCall, rpcCall } from "./support.ts";

const chat = defineAgent({ description: "Answers." });
const asker = defineAgent({ allowedTools: ["AskUser"] });

/** May run tasks, not read them (vitest.config.ts). */
const RUN_ONLY = "test-run-key";

function message(text: string, ids: { taskId?: string } = {}) {
  return { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...ids };
}

function pushConfig(label: string) {
  return { url: `${receiver}/r/${label}-${crypto.randomUUID()}`, token: "tok" };
}

/** What CreateTaskPushNotificationConfig answers a key without `read` on `binding`: Outpost's own 403. */
async function createConfigRefusal(binding: Binding, taskId: string): Promise<{ status: number; error: unknown }> {
  const res =
    binding === "JSONRPC"
      ? await rpcCall(
          chat,
          {
            jsonrpc: "2.0",
            id: 1,
            method: "CreateTaskPushNotificationConfig",
            params: { taskId, ...pushConfig("refused") },
          },
          { key: RUN_ONLY },
        )
      : await restCall(chat, `/tasks/${taskId}/pushNotificationConfigs`, pushConfig("refused"), { key: RUN_ONLY });
  return { status: res.status, error: withoutRequestId(await res.json()) };
}

function withoutRequestId(body: unknown): unknown {
  const { error } = body as { error: Record<string, unknown> };
  const { request_id: _id, ...rest } = error;
  return rest;
}

describe.each(BINDINGS)("A2A push configs need the read scope, over %s", (binding) => {
  it("a new task's message with a push config is refused to a run-only key as CreateTaskPushNotificationConfig is, and starts nothing", async () => {
    const marker = uniqueMarker("a2a-push-scope");
    await script(marker, [{ content: [{ type: "text", text: "secret result" }] }]);
    const idempotencyKey = `push-scope-${crypto.randomUUID()}`;
    const res = await a2aCall(
      binding,
      chat,
      {
        method: "SendMessage",
        params: {
          message: message(`push ${marker}`),
          configuration: { returnImmediately: true, taskPushNotificationConfig: pushConfig("a2a-push-scope") },
        },
      },
      { key: RUN_ONLY, headers: { "idempotency-key": idempotencyKey } },
    );
    expect(res.status).toBe(403);
    const refused = withoutRequestId(await res.json());
    expect(refused).toEqual({
      code: "insufficient_scope",
      message: "This API key's scopes (run) do not include read.",
      field: "authorization",
    });
    expect(refused).toEqual((await createConfigRefusal(binding, crypto.randomUUID())).error);
    // The task the request would have made (its id follows from the Idempotency-Key) was never created.
    const id = await derivedTaskId("idempotency", "default", idempotencyKey);
    expect((await api(`/v1/tasks/${id}`)).status).toBe(404);
  });

  it("a reply to another person's waiting task with a push config is refused to a run-only key, and decides nothing", async () => {
    const marker = uniqueMarker("a2a-push-scope-reply");
    await script(marker, [
      { content: [toolUse("AskUser", { question: "Which city?" })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Booked." }] },
    ]);
    const started = await api(`/v1/agents/${asker}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: `book ${marker}` }),
    });
    const { id } = (await started.json()) as { id: string };
    expect((await waitForTask(id)).status).toBe("input_required");
    const res = await a2aCall(
      binding,
      asker,
      {
        method: "SendMessage",
        params: {
          message: message("Lyon", { taskId: id }),
          configuration: { returnImmediately: true, taskPushNotificationConfig: pushConfig("a2a-push-scope-reply") },
        },
      },
      { key: RUN_ONLY },
    );
    expect(res.status).toBe(403);
    expect(withoutRequestId(await res.json())).toEqual((await createConfigRefusal(binding, id)).error);
    const task = await waitForTask(id, 0);
    expect(task.status).toBe("input_required");
    const configs = (await (await api(`/v1/tasks/${id}/deliveries`)).json()) as { deliveries: unknown[] };
    expect(configs.deliveries).toEqual([]);
  });

  it("a run-only key still sends a message without a push config", async () => {
    const marker = uniqueMarker("a2a-push-scope-none");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const res = await a2aCall(
      binding,
      chat,
      {
        method: "SendMessage",
        params: { message: message(`plain ${marker}`), configuration: { returnImmediately: true } },
      },
      { key: RUN_ONLY },
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { result?: { task: { id: string } }; task?: { id: string } };
    const task = body.result?.task ?? body.task;
    expect(task?.id).toMatch(/^[0-9a-f-]{36}$/);
    await waitForTask(task?.id ?? "");
  });
});
