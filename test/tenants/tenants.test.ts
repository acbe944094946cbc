// Tenants, scopes, rate limits and idempotent creation: keys are stored hashed (vitest.config.ts lists their
// digests), a task is visible only to its tenant, a read-only key cannot act, a key's task creations are rate
// limited, and Idempotency-Key follows Stripe's semantics.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { ConfigError } from "../../src/errors.ts";
import {
  AgentListSchema,
  CheckpointListSchema,
  type TaskResource,
  TaskResourceSchema,
  TenantSchema,
} from "../../src/http/responses.ts";
import { loadKeyRing } from "../../src/tenants/api-keys.ts";
import {
  api,
  apiJson,
  defineAgent,
  type EventBody,
  emulatorRequests,
  errorOf,
  events,
  expectError,
  parseBody,
  pendingRequestId,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

async function create(body: Record<string, unknown>, init: { key?: string; headers?: Record<string, string> } = {}) {
  return api("/v1/agents/assistant/tasks", { method: "POST", body: JSON.stringify(body), ...init });
}

async function scripted(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
  return marker;
}

describe("tenants", () => {
  it("shows a task only to its own tenant: every route answers 404 to another tenant", async () => {
    const marker = await scripted("tenant-own");
    const mine = await startTask("assistant", `hi ${marker}`);
    await waitForTask(mine.id);
    for (const [method, path] of [
      ["GET", ""],
      ["GET", "/messages"],
      ["GET", "/events"],
      ["GET", "/checkpoints"],
      ["GET", "/artifacts"],
      ["GET", "/workspace"],
      ["GET", "/deliveries"],
      ["POST", "/cancel"],
    ] as const) {
      const res = await api(`/v1/tasks/${mine.id}${path}`, { method, key: "test-beta-key" });
      await expectError(res, 404, "task_not_found", "id");
    }
    await expectError(
      await api(`/v1/tasks/${mine.id}/resume`, {
        method: "POST",
        body: '{"request_id":"toolu_x","action":"approve"}',
        key: "test-beta-key",
      }),
      404,
      "task_not_found",
      "id",
    );
    await expectError(
      await api(`/v1/tasks/${mine.id}/fork`, {
        method: "POST",
        body: JSON.stringify({ checkpoint_id: crypto.randomUUID() }),
        key: "test-beta-key",
      }),
      404,
      "task_not_found",
      "id",
    );
    // The other way round too, and the owner still sees everything.
    const theirs = await parseBody(
      await create({ input: `hi ${marker}` }, { key: "test-beta-key" }),
      TaskResourceSchema,
    );
    expect((await api(`/v1/tasks/${theirs.id}`, { key: "test-beta-key" })).status).toBe(200);
    await expectError(await api(`/v1/tasks/${theirs.id}`), 404, "task_not_found", "id");
    expect((await api(`/v1/tasks/${mine.id}`)).status).toBe(200);
  });

  it("lets a read-only key read but not act, and only an admin see the tenant", async () => {
    const marker = await scripted("tenant-read");
    const task = await startTask("assistant", `hi ${marker}`);
    await waitForTask(task.id);
    expect((await api(`/v1/tasks/${task.id}`, { key: "test-read-key" })).status).toBe(200);
    expect((await api("/v1/agents", { key: "test-read-key" })).status).toBe(200);
    await expectError(
      await create({ input: "hi" }, { key: "test-read-key" }),
      403,
      "insufficient_scope",
      "authorization",
    );
    await expectError(
      await api(`/v1/tasks/${task.id}/cancel`, { method: "POST", key: "test-read-key" }),
      403,
      "insufficient_scope",
      "authorization",
    );
    await expectError(await api("/v1/tenant", { key: "test-beta-key" }), 403, "insufficient_scope", "authorization");
    const tenant = await apiJson("/v1/tenant", TenantSchema, { key: "test-beta-admin" });
    expect(tenant.tenant).toBe("beta");
    expect(tenant.keys.map((k) => k.id).sort()).toEqual(["beta-admin", "beta-runner"]);
    expect(JSON.stringify(tenant)).not.toMatch(/[0-9a-f]{64}/);
    await expectError(await api("/v1/tasks", { key: "not-a-key" }), 401, "unauthorized", "authorization");
  });

  it("reads keys as SHA-256 digests, or plain keys for local development, and refuses a broken list", async () => {
    const ring = await loadKeyRing("dev-key, other-key");
    expect(ring.keys.map((k) => [k.tenant, k.scopes])).toEqual([
      ["default", ["admin"]],
      ["default", ["admin"]],
    ]);
    await expect(loadKeyRing('[{"tenant": "a", "scopes": ["run"], "sha256": "abc"}]')).rejects.toThrow(
      /OUTPOST_API_KEYS\[0\.sha256\]/,
    );
    await expect(loadKeyRing('[{"tenant": "Bad Name", "scopes": ["run"]}]')).rejects.toThrow(/OUTPOST_API_KEYS\[0/);
    const digest = "a".repeat(64);
    await expect(
      loadKeyRing(JSON.stringify([1, 2].map(() => ({ tenant: "a", scopes: ["read"], sha256: digest })))),
    ).rejects.toThrow(/twice/);
  });
});

describe("rate limits", () => {
  it("answers 429 with Retry-After once a key has used up its task creations", async () => {
    const marker = await scripted("rate");
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 4; i++) {
      const res = await create({ input: `hi ${marker}` }, { key: "test-limited-key" });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
      else expect(res.headers.get("ratelimit-limit")).toBe("3");
    }
    expect(statuses).toEqual([202, 202, 202, 429]);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    await expectError(limited as Response, 429, "rate_limited");
    // Reading is not limited.
    expect((await api("/v1/agents", { key: "test-limited-key" })).status).toBe(200);
  });
});

describe("Idempotency-Key", () => {
  it("replays the original response for the same key and body, and starts one task", async () => {
    const marker = await scripted("idem");
    const key = `order-${crypto.randomUUID()}`;
    const first = await create({ input: `hi ${marker}` }, { headers: { "idempotency-key": key } });
    expect(first.status).toBe(202);
    const original = await parseBody(first, TaskResourceSchema);
    await waitForTask(original.id);
    const again = await create({ input: `hi ${marker}` }, { headers: { "idempotency-key": key } });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    // The original response, as it was (status pending), not the task as it is now.
    expect(await parseBody(again, TaskResourceSchema)).toEqual(original);
    const log: EventBody[] = await events(original.id);
    expect(log.filter((e) => e.event_type === "run_started")).toHaveLength(1);
    // Keys are per tenant: another tenant's same key starts its own task.
    const beta = await create({ input: `hi ${marker}` }, { key: "test-beta-key", headers: { "idempotency-key": key } });
    expect(beta.status).toBe(202);
    expect(beta.headers.get("idempotent-replayed")).toBeNull();
    expect((await parseBody(beta, TaskResourceSchema)).id).not.toBe(original.id);
  });

  it("answers 422 for the same key with another body or route, and 400 for a malformed key", async () => {
    const marker = await scripted("idem-mismatch");
    const key = `k-${crypto.randomUUID()}`;
    const first = await create({ input: `hi ${marker}` }, { headers: { "idempotency-key": key } });
    expect(first.status).toBe(202);
    const task = await parseBody(first, TaskResourceSchema);
    await expectError(
      await create({ input: `bye ${marker}` }, { headers: { "idempotency-key": key } }),
      422,
      "idempotency_key_reused",
      "idempotency-key",
    );
    await waitForTask(task.id);
    const checkpoints = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    await expectError(
      await api(`/v1/tasks/${task.id}/fork`, {
        method: "POST",
        body: JSON.stringify({ checkpoint_id: checkpoints.checkpoints[0]?.checkpoint_id }),
        headers: { "idempotency-key": key },
      }),
      422,
      "idempotency_key_reused",
      "idempotency-key",
    );
    for (const bad of ["", "x".repeat(256), "with space", "tab\there"]) {
      const res = await api("/v1/agents/assistant/tasks", {
        method: "POST",
        body: JSON.stringify({ input: "hi" }),
        headers: { "idempotency-key": bad },
      });
      // An empty header value is no header at all to fetch; the others are refused.
      if (bad === "") expect([202, 400]).toContain(res.status);
      else await expectError(res, 400, "validation_failed", "idempotency-key");
    }
  });

  it("starts one task for concurrent requests with one key: each gets the same task", async () => {
    const marker = await scripted("idem-race");
    const key = `race-${crypto.randomUUID()}`;
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => create({ input: `hi ${marker}` }, { headers: { "idempotency-key": key } })),
    );
    const bodies = await Promise.all(
      responses.map(async (r) => ({ status: r.status, body: await parseBody(r, TaskResourceSchema) })),
    );
    expect(new Set(bodies.map((b) => b.status))).toEqual(new Set([202]));
    expect(new Set(bodies.map((b) => b.body.id)).size).toBe(1);
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1);
  });
});

