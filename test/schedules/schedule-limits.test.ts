// What a schedule may cost its tenant (issue 36, stored work): each fire takes a token from the creation rate of the
// key the schedule fires as (the key that created it, or last resumed it), and a fire with no room is skipped and
// recorded `rate_limited`; a schedule whose key is gone from OUTPOST_API_KEYS (or may no longer run tasks, or is
// another tenant's) stops at its next due time, `revoked`, until a key of the tenant resumes it; a tenant holds at
// most OUTPOST_MAX_SCHEDULES_PER_TENANT schedules that may fire; and no cron fires more often than
// OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS allows (300 in the test deployment, vitest.config.ts). Fires are driven with
// runDurableObjectAlarm after moving the stored due time into the past, as in schedules.test.ts.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ScheduleListSchema, type ScheduleResource, ScheduleResourceSchema } from "../../src/http/responses.ts";
import { fireTaskId, scheduleStubFor } from "../../src/schedules/schedule.ts";
import { DEFAULT_MAX_SCHEDULES_PER_TENANT } from "../../src/schedules/schedule-limits.ts";
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

/** Tenant "limits", scopes run and read, 3 tasks a minute (vitest.config.ts). */
const LIMITED_KEY = "test-limited-key";

function post(path: string, body: unknown, key?: string, headers: Record<string, string> = {}) {
  return api(path, { method: "POST", body: JSON.stringify(body), headers, ...(key ? { key } : {}) });
}

async function createSchedule(body: Record<string, unknown>, key?: string): Promise<ScheduleResource> {
  const res = await post("/v1/schedules", body, key);
  if (res.status !== 201) throw new Error(`schedule creation failed: ${res.status} ${await res.text()}`);
  return parseBody(res, ScheduleResourceSchema);
}

function getSchedule(id: string, key?: string): Promise<ScheduleResource> {
  return apiJson(`/v1/schedules/${id}`, ScheduleResourceSchema, key ? { key } : {});
}

async function scheduledAgent(): Promise<{ agent: string; input: string }> {
  const agent = defineAgent({ description: "Runs on a schedule.", allowedTools: [] });
  const input = uniqueMarker("limited-schedule");
  await script(input, [done]);
  return { agent, input };
}

/** The key's creation bucket (durable-objects/rate-limiter.ts) holding `tokens` as of now. */
async function setBucket(keyId: string, tokens: number): Promise<void> {
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${keyId}`));
  await runInDurableObject(limiter, (_instance, state) => {
    state.storage.sql.exec("INSERT OR REPLACE INTO bucket (id, tokens, at) VALUES (1, ?, ?)", tokens, Date.now());
  });
}

/** The whole tokens left in the key's bucket. */
async function tokensLeft(keyId: string): Promise<number> {
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${keyId}`));
  return runInDurableObject(limiter, (_instance, state) =>
    Math.floor(state.storage.sql.exec<{ tokens: number }>("SELECT tokens FROM bucket").one().tokens),
  );
}

/** Moves the schedule's next due time into the past and runs its alarm, as the runtime would at that time. */
async function fire(tenant: string, id: string, dueAt: number): Promise<void> {
  const stub = scheduleStubFor(env, tenant, id);
  await runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec("UPDATE schedule_spec SET next_due_at = ?", dueAt);
  });
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}

/** What the key a schedule fires as is after the operator changed OUTPOST_API_KEYS: set in its storage. */
async function setScheduleKey(tenant: string, id: string, keyId: string | null): Promise<void> {
  await runInDurableObject(scheduleStubFor(env, tenant, id), (_instance, state) => {
    state.storage.sql.exec("UPDATE schedule_spec SET key_id = ?", keyId);
  });
}

function alarmOf(tenant: string, id: string): Promise<number | null> {
  return runInDurableObject(scheduleStubFor(env, tenant, id), (_instance, state) => state.storage.getAlarm());
}

const nextJan1 = Date.UTC(new Date().getUTCFullYear() + 1, 0, 1);

