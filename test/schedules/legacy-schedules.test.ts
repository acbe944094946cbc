// A schedule stored before schedules kept the key they fire as: its row, written into a schedule object as that code
// wrote it (no key_id, no principal in its task template), stops at its first due time after the upgrade, `revoked`,
// and says why in the fire it records (the schedule was made before schedules kept their key; resume it to fire as
// your key). Resumed, it fires as the key that resumed it. Fires are driven with runDurableObjectAlarm after the stored
// due time is in the past, as in schedules.test.ts.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ScheduleListSchema, ScheduleResourceSchema } from "../../src/http/responses.ts";
import { fireTaskId, scheduleStubFor } from "../../src/schedules/schedule.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  expectError,
  ISO_TIME,
  parseBody,
  script,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const TENANT = "default";
const nextJan1 = Date.UTC(new Date().getUTCFullYear() + 1, 0, 1);

/** What GET /v1/schedules/:id's fire says of a schedule made before schedules kept their key. */
const reasonFor = (id: string) =>
  `Revoked: the schedule was made before schedules kept their key; resume it with POST /v1/schedules/${id}/resume to fire as your key.`;

/**
 * A schedule of `agent` as an earlier Outpost stored it, due a second ago: the task template a creation makes today,
 * without the principal it now records, and no key. Written into the object of a new schedule id.
 */
async function storeAsBefore(agent: string, input: string): Promise<string> {
  const created = await api("/v1/schedules", {
    method: "POST",
    body: JSON.stringify({ agent, input, cron: "0 0 1 1 *" }),
  });
  expect(created.status).toBe(201);
  const model = await parseBody(created, ScheduleResourceSchema);
  const template = await runInDurableObject(scheduleStubFor(env, TENANT, model.id), (_instance, state) => {
    const row = state.storage.sql.exec<{ template: string }>("SELECT template FROM schedule_spec").one();
    const { principal: _principal, ...kept } = JSON.parse(row.template) as Record<string, unknown>;
    return JSON.stringify(kept);
  });
  const id = crypto.randomUUID();
  const now = new Date().toISOString();
  await runInDurableObject(scheduleStubFor(env, TENANT, id), async (_instance, state) => {
    state.storage.sql.exec(
      `INSERT INTO schedule_spec (id, tenant, agent, cron, timezone, at, missed, status, template, fingerprint,
        next_due_at, created_at, updated_at, version, reported_version)
       VALUES (?, ?, ?, '0 0 1 1 *', 'UTC', NULL, 'run_once', 'active', ?, NULL, ?, ?, ?, 1, 0)`,
      id,
      TENANT,
      agent,
      template,
      Date.now() - 1_000,
      now,
      now,
    );
    // Its alarm as that code set it, for the cron's next due time; the due time stored is the one that has come.
    await state.storage.setAlarm(nextJan1);
  });
  return id;
}

async function scheduledAgent(): Promise<{ agent: string; input: string }> {
  const agent = defineAgent({ description: "Runs on a schedule.", allowedTools: [] });
  const input = uniqueMarker("legacy-schedule");
  await script(input, [done]);
  return { agent, input };
}

describe("a schedule made before schedules kept their key", () => {
  it("stops revoked at its first due time, and its fire says why and how to resume it", async () => {
    const { agent, input } = await scheduledAgent();
    const id = await storeAsBefore(agent, input);
    const stub = scheduleStubFor(env, TENANT, id);
    const due = await runInDurableObject(
      stub,
      (_instance, state) =>
        state.storage.sql.exec<{ at: number }>("SELECT next_due_at AS at FROM schedule_spec").one().at,
    );
    expect(await runDurableObjectAlarm(stub)).toBe(true);

    const schedule = await apiJson(`/v1/schedules/${id}`, ScheduleResourceSchema);
    expect([schedule.status, schedule.key_id, schedule.next_run_at]).toEqual(["revoked", null, null]);
    expect(schedule.recent_fires).toEqual([
      {
        due_at: new Date(due).toISOString(),
        due_times: 1,
        outcome: "failed",
        task_id: null,
        recorded_at: expect.stringMatching(ISO_TIME),
        error: reasonFor(id),
      },
    ]);
    // Nothing was started for the due time, and the tenant's listing shows the schedule revoked.
    await expectError(await api(`/v1/tasks/${await fireTaskId(TENANT, id, due)}`), 404, "task_not_found", "id");
    const listed = await apiJson(`/v1/schedules?agent=${agent}&status=revoked`, ScheduleListSchema);
    expect(listed.schedules.map((s) => s.id)).toEqual([id]);
    // Another alarm records nothing more.
    await runInDurableObject(stub, (instance) => instance.alarm());
    expect((await apiJson(`/v1/schedules/${id}`, ScheduleResourceSchema)).recent_fires).toHaveLength(1);
  });

  it("takes a key before its due time when paused and resumed", async () => {
    const { agent, input } = await scheduledAgent();
    const id = await storeAsBefore(agent, input);
    const post = (path: string) => api(`/v1/schedules/${id}/${path}`, { method: "POST", body: "{}" });
    expect((await parseBody(await post("pause"), ScheduleResourceSchema)).status).toBe("paused");
    const resumed = await parseBody(await post("resume"), ScheduleResourceSchema);
    expect([resumed.status, resumed.next_run_at]).toEqual(["active", new Date(nextJan1).toISOString()]);
    expect(resumed.key_id).toMatch(/^key_[0-9a-f]{12}$/);
  });

  it("fires as the key that resumes it", async () => {
    const { agent, input } = await scheduledAgent();
    const id = await storeAsBefore(agent, input);
    const stub = scheduleStubFor(env, TENANT, id);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await apiJson(`/v1/schedules/${id}`, ScheduleResourceSchema)).status).toBe("revoked");

    const res = await api(`/v1/schedules/${id}/resume`, { method: "POST", body: "{}" });
    expect(res.status).toBe(200);
    const resumed = await parseBody(res, ScheduleResourceSchema);
    expect(resumed.status).toBe("active");
    expect(resumed.key_id).toMatch(/^key_[0-9a-f]{12}$/);

    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE schedule_spec SET next_due_at = ?", Date.now() - 1_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const [started] = (await apiJson(`/v1/schedules/${id}`, ScheduleResourceSchema)).recent_fires;
    expect(started?.outcome).toBe("started");
    expect((await waitForTask(started?.task_id ?? "")).status).toBe("completed");
  });
});
