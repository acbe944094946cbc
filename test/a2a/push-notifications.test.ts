// A2A push notifications (docs/a2a.md): the four push-notification config methods over both bindings, with the
// official client, and the notifications a real receiver on 127.0.0.1 gets: Outpost's signed callbacks (Standard
// Webhooks, verified with the tenant's secret), with the config's token, as A2A status updates.
import { evictDurableObject } from "cloudflare:test";
import { TaskState } from "@a2a-js/sdk";
import { RequestMalformedError, TaskNotFoundError } from "@a2a-js/sdk/errors";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { PushPayloadSchema } from "../../src/callbacks/push-configs.ts";
import { TenantSchema } from "../../src/http/responses.ts";
import { inbox, type Received, received, receiver } from "../support/callback-helpers.ts";
import {
  api,
  checkBody,
  defineAgent,
  parseBody,
  script,
  stubFor,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";
import { asTask, BINDINGS, clientFor, sendRequest, text, userMessage } from "./support.ts";

const chat = defineAgent({ description: "Answers." });

async function signingSecret(): Promise<string> {
  const { webhook_signing_secret } = await parseBody(await api("/v1/tenant"), TenantSchema);
  if (!webhook_signing_secret) throw new Error("this deployment does not sign callbacks");
  return webhook_signing_secret;
}

/** What the receiver got for `name`, once it has `count` deliveries (they are sent from the task's alarm). */
async function arrivals(name: string, count: number): Promise<Received[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const list = await received(name);
    if (list.length >= count || Date.now() > deadline) return list;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function config(taskId: string, id: string, url: string, token: string) {
  return { tenant: "", id, taskId, url, token, authentication: undefined };
}

describe.each(BINDINGS)("A2A push notifications over %s", (binding) => {
  it("the four push-notification config methods set, read, list and delete a task's configs, kept in its object (A2A §3.1.7–§3.1.10)", async () => {
    const marker = uniqueMarker("a2a-push-config");
    await script(marker, [{ content: [{ type: "text", text: "later" }] }], { ttft_ms: 2_000 });
    const client = await clientFor(chat, binding);
    const task = asTask(
      await client.sendMessage(sendRequest(userMessage([text(`slow ${marker}`)]), { returnImmediately: true })),
    );
    const url = `${receiver}/r/${inbox("a2a-config")}`;
    const created = await client.createTaskPushNotificationConfig(config(task.id, "hook-1", url, "tok-1"));
    expect(created).toMatchObject({ id: "hook-1", taskId: task.id, url, token: "tok-1" });
    await client.createTaskPushNotificationConfig({
      ...config(task.id, "hook-2", url, "tok-2"),
      authentication: { scheme: "Bearer", credentials: "receiver-secret" },
    });
    // Kept in the task's object: an eviction loses none.
    await evictDurableObject(stubFor(task.id));
    const listed = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs.map((c) => [c.id, c.token])).toEqual([
      ["hook-1", "tok-1"],
      ["hook-2", "tok-2"],
    ]);
    // Credentials are never shown again.
    const second = await client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-2" });
    expect(second.authentication).toEqual({ scheme: "Bearer", credentials: "" });
    await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" });
    await expect(
      client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" }),
    ).rejects.toBeInstanceOf(TaskNotFoundError);
    const after = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(after.configs.map((c) => c.id)).toEqual(["hook-2"]);
    await waitForTask(task.id);
  });

  it("a push config given with SendMessage gets the task's end as a signed A2A status update with its token (A2A §3.2.3)", async () => {
    const marker = uniqueMarker("a2a-push");
    await script(marker, [{ content: [{ type: "text", text: "Pushed answer." }] }]);
    const name = inbox("a2a-push");
    const client = await clientFor(chat, binding);
    const request = sendRequest(userMessage([text(`push ${marker}`)]), { returnImmediately: true });
    const task = asTask(
      await client.sendMessage({
        ...request,
        configuration: request.configuration && {
          ...request.configuration,
          taskPushNotificationConfig: {
            ...config("", "", `${receiver}/r/${name}`, "tok-send"),
            authentication: { scheme: "Bearer", credentials: "receiver-secret" },
          },
        },
      }),
    );
    const [arrival, ...more] = await arrivals(name, 1);
    expect(more).toEqual([]);
    if (!arrival) throw new Error("no push notification arrived");
    // Outpost's callback signature, verified with the tenant's secret; the config's token and credentials as headers.
    new Webhook(await signingSecret()).verify(arrival.body, arrival.headers);
    expect(arrival.headers["x-a2a-notification-token"]).toBe("tok-send");
    expect(arrival.headers.authorization).toBe("Bearer receiver-secret");
    const body = checkBody(PushPayloadSchema, JSON.parse(arrival.body));
    expect(body.statusUpdate).toMatchObject({
      taskId: task.id,
      contextId: task.contextId,
      status: { state: "TASK_STATE_COMPLETED" },
      metadata: { outpost: { type: "task.completed", data: { task_id: task.id, result: "Pushed answer." } } },
    });
    expect(TaskState[TaskState.TASK_STATE_COMPLETED]).toBe(body.statusUpdate.status.state);
    // The delivery is on the task's record, as every callback's is; the secret is in none of it.
    const log = await api(`/v1/tasks/${task.id}/deliveries`);
    const text_ = await log.text();
    expect(text_).toContain(`"url":"${receiver}/r/${name}"`);
    expect(text_).not.toContain("receiver-secret");
  });

  it("a push config naming a URL the callback policy refuses is invalid params, before anything is stored", async () => {
    const marker = uniqueMarker("a2a-push-refused");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const client = await clientFor(chat, binding);
    const task = asTask(await client.sendMessage(sendRequest(userMessage([text(`refused ${marker}`)]))));
    const refused = client.createTaskPushNotificationConfig(config(task.id, "bad", "ftp://example.com/x", "t"));
    await expect(refused).rejects.toBeInstanceOf(RequestMalformedError);
    await expect(refused).rejects.toThrow(/^ftp:\/\/example\.com\/x is not allowed/);
    const listed = await client.listTaskPushNotificationConfig({
      tenant: "",
      taskId: task.id,
      pageSize: 0,
      pageToken: "",
    });
    expect(listed.configs).toEqual([]);
  });
});

describe("A2A errors on the wire", () => {
  it("invalid params name Outpost's field and code in the error's ErrorInfo (JSON-RPC -32602, A2A §9.4)", async () => {
    const marker = uniqueMarker("a2a-errorinfo");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const client = await clientFor(chat, "JSONRPC");
    const task = asTask(await client.sendMessage(sendRequest(userMessage([text(`info ${marker}`)]))));
    const res = await api(`/a2a/${chat}`, {
      method: "POST",
      headers: { "a2a-version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "p1",
        method: "CreateTaskPushNotificationConfig",
        params: { taskId: task.id, id: "bad", url: "ftp://example.com/x" },
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; error: { code: number; data: Record<string, unknown>[] } };
    expect(body.id).toBe("p1");
    expect(body.error.code).toBe(-32602);
    expect(body.error.data).toEqual([
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: "INVALID_PARAMS",
        domain: "a2a-protocol.org",
        metadata: { code: "invalid_callback_url", field: "url" },
      },
    ]);
  });
});
