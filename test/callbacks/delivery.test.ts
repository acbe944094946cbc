// Outbound callbacks: a task with `webhook: {url, events}` reports those statuses to a real receiver on
// 127.0.0.1, signed with Standard Webhooks (verified here with the standardwebhooks library and the tenant's
// secret), retried with backoff from the task's alarm, and on record in GET /v1/tasks/:id/deliveries.

import { abortAllDurableObjects } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, inject, it } from "vitest";
import type { Delivery } from "../../src/callbacks/delivery.ts";
import type { RequestErrorCode } from "../../src/errors/codes.ts";
import { DeliveryListSchema, TenantSchema } from "../../src/http/responses.ts";
import { callbackOf } from "../support/callback-helpers.ts";
import {
  api,
  defineAgent,
  done,
  expectError,
  parseBody,
  pendingRequestId,
  script,
  startTask,
  toolUse,
  waitForTask,
} from "../support/helpers.ts";

const receiver = inject("receiverUrl");

interface Received {
  headers: Record<string, string>;
  body: string;
  status: number;
}

/** A receiver path for `label` (markers carry brackets, which a path does not need). */
function inbox(label: string): string {
  return `${label}-${crypto.randomUUID()}`;
}

async function received(name: string): Promise<Received[]> {
  return (await (await fetch(`${receiver}/r/${name}`)).json()) as Received[];
}

async function deliveries(id: string, key?: string): Promise<Delivery[]> {
  const res = await api(`/v1/tasks/${id}/deliveries`, key ? { key } : {});
  expect(res.status).toBe(200);
  return (await parseBody(res, DeliveryListSchema)).deliveries;
}

/** Polls the delivery log until `done` holds (deliveries run from the task's alarm). */
async function deliveriesUntil(id: string, done: (list: Delivery[]) => boolean, seconds = 15): Promise<Delivery[]> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const list = await deliveries(id);
    if (done(list) || Date.now() > deadline) return list;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function signingSecret(key = "test-key-1"): Promise<string> {
  const res = await api("/v1/tenant", { key });
  expect(res.status).toBe(200);
  const { webhook_signing_secret } = await parseBody(res, TenantSchema);
  if (!webhook_signing_secret) throw new Error("this deployment does not sign callbacks");
  return webhook_signing_secret;
}

async function completedTask(label: string, webhook: Record<string, unknown>): Promise<string> {
  const marker = `[${label}]`;
  await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
  const task = await startTask("assistant", `say ${marker}`, { webhook });
  expect((await waitForTask(task.id)).status).toBe("completed");
  return task.id;
}

