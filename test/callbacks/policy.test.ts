// Callbacks under their own network policy, with a delivery log that keeps no answer and no secret: the callback
// URL is judged by OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS (never the tools' list) at creation and at every attempt;
// each attempt keeps its status, timing and error class, never the receiver's body (objects from before lose what
// they kept); payloads and error texts pass the deployment's redactor; and redelivery is rate-limited per key.
// The receiver is the real HTTP server of test/support/callback-receiver.ts on 127.0.0.1, which is also reachable as
// [::ffff:7f00:1]: vitest.config.ts lets the tools, and only the tools, reach that name.

import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { registry } from "../../src/agents/catalog.ts";
import { resolveModel } from "../../src/config/models.ts";
import { TaskResourceSchema } from "../../src/http/responses.ts";
import { checkOutboundUrl, outboundPolicy } from "../../src/net/outbound.ts";
import { taskStubFor } from "../../src/tasks/task-ids.ts";
import { callbackOf, deliveriesUntil, deliveryLog, inbox, received, receiver } from "../support/callback-helpers.ts";
import {
  api,
  expectError,
  ISO_TIME,
  parseBody,
  script,
  startTask,
  storageAsBeforeVersion6,
  waitForTask,
} from "../support/helpers.ts";

/** The receiver under a name only the tools' private-host list allows. */
const mappedReceiver = receiver.replace("127.0.0.1", "[::ffff:127.0.0.1]");

async function completedTask(name: string, url: string, key?: string): Promise<string> {
  const marker = `[${name}]`;
  await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
  const res = await api("/v1/agents/assistant/tasks", {
    method: "POST",
    body: JSON.stringify({ input: `say ${marker}`, webhook: { url } }),
    ...(key ? { key } : {}),
  });
  expect(res.status).toBe(202);
  const { id } = await parseBody(res, TaskResourceSchema);
  const done = await api(`/v1/tasks/${id}?wait=20`, key ? { key } : {});
  expect((await parseBody(done, TaskResourceSchema)).status).toBe("completed");
  return id;
}

describe("callback network policy", () => {
  it("refuses at creation a callback URL that only the tools' private-host list allows", async () => {
    const name = inbox("cb-policy-create");
    const url = `${mappedReceiver}/r/${name}`;
    // The premise: the tools may reach this host.
    expect(checkOutboundUrl(url, outboundPolicy(env.OUTPOST_ALLOW_PRIVATE_HOSTS)).hostname).toBe("[::ffff:7f00:1]");
    const res = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: "never runs", webhook: { url } }),
    });
    const body = await expectError(res, 400, "invalid_callback_url", "webhook.url");
    expect(body.error.message).toBe(
      `${url} is not allowed: the address is loopback (127.0.0.0/8); callbacks to private, loopback and link-local hosts need OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS.`,
    );
    expect(await received(name)).toEqual([]);
  });

  it("judges every attempt by the callback policy, so a stored URL it refuses receives nothing", async () => {
    const name = inbox("cb-policy-attempt");
    const marker = `[${name}]`;
    await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
    // A task whose callback URL was accepted under an earlier policy: started in its object directly, past the
    // Worker's check at creation.
    const id = crypto.randomUUID();
    const agent = registry.create("assistant");
    const started = await taskStubFor(env, "default", id).start({
      id,
      tenant: "default",
      webhook: { url: `${mappedReceiver}/r/${name}`, events: ["completed"] },
      agent: agent.name,
      input: `say ${marker}`,
      metadata: {},
      model: resolveModel(agent.model, env.OUTPOST_DEFAULT_MODEL),
      retentionDays: 7,
      retentionExplicit: false,
      tags: [],
      parentTaskId: null,
    });
    expect(started.outcome).toBe("created");
    expect((await waitForTask(id)).status).toBe("completed");
    const list = await deliveriesUntil(id, (l) => l[0]?.status === "failed");
    expect(list[0]?.status).toBe("failed");
    expect(list[0]?.attempts).toHaveLength(6);
    expect(list[0]?.attempts[0]).toStrictEqual({
      attempt: 1,
      started_at: expect.stringMatching(ISO_TIME),
      status_code: null,
      error_class: "blocked_url",
      error:
        "the callback URL is not allowed: the address is loopback (127.0.0.0/8); callbacks to private, loopback and link-local hosts need OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS",
      duration_ms: expect.any(Number),
    });
    expect(await received(name)).toEqual([]);
  });
});

