// Scheduled runs through the HTTP API (POST /v1/schedules and its routes), and the schedule's own object: its alarm
// firing by itself, and, driven with runDurableObjectAlarm, a fire recorded before its task, no second task after an
// eviction between the two or a repeated alarm, and the missed-fire policies (downtime simulated by moving the
// stored due time into the past: what the object finds when it starts again after being down).
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  ScheduleListSchema,
  ScheduleReceiptSchema,
  type ScheduleResource,
  ScheduleResourceSchema,
  TaskListSchema,
} from "../../src/http/responses.ts";
import { fireTaskId, scheduleStubFor } from "../../src/schedules/schedule.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  events,
  expectError,
  ISO_TIME,
  ofType,
  parseBody,
  script,
  UUID_V4,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const READ_KEY = "test-read-key";
const RUN_KEY = "test-run-key";
const BETA_KEY = "test-beta-key";

function post(path: string, body: unknown, init: { key?: string; headers?: Record<string, string> } = {}) {
  return api(path, { method: "POST", body: JSON.stringify(body), ...init });
}

async function createSchedule(body: Record<string, unknown>): Promise<ScheduleResource> {
  const res = await post("/v1/schedules", body);
  if (res.status !== 201) throw new Error(`schedule creation failed: ${res.status} ${await res.text()}`);
  return parseBody(res, ScheduleResourceSchema);
}

function getSchedule(id: string): Promise<ScheduleResource> {
  return apiJson(`/v1/schedules/${id}`, ScheduleResourceSchema);
}

/** An agent of this test's own, whose runs answer "Done." (so that a listing filtered by it holds only this test's). */
async function scheduledAgent(): Promise<{ agent: string; input: string }> {
  const agent = defineAgent({ description: "Runs on a schedule.", allowedTools: [] });
  const input = uniqueMarker("scheduled");
  await script(input, [done]);
  return { agent, input };
}

function stub(id: string) {
  return scheduleStubFor(env, "default", id);
}

/** Moves the schedule's stored next due time (ms): what the object finds after the runtime was down past it. */
async function setNextDue(id: string, dueAt: number): Promise<void> {
  await runInDurableObject(stub(id), (_instance, state) => {
    state.storage.sql.exec("UPDATE schedule_spec SET next_due_at = ?", dueAt);
  });
}

function alarmOf(id: string): Promise<number | null> {
  return runInDurableObject(stub(id), (_instance, state) => state.storage.getAlarm());
}

/** Polls the schedule (up to 10 s) until `done` holds of it. */
async function scheduleWhen(id: string, done: (s: ScheduleResource) => boolean): Promise<ScheduleResource> {
  for (let i = 0; i < 200; i++) {
    const schedule = await getSchedule(id);
    if (done(schedule)) return schedule;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`schedule ${id} never reached the awaited state`);
}

