// Finding one's tasks and sessions: GET /v1/tasks and GET /v1/sessions page through the tenant's directory
// (src/tenants/directory.ts), which each task's object keeps up to date from its alarm. The tests run in a tenant of
// their own ("lister", vitest.config.ts), so no other test's tasks appear, and check what a client sees: the order,
// the pages, every filter, the statuses as they change, other tenants, bad queries, and reports that come late or
// after a reset.
import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  CheckpointListSchema,
  type SessionList,
  SessionListSchema,
  SessionResourceSchema,
  type TaskList,
  TaskListSchema,
  type TaskResource,
  TaskResourceSchema,
  type TaskSummary,
} from "../../src/http/responses.ts";
import {
  api,
  defineAgent,
  expectError,
  fireTimers,
  parseBody,
  script,
  UUID_V4,
  uniqueMarker,
} from "../support/helpers.ts";

const KEY = "test-lister-key";
const other = defineAgent({});

/** A tag no other test uses, so a listing filtered by it holds this test's tasks only. */
function uniqueTag(label: string): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}`;
}

async function start(agent: string, input: string, extra: Record<string, unknown> = {}): Promise<TaskResource> {
  const res = await api(`/v1/agents/${agent}/tasks`, {
    method: "POST",
    body: JSON.stringify({ input, ...extra }),
    key: KEY,
  });
  expect(res.status).toBe(202);
  return parseBody(res, TaskResourceSchema);
}

async function finished(id: string): Promise<TaskResource> {
  const res = await api(`/v1/tasks/${id}?wait=20`, { key: KEY });
  expect(res.status).toBe(200);
  return parseBody(res, TaskResourceSchema);
}

/** A scripted task in the lister tenant, run to its end. */
async function completedTask(label: string, extra: Record<string, unknown> = {}, agent = "assistant") {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
  const task = await start(agent, `${label} ${marker}`, extra);
  return finished(task.id);
}

async function listTasks(query: string, key = KEY): Promise<TaskList> {
  const res = await api(`/v1/tasks${query}`, { key });
  expect(res.status).toBe(200);
  return parseBody(res, TaskListSchema);
}

async function listSessions(query: string, key = KEY): Promise<SessionList> {
  const res = await api(`/v1/sessions${query}`, { key });
  expect(res.status).toBe(200);
  return parseBody(res, SessionListSchema);
}

/** Reads until `done` holds: the directory may lag a task's own state (by about a second). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, seconds = 10): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const ids = (list: { tasks: TaskSummary[] } | SessionList) =>
  ("tasks" in list ? list.tasks : list.sessions).map((t) => t.id);

/** The listing's order: newest first, the id breaking a tie. */
function newestFirst(tasks: readonly Pick<TaskResource, "id" | "created_at">[]): string[] {
  return [...tasks]
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.id.localeCompare(a.id))
    .map((t) => t.id);
}

describe("GET /v1/tasks", () => {
  it("lists the tenant's tasks newest first, each with its agent, status, tags, times, cost and link", async () => {
    const tag = uniqueTag("order");
    const tasks: TaskResource[] = [];
    for (const label of ["first", "second", "third"]) tasks.push(await completedTask(label, { tags: [tag] }));
    const list = await until(
      () => listTasks(`?tag=${tag}`),
      (l) => l.tasks.length === 3 && l.tasks.every((t) => t.status === "completed"),
    );
    expect(ids(list)).toEqual(newestFirst(tasks));
    expect(list.next_cursor).toBeNull();
    for (const summary of list.tasks) {
      const task = tasks.find((t) => t.id === summary.id);
      expect(summary).toEqual({
        id: task?.id,
        agent: "assistant",
        workflow: null,
        status: "completed",
        waiting_for: null,
        parent_task_id: null,
        tags: [tag],
        created_at: task?.created_at,
        updated_at: expect.any(String),
        ended_at: task?.completed_at,
        total_cost_usd: task?.usage.total_cost_usd,
        links: { self: `https://outpost.test/v1/tasks/${task?.id}` },
      });
      expect(Date.parse(summary.updated_at)).toBeGreaterThanOrEqual(Date.parse(String(task?.completed_at)));
    }
  });

  it("pages with next_cursor: every task once, in order, and no cursor after the last page", async () => {
    const tag = uniqueTag("pages");
    const tasks: TaskResource[] = [];
    for (let i = 0; i < 5; i++)
      tasks.push(await start("assistant", `page ${i} ${uniqueMarker("page")}`, { tags: [tag] }));
    await until(
      () => listTasks(`?tag=${tag}`),
      (l) => l.tasks.length === 5,
    );
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    do {
      const page: TaskList = await listTasks(`?tag=${tag}&limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...ids(page));
      sizes.push(page.tasks.length);
      cursor = page.next_cursor;
    } while (cursor !== null);
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(newestFirst(tasks));
  });

  it("filters by status, agent, tag, parent task and creation time", async () => {
    const tag = uniqueTag("filters");
    const a = await completedTask("filter-a", { tags: [tag] });
    const b = await completedTask("filter-b", { tags: [tag] }, other);
    // A task that waits: the emulator holds its first token back, and the task is canceled meanwhile.
    const slowMarker = uniqueMarker("filter-slow");
    await script(slowMarker, [{ content: [{ type: "text", text: "late" }] }], { ttft_ms: 30_000 });
    const slow = await start("assistant", `slow ${slowMarker}`, { tags: [tag] });
    // Listed while it runs, not only once it has ended.
    const running = await until(
      () => listTasks(`?tag=${tag}&status=running`),
      (l) => ids(l).includes(slow.id),
    );
    expect(ids(running)).toContain(slow.id);
    expect((await api(`/v1/tasks/${slow.id}/cancel`, { method: "POST", key: KEY })).status).toBe(200);
    // A fork of the first task has it as its parent.
    const checkpoints = await parseBody(await api(`/v1/tasks/${a.id}/checkpoints`, { key: KEY }), CheckpointListSchema);
    const forkRes = await api(`/v1/tasks/${a.id}/fork`, {
      method: "POST",
      key: KEY,
      body: JSON.stringify({ checkpoint_id: checkpoints.checkpoints[0]?.checkpoint_id }),
    });
    expect(forkRes.status).toBe(202);
    const fork = await parseBody(forkRes, TaskResourceSchema);
    // Every task has ended and been reported: the listings compared below must not see one change in between.
    await until(
      () => listTasks(`?tag=${tag}`),
      (l) =>
        l.tasks.length === 4 &&
        l.tasks.some((t) => t.id === slow.id && t.status === "canceled") &&
        l.tasks.some((t) => t.id === fork.id && ["completed", "failed"].includes(t.status)),
    );

    expect(ids(await listTasks(`?tag=${tag}&status=canceled`))).toEqual([slow.id]);
    expect(new Set(ids(await listTasks(`?tag=${tag}&status=canceled,completed`)))).toEqual(
      new Set(ids(await listTasks(`?tag=${tag}&status=canceled&status=completed`))),
    );
    expect(ids(await listTasks(`?tag=${tag}&agent=${other}`))).toEqual([b.id]);
    expect(ids(await listTasks(`?parent_task_id=${a.id}`))).toEqual([fork.id]);
    expect((await listTasks(`?parent_task_id=${a.id}`)).tasks[0]?.parent_task_id).toBe(a.id);
    const since = ids(await listTasks(`?tag=${tag}&created_after=${encodeURIComponent(b.created_at)}`));
    expect(since).toEqual(newestFirst([b, slow, fork]));
    const before = ids(await listTasks(`?tag=${tag}&created_before=${encodeURIComponent(b.created_at)}`));
    expect(before).toEqual([a.id]);
    expect((await listTasks(`?tag=${uniqueTag("nothing")}`)).tasks).toEqual([]);
  });

  it("shows a tenant its own tasks only", async () => {
    const tag = uniqueTag("own");
    const task = await completedTask("own", { tags: [tag] });
    await until(
      () => listTasks(`?tag=${tag}`),
      (l) => l.tasks.length === 1,
    );
    expect((await listTasks(`?tag=${tag}`, "test-beta-key")).tasks).toEqual([]);
    expect((await listTasks(`?tag=${tag}`, "test-key-1")).tasks).toEqual([]);
    expect(ids(await listTasks(`?tag=${tag}`))).toEqual([task.id]);
  });

  it("refuses a query it cannot answer exactly, naming the parameter, and a key that may not read", async () => {
    await expectError(await api("/v1/tasks?sort=asc", { key: KEY }), 400, "validation_failed", "sort");
    await expectError(await api("/v1/tasks?limit=0", { key: KEY }), 400, "validation_failed", "limit");
    await expectError(await api("/v1/tasks?limit=101", { key: KEY }), 400, "validation_failed", "limit");
    await expectError(await api("/v1/tasks?status=done", { key: KEY }), 400, "validation_failed", "status.0");
    await expectError(await api("/v1/tasks?agent=a&agent=b", { key: KEY }), 400, "validation_failed", "agent");
    await expectError(
      await api("/v1/tasks?created_after=yesterday", { key: KEY }),
      400,
      "validation_failed",
      "created_after",
    );
    await expectError(
      await api("/v1/tasks?parent_task_id=42", { key: KEY }),
      400,
      "validation_failed",
      "parent_task_id",
    );
    await expectError(await api("/v1/tasks?cursor=not-a-cursor", { key: KEY }), 400, "validation_failed", "cursor");
    await expectError(await api("/v1/tasks?tag=Bad%20Tag", { key: KEY }), 400, "validation_failed", "tag");
    await expectError(await api("/v1/tasks", { key: "test-run-key" }), 403, "insufficient_scope", "authorization");
    await expectError(await api("/v1/tasks", { key: null }), 401, "unauthorized", "authorization");
  });

  it("keeps the newest report when an older one arrives after it", async () => {
    const tenant = env.TENANTS.get(env.TENANTS.idFromName("lister"));
    const id = crypto.randomUUID();
    const tag = uniqueTag("late");
    const entry = {
      id,
      kind: "task" as const,
      agent: "assistant",
      workflow: null,
      waiting_for: null,
      parent_task_id: null,
      tags: [tag],
      created_at: new Date().toISOString(),
      ended_at: null,
      total_cost_usd: 0,
    };
    await tenant.record({ entry: { ...entry, status: "completed", updated_at: entry.created_at }, version: 9 });
    await tenant.record({ entry: { ...entry, status: "running", updated_at: entry.created_at }, version: 4 });
    expect((await listTasks(`?tag=${tag}`)).tasks.map((t) => t.status)).toEqual(["completed"]);
    await tenant.forget(id);
    expect((await listTasks(`?tag=${tag}`)).tasks).toEqual([]);
  });

  it("lists what a task waits for as its newest report says, and nothing once a later report says it waits no more", async () => {
    const tenant = env.TENANTS.get(env.TENANTS.idFromName("lister"));
    const tag = uniqueTag("waits");
    const createdAt = new Date().toISOString();
    const entry = {
      id: crypto.randomUUID(),
      kind: "task" as const,
      agent: "assistant",
      workflow: null,
      status: "running",
      parent_task_id: null,
      tags: [tag],
      created_at: createdAt,
      updated_at: createdAt,
      ended_at: null,
      total_cost_usd: 0,
    };
    const waiting = {
      kind: "provider" as const,
      until: new Date(Date.now() + 30_000).toISOString(),
      attempts: 3,
      last_error: {
        code: "provider_overloaded" as const,
        message: "The provider is overloaded.",
        type: "ProviderError",
        retryable: true,
        status: 529,
      },
    };
    await tenant.record({ entry: { ...entry, waiting_for: waiting }, version: 5 });
    expect((await listTasks(`?tag=${tag}`)).tasks.map((t) => [t.status, t.waiting_for])).toEqual([
      ["running", waiting],
    ]);
    await tenant.record({ entry: { ...entry, waiting_for: null }, version: 6 });
    expect((await listTasks(`?tag=${tag}`)).tasks.map((t) => [t.status, t.waiting_for])).toEqual([["running", null]]);
    // An older report that still waited changes nothing.
    await tenant.record({ entry: { ...entry, waiting_for: waiting }, version: 5 });
    expect((await listTasks(`?tag=${tag}`)).tasks.map((t) => t.waiting_for)).toEqual([null]);
    await tenant.forget(entry.id);
  });

  it("lists a task whose object was reset before its first report, from the alarm that outlives the reset", async () => {
    const tag = uniqueTag("reset");
    const marker = uniqueMarker("reset");
    await script(marker, [{ content: [{ type: "text", text: "after the reset" }] }]);
    const task = await start("assistant", `reset ${marker}`, { tags: [tag] });
    await abortAllDurableObjects();
    // The alarm that was armed for the report survives; it reports and resumes the run.
    await fireTimers(task.id, ["directory", "heartbeat"], "lister");
    const list = await until(
      () => listTasks(`?tag=${tag}`),
      (l) => l.tasks[0]?.status === "completed",
    );
    expect(list.tasks.map((t) => [t.id, t.status])).toEqual([[task.id, "completed"]]);
  });
});

describe("GET /v1/sessions", () => {
  it("lists the tenant's sessions, not its tasks, with the status the session shows as it changes", async () => {
    const marker = uniqueMarker("listed-session");
    await script(marker, [{ content: [{ type: "text", text: "Hi there." }] }]);
    const created = await api("/v1/agents/assistant/sessions", { method: "POST", body: "{}", key: KEY });
    expect(created.status).toBe(201);
    const session = await parseBody(created, SessionResourceSchema);
    const listed = (status: string) =>
      until(
        () => listSessions(""),
        (l) => l.sessions.some((s) => s.id === session.id && s.status === status),
      );
    const ready = await listed("ready");
    expect(ready.sessions.find((s) => s.id === session.id)).toEqual({
      id: session.id,
      agent: "assistant",
      status: "ready",
      waiting_for: null,
      parent_task_id: null,
      tags: [],
      created_at: session.created_at,
      updated_at: expect.any(String),
      ended_at: null,
      total_cost_usd: 0,
      links: { self: `https://outpost.test/v1/sessions/${session.id}` },
    });
    const sent = await api(`/v1/sessions/${session.id}/messages?wait=20`, {
      method: "POST",
      key: KEY,
      body: JSON.stringify({ message: `hello ${marker}` }),
    });
    expect(sent.status).toBe(200);
    expect((await api(`/v1/sessions/${session.id}`, { method: "DELETE", key: KEY })).status).toBe(200);
    const closed = (await listed("closed")).sessions.find((s) => s.id === session.id);
    expect(closed?.ended_at).toMatch(/Z$/);
    expect(ids(await listSessions("?status=closed"))).toContain(session.id);
    expect(ids(await listSessions("?status=ready"))).not.toContain(session.id);
    expect(ids(await listTasks("?limit=100"))).not.toContain(session.id);
    expect(ids(await listSessions("", "test-beta-key"))).not.toContain(session.id);
    expect(session.id).toMatch(UUID_V4);
  });

  it("refuses a task's filter on sessions, naming it", async () => {
    await expectError(
      await api(`/v1/sessions?parent_task_id=${crypto.randomUUID()}`, { key: KEY }),
      400,
      "validation_failed",
      "parent_task_id",
    );
    await expectError(await api("/v1/sessions?status=completed", { key: KEY }), 400, "validation_failed", "status.0");
  });
});