describe("agents belong to tenants", () => {
  async function waitForTaskAs(id: string, key: string): Promise<TaskResource> {
    const res = await api(`/v1/tasks/${id}?wait=20`, { key });
    expect(res.status).toBe(200);
    return await parseBody(res, TaskResourceSchema);
  }

  /** The names GET /v1/agents lists to `key`. */
  async function listed(key: string): Promise<string[]> {
    const res = await api("/v1/agents", { key });
    expect(res.status).toBe(200);
    return (await parseBody(res, AgentListSchema)).agents.map((a) => a.name);
  }

  /** An error message with the agent's name taken out, to compare the answers for two names. */
  function withoutName(message: string, name: string): string {
    return message.replaceAll(`"${name}"`, '"?"');
  }

  it("shows an agent only to the tenants it names: to any other, every agent route answers as for an unknown agent", async () => {
    const betaOnly = defineAgent({ tenants: ["beta"] });
    const everyone = defineAgent({});
    expect(await listed("test-key-1")).not.toContain(betaOnly);
    expect(await listed("test-key-1")).toEqual(expect.arrayContaining(["assistant", everyone]));
    expect(await listed("test-beta-key")).toEqual(expect.arrayContaining(["assistant", everyone, betaOnly]));

    const unknown = await expectError(await api("/v1/agents/nobody"), 404, "agent_not_found", "name");
    const hidden = await expectError(await api(`/v1/agents/${betaOnly}`), 404, "agent_not_found", "name");
    // The same body but for the name: the list of agents in the message is the tenant's own, without this one.
    expect(withoutName(hidden.error.message, betaOnly)).toBe(withoutName(unknown.error.message, "nobody"));
    expect(hidden.error.message).toBe(
      `No agent named "${betaOnly}". Registered agents: ${(await listed("test-key-1")).join(", ")}.`,
    );
    const marker = await scripted("agent-tenant");
    const post = (key: string) =>
      api(`/v1/agents/${betaOnly}/tasks`, { method: "POST", body: JSON.stringify({ input: `hi ${marker}` }), key });
    const refused = await expectError(await post("test-key-1"), 404, "agent_not_found", "name");
    expect(refused.error.message).toBe(hidden.error.message);

    // The tenant it names sees and runs it.
    expect((await api(`/v1/agents/${betaOnly}`, { key: "test-beta-key" })).status).toBe(200);
    const started = await post("test-beta-key");
    expect(started.status).toBe(202);
    expect((await waitForTaskAs((await parseBody(started, TaskResourceSchema)).id, "test-beta-key")).status).toBe(
      "completed",
    );
  });

  it("refuses a fork onto another tenant's agent, and from a checkpoint whose agent the tenant may no longer run", async () => {
    const tenants = ["default"];
    const mine = defineAgent({ tenants });
    const betaOnly = defineAgent({ tenants: ["beta"] });
    const marker = await scripted("fork-tenant");
    const task = await startTask(mine, `hi ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const list = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    const start = list.checkpoints.find((c) => c.next_action === "model_turn")?.checkpoint_id;
    const fork = (body: Record<string, unknown>) =>
      api(`/v1/tasks/${task.id}/fork`, { method: "POST", body: JSON.stringify({ checkpoint_id: start, ...body }) });

    const unknown = await expectError(
      await fork({ state_updates: { current_agent: "nobody" } }),
      404,
      "agent_not_found",
      "state_updates.current_agent",
    );
    const hidden = await expectError(
      await fork({ state_updates: { current_agent: betaOnly } }),
      404,
      "agent_not_found",
      "state_updates.current_agent",
    );
    expect(withoutName(hidden.error.message, betaOnly)).toBe(withoutName(unknown.error.message, "nobody"));
    expect((await fork({})).status).toBe(202);

    // A deploy takes the agent from this tenant: its own checkpoints can no longer start a run of it.
    tenants.splice(0, tenants.length, "beta");
    await expectError(await fork({}), 404, "agent_not_found", "checkpoint_id");
  });

  it("fails a task whose agent a deploy has taken from its tenant when its run resumes, without another model call", async () => {
    const tenants = ["default"];
    const name = defineAgent({ tenants, allowedTools: ["TodoWrite"], toolPermissions: { TodoWrite: "ask" } });
    const marker = uniqueMarker("run-tenant");
    await script(marker, [
      { content: [toolUse("TodoWrite", { todos: [{ content: "Step", status: "pending" }] })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Done." }] },
    ]);
    const task = await startTask(name, `hi ${marker}`);
    const waiting = await waitForTask(task.id);
    expect(waiting.status).toBe("input_required");

    tenants.splice(0, tenants.length, "beta");
    const request_id = pendingRequestId(waiting);
    const resumed = await api(`/v1/tasks/${task.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id, action: "approve" }),
    });
    expect(resumed.status).toBe(200);
    const failed = await waitForTask(task.id);
    expect(failed.status).toBe("failed");
    expect(failed.error?.code).toBe("agent_not_found");
    expect(failed.error?.message).toMatch(new RegExp(`^No agent named "${name}"\\. Registered agents: `));
    expect(failed.error?.message).not.toContain(`, ${name}`);
    // The model was asked once (the turn that asked for approval), never after the agent was taken away.
    expect(await emulatorRequests(task.id)).toHaveLength(1);
  });

  it("refuses an agent definition whose tenants list is empty or names an invalid tenant", () => {
    for (const [tenants, message] of [
      [[], /tenants must list at least one tenant/],
      [["Not OK"], /tenants\.0 must match/],
      [["acme", ""], /tenants\.1 must match/],
    ] as const) {
      const error = errorOf(() => new (class extends Agent {})({ name: "scoped", systemPrompt: "x", tenants }));
      expect(error, JSON.stringify(tenants)).toBeInstanceOf(ConfigError);
      expect(error.message).toMatch(message);
    }
  });
});
