// An evaluation always ends (src/evaluation-runs/run-watch.ts): while its runs are under way its object's alarm looks
// at their tasks, and a run whose task waits for a person is canceled and failed, a task that ran past its case's
// deadline too, and a task whose report of its end was lost is recorded from what it reads back. Driven through the
// HTTP API against the emulator, with the evaluation's alarm run by runDurableObjectAlarm (or, for a deadline, by
// itself), and a lost report made by marking the child task's report as sent in its own storage.

import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { EvaluationObject } from "../../durable-objects/evaluation-object.ts";
import { evaluationStubFor, failedRun } from "../../src/evaluation-runs/evaluation.ts";
import { WAITED_FOR_PERSON } from "../../src/evaluation-runs/run-watch.ts";
import { type EvaluationResource, EvaluationResourceSchema, TaskResourceSchema } from "../../src/http/responses.ts";
import { EVALUATION_REPORTED_KEY } from "../../src/task-host/evaluation-report.ts";
import { DEFAULT_TENANT } from "../../src/tenants/api-keys.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  editTaskState,
  events,
  parseBody,
  script,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const todoCall = toolUse("TodoWrite", { todos: [{ content: "Book the venue", status: "pending" }] });

/** Starts an evaluation of every case of `agent`; its view as the POST answers it. */
async function startEvaluation(agent: string): Promise<EvaluationResource> {
  const res = await api(`/v1/agents/${agent}/evaluations`, { method: "POST", body: "{}" });
  expect(res.status).toBe(201);
  return parseBody(res, EvaluationResourceSchema);
}

function view(id: string): Promise<EvaluationResource> {
  return apiJson(`/v1/evaluations/${id}`, EvaluationResourceSchema);
}

/** Reads the evaluation until it has completed (10 s at most). */
async function completed(id: string): Promise<EvaluationResource> {
  for (let i = 0; i < 200; i++) {
    const now = await view(id);
    if (now.status === "completed") return now;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`evaluation ${id} did not complete`);
}

function onlyRun(evaluation: EvaluationResource) {
  const run = evaluation.runs[0];
  if (!run || evaluation.runs.length !== 1) throw new Error("expected one run");
  return run;
}

/** An evaluation of one case whose agent asks a person before its tool call, and its run's task, waiting. */
async function waitingEvaluation(label: string) {
  const marker = uniqueMarker(label);
  const agent = defineAgent({
    allowedTools: ["TodoWrite"],
    permissionMode: "manual",
    testCases: [{ name: "asks", input: `Plan the party. ${marker}`, expected_output: "Done" }],
    evaluations: { metrics: [{ type: "contains" }] },
  });
  // Slow enough that the task asks only after the evaluation's first look at it (when it starts it).
  await script(marker, [{ content: [todoCall], stop_reason: "tool_use" }, done], { ttft_ms: 300 });
  const started = await startEvaluation(agent);
  const taskId = onlyRun(started).task_id;
  expect((await waitForTask(taskId)).status).toBe("input_required");
  return { id: started.id, taskId, stub: evaluationStubFor(env, DEFAULT_TENANT, started.id) };
}

/** The child's log: how many times it ended, and how. */
async function endings(taskId: string): Promise<string[]> {
  return (await events(taskId))
    .filter((e) => ["run_canceled", "run_finished", "run_failed"].includes(e.event_type))
    .map((e) => e.event_type);
}

