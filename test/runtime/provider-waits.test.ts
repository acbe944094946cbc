// Waiting out the model provider (src/runtime/provider-retry.ts): a call the provider refuses for longer than the
// run's short in-run pauses is parked on the object's provider_wait timer. The task stays running and shows what it
// waits for; it holds no connection and has no heartbeat, so neither an eviction nor a reader relaunches it early;
// the timer does, and the call is tried again as the step's next attempt. Cancel ends the wait.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TaskResourceSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  emulatorRequests,
  events,
  fireTimers,
  ofType,
  parseEvent,
  readSse,
  script,
  startTask,
  timersOf,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** A task whose first model call is refused with 529 and a retry-after long enough to park it, then answered. */
async function parkedTask(label: string) {
  const marker = uniqueMarker(label);
  const overloaded = { kind: "http", status: 529, retry_after: 30 };
  await script(marker, [{ content: [{ type: "text", text: "Answered after the outage." }], faults: [overloaded] }]);
  const startedAt = Date.now();
  const task = await startTask("assistant", `answer ${marker}`);
  // The stream stays open through the wait: read it until the wait starts.
  const frames = await readSse(await api(`/v1/tasks/${task.id}/events`), (f) =>
    f.data.includes('"provider_wait_started"'),
  );
  const started = frames.map((f) => parseEvent(f.data)).filter((e) => e.event_type === "provider_wait_started");
  return { id: task.id, startedAt, started: started.map((e) => e.payload) };
}

const taskOf = (id: string) => apiJson(`/v1/tasks/${id}`, TaskResourceSchema);

describe("a model call that waits out its provider", () => {
  it("parks on its timer: the task runs, shows waiting_for, keeps no heartbeat, and sends nothing until the timer", async () => {
    const { id, startedAt, started } = await parkedTask("park");
    const task = await taskOf(id);
    expect(task.status).toBe("running");
    expect(task.pending_input).toBeNull();
    expect(task.waiting_for).toMatchObject({
      kind: "provider",
      attempts: 1,
      last_error: { code: "provider_overloaded", status: 529, retryable: true },
    });
    // retry-after 30 s, plus up to 2 s of jitter.
    const until = Date.parse(task.waiting_for?.until ?? "");
    expect(until).toBeGreaterThanOrEqual(startedAt + 30_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 32_000);
    const kinds = (await timersOf(id)).map((t) => t.kind);
    expect(kinds).toContain("provider_wait");
    expect(kinds).not.toContain("heartbeat");
    expect(started).toEqual([
      expect.objectContaining({ step: "turn_1_model", failures: 1, until: task.waiting_for?.until }),
    ]);
    // A reader of the task does not relaunch a parked run.
    await taskOf(id);
    expect(await emulatorRequests(id)).toHaveLength(1);

    expect(await fireTimers(id, ["provider_wait"])).toBe(true);
    const done = await waitForTask(id);
    expect(done.status).toBe("completed");
    expect(done.result).toBe("Answered after the outage.");
    expect(done.waiting_for).toBeNull();
    const log = await events(id);
    expect(ofType(log, "provider_wait_ended").map((e) => e.payload)).toEqual([
      expect.objectContaining({ step: "turn_1_model", failures: 1 }),
    ]);
    expect(ofType(log, "llm_request_sent").map((e) => e.payload.attempt)).toEqual([1, 2]);
    expect((await emulatorRequests(id)).map((r) => r.status)).toEqual([529, 200]);
    expect(done.usage.model_calls).toBe(1);
  });

  it("survives an eviction mid-wait: the new instance neither relaunches it early nor forgets it", async () => {
    const { id } = await parkedTask("park-evict");
    await abortAllDurableObjects();
    // The new instance, woken by a reader, keeps the wait as it was.
    const task = await taskOf(id);
    expect(task.status).toBe("running");
    expect(task.waiting_for?.kind).toBe("provider");
    expect((await timersOf(id)).map((t) => t.kind)).not.toContain("heartbeat");
    expect(await emulatorRequests(id)).toHaveLength(1);
    expect(await fireTimers(id, ["provider_wait"])).toBe(true);
    const done = await waitForTask(id);
    expect(done.status).toBe("completed");
    expect((await emulatorRequests(id)).map((r) => r.status)).toEqual([529, 200]);
    // The parked try was a chosen retry, not an interruption: the step is not counted toward its interruption limit.
    expect(ofType(await events(id), "step_resumed").map((e) => e.payload.reason)).not.toContain("interrupted");
  });

  it("answers a ?wait= as soon as a wait starts, with waiting_for, rather than after it", async () => {
    const marker = uniqueMarker("park-wait");
    const agent = defineAgent({ allowedTools: ["TodoWrite"] });
    // The first turn takes a second and a half, so the ?wait= below is waiting when the second turn's wait starts.
    await script(marker, [
      { content: [toolUse("TodoWrite", { todos: [{ content: "x", status: "pending" }] })], ttft_ms: 1500 },
      { content: [{ type: "text", text: "Later." }], faults: [{ kind: "http", status: 529, retry_after: 30 }] },
    ]);
    const task = await startTask(agent, `answer ${marker}`);
    const asked = Date.now();
    const res = await api(`/v1/tasks/${task.id}?wait=25`);
    expect(res.status).toBe(200);
    const seen = (await res.json()) as { status: string; waiting_for: { kind: string } | null };
    expect(seen).toMatchObject({ status: "running", waiting_for: { kind: "provider" } });
    // Answered when the wait started, not after the 30 s retry-after, nor at ?wait='s 25 s.
    expect(Date.now() - asked).toBeLessThan(15_000);
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
  });

  it("keeps and shows the provider's error redacted: a key it echoes is not in waiting_for", async () => {
    const marker = uniqueMarker("park-redacted");
    const echoed = `sk-ant-api03-${"Z9y8X7w6V5".repeat(3)}`;
    const fault = { kind: "http", status: 529, retry_after: 30, message: `Overloaded (request signed with ${echoed})` };
    await script(marker, [{ content: [{ type: "text", text: "Later." }], faults: [fault] }]);
    const task = await startTask("assistant", `answer ${marker}`);
    const frames = await readSse(await api(`/v1/tasks/${task.id}/events`), (f) =>
      f.data.includes('"provider_wait_started"'),
    );
    const shown = await taskOf(task.id);
    expect(shown.waiting_for?.last_error.message).toContain("[REDACTED]");
    expect(JSON.stringify(shown)).not.toContain(echoed);
    expect(frames.map((f) => f.data).join("")).not.toContain(echoed);
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
  });

  it("ends with a cancel: the timer then finds nothing to try", async () => {
    const { id } = await parkedTask("park-cancel");
    expect((await api(`/v1/tasks/${id}/cancel`, { method: "POST" })).status).toBe(200);
    const canceled = await taskOf(id);
    expect(canceled.status).toBe("canceled");
    expect(canceled.waiting_for).toBeNull();
    await fireTimers(id, ["provider_wait"]);
    expect((await taskOf(id)).status).toBe("canceled");
    expect(await emulatorRequests(id)).toHaveLength(1);
    expect(ofType(await events(id), "provider_wait_ended")).toEqual([]);
  });
});