describe("delivery log", () => {
  it("keeps each attempt's status, timing and error class, never the receiver's answer", async () => {
    const name = inbox("cb-log");
    const reply = `internal-reply-${crypto.randomUUID()}`;
    expect((await fetch(`${receiver}/r/${name}`, { method: "PUT", body: reply })).status).toBe(204);
    const id = await completedTask(name, `${receiver}/r/${name}?fail=1`);
    const list = await deliveriesUntil(id, (l) => l[0]?.status === "delivered");
    const timing = { started_at: expect.stringMatching(ISO_TIME), duration_ms: expect.any(Number) };
    expect(list[0]?.attempts).toStrictEqual([
      { attempt: 1, ...timing, status_code: 500, error_class: "http_status", error: "the receiver answered 500" },
      { attempt: 2, ...timing, status_code: 200, error_class: null, error: null },
    ]);
    // The receiver did answer with it, twice.
    expect((await received(name)).map((a) => a.status)).toEqual([500, 200]);
    expect((await deliveryLog(id)).text).not.toContain(reply);
  });

  it("classes a receiver that cannot be reached as connection_failed", async () => {
    const name = inbox("cb-refused");
    // Nothing listens on port 1 of the loopback address, which the callback policy allows in the tests.
    const id = await completedTask(name, `http://127.0.0.1:1/r/${name}`);
    const list = await deliveriesUntil(id, (l) => (l[0]?.attempts[0]?.duration_ms ?? null) !== null);
    expect(list[0]?.attempts[0]).toMatchObject({ attempt: 1, status_code: null, error_class: "connection_failed" });
    expect(list[0]?.attempts[0]?.error).toEqual(expect.any(String));
  });

  it("drops what objects from before version 5 kept of receivers' answers, and classes their attempts", async () => {
    const name = inbox("cb-migrate");
    const id = await completedTask(name, `${receiver}/r/${name}?fail=1`);
    await deliveriesUntil(id, (l) => l[0]?.status === "delivered");
    const excerpt = `kept-answer-${crypto.randomUUID()}`;
    const stub = taskStubFor(env, "default", id);
    // The object as version 4 left it: no error classes, and the start of each answer kept.
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      storageAsBeforeVersion6(sql);
      sql.exec("ALTER TABLE delivery_attempts DROP COLUMN error_class");
      sql.exec("ALTER TABLE delivery_attempts ADD COLUMN response_excerpt TEXT");
      sql.exec("UPDATE delivery_attempts SET response_excerpt = ?", excerpt);
      sql.exec("DELETE FROM schema_migrations WHERE version > 4");
    });
    // The next request meets a fresh instance, whose constructor migrates the storage it finds.
    await abortAllDurableObjects();

    const { deliveries, text } = await deliveryLog(id);
    expect(text).not.toContain(excerpt);
    expect(deliveries[0]?.attempts.map((a) => [a.status_code, a.error_class])).toEqual([
      [500, "http_status"],
      [200, null],
    ]);
    expect(deliveries[0]?.attempts[0]).not.toHaveProperty("response_excerpt");
    // Gone from storage, not only from the answer (a stub from before the reset no longer works).
    await runInDurableObject(taskStubFor(env, "default", id), (_instance, state) => {
      const columns = state.storage.sql
        .exec<{ name: string }>("SELECT name FROM pragma_table_info('callbacks_attempts')")
        .toArray()
        .map((c) => c.name);
      expect(columns).toEqual([
        "delivery_id",
        "attempt",
        "started_at",
        "status_code",
        "error",
        "duration_ms",
        "error_class",
      ]);
    });
  });
});

