// A task that waits out its model provider is listed with what it waits for: GET /v1/tasks shows the task view's
// `waiting_for` (src/tasks/waiting-for.ts) as its object reports it to the tenant's directory
// (src/task-host/directory-report.ts), and the report that it waits no more, although the task stays running; GET
// /v1/sessions shows a session's turn waiting likewise. A tenant's directory created before the field gets its column
// (src/storage/tenant-migrations.ts, version 6).
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  SessionListSchema,
  SessionResourceSchema,
  type TaskList,
  TaskListSchema,
  TaskResourceSchema,
  type TaskSummary,
} from "../../src/http/responses.ts";
import { api, apiJson, fireTimers, parseBody, readSse, script, startTask, uniqueMarker } from "../support/helpers.ts";

/** The listing's entry for the one task with `tag`, once `done` holds (the directory lags the task by about a second). */
async function listed(tag: string, done: (summary: TaskSummary | undefined) => boolean): Promise<TaskSummary> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await api(`/v1/tasks?tag=${tag}`);
    expect(res.status).toBe(200);
    const list: TaskList = await parseBody(res, TaskListSchema);
    const summary = list.tasks[0];
    if (done(summary) || Date.now() > deadline) {
      expect(list.tasks).toHaveLength(1);
      return summary as TaskSummary;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Reads the task's stream from `after` until an event of `type` arrives. */
async function eventArrives(id: string, type: string, after = 0): Promise<void> {
  await readSse(await api(`/v1/tasks/${id}/events?after=${after}`), (f) => f.data.includes(`"${type}"`));
}

const taskOf = (id: string) => apiJson(`/v1/tasks/${id}`, TaskResourceSchema);

// First in the file: the reset it makes finds no other test's object at work.
describe("the directory's waiting_for column", () => {
  it("adds waiting_for to a tenant's directory created before it, keeping its rows, and lists them with null", async () => {
    const name = `migrating-${crypto.randomUUID()}`;
    // A stub from before a reset cannot be used after it.
    const tenant = () => env.TENANTS.get(env.TENANTS.idFromName(name));
    const createdAt = new Date().toISOString();
    const entry = {
      id: crypto.randomUUID(),
      kind: "task" as const,
      agent: "assistant",
      workflow: null,
      status: "running",
      waiting_for: null,
      parent_task_id: null,
      tags: [],
      created_at: createdAt,
      updated_at: createdAt,
      ended_at: null,
      total_cost_usd: 0,
    };
    await tenant().record({ entry, version: 1 });
    // Its storage as version 5 left it: no waiting_for column, and version 6 not on record.
    await runInDurableObject(tenant(), (_instance, state) => {
      state.storage.sql.exec("ALTER TABLE directory_records DROP COLUMN waiting_for");
      state.storage.sql.exec("DELETE FROM schema_migrations WHERE version >= 6");
    });
    await abortAllDurableObjects();
    const query = { kind: "task" as const, statuses: [], limit: 10 };
    expect((await tenant().list(query)).entries).toEqual([entry]);
    const columns = await runInDurableObject(tenant(), (_instance, state) => ({
      versions: state.storage.sql
        .exec<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version")
        .toArray()
        .map((row) => row.version),
      waitingFor: state.storage.sql
        .exec<{ name: string; type: string }>("SELECT name, type FROM pragma_table_info('directory_records')")
        .toArray()
        .filter((column) => column.name === "waiting_for"),
    }));
    expect(columns).toEqual({ versions: [1, 2, 3, 4, 5, 6], waitingFor: [{ name: "waiting_for", type: "TEXT" }] });
  });
});

describe("GET /v1/tasks and a task that waits for its model provider", () => {
  it("lists the task's waiting_for while it waits, and null once the wait is over, the task still running", async () => {
    const marker = uniqueMarker("listed-wait");
    const tag = `waits-${crypto.randomUUID().slice(0, 8)}`;
    // The first call is refused with a retry-after long enough to park it; the next is answered, 30 s late, so the
    // task still runs after its wait.
    const overloaded = { kind: "http", status: 529, retry_after: 30 };
    await script(marker, [{ content: [{ type: "text", text: "late" }], faults: [overloaded] }], { ttft_ms: 30_000 });
    const task = await startTask("assistant", `answer ${marker}`, { tags: [tag] });
    await eventArrives(task.id, "provider_wait_started");
    const parked = await taskOf(task.id);
    expect(parked.status).toBe("running");
    expect(parked.waiting_for).toMatchObject({ kind: "provider", attempts: 1 });

    await fireTimers(task.id, ["directory"]);
    const waiting = await listed(tag, (s) => s?.waiting_for !== null && s?.waiting_for !== undefined);
    expect([waiting.status, waiting.waiting_for]).toEqual(["running", parked.waiting_for]);

    // The timer ends the wait: the call is tried again (and held by the emulator), the status unchanged.
    expect(await fireTimers(task.id, ["provider_wait"])).toBe(true);
    await eventArrives(task.id, "provider_wait_ended", parked.last_event_seq);
    const resumed = await taskOf(task.id);
    expect([resumed.status, resumed.waiting_for]).toEqual(["running", null]);
    await fireTimers(task.id, ["directory"]);
    const over = await listed(tag, (s) => s?.waiting_for === null);
    expect([over.status, over.waiting_for]).toEqual(["running", null]);

    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
    const canceled = await listed(tag, (s) => s?.status === "canceled");
    expect([canceled.status, canceled.waiting_for]).toEqual(["canceled", null]);
  });

  it("lists a session whose turn waits out its provider with the turn's waiting_for, the session processing", async () => {
    const marker = uniqueMarker("listed-session-wait");
    const overloaded = { kind: "http", status: 529, retry_after: 30 };
    await script(marker, [{ content: [{ type: "text", text: "late" }], faults: [overloaded] }]);
    const created = await api("/v1/agents/assistant/sessions", { method: "POST", body: "{}" });
    expect(created.status).toBe(201);
    const session = await parseBody(created, SessionResourceSchema);
    const sent = await api(`/v1/sessions/${session.id}/messages?wait=0`, {
      method: "POST",
      body: JSON.stringify({ message: `hello ${marker}` }),
    });
    expect(sent.status).toBe(202);
    await readSse(await api(`/v1/sessions/${session.id}/events`), (f) => f.data.includes('"provider_wait_started"'));

    await fireTimers(session.id, ["directory"]);
    const deadline = Date.now() + 10_000;
    let summary: { status: string; waiting_for: unknown } | undefined;
    while (!summary?.waiting_for && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const list = await parseBody(await api("/v1/sessions?limit=100"), SessionListSchema);
      summary = list.sessions.find((s) => s.id === session.id);
    }
    expect(summary?.status).toBe("processing");
    expect(summary?.waiting_for).toMatchObject({
      kind: "provider",
      attempts: 1,
      last_error: { code: "provider_overloaded", status: 529 },
    });
    expect((await api(`/v1/sessions/${session.id}`, { method: "DELETE" })).status).toBe(200);
  });
});