describe("an evaluation whose run waits for a person", () => {
  it("cancels the run's task at its next alarm, fails the case saying why, and completes", async () => {
    const { id, taskId, stub } = await waitingEvaluation("watch-person");
    // Nothing reports while the task waits: without the watch the evaluation would stay running.
    expect(onlyRun(await view(id)).status).toBe("running");
    expect(await runDurableObjectAlarm(stub)).toBe(true);

    const after = await view(id);
    expect(after.status).toBe("completed");
    expect(after.passed).toBe(false);
    expect(onlyRun(after)).toMatchObject({
      case: "asks",
      status: "graded",
      passed: false,
      reason: "waited for a person; evaluation runs are unattended",
    });
    expect((await apiJson(`/v1/tasks/${taskId}`, TaskResourceSchema)).status).toBe("canceled");
    expect(await endings(taskId)).toEqual(["run_canceled"]);
  });

  it("records the run once when two alarms interleave, and a later alarm changes nothing", async () => {
    const { id, taskId, stub } = await waitingEvaluation("watch-twice");
    await runInDurableObject(stub, (instance: EvaluationObject) => Promise.all([instance.alarm(), instance.alarm()]));
    const first = await view(id);
    expect(first.status).toBe("completed");
    expect(first.summary).toMatchObject({ runs: 1, passed: 0, failed: 1 });
    expect(onlyRun(first).reason).toBe("waited for a person; evaluation runs are unattended");
    await runInDurableObject(stub, (instance: EvaluationObject) => instance.alarm());
    expect(await view(id)).toEqual(first);
    const rows = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec<{ status: string }>("SELECT status FROM evaluation_runs").toArray(),
    );
    expect(rows).toEqual([{ status: "graded" }]);
    expect(await endings(taskId)).toEqual(["run_canceled"]);
  });

  it("still stops the run after an eviction of the evaluation's object: its alarm is in storage", async () => {
    const { id, taskId, stub } = await waitingEvaluation("watch-evict");
    await evictDurableObject(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(onlyRun(await completed(id)).reason).toBe("waited for a person; evaluation runs are unattended");
    expect((await apiJson(`/v1/tasks/${taskId}`, TaskResourceSchema)).status).toBe("canceled");
  });

  it("finishes a stop recorded before an eviction came between it and the cancel", async () => {
    const { id, taskId, stub } = await waitingEvaluation("watch-stopping");
    // As the watch leaves the run when the object is evicted right after recording why it stops it.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE evaluation_runs SET status = 'stopping', result = ? WHERE task_id = ?",
        JSON.stringify(failedRun(taskId, WAITED_FOR_PERSON).result),
        taskId,
      );
    });
    await evictDurableObject(stub);
    // Shown as running until its task has been canceled.
    expect(onlyRun(await view(id)).status).toBe("running");
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(onlyRun(await view(id))).toMatchObject({
      status: "graded",
      reason: "waited for a person; evaluation runs are unattended",
    });
    expect((await apiJson(`/v1/tasks/${taskId}`, TaskResourceSchema)).status).toBe("canceled");
  });
});

describe("an evaluation whose run's report was lost", () => {
  it("records the run from its task at the next alarm, graded on what the task answered", async () => {
    const marker = uniqueMarker("watch-lost");
    const agent = defineAgent({
      testCases: [{ name: "lost", input: `Say ok. ${marker}`, expected_output: "ok" }],
      evaluations: { metrics: [{ type: "contains" }] },
    });
    // Slow enough that the task is still running when its report is marked as sent.
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }], { ttft_ms: 500 });
    const started = await startEvaluation(agent);
    const taskId = onlyRun(started).task_id;
    await editTaskState(taskId, (sql) => {
      sql.exec("INSERT INTO task_state (key, value) VALUES (?, 'true')", EVALUATION_REPORTED_KEY.name);
    });
    expect((await waitForTask(taskId)).status).toBe("completed");
    // The task has ended and will never report: the run is still running.
    expect(onlyRun(await view(started.id)).status).toBe("running");

    const stub = evaluationStubFor(env, DEFAULT_TENANT, started.id);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const after = await view(started.id);
    expect(after.status).toBe("completed");
    expect(onlyRun(after)).toMatchObject({ status: "graded", passed: true, reason: null, num_turns: 1 });
    expect(onlyRun(after).metrics.map((m) => [m.metric, m.score])).toEqual([["contains", 1]]);
  });
  it("keeps the faults a faulted run injected when its run is read back from the task", async () => {
    const marker = uniqueMarker("watch-lost-faulted");
    const agent = defineAgent({
      testCases: [
        {
          name: "overloaded",
          input: `Say ok. ${marker}`,
          expected_output: "ok",
          faults: { model_fault: { kind: "529", call: 1 } },
        },
      ],
      evaluations: { metrics: [{ type: "contains" }] },
    });
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }], { ttft_ms: 500 });
    const started = await startEvaluation(agent);
    const faulted = started.runs.find((r) => !r.baseline);
    if (!faulted) throw new Error("expected a faulted run");
    await editTaskState(faulted.task_id, (sql) => {
      sql.exec("INSERT INTO task_state (key, value) VALUES (?, 'true')", EVALUATION_REPORTED_KEY.name);
    });
    expect((await waitForTask(faulted.task_id)).status).toBe("completed");
    expect((await view(started.id)).runs.find((r) => !r.baseline)?.status).toBe("running");

    expect(await runDurableObjectAlarm(evaluationStubFor(env, DEFAULT_TENANT, started.id))).toBe(true);
    const run = (await completed(started.id)).runs.find((r) => !r.baseline);
    expect(run).toMatchObject({ status: "graded", passed: true });
    expect(run?.fault?.injected).toEqual([
      { fault: "model_fault", kind: "529", call: 1, step: null, server: null, tool: null },
    ]);
    expect(run?.fault?.differences).toEqual([]);
  });
});