describe("callback redaction", () => {
  it("keeps secrets out of a failed task's callback and out of its delivery log", async () => {
    const name = inbox("cb-secret");
    const marker = `[${name}]`;
    const shaped = `sk-ant-api03-${crypto.randomUUID().replaceAll("-", "")}`;
    const secret = env.ANTHROPIC_API_KEY ?? "";
    expect(secret.length).toBeGreaterThanOrEqual(8);
    // The provider refuses the call with a message that quotes a key-shaped string and the deployment's own key.
    await script(marker, [
      {
        content: [{ type: "text", text: "never said" }],
        faults: [
          {
            kind: "http",
            status: 400,
            error_type: "invalid_request_error",
            message: `rejected ${shaped}, sent with ${secret}`,
          },
        ],
      },
    ]);
    const task = await startTask("assistant", `say ${marker}`, {
      webhook: { url: `${receiver}/r/${name}`, events: ["failed"] },
    });
    expect((await waitForTask(task.id)).status).toBe("failed");
    const list = await deliveriesUntil(task.id, (l) => l[0]?.status === "delivered");
    expect(list[0]?.event_type).toBe("task.failed");
    const [arrival] = await received(name);
    if (!arrival) throw new Error("nothing arrived");
    const error = callbackOf(JSON.parse(arrival.body), "task.failed").data.error;
    expect(error?.message).toContain("rejected [REDACTED], sent with [REDACTED]");
    for (const text of [arrival.body, (await deliveryLog(task.id)).text]) {
      expect(text).not.toContain(shaped);
      expect(text).not.toContain(secret);
    }
  });
});

describe("callback redaction of stored deliveries", () => {
  it("redacts a delivery stored with a secret in its payload, in the log and when it is sent again", async () => {
    const name = inbox("cb-stored-secret");
    const id = await completedTask(name, `${receiver}/r/${name}`);
    const [delivery] = await deliveriesUntil(id, (l) => l[0]?.status === "delivered");
    const shaped = `sk-ant-api03-${crypto.randomUUID().replaceAll("-", "")}`;
    const secret = env.ANTHROPIC_API_KEY ?? "";
    // A payload as a version before redaction stored it, whatever the task's own row holds now.
    const leaky = { ...delivery?.payload, data: { ...delivery?.payload.data, result: `leaked ${shaped} ${secret}` } };
    await runInDurableObject(taskStubFor(env, "default", id), (_instance, state) => {
      state.storage.sql.exec("UPDATE callbacks_deliveries SET payload = ?", JSON.stringify(leaky));
    });
    const log = await deliveryLog(id);
    expect(callbackOf(log.deliveries[0]?.payload, "task.completed").data.result).toBe("leaked [REDACTED] [REDACTED]");
    const res = await api(`/v1/tasks/${id}/deliveries/${delivery?.id}/redeliver`, { method: "POST" });
    expect(res.status).toBe(202);
    await deliveriesUntil(id, (l) => l[0]?.status === "delivered" && l[0]?.attempts.length === 2);
    const second = (await received(name))[1];
    if (!second) throw new Error("the redelivery did not arrive");
    expect(callbackOf(JSON.parse(second.body), "task.completed").data.result).toBe("leaked [REDACTED] [REDACTED]");
    for (const text of [log.text, second.body]) {
      expect(text).not.toContain(shaped);
      expect(text).not.toContain(secret);
    }
  });
});

describe("redelivery", () => {
  it("limits redeliveries per key: 429 rate_limited with Retry-After, apart from the key's task creations", async () => {
    // This key may do 3 of each a minute (vitest.config.ts).
    const key = "test-limited-key";
    const name = inbox("cb-redeliver-limit");
    const id = await completedTask(name, `${receiver}/r/${name}`, key);
    const [delivery] = await deliveriesUntil(id, (l) => l[0]?.status === "delivered", key);
    const redeliver = () => api(`/v1/tasks/${id}/deliveries/${delivery?.id}/redeliver`, { method: "POST", key });
    for (let i = 0; i < 3; i++) {
      const res = await redeliver();
      expect(res.status).toBe(202);
      expect(res.headers.get("ratelimit-limit")).toBe("3");
    }
    const limited = await redeliver();
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    await expectError(limited, 429, "rate_limited");
    // Its task creations have a budget of their own: one used, two left.
    const marker = `[${name}-more]`;
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const more = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: `say ${marker}` }),
      key,
    });
    expect(more.status).toBe(202);
  });
});
