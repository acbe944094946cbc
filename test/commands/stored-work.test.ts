// Issue 36, item 2, "start a task" on the doors of stored work: a schedule's fire and an evaluation's run start tasks
// long after the request that made them, as the key that made them. Each row shows a check holding there: the key
// gone from OUTPOST_API_KEYS, or listed without `run`, stops the work (the schedule `revoked`, the evaluation's runs
// not yet started failed, saying why); the key's rate holds (a fire past it is skipped and recorded `rate_limited`;
// a run past it waits, pending, and starts once the key has room); and an input over the cap is refused when the
// schedule is made. Fires are driven with runDurableObjectAlarm after moving the stored due time into the past, the
// key a schedule or an evaluation acts as is changed in its storage (as the operator's change of OUTPOST_API_KEYS
// leaves it), and the key's bucket is set as a minute's start leaves it: test/schedules/schedule-limits.test.ts and
// test/evaluation-runs/run-rate.test.ts do the same.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { evaluationStubFor } from "../../src/evaluation-runs/evaluation.ts";
import {
  type EvaluationResource,
  EvaluationResourceSchema,
  type ScheduleResource,
  ScheduleResourceSchema,
} from "../../src/http/responses.ts";
import { fireTaskId, scheduleStubFor } from "../../src/schedules/schedule.ts";
import {
  api,
  apiJson,
  defineAgent,
  ISO_TIME,
  parseBody,
  script,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";
import { idempotent, KEYS, LIMITED, setBucket, taskExists } from "./doors.ts";
import { httpOutcome, type Row, refusal, rowName } from "./outcome.ts";

/** A key of tenant "limits" without `run` (vitest.config.ts): the key after the operator took `run` from it. */
const LOST_RUN = "limits-reader";
/** A key no longer in OUTPOST_API_KEYS. */
const UNLISTED = "retired-key";

// ---- Schedules --------------------------------------------------------------------------------------------------

async function scheduledAgent(): Promise<{ agent: string; input: string }> {
  const agent = defineAgent({ description: "Runs on a schedule.", allowedTools: [] });
  const input = uniqueMarker("commands-schedule");
  await script(input, [{ content: [{ type: "text", text: "ok" }] }]);
  return { agent, input };
}

/** A schedule made by the limited key, due next 1 January (it fires only when a row fires it). */
async function limitedSchedule(): Promise<ScheduleResource> {
  const { agent, input } = await scheduledAgent();
  const res = await api("/v1/schedules", {
    method: "POST",
    body: JSON.stringify({ agent, input, cron: "0 0 1 1 *" }),
    key: LIMITED.key,
  });
  expect(res.status).toBe(201);
  return parseBody(res, ScheduleResourceSchema);
}

function getSchedule(id: string): Promise<ScheduleResource> {
  return apiJson(`/v1/schedules/${id}`, ScheduleResourceSchema, { key: LIMITED.key });
}

/** Moves the schedule's next due time to `dueAt` (past) and runs its alarm, as the runtime would then. */
async function fire(id: string, dueAt: number): Promise<void> {
  const stub = scheduleStubFor(env, LIMITED.tenant, id);
  await runInDurableObject(stub, (_instance, state) => {
    state.storage.sql.exec("UPDATE schedule_spec SET next_due_at = ?", dueAt);
  });
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}

/** The key the schedule fires as, changed as the operator's edit of OUTPOST_API_KEYS leaves it. */
async function setScheduleKey(id: string, keyId: string): Promise<void> {
  await runInDurableObject(scheduleStubFor(env, LIMITED.tenant, id), (_instance, state) => {
    state.storage.sql.exec("UPDATE schedule_spec SET key_id = ?", keyId);
  });
}

const SCHEDULE = "a schedule's fire";

function scheduleRevokedRow(keyId: string, what: string): Row {
  return {
    command: "start a task",
    adapter: SCHEDULE,
    check: "scope",
    behaviour: `a schedule whose key is ${what} stops at its next due time, revoked, and starts nothing`,
    run: async () => {
      await setBucket(LIMITED.id, LIMITED.perMinute);
      const created = await limitedSchedule();
      expect(created.status).toBe("active");
      await setScheduleKey(created.id, keyId);
      const due = Date.now() - 1_000;
      await fire(created.id, due);
      const schedule = await getSchedule(created.id);
      expect([schedule.status, schedule.next_run_at]).toEqual(["revoked", null]);
      // Whether the fire is on record or not, no fire started a task.
      expect(schedule.recent_fires.filter((f) => f.outcome === "started" || f.task_id !== null)).toEqual([]);
      expect(await taskExists(await fireTaskId(LIMITED.tenant, created.id, due), LIMITED.key)).toBe(false);
    },
  };
}

const scheduleRows: Row[] = [
  scheduleRevokedRow(UNLISTED, "no longer listed in OUTPOST_API_KEYS"),
  scheduleRevokedRow(LOST_RUN, "listed without the run scope"),
  {
    command: "start a task",
    adapter: SCHEDULE,
    check: "size cap",
    behaviour: "a schedule whose input is over 100,000 characters is refused when it is made, and none is made",
    run: async () => {
      const { agent } = await scheduledAgent();
      const { idempotencyKey, id } = await idempotent("schedule-size");
      const res = await api("/v1/schedules", {
        method: "POST",
        body: JSON.stringify({ agent, input: "y".repeat(100_001), cron: "0 0 1 1 *" }),
        headers: { "idempotency-key": idempotencyKey },
        key: KEYS.admin,
      });
      expect(await httpOutcome(res)).toEqual(
        refusal({
          status: 400,
          code: "validation_failed",
          form: "outpost",
          field: "input",
          message: expect.stringMatching(/^Invalid input: must be at most 100000 characters/),
        }),
      );
      // The schedule's id follows from the Idempotency-Key as a task's does.
      const found = await httpOutcome(await api(`/v1/schedules/${id}`));
      expect([found.status, found.code]).toEqual([404, "schedule_not_found"]);
    },
  },
  {
    command: "start a task",
    adapter: SCHEDULE,
    check: "rate",
    behaviour:
      "with its key limited to 3 tasks a minute, the schedule's making and two fires take them; the third fire is skipped, recorded rate_limited, and starts nothing",
    run: async () => {
      await setBucket(LIMITED.id, LIMITED.perMinute);
      const created = await limitedSchedule();
      const dues = [3_000, 2_000, 1_000].map((ago) => Date.now() - ago);
      for (const due of dues) await fire(created.id, due);
      const fires = (await getSchedule(created.id)).recent_fires;
      expect(fires.map((f) => [f.due_at, f.outcome])).toEqual([
        [new Date(dues[2] as number).toISOString(), "rate_limited"],
        [new Date(dues[1] as number).toISOString(), "started"],
        [new Date(dues[0] as number).toISOString(), "started"],
      ]);
      expect(fires[0]).toStrictEqual({
        due_at: new Date(dues[2] as number).toISOString(),
        due_times: 1,
        outcome: "rate_limited",
        task_id: null,
        recorded_at: expect.stringMatching(ISO_TIME),
        error: expect.stringMatching(/The API key limited may create 3 tasks a minute/),
      });
      expect(await taskExists(await fireTaskId(LIMITED.tenant, created.id, dues[2] as number), LIMITED.key)).toBe(
        false,
      );
      for (const started of fires.slice(1)) {
        expect((await waitForTask(started.task_id ?? "", 20, LIMITED.key)).status).toBe("completed");
      }
    },
  },
];

describe("start a task through a schedule's fire", () => {
  for (const row of scheduleRows) it(rowName(row), row.run);
});

// ---- Evaluations ------------------------------------------------------------------------------------------------

/** An agent with three cases, each answered "ok" at once. */
async function threeCases(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  const names = ["a", "b", "c"];
  const agent = defineAgent({
    testCases: names.map((name) => ({ name, input: `Say ok. ${marker}-${name}`, expected_output: "ok" })),
    evaluations: { metrics: [{ type: "contains" }] },
  });
  for (const name of names) await script(`${marker}-${name}`, [{ content: [{ type: "text", text: "ok" }] }]);
  return agent;
}

async function startEvaluation(agent: string): Promise<EvaluationResource> {
  const res = await api(`/v1/agents/${agent}/evaluations`, { method: "POST", body: "{}", key: LIMITED.key });
  expect(res.status).toBe(201);
  return parseBody(res, EvaluationResourceSchema);
}

/** Reads the evaluation until `done` holds of it (10 s at most), as test/evaluation-runs/ does. */
async function until(id: string, done: (e: EvaluationResource) => boolean): Promise<EvaluationResource> {
  for (let i = 0; i < 200; i++) {
    const now = await apiJson(`/v1/evaluations/${id}`, EvaluationResourceSchema, { key: LIMITED.key });
    if (done(now)) return now;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`evaluation ${id} never reached the awaited state`);
}

function evaluationStub(id: string) {
  return evaluationStubFor(env, LIMITED.tenant, id);
}

const EVALUATION = "an evaluation's run";

function evaluationRevokedRow(keyId: string, what: string): Row {
  return {
    command: "start a task",
    adapter: EVALUATION,
    check: "scope",
    behaviour: `the runs not yet started when the evaluation's key is ${what} fail, saying so, start nothing, and the evaluation completes`,
    run: async () => {
      const agent = await threeCases("commands-eval-revoked");
      // The creation takes one token and run a the other: b and c wait.
      await setBucket(LIMITED.id, 2);
      const started = await startEvaluation(agent);
      expect(started.runs.map((r) => r.status)).toEqual(["running", "pending", "pending"]);
      await runInDurableObject(evaluationStub(started.id), (_instance, state) => {
        const row = state.storage.sql.exec<{ spec: string }>("SELECT spec FROM evaluation_spec").one();
        state.storage.sql.exec(
          "UPDATE evaluation_spec SET spec = ?",
          JSON.stringify({ ...JSON.parse(row.spec), keyId }),
        );
      });
      // The key's bucket has room again: only the key stops the runs.
      await setBucket(LIMITED.id, LIMITED.perMinute);
      expect(await runDurableObjectAlarm(evaluationStub(started.id))).toBe(true);
      const done = await until(started.id, (e) => e.status === "completed");
      expect(done.runs.map((r) => [r.case, r.status, r.passed])).toEqual([
        ["a", "graded", true],
        ["b", "graded", false],
        ["c", "graded", false],
      ]);
      for (const run of done.runs.slice(1)) {
        // Said in the evaluation's words, naming the key.
        expect(run.reason).toMatch(new RegExp(`^The run's task could not be started: .*\\b${keyId}\\b`));
        expect(await taskExists(run.task_id, LIMITED.key)).toBe(false);
      }
    },
  };
}

const evaluationRows: Row[] = [
  evaluationRevokedRow(UNLISTED, "no longer listed in OUTPOST_API_KEYS"),
  evaluationRevokedRow(LOST_RUN, "listed without the run scope"),
  {
    command: "start a task",
    adapter: EVALUATION,
    check: "rate",
    behaviour:
      "with its key limited to 3 tasks a minute, the creation and two runs take them; the third run waits, pending, and starts once the key has room",
    run: async () => {
      const agent = await threeCases("commands-eval-rate");
      await setBucket(LIMITED.id, LIMITED.perMinute);
      const started = await startEvaluation(agent);
      expect(started.runs.map((r) => r.status)).toEqual(["running", "running", "pending"]);
      const graded = await until(started.id, (e) => e.progress.graded === 2);
      // It waits, not fails; and its task was not started.
      expect([graded.status, graded.runs[2]?.status, graded.progress.pending]).toEqual(["running", "pending", 1]);
      expect(await taskExists(graded.runs[2]?.task_id ?? "", LIMITED.key)).toBe(false);
      const alarm = await runInDurableObject(evaluationStub(started.id), (_instance, state) =>
        state.storage.getAlarm(),
      );
      expect(alarm).toBeGreaterThan(Date.now());
      // A minute on, the key has room: the alarm starts the third run.
      await setBucket(LIMITED.id, LIMITED.perMinute);
      expect(await runDurableObjectAlarm(evaluationStub(started.id))).toBe(true);
      const done = await until(started.id, (e) => e.status === "completed");
      expect(done.runs.map((r) => [r.case, r.status, r.passed])).toEqual([
        ["a", "graded", true],
        ["b", "graded", true],
        ["c", "graded", true],
      ]);
    },
  },
];

describe("start a task through an evaluation's run", () => {
  for (const row of evaluationRows) it(rowName(row), row.run);
});