describe("callbacks", () => {
  it("delivers a signed task.completed callback that verifies with the tenant's secret", async () => {
    const name = inbox("cb-ok");
    const id = await completedTask(name, { url: `${receiver}/r/${name}` });
    const list = await deliveriesUntil(id, (l) => l[0]?.status === "delivered");
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ event_type: "task.completed", status: "delivered" });
    expect(list[0]?.attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null })]);
    const [arrival] = await received(name);
    if (!arrival) throw new Error("nothing arrived");
    // Verified by the reference library with the secret GET /v1/tenant gives the tenant's admin.
    const payload = callbackOf(
      new Webhook(await signingSecret()).verify(arrival.body, arrival.headers),
      "task.completed",
    );
    expect(payload.type).toBe("task.completed");
    expect(payload.data).toMatchObject({ task_id: id, status: "completed", agent: "assistant" });
    expect(String(payload.data.result)).toContain(`Answer [${name}]`);
    expect(arrival.headers["webhook-id"]).toBe(list[0]?.id);
    // Another tenant's secret does not verify it: tenants cannot forge each other's callbacks.
    const betaSecret = await signingSecret("test-beta-admin");
    expect(betaSecret).not.toBe(await signingSecret());
    expect(() => new Webhook(betaSecret).verify(arrival.body, arrival.headers)).toThrow();
  });

  it("retries with backoff until the receiver takes it, keeping every attempt and the same webhook-id", async () => {
    const name = inbox("cb-retry");
    const id = await completedTask(name, { url: `${receiver}/r/${name}?fail=2`, events: ["completed"] });
    const list = await deliveriesUntil(id, (l) => l[0]?.status === "delivered");
    expect(list[0]?.attempts.map((a) => a.status_code)).toEqual([500, 500, 200]);
    expect(list[0]?.attempts[0]?.error).toBe("the receiver answered 500");
    const arrivals = await received(name);
    expect(arrivals.map((a) => a.status)).toEqual([500, 500, 200]);
    expect(new Set(arrivals.map((a) => a.headers["webhook-id"])).size).toBe(1);
  });

  it("gives up after 6 attempts, and sends it again on request", async () => {
    const name = inbox("cb-fail");
    const id = await completedTask(name, { url: `${receiver}/r/${name}?fail=6` });
    const list = await deliveriesUntil(id, (l) => l[0]?.status === "failed");
    expect(list[0]?.status).toBe("failed");
    expect(list[0]?.attempts).toHaveLength(6);
    expect((await received(name)).length).toBe(6);

    await expectError(
      await api(`/v1/tasks/${id}/deliveries/msg_nope/redeliver`, { method: "POST" }),
      404,
      "delivery_not_found",
      "delivery_id",
    );
    const res = await api(`/v1/tasks/${id}/deliveries/${list[0]?.id}/redeliver`, { method: "POST" });
    expect(res.status).toBe(202);
    const again = await deliveriesUntil(id, (l) => l[0]?.status === "delivered");
    expect(again[0]?.attempts.map((a) => a.status_code)).toEqual([500, 500, 500, 500, 500, 500, 200]);
  });

  it("reports input_required only when asked, and a run's end after the person answers", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const call = toolUse("TodoWrite", { todos: [{ content: "x", status: "pending" }] });
    for (const [label, events, expected] of [
      ["cb-wait-all", undefined, ["task.input_required", "task.completed"]],
      ["cb-wait-end", ["completed", "failed"], ["task.completed"]],
    ] as const) {
      const name = inbox(label);
      await script(`[${name}]`, [{ content: [call], stop_reason: "tool_use" }, done]);
      const task = await startTask(agent, `plan [${name}]`, {
        webhook: { url: `${receiver}/r/${name}`, ...(events ? { events } : {}) },
      });
      const waiting = await waitForTask(task.id);
      expect(waiting.status).toBe("input_required");
      const request_id = pendingRequestId(waiting);
      if (!events) {
        const waiting = await deliveriesUntil(task.id, (l) => l[0]?.status === "delivered");
        expect(waiting[0]?.payload.data).toMatchObject({
          status: "input_required",
          pending_input: expect.objectContaining({ kind: "approval", tool_name: "TodoWrite", request_id }),
        });
      }
      const resumed = await api(`/v1/tasks/${task.id}/resume`, {
        method: "POST",
        body: JSON.stringify({ request_id, action: "approve" }),
      });
      expect(resumed.status).toBe(200);
      expect((await waitForTask(task.id)).status).toBe("completed");
      const list = await deliveriesUntil(
        task.id,
        (l) => l.length === expected.length && l.every((d) => d.status === "delivered"),
      );
      expect(list.map((d) => d.event_type)).toEqual(expected);
    }
  });

  it("keeps retrying after the object is evicted between attempts", async () => {
    const name = inbox("cb-evict");
    const id = await completedTask(name, { url: `${receiver}/r/${name}?fail=1` });
    await deliveriesUntil(id, (l) => (l[0]?.attempts.length ?? 0) >= 1);
    await abortAllDurableObjects();
    const list = await deliveriesUntil(id, (l) => l[0]?.status === "delivered");
    expect(list[0]?.status).toBe("delivered");
    expect((await received(name)).filter((a) => a.status === 200)).toHaveLength(1);
  });

  it("refuses callback URLs that are not https, private, or malformed, and starts nothing", async () => {
    const cases: [unknown, RequestErrorCode, string][] = [
      [{ url: "http://example.com/hook" }, "invalid_callback_url", "webhook.url"],
      [{ url: "https://10.0.0.7/hook" }, "invalid_callback_url", "webhook.url"],
      [{ url: "https://user:pw@example.com/hook" }, "invalid_callback_url", "webhook.url"],
      [{ url: "not a url" }, "invalid_callback_url", "webhook.url"],
      [{ url: "https://example.com/hook", events: ["finished"] }, "validation_failed", "webhook.events.0"],
      [{ url: "https://example.com/hook", secret: "x" }, "validation_failed", "webhook.secret"],
    ];
    for (const [webhook, code, field] of cases) {
      const res = await api("/v1/agents/assistant/tasks", {
        method: "POST",
        body: JSON.stringify({ input: "hi", webhook }),
      });
      await expectError(res, 400, code, field);
    }
  });
});
