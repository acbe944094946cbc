// A task's duties as rows of its object's ledger of timers (src/runtime/timers.ts): what a run keeps as it goes, waits
// and ends; that only a heartbeat relaunches a running task (a run without one stays quiet, as a wait on the provider
// will); and that an object from before the ledger has the duty of the one alarm it kept read into it.
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TaskTimers } from "../../src/runtime/timers.ts";
import { SCHEMA_VERSION, TIMERS_VERSION } from "../../src/storage/migrations.ts";
import {
  api,
  defineAgent,
  emulatorRequests,
  events,
  fireTimers,
  ofType,
  pendingRequestId,
  script,
  startTask,
  stubFor,
  timersOf,
  toolUse,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "../support/helpers.ts";

const kinds = async (id: string) => (await timersOf(id)).map((t) => t.kind);

/** A task whose first model call hangs until its object goes: a run in flight, as long as the test needs. */
async function hangingTask(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [{ type: "text", text: "Resumed." }], faults: [{ kind: "stall" }] }]);
  const task = await startTask("assistant", `hang ${marker}`);
  await waitForEvent(task.id, (e) => e.event_type === "llm_request_sent");
  return task.id;
}

/**
 * Storage as objects deployed before the ledger hold it: no timers table (nor what version 12 added, the steps'
 * retries), version 10, the one alarm kept.
 */
async function storageBeforeTheLedger(id: string): Promise<number | null> {
  return runInDurableObject(stubFor(id), async (_instance, state) => {
    state.storage.sql.exec("ALTER TABLE runtime_steps DROP COLUMN retries");
    state.storage.sql.exec("DROP TABLE timers");
    state.storage.sql.exec("DELETE FROM schema_migrations WHERE version >= ?", TIMERS_VERSION);
    return state.storage.getAlarm();
  });
}

describe("a task's ledger of timers", () => {
  it("holds a heartbeat while the run goes, only the deadline while it waits for a person, and the expiry once it has ended", async () => {
    const running = await hangingTask("ledger-running");
    expect(await kinds(running)).toContain("heartbeat");

    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual", approvalTimeoutSeconds: 600 });
    const marker = uniqueMarker("ledger-waiting");
    const todo = toolUse("TodoWrite", { todos: [{ content: "x", status: "pending" }] });
    await script(marker, [{ content: [todo], stop_reason: "tool_use" }, { content: [{ type: "text", text: "ok" }] }]);
    const task = await startTask(agent, `plan ${marker}`);
    const waiting = await waitForTask(task.id);
    expect(waiting.status).toBe("input_required");
    const deadline = (await timersOf(task.id)).find((t) => t.kind === "approval_deadline");
    expect(deadline?.due_at).toBe(Date.parse(String(waiting.pending_input?.expires_at)));
    expect(await kinds(task.id)).not.toContain("heartbeat");

    const res = await api(`/v1/tasks/${task.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: pendingRequestId(waiting), action: "approve" }),
    });
    expect(res.status).toBe(200);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    // Reading the artifacts uploads the bundle; the upload's own timer then finds it done and leaves the expiry.
    expect((await api(`/v1/tasks/${task.id}/artifacts`)).status).toBe(200);
    await fireTimers(task.id, ["bundle_upload"]);
    const left = await timersOf(task.id);
    expect(left.map((t) => t.kind)).not.toContain("heartbeat");
    expect(left.map((t) => t.kind)).not.toContain("approval_deadline");
    expect(left.find((t) => t.kind === "expiry")?.due_at).toBe(Date.parse(String(done.expires_at)));
  });

  it("relaunches a running task only from its heartbeat: without one, neither a reader nor the alarm starts it", async () => {
    const id = await hangingTask("ledger-quiet");
    await abortAllDurableObjects();
    // As a later duty (a wait on the provider) will leave it: running, with no heartbeat.
    await runInDurableObject(stubFor(id), async (instance) => {
      (instance as unknown as { host: { timers: TaskTimers } }).host.timers.clear("heartbeat");
    });
    expect((await api(`/v1/tasks/${id}`)).status).toBe(200);
    expect(await fireTimers(id, ["directory"])).toBe(true);
    expect((await waitForTask(id, 0)).status).toBe("running");
    // No second model call: the run was not started again.
    expect(await emulatorRequests(id)).toHaveLength(1);

    await runInDurableObject(stubFor(id), async (instance) => {
      const timers = (instance as unknown as { host: { timers: TaskTimers } }).host.timers;
      timers.set("heartbeat", Date.now());
      await timers.arm();
    });
    expect(await fireTimers(id, ["heartbeat"])).toBe(true);
    expect(await waitForTask(id)).toMatchObject({ status: "completed", result: "Resumed." });
    expect(ofType(await events(id), "run_resumed")).toHaveLength(1);
  });

  it("reads the duty of an older object's one alarm into the ledger: a run in flight resumes from it", async () => {
    const id = await hangingTask("ledger-legacy-run");
    expect(await storageBeforeTheLedger(id)).toEqual(expect.any(Number));
    await abortAllDurableObjects();
    // The next instance migrates the storage and writes the heartbeat its status implies, due now.
    const adopted = await timersOf(id);
    expect(adopted.find((t) => t.kind === "heartbeat")?.due_at).toBeLessThanOrEqual(Date.now());
    // The alarm the older code kept finds it.
    expect(await runDurableObjectAlarm(stubFor(id))).toBe(true);
    expect(await waitForTask(id)).toMatchObject({ status: "completed", result: "Resumed." });
    const version = await runInDurableObject(
      stubFor(id),
      (_instance, state) =>
        state.storage.sql.exec<{ v: number }>("SELECT MAX(version) AS v FROM schema_migrations").one().v,
    );
    expect(version).toBe(SCHEMA_VERSION);
  });

  it("reads an older waiting task's deadline into the ledger, and an older ended task's expiry", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual", approvalTimeoutSeconds: 900 });
    const marker = uniqueMarker("ledger-legacy-wait");
    const todo = toolUse("TodoWrite", { todos: [{ content: "y", status: "pending" }] });
    await script(marker, [{ content: [todo], stop_reason: "tool_use" }]);
    const waiting = await waitForTask((await startTask(agent, `plan ${marker}`)).id);
    expect(waiting.status).toBe("input_required");

    const endMarker = uniqueMarker("ledger-legacy-end");
    await script(endMarker, [{ content: [{ type: "text", text: "Ended." }] }]);
    const ended = await startTask("assistant", `end ${endMarker}`);
    const done = await waitForTask(ended.id);
    expect((await api(`/v1/tasks/${ended.id}/artifacts`)).status).toBe(200);

    await storageBeforeTheLedger(waiting.id);
    await storageBeforeTheLedger(ended.id);
    await abortAllDurableObjects();
    const waitTimers = await timersOf(waiting.id);
    expect(waitTimers.find((t) => t.kind === "approval_deadline")?.due_at).toBe(
      Date.parse(String(waiting.pending_input?.expires_at)),
    );
    expect(waitTimers.map((t) => t.kind)).not.toContain("heartbeat");
    const endTimers = await timersOf(ended.id);
    expect(endTimers.find((t) => t.kind === "expiry")?.due_at).toBe(Date.parse(String(done.expires_at)));
    expect(endTimers.map((t) => t.kind)).not.toContain("heartbeat");
  });
});