describe("each fire takes a token of its key's creation rate", () => {
  it("shows the key the schedule fires as", async () => {
    const { agent, input } = await scheduledAgent();
    await setBucket("limited", 3);
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *" }, LIMITED_KEY);
    expect(created.key_id).toBe("limited");
    // A key listed without an id is known by its hash's id (src/tenants/api-keys.ts).
    const byHash = await createSchedule({ agent, input, cron: "0 0 1 1 *" });
    expect(byHash.key_id).toMatch(/^key_[0-9a-f]{12}$/);
  });

  it("skips a fire that finds no room, records it rate_limited, and goes on to the next due time", async () => {
    const { agent, input } = await scheduledAgent();
    await setBucket("limited", 3);
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *" }, LIMITED_KEY);
    await setBucket("limited", 0);
    const due = Date.now() - 1_000;
    await fire("limits", created.id, due);
    const schedule = await getSchedule(created.id, LIMITED_KEY);
    expect(schedule.recent_fires).toStrictEqual([
      {
        due_at: new Date(due).toISOString(),
        due_times: 1,
        outcome: "rate_limited",
        task_id: null,
        recorded_at: expect.stringMatching(ISO_TIME),
        error: "The API key limited may create 3 tasks a minute and had no room left: this fire was skipped.",
      },
    ]);
    expect([schedule.status, schedule.next_run_at]).toEqual(["active", new Date(nextJan1).toISOString()]);
    expect(await alarmOf("limits", created.id)).toBe(nextJan1);
    // The run it would have been was never created.
    const wouldBe = await fireTaskId("limits", created.id, due);
    await expectError(await api(`/v1/tasks/${wouldBe}`, { key: LIMITED_KEY }), 404, "task_not_found", "id");
  });

  it("starts a fire that finds room, taking the token", async () => {
    const { agent, input } = await scheduledAgent();
    await setBucket("limited", 3);
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *" }, LIMITED_KEY);
    await setBucket("limited", 1);
    await fire("limits", created.id, Date.now() - 1_000);
    const [started] = (await getSchedule(created.id, LIMITED_KEY)).recent_fires;
    expect([started?.outcome, started?.error]).toEqual(["started", null]);
    expect(await tokensLeft("limited")).toBe(0);
    expect((await waitForTask(started?.task_id ?? "", 20, LIMITED_KEY)).status).toBe("completed");
  });
});

describe("a schedule whose key is gone", () => {
  // What the key is, the tenant and key id the schedule holds, and why its revoking fire says it stopped.
  const cases: [string, string, string | null, string][] = [
    ["no longer listed in OUTPOST_API_KEYS", "limits", "retired-key", "the API key retired-key is no longer listed"],
    [
      "unknown: it was made before schedules kept their key",
      "limits",
      null,
      "the schedule was made before schedules kept their key",
    ],
    ["listed for another tenant", "limits", "beta-runner", "the API key beta-runner is no longer listed"],
    ["listed without the run scope", "default", "reader", "the API key reader no longer has the run scope"],
  ];
  for (const [what, tenant, keyId, why] of cases) {
    it(`stops at its next due time, revoked, when its key is ${what}`, async () => {
      const { agent, input } = await scheduledAgent();
      const key = tenant === "limits" ? LIMITED_KEY : undefined;
      await setBucket("limited", 3);
      const created = await createSchedule({ agent, input, cron: "0 0 1 1 *" }, key);
      await setScheduleKey(tenant, created.id, keyId);
      const due = Date.now() - 1_000;
      await fire(tenant, created.id, due);
      const schedule = await getSchedule(created.id, key);
      expect([schedule.status, schedule.next_run_at, schedule.key_id]).toEqual(["revoked", null, keyId]);
      // The due time is recorded, no task, saying why the schedule stopped and how to have it fire again.
      const resume = `resume it with POST /v1/schedules/${created.id}/resume to fire as your key.`;
      expect(schedule.recent_fires).toEqual([
        {
          due_at: new Date(due).toISOString(),
          due_times: 1,
          outcome: "failed",
          task_id: null,
          recorded_at: expect.stringMatching(ISO_TIME),
          error: `Revoked: ${why}; ${resume}`,
        },
      ]);
      expect(await alarmOf(tenant, created.id)).toBeNull();
      const wouldBe = await fireTaskId(tenant, created.id, due);
      await expectError(await api(`/v1/tasks/${wouldBe}`, key ? { key } : {}), 404, "task_not_found", "id");
      const listed = await apiJson(
        `/v1/schedules?agent=${agent}&status=revoked`,
        ScheduleListSchema,
        key ? { key } : {},
      );
      expect(listed.schedules.map((s) => [s.id, s.status])).toEqual([[created.id, "revoked"]]);
      // A second alarm delivered anyway starts nothing.
      await runInDurableObject(scheduleStubFor(env, tenant, created.id), (instance) => instance.alarm());
      expect((await getSchedule(created.id, key)).recent_fires).toEqual(schedule.recent_fires);
    });
  }

  it("fires again under the key that resumes it", async () => {
    const { agent, input } = await scheduledAgent();
    await setBucket("limited", 3);
    const created = await createSchedule({ agent, input, cron: "0 0 1 1 *" }, LIMITED_KEY);
    await setScheduleKey("limits", created.id, "retired-key");
    await fire("limits", created.id, Date.now() - 1_000);
    // Pausing a revoked schedule leaves it revoked: it does not fire either way.
    const paused = await parseBody(
      await post(`/v1/schedules/${created.id}/pause`, {}, LIMITED_KEY),
      ScheduleResourceSchema,
    );
    expect(paused.status).toBe("revoked");
    const res = await post(`/v1/schedules/${created.id}/resume`, {}, LIMITED_KEY);
    expect(res.status).toBe(200);
    const resumed = await parseBody(res, ScheduleResourceSchema);
    expect([resumed.status, resumed.key_id, resumed.next_run_at]).toEqual([
      "active",
      "limited",
      new Date(nextJan1).toISOString(),
    ]);
    await fire("limits", created.id, Date.now() - 1_000);
    const [started] = (await getSchedule(created.id, LIMITED_KEY)).recent_fires;
    expect(started?.outcome).toBe("started");
    expect((await waitForTask(started?.task_id ?? "", 20, LIMITED_KEY)).status).toBe("completed");
  });
});