/** The tenant's tasks of `agent` once the directory lists `count` of them (reports arrive up to a second late). */
async function tasksOf(agent: string, count: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const list = await apiJson(`/v1/tasks?agent=${agent}`, TaskListSchema);
    if (list.tasks.length >= count) return list.tasks.map((t) => t.id);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the directory never listed ${count} tasks of ${agent}`);
}

const jan1 = (year: number) => Date.UTC(year, 0, 1);
const thisYear = new Date().getUTCFullYear();

describe("creating, reading and listing schedules", () => {
  it("creates a cron schedule whose next due time is read in its time zone, and reads it back", async () => {
    const { agent, input } = await scheduledAgent();
    const res = await post("/v1/schedules", {
      agent,
      input,
      cron: "0 9 * * *",
      // UTC+9 all year (no daylight saving time): 09:00 there is 00:00 UTC.
      timezone: "Asia/Tokyo",
      metadata: { team: "ops" },
      tags: ["nightly"],
      max_turns: 2,
    });
    expect(res.status).toBe(201);
    const created = await parseBody(res, ScheduleResourceSchema);
    expect(res.headers.get("location")).toBe(`https://outpost.test/v1/schedules/${created.id}`);
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    expect(created).toStrictEqual({
      id: expect.stringMatching(UUID_V4),
      agent,
      agent_version: null,
      input,
      cron: "0 9 * * *",
      timezone: "Asia/Tokyo",
      at: null,
      missed: "run_once",
      status: "active",
      // The key it fires as: test-key-1, listed without an id, known by its hash's.
      key_id: expect.stringMatching(/^key_[0-9a-f]{12}$/),
      next_run_at: midnight.toISOString(),
      last_fired_at: null,
      recent_fires: [],
      metadata: { team: "ops" },
      tags: ["nightly"],
      limits: { max_turns: 2 },
      retention_days: expect.any(Number),
      redaction_mode: "full",
      dry_run: false,
      webhook: null,
      files: [],
      created_at: expect.stringMatching(ISO_TIME),
      updated_at: expect.stringMatching(ISO_TIME),
      links: {
        self: `https://outpost.test/v1/schedules/${created.id}`,
        pause: `https://outpost.test/v1/schedules/${created.id}/pause`,
        resume: `https://outpost.test/v1/schedules/${created.id}/resume`,
        tasks: "https://outpost.test/v1/tasks",
      },
    });
    expect(await getSchedule(created.id)).toStrictEqual(created);
    // Its own alarm, at its next due time: nothing else drives it.
    expect(await alarmOf(created.id)).toBe(midnight.getTime());
  });

  it("lists the tenant's schedules newest first, a page at a time, filtered by status", async () => {
    const { agent, input } = await scheduledAgent();
    const first = await createSchedule({ agent, input, cron: "0 1 * * *" });
    const second = await createSchedule({ agent, input, cron: "0 2 * * *" });
    const third = await createSchedule({ agent, input, cron: "0 3 * * *" });
    const page1 = await apiJson(`/v1/schedules?agent=${agent}&limit=2`, ScheduleListSchema);
    expect(page1.schedules.map((s) => s.id)).toEqual([third.id, second.id]);
    expect(page1.schedules[0]).toStrictEqual({
      id: third.id,
      agent,
      status: "active",
      cron: "0 3 * * *",
      timezone: "UTC",
      at: null,
      next_run_at: third.next_run_at,
      last_fired_at: null,
      created_at: third.created_at,
      updated_at: third.updated_at,
      links: { self: `https://outpost.test/v1/schedules/${third.id}` },
    });
    expect(page1.next_cursor).toEqual(expect.any(String));
    const page2 = await apiJson(`/v1/schedules?agent=${agent}&limit=2&cursor=${page1.next_cursor}`, ScheduleListSchema);
    expect(page2).toStrictEqual({ schedules: [expect.objectContaining({ id: first.id })], next_cursor: null });

    expect((await post(`/v1/schedules/${second.id}/pause`, {})).status).toBe(200);
    const paused = await apiJson(`/v1/schedules?agent=${agent}&status=paused`, ScheduleListSchema);
    expect(paused.schedules.map((s) => [s.id, s.status, s.next_run_at])).toEqual([[second.id, "paused", null]]);
  });

  it("replays a creation repeated under the same Idempotency-Key; refuses the key with another body, or once deleted", async () => {
    const { agent, input } = await scheduledAgent();
    const headers = { "idempotency-key": uniqueMarker("schedule-key") };
    const body = { agent, input, cron: "0 4 * * *" };
    const first = await post("/v1/schedules", body, { headers });
    expect(first.status).toBe(201);
    const created = await parseBody(first, ScheduleResourceSchema);
    const again = await post("/v1/schedules", body, { headers });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await parseBody(again, ScheduleResourceSchema)).id).toBe(created.id);
    const other = await post("/v1/schedules", { ...body, cron: "0 5 * * *" }, { headers });
    await expectError(other, 422, "idempotency_key_reused", "idempotency-key");
    const list = await apiJson(`/v1/schedules?agent=${agent}`, ScheduleListSchema);
    expect(list.schedules.map((s) => s.id)).toEqual([created.id]);
    // Deleted, the schedule is not made again under its key.
    expect((await api(`/v1/schedules/${created.id}`, { method: "DELETE" })).status).toBe(204);
    await expectError(await post("/v1/schedules", body, { headers }), 404, "schedule_not_found", "idempotency-key");
  });
});

