// Retention (seed 003 policy): how long an ended task is kept, and what expiry does. Time is moved by editing the
// task's stored completion time inside its object, then firing the object's alarm, as the platform would.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TaskObject } from "../../durable-objects/task-object.ts";
import { DEFAULT_RETENTION, loadRetentionPolicy, retentionDays } from "../../src/config/retention.ts";
import { ConfigError } from "../../src/errors.ts";
import { TaskListSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  expectError,
  fireTimers,
  script,
  settledAlarm,
  startTask,
  stubFor,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";
import { runsBucket } from "../support/runs-bucket.ts";

const DAY = 24 * 60 * 60 * 1000;

/** Moves the task's completion `days` into the past (the store's cached row is dropped so the object re-reads it). */
async function age(id: string, days: number): Promise<void> {
  await runInDurableObject(stubFor(id), async (instance: TaskObject, state) => {
    state.storage.sql.exec("UPDATE task SET completed_at = ?", new Date(Date.now() - days * DAY).toISOString());
    (instance as unknown as { host: { store: { invalidate(): void } } }).host.store.invalidate();
  });
}

describe("retention policy", () => {
  it("is seed 003's by default and follows explicit days, then tags, then status, then the default", () => {
    expect(DEFAULT_RETENTION).toEqual({
      default_days: 7,
      by_status: { completed: 7, failed: 14 },
      by_task: { critical: 30, debug: 3 },
    });
    const days = (task: Parameters<typeof retentionDays>[1]) => retentionDays(DEFAULT_RETENTION, task);
    expect(days({ explicit: 45, tags: ["debug"], status: "failed" })).toBe(45);
    expect(days({ explicit: null, tags: ["debug", "critical"], status: "failed" })).toBe(30);
    expect(days({ explicit: null, tags: ["other"], status: "failed" })).toBe(14);
    expect(days({ explicit: null, tags: [], status: "completed" })).toBe(7);
    expect(days({ explicit: null, tags: [], status: "canceled" })).toBe(7);
    expect(days({ explicit: null, tags: [] })).toBe(7);
  });

  it("takes the operator's OUTPOST_RETENTION and refuses a bad one with the path to the key", () => {
    expect(loadRetentionPolicy('{"default_days": 3, "by_status": {"canceled": 1}, "by_task": {}}')).toEqual({
      default_days: 3,
      by_status: { canceled: 1 },
      by_task: {},
    });
    expect(() => loadRetentionPolicy("{")).toThrow(ConfigError);
    expect(() => loadRetentionPolicy('{"by_status": {"completed": 0}}')).toThrow(
      "OUTPOST_RETENTION.by_status.completed",
    );
    expect(() => loadRetentionPolicy('{"keep": 1}')).toThrow(ConfigError);
  });
});

describe("retention of tasks", () => {
  it("sets retention_days from tags or the request, and from the outcome when the task ends", async () => {
    const marker = uniqueMarker("retention");
    await script(marker, [done]);
    const plain = await startTask("assistant", `plain ${marker}`);
    expect(plain.retention_days).toBe(7);
    expect(plain.expires_at).toBeNull();
    const critical = await startTask("assistant", `critical ${marker}`, { tags: ["critical", "critical"] });
    expect(critical).toMatchObject({ retention_days: 30, tags: ["critical"] });
    const chosen = await startTask("assistant", `chosen ${marker}`, { tags: ["debug"], retention_days: 60 });
    expect(chosen.retention_days).toBe(60);

    const finished = await waitForTask(plain.id);
    expect(finished.status).toBe("completed");
    expect(finished.retention_days).toBe(7);
    expect(finished.expires_at).toBe(new Date(Date.parse(String(finished.completed_at)) + 7 * DAY).toISOString());

    // A failed task is kept 14 days (by_status), unless the caller chose.
    const failing = defineAgent({ model: "claude-sonnet-5-5" });
    await script(`fail ${marker}`, [
      { content: [{ type: "text", text: "x" }], faults: [{ kind: "http", status: 400 }] },
    ]);
    const failed = await waitForTask((await startTask(failing, `fail ${marker}`)).id);
    expect(failed.status).toBe("failed");
    expect(failed.retention_days).toBe(14);
    const keptFailed = await waitForTask((await startTask(failing, `fail ${marker}`, { retention_days: 2 })).id);
    expect(keptFailed.retention_days).toBe(2);
  });

  it("rejects bad tags and retention_days, naming the field", async () => {
    const post = (body: Record<string, unknown>) =>
      api("/v1/agents/assistant/tasks", { method: "POST", body: JSON.stringify({ input: "x", ...body }) });
    await expectError(await post({ tags: ["Not Valid"] }), 400, "validation_failed", "tags.0");
    await expectError(await post({ retention_days: 0 }), 400, "validation_failed", "retention_days");
  });

  it("deletes an expired task's storage and R2 objects, and answers 410 task_expired from then on", async () => {
    const agent = defineAgent({ fileSystem: { write: true } });
    const marker = uniqueMarker("expire");
    const big = "x".repeat(300 * 1024); // spilled to R2 under workspaces/<id>/
    await script(marker, [
      { content: [toolUse("Write", { file_path: "big.txt", content: big })], stop_reason: "tool_use" },
      done,
    ]);
    // A tag of its own (no retention rule names it), to find the task in the tenant's listing.
    const tag = `expire-${crypto.randomUUID().slice(0, 8)}`;
    const task = await startTask(agent, `expire ${marker}`, { files: { "notes.md": "keep me" }, tags: [tag] });
    expect((await waitForTask(task.id)).status).toBe("completed");
    const listed = async () => (await apiJson(`/v1/tasks?tag=${tag}`, TaskListSchema)).tasks.map((t) => t.status);
    for (let i = 0; i < 50 && (await listed()).join() !== "completed"; i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(await listed()).toEqual(["completed"]);
    // Reading the artifacts completes the bundle upload; the alarm after the run then waits for the expiry.
    expect((await api(`/v1/tasks/${task.id}/artifacts`)).status).toBe(200);
    const bundle = await runsBucket().list({ prefix: `runs/${task.id}/` });
    expect(bundle.objects.map((o) => o.key)).toStrictEqual([`runs/${task.id}/bundle.tar`]);
    expect((await runsBucket().list({ prefix: `workspaces/${task.id}/` })).objects).toHaveLength(1);
    const expiresAt = Date.parse(String((await waitForTask(task.id)).expires_at));
    expect(await settledAlarm(task.id, expiresAt)).toBe(expiresAt);

    // Not due yet: the alarm only re-arms itself.
    await age(task.id, 6);
    expect(await fireTimers(task.id, ["expiry"])).toBe(true);
    expect((await api(`/v1/tasks/${task.id}`)).status).toBe(200);

    await age(task.id, 8);
    expect(await fireTimers(task.id, ["expiry"])).toBe(true);
    expect((await runsBucket().list({ prefix: `runs/${task.id}/` })).objects).toHaveLength(0);
    expect((await runsBucket().list({ prefix: `workspaces/${task.id}/` })).objects).toHaveLength(0);
    const gone = await expectError(await api(`/v1/tasks/${task.id}`), 410, "task_expired", "id");
    // Out of the listing too.
    expect(await listed()).toEqual([]);
    expect(gone.error.message).toContain("expired at");
    for (const path of [
      "events",
      "messages",
      "artifacts",
      "artifacts/events.jsonl",
      "workspace",
      "workspace/notes.md",
    ]) {
      await expectError(await api(`/v1/tasks/${task.id}/${path}`), 410, "task_expired", "id");
    }
    await expectError(await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" }), 410, "task_expired", "id");
    // Nothing but the tombstone is left, and no alarm.
    const left = await runInDurableObject(stubFor(task.id), async (_i, state) => ({
      tables: state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        )
        .toArray()
        .map((r) => r.name),
      // SQLite's own bookkeeping table may stay, empty.
      counters: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'sqlite_sequence'").toArray().length
        ? state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sqlite_sequence").one().n
        : 0,
      alarm: await state.storage.getAlarm(),
    }));
    expect(left).toEqual({ tables: ["tombstone"], counters: 0, alarm: null });
    // An id that never existed is still a 404.
    await expectError(await api(`/v1/tasks/${crypto.randomUUID()}`), 404, "task_not_found", "id");
  });
});