describe("the tenant's cap on schedules", () => {
  /** Fills the default tenant's directory with schedules that may fire until it holds `count` of them. */
  async function fillDirectory(count: number): Promise<string[]> {
    const tenant = env.TENANTS.get(env.TENANTS.idFromName("default"));
    return runInDurableObject(tenant, (_instance, state) => {
      const held = state.storage.sql
        .exec<{ n: number }>(
          "SELECT COUNT(*) AS n FROM directory_schedules WHERE status IN ('active', 'paused', 'revoked')",
        )
        .one().n;
      const ids: string[] = [];
      const now = new Date().toISOString();
      for (let i = held; i < count; i++) {
        const id = crypto.randomUUID();
        state.storage.sql.exec(
          `INSERT INTO directory_schedules (id, agent, status, cron, timezone, at, next_run_at, last_fired_at,
            created_at, updated_at, version) VALUES (?, 'seeded', 'active', '0 9 * * *', 'UTC', NULL, NULL, NULL, ?, ?, 1)`,
          id,
          now,
          now,
        );
        ids.push(id);
      }
      return ids;
    });
  }

  async function setDirectoryStatus(ids: readonly string[], status: string | null): Promise<void> {
    const tenant = env.TENANTS.get(env.TENANTS.idFromName("default"));
    await runInDurableObject(tenant, (_instance, state) => {
      for (const id of ids) {
        if (status === null) state.storage.sql.exec("DELETE FROM directory_schedules WHERE id = ?", id);
        else state.storage.sql.exec("UPDATE directory_schedules SET status = ? WHERE id = ?", status, id);
      }
    });
  }

  it("refuses a schedule past OUTPOST_MAX_SCHEDULES_PER_TENANT, naming the limit; a finished one leaves room", async () => {
    const { agent, input } = await scheduledAgent();
    const seeded = await fillDirectory(DEFAULT_MAX_SCHEDULES_PER_TENANT - 1);
    const headers = { "idempotency-key": uniqueMarker("capped") };
    const body = { agent, input, cron: "0 9 * * *" };
    const last = await post("/v1/schedules", body, undefined, headers);
    expect(last.status).toBe(201);
    const refused = await expectError(await post("/v1/schedules", body), 422, "schedule_limit_reached");
    expect(refused.error.message).toBe(
      `This tenant has ${DEFAULT_MAX_SCHEDULES_PER_TENANT} schedules that may fire, the most OUTPOST_MAX_SCHEDULES_PER_TENANT allows; delete one first.`,
    );
    // The creation repeated under its Idempotency-Key is the same schedule, not one more.
    const replayed = await post("/v1/schedules", body, undefined, headers);
    expect([replayed.status, replayed.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    // A finished schedule fires no more: it leaves room.
    await setDirectoryStatus(seeded.slice(0, 1), "finished");
    expect((await post("/v1/schedules", body)).status).toBe(201);
    await setDirectoryStatus(seeded, null);
  });
});

describe("the operator's floor on a schedule's interval", () => {
  const refused: [string, string, number][] = [
    ["every 2 minutes", "*/2 * * * *", 120],
    ["two due times 3 minutes apart once a day", "0,3 9 * * *", 180],
    ["a last due time of the day 3 minutes before the next day's first", "1,58 0,23 * * *", 180],
  ];
  for (const [what, cron, gap] of refused) {
    it(`refuses a cron with ${what}: 400 schedule_interval_too_short naming cron`, async () => {
      const { agent, input } = await scheduledAgent();
      const res = await post("/v1/schedules", { agent, input, cron });
      const body = await expectError(res, 400, "schedule_interval_too_short", "cron");
      expect(body.error.message).toBe(
        `"${cron}" fires twice within ${gap} s; this deployment's floor is 300 s between fires (OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS).`,
      );
      expect((await apiJson(`/v1/schedules?agent=${agent}`, ScheduleListSchema)).schedules).toEqual([]);
    });
  }

  const accepted: [string, Record<string, string>][] = [
    ["every 5 minutes, the floor exactly", { cron: "*/5 * * * *" }],
    ["daily", { cron: "0 9 * * *", timezone: "Europe/Paris" }],
    ["late and early times on days that never follow one another", { cron: "1,58 0,23 * * 1" }],
    ["one instant", { at: "2099-01-01T00:00:00Z" }],
  ];
  for (const [what, timing] of accepted) {
    it(`accepts a schedule ${what}`, async () => {
      const { agent, input } = await scheduledAgent();
      expect((await post("/v1/schedules", { agent, input, ...timing })).status).toBe(201);
    });
  }
});