describe("pausing, resuming and deleting", () => {
  it("pauses a schedule (no alarm, no next due time) and resumes it at its next due time", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "30 6 * * *" });
    const pausedRes = await post(`/v1/schedules/${created.id}/pause`, {});
    expect(pausedRes.status).toBe(200);
    const paused = await parseBody(pausedRes, ScheduleResourceSchema);
    expect([paused.status, paused.next_run_at]).toEqual(["paused", null]);
    expect(await alarmOf(created.id)).toBeNull();
    // Pausing twice is pausing once.
    expect((await parseBody(await post(`/v1/schedules/${created.id}/pause`, {}), ScheduleResourceSchema)).status).toBe(
      "paused",
    );

    const resumed = await parseBody(await post(`/v1/schedules/${created.id}/resume`, {}), ScheduleResourceSchema);
    expect([resumed.status, resumed.next_run_at]).toEqual(["active", created.next_run_at]);
    expect(await alarmOf(created.id)).toBe(Date.parse(created.next_run_at ?? ""));
  });

  it("a paused schedule's alarm starts nothing", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *" });
    await setNextDue(created.id, Date.now() - 1_000);
    await post(`/v1/schedules/${created.id}/pause`, {});
    // Deleted with the pause; an alarm delivered anyway (at least once) finds the schedule paused.
    await runInDurableObject(stub(created.id), (instance) => instance.alarm());
    expect((await getSchedule(created.id)).recent_fires).toEqual([]);
  });

  it("deletes a schedule: 204, then 404 everywhere, gone from the listing, no alarm", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "0 7 * * *" });
    const res = await api(`/v1/schedules/${created.id}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    await expectError(await api(`/v1/schedules/${created.id}`), 404, "schedule_not_found", "id");
    await expectError(await api(`/v1/schedules/${created.id}`, { method: "DELETE" }), 404, "schedule_not_found", "id");
    await expectError(await post(`/v1/schedules/${created.id}/resume`, {}), 404, "schedule_not_found", "id");
    expect((await apiJson(`/v1/schedules?agent=${agent}`, ScheduleListSchema)).schedules).toEqual([]);
    expect(await alarmOf(created.id)).toBeNull();
  });

  it("answers 404 for a malformed schedule id", async () => {
    await expectError(await api("/v1/schedules/not-a-uuid"), 404, "schedule_not_found", "id");
  });
});

describe("validation", () => {
  const cases: [string, Record<string, unknown>, number, string, string][] = [
    ["a cron field out of range", { cron: "61 * * * *" }, 400, "invalid_cron", "cron"],
    ["a cron with a seconds field", { cron: "0 * * * * *" }, 400, "invalid_cron", "cron"],
    ["a cron that is not one", { cron: "every day" }, 400, "invalid_cron", "cron"],
    ["a cron that never matches", { cron: "0 0 30 2 *" }, 400, "invalid_cron", "cron"],
    ["an unknown time zone", { cron: "0 9 * * *", timezone: "Mars/Phobos" }, 400, "invalid_timezone", "timezone"],
    ["an at in the past", { at: "2020-01-01T00:00:00Z" }, 400, "invalid_schedule_time", "at"],
    ["an at without its offset", { at: "2099-01-01T00:00:00" }, 400, "invalid_schedule_time", "at"],
    ["an at that is not a time", { at: "tomorrow" }, 400, "invalid_schedule_time", "at"],
    ["both cron and at", { cron: "0 9 * * *", at: "2099-01-01T00:00:00Z" }, 400, "validation_failed", "cron"],
    ["neither cron nor at", {}, 400, "validation_failed", "cron"],
    ["a time zone with at", { at: "2099-01-01T00:00:00Z", timezone: "UTC" }, 400, "validation_failed", "timezone"],
    ["an unknown missed policy", { cron: "0 9 * * *", missed: "sometimes" }, 400, "validation_failed", "missed"],
    ["a task option out of range", { cron: "0 9 * * *", max_turns: 0 }, 400, "validation_failed", "max_turns"],
    ["a field tasks do not take", { cron: "0 9 * * *", priority: 1 }, 400, "validation_failed", "priority"],
    ["an unknown agent", { cron: "0 9 * * *", agent: "no_such_agent" }, 404, "agent_not_found", "agent"],
  ];
  for (const [what, fields, status, code, field] of cases) {
    it(`refuses ${what}: ${status} ${code} naming ${field}`, async () => {
      const { agent, input } = await scheduledAgent();
      await expectError(await post("/v1/schedules", { agent, input, ...fields }), status, code as never, field);
      expect((await apiJson(`/v1/schedules?agent=${agent}`, ScheduleListSchema)).schedules).toEqual([]);
    });
  }
});

describe("tenants and scopes", () => {
  it("another tenant's schedule is 404 to every route, and absent from its listing", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "0 8 * * *" });
    const key = BETA_KEY;
    await expectError(await api(`/v1/schedules/${created.id}`, { key }), 404, "schedule_not_found", "id");
    await expectError(await post(`/v1/schedules/${created.id}/pause`, {}, { key }), 404, "schedule_not_found", "id");
    await expectError(await post(`/v1/schedules/${created.id}/resume`, {}, { key }), 404, "schedule_not_found", "id");
    const del = await api(`/v1/schedules/${created.id}`, { method: "DELETE", key });
    await expectError(del, 404, "schedule_not_found", "id");
    const list = await apiJson("/v1/schedules", ScheduleListSchema, { key });
    expect(list.schedules.map((s) => s.id)).not.toContain(created.id);
    expect((await getSchedule(created.id)).status).toBe("active");
  });

  it("a tenant cannot schedule an agent it may not run", async () => {
    const agent = defineAgent({ description: "The default tenant's only.", allowedTools: [], tenants: ["default"] });
    const res = await post("/v1/schedules", { agent, input: "hello", cron: "0 9 * * *" }, { key: BETA_KEY });
    await expectError(res, 404, "agent_not_found", "agent");
  });

  it("creating needs the run scope; reading needs read; a run-only key gets a receipt without the input", async () => {
    const { agent, input } = await scheduledAgent();
    const body = { agent, input, cron: "0 10 * * *" };
    await expectError(await post("/v1/schedules", body, { key: READ_KEY }), 403, "insufficient_scope", "authorization");
    const res = await post("/v1/schedules", body, { key: RUN_KEY });
    expect(res.status).toBe(201);
    const receipt = await parseBody(res, ScheduleReceiptSchema);
    expect(Object.keys(receipt).sort()).toEqual(
      ["agent", "at", "cron", "id", "links", "next_run_at", "status", "timezone"].sort(),
    );
    await expectError(
      await api(`/v1/schedules/${receipt.id}`, { key: RUN_KEY }),
      403,
      "insufficient_scope",
      "authorization",
    );
    await expectError(await api("/v1/schedules", { key: RUN_KEY }), 403, "insufficient_scope", "authorization");
    const pause = await post(`/v1/schedules/${receipt.id}/pause`, {}, { key: READ_KEY });
    await expectError(pause, 403, "insufficient_scope", "authorization");
    const del = await api(`/v1/schedules/${receipt.id}`, { method: "DELETE", key: READ_KEY });
    await expectError(del, 403, "insufficient_scope", "authorization");
    // Callbacks carry the runs' results: asking for them needs read, as for a task.
    const withCallbacks = { ...body, webhook: { url: "https://example.com/hook" } };
    await expectError(
      await post("/v1/schedules", withCallbacks, { key: RUN_KEY }),
      403,
      "insufficient_scope",
      "webhook",
    );
    expect((await getSchedule(receipt.id)).input).toBe(input);
  });
});

describe("firing", () => {
  it("an at schedule fires by itself once: an ordinary task with the schedule as its trigger, then it is finished", async () => {
    const { agent, input } = await scheduledAgent();
    const at = new Date(Date.now() + 1_500).toISOString();
    const created = await createSchedule({ agent, input, at, metadata: { source: "cron" }, tags: ["scheduled"] });
    expect([created.status, created.at, created.next_run_at, created.cron, created.timezone]).toEqual([
      "active",
      at,
      at,
      null,
      null,
    ]);
    const fired = await scheduleWhen(created.id, (s) => s.recent_fires[0]?.outcome === "started");
    expect(fired).toMatchObject({ status: "finished", next_run_at: null, last_fired_at: at });
    expect(fired.recent_fires).toStrictEqual([
      {
        due_at: at,
        due_times: 1,
        outcome: "started",
        task_id: expect.stringMatching(UUID_V4),
        recorded_at: expect.stringMatching(ISO_TIME),
        error: null,
      },
    ]);
    const taskId = fired.recent_fires[0]?.task_id ?? "";
    const task = await waitForTask(taskId);
    expect(task).toMatchObject({
      status: "completed",
      result: "Done.",
      assigned_agent: agent,
      input,
      metadata: { source: "cron" },
      tags: ["scheduled"],
      trigger: { kind: "schedule", schedule_id: created.id, due_at: at, due_times: 1 },
    });
    const [createdEvent] = ofType(await events(taskId), "task_created");
    expect(createdEvent?.payload.trigger).toEqual({
      kind: "schedule",
      schedule_id: created.id,
      due_at: at,
      due_times: 1,
    });
    // The tenant's directory lists it like any task.
    expect(await tasksOf(agent, 1)).toEqual([taskId]);
    // Finished: no alarm, and nothing to pause or resume.
    expect(await alarmOf(created.id)).toBeNull();
    await expectError(await post(`/v1/schedules/${created.id}/pause`, {}), 409, "schedule_finished", "id");
    await expectError(await post(`/v1/schedules/${created.id}/resume`, {}), 409, "schedule_finished", "id");
  });

  it("records the fire before starting its task; after an eviction between the two, the same task is started once", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *" });
    const due = Date.now() - 1_000;
    await setNextDue(created.id, due);
    // The alarm's first step alone (what an alarm evicted right after it did): the fire recorded, no task started.
    await runInDurableObject(stub(created.id), (instance) =>
      (instance as unknown as { recordDue(now: number): Promise<void> }).recordDue(Date.now()),
    );
    await evictDurableObject(stub(created.id));
    const recorded = await getSchedule(created.id);
    expect(recorded.recent_fires).toStrictEqual([
      {
        due_at: new Date(due).toISOString(),
        due_times: 1,
        outcome: "pending",
        task_id: await fireTaskId("default", created.id, due),
        recorded_at: expect.stringMatching(ISO_TIME),
        error: null,
      },
    ]);
    const taskId = recorded.recent_fires[0]?.task_id ?? "";
    await expectError(await api(`/v1/tasks/${taskId}`), 404, "task_not_found", "id");
    // The next due time moved with the record, in the same transaction.
    expect(recorded.next_run_at).toBe(new Date(jan1(thisYear + 1)).toISOString());

    // The alarm again (delivered at least once): it finds the fire recorded and starts its task.
    expect(await runDurableObjectAlarm(stub(created.id))).toBe(true);
    const started = await getSchedule(created.id);
    expect(started.recent_fires.map((f) => [f.outcome, f.task_id])).toEqual([["started", taskId]]);
    expect((await waitForTask(taskId)).status).toBe("completed");

    // A fire whose start was not marked (evicted after starting the task) starts the same id: the task object
    // answers with the task it has, and no second one exists.
    await runInDurableObject(stub(created.id), (_instance, state) => {
      state.storage.sql.exec("UPDATE schedule_fires SET outcome = 'pending'");
    });
    await runInDurableObject(stub(created.id), (instance) => instance.alarm());
    expect((await getSchedule(created.id)).recent_fires.map((f) => [f.outcome, f.task_id])).toEqual([
      ["started", taskId],
    ]);
    expect(ofType(await events(taskId), "task_created")).toHaveLength(1);
    expect(await tasksOf(agent, 1)).toEqual([taskId]);
  });

  it("a repeated alarm for a due time already recorded starts nothing new", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *" });
    const due = Date.now() - 1_000;
    await setNextDue(created.id, due);
    expect(await runDurableObjectAlarm(stub(created.id))).toBe(true);
    const first = await getSchedule(created.id);
    expect(first.recent_fires).toHaveLength(1);
    // The same due time comes again (as if the alarm were delivered twice for it), and the alarm runs twice more.
    await setNextDue(created.id, due);
    expect(await runDurableObjectAlarm(stub(created.id))).toBe(true);
    expect(await runDurableObjectAlarm(stub(created.id))).toBe(true);
    const again = await getSchedule(created.id);
    expect(again.recent_fires).toStrictEqual(first.recent_fires);
    const taskId = first.recent_fires[0]?.task_id ?? "";
    expect((await waitForTask(taskId)).status).toBe("completed");
    expect(await tasksOf(agent, 1)).toEqual([taskId]);
  });
});

describe("fires missed while the runtime was down", () => {
  it("run_once starts one run for all the missed due times, named by the latest, then continues", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *", missed: "run_once" });
    // Down since before the due time two years ago: three due times have passed (this year's included).
    await setNextDue(created.id, jan1(thisYear - 2));
    expect(await runDurableObjectAlarm(stub(created.id))).toBe(true);
    const schedule = await getSchedule(created.id);
    const latest = new Date(jan1(thisYear)).toISOString();
    expect(schedule.recent_fires.map((f) => [f.due_at, f.due_times, f.outcome])).toEqual([[latest, 3, "started"]]);
    expect([schedule.status, schedule.next_run_at]).toEqual(["active", new Date(jan1(thisYear + 1)).toISOString()]);
    const taskId = schedule.recent_fires[0]?.task_id ?? "";
    expect(taskId).toBe(await fireTaskId("default", created.id, jan1(thisYear)));
    const task = await waitForTask(taskId);
    expect(task.trigger).toEqual({ kind: "schedule", schedule_id: created.id, due_at: latest, due_times: 3 });
    expect(await alarmOf(created.id)).toBe(jan1(thisYear + 1));
  });

  it("skip starts no run for missed due times, and records them skipped", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *", missed: "skip" });
    await setNextDue(created.id, jan1(thisYear - 2));
    expect(await runDurableObjectAlarm(stub(created.id))).toBe(true);
    const schedule = await getSchedule(created.id);
    expect(schedule.recent_fires).toStrictEqual([
      {
        due_at: new Date(jan1(thisYear)).toISOString(),
        due_times: 3,
        outcome: "skipped",
        task_id: null,
        recorded_at: expect.stringMatching(ISO_TIME),
        error: null,
      },
    ]);
    expect(schedule.next_run_at).toBe(new Date(jan1(thisYear + 1)).toISOString());
    // The task the run would have been does not exist.
    const wouldBe = await fireTaskId("default", created.id, jan1(thisYear));
    await expectError(await api(`/v1/tasks/${wouldBe}`), 404, "task_not_found", "id");
  });

  it("skip still runs a due time that is on time", async () => {
    const { agent, input } = await scheduledAgent();
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *", missed: "skip" });
    const due = Date.now() - 1_000;
    await setNextDue(created.id, due);
    expect(await runDurableObjectAlarm(stub(created.id))).toBe(true);
    const schedule = await getSchedule(created.id);
    expect(schedule.recent_fires.map((f) => [f.due_at, f.due_times, f.outcome])).toEqual([
      [new Date(due).toISOString(), 1, "started"],
    ]);
    expect((await waitForTask(schedule.recent_fires[0]?.task_id ?? "")).status).toBe("completed");
  });
});