describe("an evaluation whose run runs past its case's deadline", () => {
  it("cancels the run's task when case_timeout_seconds have passed and fails it, timed out", async () => {
    const marker = uniqueMarker("watch-deadline");
    const agent = defineAgent({
      testCases: [{ name: "slow", input: `Think long. ${marker}`, expected_output: "ok" }],
      evaluations: { metrics: [{ type: "contains" }], case_timeout_seconds: 1 },
    });
    // The model takes far longer than the deadline to answer.
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }], { ttft_ms: 60_000 });
    const started = await startEvaluation(agent);
    const taskId = onlyRun(started).task_id;
    // The alarm is armed for the deadline: nothing drives it here.
    const done = await completed(started.id);
    expect(onlyRun(done)).toMatchObject({ status: "graded", passed: false, reason: "timed out after 1 s" });
    expect((await apiJson(`/v1/tasks/${taskId}`, TaskResourceSchema)).status).toBe("canceled");
  });
});

describe("an evaluation whose runs under way all end within one alarm", () => {
  it("starts its pending runs at once, not at the next look", async () => {
    const marker = uniqueMarker("watch-room");
    const names = ["a", "b", "c", "d", "e"];
    const agent = defineAgent({
      testCases: names.map((name) => ({ name, input: `Say ok. ${marker}-${name}`, expected_output: "ok" })),
      evaluations: { metrics: [{ type: "contains" }] },
    });
    for (const name of names)
      await script(`${marker}-${name}`, [{ content: [{ type: "text", text: "ok" }] }], { ttft_ms: 500 });
    const started = await startEvaluation(agent);
    // Four at a time (MAX_PARALLEL_RUNS): the fifth waits for room.
    const first = started.runs.slice(0, 4);
    expect(first.map((r) => r.status)).toEqual(["running", "running", "running", "running"]);
    expect(started.runs[4]?.status).toBe("pending");
    // Their reports are lost, so that the one alarm below records all four (from their tasks) and grades them.
    for (const run of first) {
      await editTaskState(run.task_id, (sql) => {
        sql.exec("INSERT INTO task_state (key, value) VALUES (?, 'true')", EVALUATION_REPORTED_KEY.name);
      });
    }
    for (const run of first) expect((await waitForTask(run.task_id)).status).toBe("completed");
    expect(await runDurableObjectAlarm(evaluationStubFor(env, DEFAULT_TENANT, started.id))).toBe(true);
    const after = await view(started.id);
    expect(after.runs.slice(0, 4).map((r) => r.status)).toEqual(["graded", "graded", "graded", "graded"]);
    // The next look is WATCH_INTERVAL_MS (30 s) away: the fifth run starts, and the evaluation completes, well before.
    const done = await completed(started.id);
    expect(done.runs.map((r) => [r.case, r.status, r.passed])).toEqual(names.map((name) => [name, "graded", true]));
  });
});
