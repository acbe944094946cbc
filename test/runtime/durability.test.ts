// Durability: a task's object can be evicted at any moment. These tests evict it in the middle of a multi-turn,
// tool-using run and prove the run resumes from its journal: same transcript, no step run twice, gapless log.

import { abortAllDurableObjects, evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MessageListSchema } from "../../src/http/responses.ts";
import type { StartOutcome, TaskInit } from "../../src/tasks/task.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  emulatorRequests,
  fireTimers,
  parseEvent,
  readSse,
  type ScriptTurn,
  type SseFrame,
  script,
  startTask,
  stubFor,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** Three model turns with two TodoWrite calls between them; each turn streams slowly enough to evict during it. */
function plannerScript(): ScriptTurn[] {
  return [
    {
      content: [
        { type: "text", text: "Planning first." },
        { type: "tool_use", name: "TodoWrite", input: { todos: [{ content: "Read the brief", status: "pending" }] } },
      ],
    },
    {
      content: [
        { type: "text", text: "Updating the plan." },
        {
          type: "tool_use",
          name: "TodoWrite",
          input: {
            todos: [
              { content: "Read the brief", status: "completed" },
              { content: "Write the answer", status: "in_progress" },
            ],
          },
        },
      ],
    },
    { content: [{ type: "text", text: "The plan is ready: read the brief, then write the answer." }] },
  ];
}

async function allEvents(id: string): Promise<SseFrame[]> {
  return readSse(await api(`/v1/tasks/${id}/events`));
}

function parsed(frames: SseFrame[]) {
  return frames.map((f) => parseEvent(f.data));
}

/** Reads the live stream until `predicate` matches an event, then disconnects. */
async function waitForEvent(id: string, predicate: (frame: SseFrame) => boolean): Promise<void> {
  const frames = await readSse(await api(`/v1/tasks/${id}/events`), predicate);
  if (!frames.some(predicate)) throw new Error("the run ended before the awaited event");
}

/**
 * Kills the object's instance the way a runtime restart or an eviction during an outbound fetch does: in-flight work
 * is dropped, storage (rows and the alarm) stays. Then fires the heartbeat alarm instead of waiting 30 s for it.
 */
async function crashAndResume(id: string): Promise<void> {
  await abortAllDurableObjects();
  expect(await fireTimers(id, ["heartbeat"])).toBe(true);
}

/** The emulator derives tool ids from the script, so two runs of the same script differ only in those ids. */
function withoutToolIds(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value).replace(/toolu_emu_[0-9a-f]+/g, "toolu_X"));
}

async function baseline(): Promise<{ result: string | null; messages: unknown[] }> {
  const marker = uniqueMarker("baseline");
  await script(marker, plannerScript());
  const task = await startTask("planner", `plan it ${marker}`);
  const done = await waitForTask(task.id);
  const messages = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
  return { result: done.result, messages: messages.messages.map((m) => m.content) };
}

describe("a run survives eviction of its Durable Object", () => {
  it("resumes after an eviction in the middle of a model stream and produces the same transcript", async () => {
    const expected = await baseline();
    const marker = uniqueMarker("evict-stream");
    await script(marker, plannerScript(), { token_delay_ms: 40 });
    const task = await startTask("planner", `plan it ${marker}`);

    // Evict once the second model turn has started streaming text.
    await waitForEvent(task.id, (f) => {
      const e = JSON.parse(f.data) as { event_type: string; payload: { turn_index?: number } };
      return e.event_type === "llm_text_delta" && e.payload.turn_index === 2;
    });
    await crashAndResume(task.id);

    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    expect(done.result).toBe(expected.result);
    const messages = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    // The first message is the input, which carries this test's own marker.
    expect(withoutToolIds(messages.messages.slice(1).map((m) => m.content))).toEqual(
      withoutToolIds(expected.messages.slice(1)),
    );

    const events = parsed(await allEvents(task.id));
    // Gapless: 1..N.
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    // Each TodoWrite ran exactly once.
    expect(events.filter((e) => e.event_type === "todo_list_updated")).toHaveLength(2);
    expect(events.filter((e) => e.event_type === "tool_call_completed")).toHaveLength(2);
    // The interrupted turn was re-issued once; the completed first turn was not.
    const calls = await emulatorRequests(task.id);
    expect(calls.map((c) => c.turn)).toEqual([0, 1, 1, 2]);
    expect(events.filter((e) => e.event_type === "step_resumed").map((e) => e.payload)).toEqual([
      { step: "turn_2_model", attempt: 2, reason: "interrupted" },
    ]);
    expect(events.filter((e) => e.event_type === "run_resumed")).toHaveLength(1);
    expect(events.at(-1)?.event_type).toBe("run_finished");
  });

  it("resumes after an eviction while a model call waits for its first token, repeating no tool call", async () => {
    const expected = await baseline();
    const marker = uniqueMarker("evict-ttft");
    const turns = plannerScript().map((t, i) => (i === 2 ? { ...t, ttft_ms: 1500 } : t));
    await script(marker, turns);
    const task = await startTask("planner", `plan it ${marker}`);

    await waitForEvent(task.id, (f) => {
      const e = JSON.parse(f.data) as { event_type: string; payload: { turn_index?: number } };
      return e.event_type === "llm_request_sent" && e.payload.turn_index === 3;
    });
    // Let the request reach the emulator (which holds it 1.5 s before the first token) before the crash.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await crashAndResume(task.id);

    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    expect(done.result).toBe(expected.result);
    const events = parsed(await allEvents(task.id));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.event_type === "todo_list_updated")).toHaveLength(2);
    const calls = await emulatorRequests(task.id);
    expect(calls.map((c) => c.turn)).toEqual([0, 1, 2, 2]);
    // Usage counts each completed call once: the abandoned attempt produced no usage record.
    expect(done.usage.model_calls).toBe(3);
  });

  it("a long poll in flight when the object is reset is asked again of the new instance, which answers", async () => {
    const marker = uniqueMarker("evict-inflight");
    await script(marker, plannerScript(), { ttft_ms: 2_000 });
    const task = await startTask("planner", `plan it ${marker}`);
    // A long poll held by the object while the model is thinking: the reset ends it.
    const waiting = api(`/v1/tasks/${task.id}?wait=20`);
    await waitForEvent(task.id, (f) => f.event === "llm_request_sent");
    await abortAllDurableObjects();
    // The repeated wait reaches a new instance, which resumes the run as a reader does, and waits for its end.
    const res = await waiting;
    expect(res.status).toBe(200);
    expect((await res.json()) as { status: string }).toMatchObject({ id: task.id, status: "completed" });
    const log = parsed(await allEvents(task.id));
    expect(log.filter((e) => e.event_type === "run_resumed")).toHaveLength(1);
  });

  it("a graceful eviction during a run loses nothing", async () => {
    const marker = uniqueMarker("evict-graceful");
    await script(marker, plannerScript(), { token_delay_ms: 20 });
    const task = await startTask("planner", `plan it ${marker}`);
    await waitForEvent(task.id, (f) => f.event === "tool_call_completed");
    await evictDurableObject(stubFor(task.id));
    await fireTimers(task.id, ["heartbeat"]);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    const events = parsed(await allEvents(task.id));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.filter((e) => e.event_type === "todo_list_updated")).toHaveLength(2);
    expect(events.filter((e) => e.event_type === "run_finished")).toHaveLength(1);
  });

  it("a task whose object is reset between its creation and its first launch is launched by its heartbeat", async () => {
    const marker = uniqueMarker("strand");
    await script(marker, [{ content: [{ type: "text", text: "Launched after all." }] }]);
    const id = crypto.randomUUID();
    const stub = stubFor(id);
    const init: TaskInit = {
      id,
      tenant: "default",
      agent: "assistant",
      input: `hello ${marker}`,
      metadata: {},
      model: "claude-sonnet-5-5",
      retentionDays: 30,
      retentionExplicit: false,
      tags: [],
      parentTaskId: null,
    };
    // The durable half of a creation alone (start() launches the run right after it), then a reset: the state an
    // eviction or a deploy leaves when it comes between the two.
    await runInDurableObject(stub, async (instance) => {
      const created = await (instance as unknown as { create(i: TaskInit): Promise<StartOutcome> }).create(init);
      expect(created.outcome).toBe("created");
    });
    await evictDurableObject(stub);
    // Read storage directly: an API read would launch the run itself, and no webhook-driven client ever reads.
    const stored = () =>
      runInDurableObject(stub, async (_instance, state) => ({
        status: state.storage.sql.exec<{ status: string }>("SELECT status FROM task").one().status,
        alarm: await state.storage.getAlarm(),
      }));
    const before = await stored();
    expect(before.status).toBe("pending");
    expect(before.alarm).toEqual(expect.any(Number));
    expect(await fireTimers(id, ["heartbeat"])).toBe(true);
    let status = before.status;
    for (let i = 0; i < 100 && status === "pending"; i++) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await stored()).status;
    }
    expect(status).not.toBe("pending");
    const done = await waitForTask(id);
    expect(done).toMatchObject({ status: "completed", result: "Launched after all." });
  });

  it("an alarm for a finished task changes nothing", async () => {
    const marker = uniqueMarker("alarm-after-end");
    await script(marker, [{ content: [{ type: "text", text: "done" }] }]);
    const task = await startTask("assistant", `go ${marker}`);
    await waitForTask(task.id);
    const before = parsed(await allEvents(task.id));
    const stub = stubFor(task.id);
    await stub.get();
    await runDurableObjectAlarm(stub);
    const after = parsed(await allEvents(task.id));
    expect(after).toEqual(before);
    expect((await waitForTask(task.id)).status).toBe("completed");
  });

  it("counts a model call cut short by an eviction in usage.recovery, apart from the totals", async () => {
    const marker = uniqueMarker("evict-recovery");
    const turns = plannerScript().map((t, i) => ({ ...t, usage: { input_tokens: 1000 * (i + 1), output_tokens: 10 } }));
    await script(marker, turns, { token_delay_ms: 40 });
    const task = await startTask("planner", `plan it ${marker}`);
    await waitForEvent(task.id, (f) => {
      const e = JSON.parse(f.data) as { event_type: string; payload: { turn_index?: number } };
      return e.event_type === "llm_text_delta" && e.payload.turn_index === 2;
    });
    await crashAndResume(task.id);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    const abandoned = parsed(await allEvents(task.id)).filter((e) => e.event_type === "llm_call_abandoned");
    expect(abandoned).toHaveLength(1);
    expect(abandoned[0]?.payload).toMatchObject({
      call: "artifacts/llm/decision_loop_turn_2_attempt_1",
      model: "claude-sonnet-5-5",
      input_tokens: 2000,
    });
    const recovery = done.usage.recovery;
    expect(recovery.attempts).toBe(1);
    expect(recovery.input_tokens).toBe(2000);
    expect(recovery.output_tokens).toBeGreaterThan(0);
    expect(recovery.cost_usd).toBeGreaterThan(0);
    // The totals count the three calls that completed, once each.
    expect(done.usage).toMatchObject({ model_calls: 3, input_tokens: 6000, output_tokens: 30 });
  });

  it("survives an eviction right after every step boundary: same transcript, no tool twice, gapless log", async () => {
    const expected = await baseline();
    // start, turn_1_model, turn_1_tools, turn_2_model, turn_2_tools, turn_3_model: six checkpoints, one per step.
    for (let boundary = 1; boundary <= 6; boundary++) {
      const marker = uniqueMarker(`evict-boundary-${boundary}`);
      await script(marker, plannerScript(), { ttft_ms: 300 });
      const task = await startTask("planner", `plan it ${marker}`);
      await waitForEvent(
        task.id,
        (f) =>
          f.event === "checkpoint_saved" &&
          (JSON.parse(f.data) as { payload: { sequence: number } }).payload.sequence === boundary,
      );
      await abortAllDurableObjects();
      // The heartbeat alarm resumes an interrupted run; after the last boundary it may only upload the bundle.
      await fireTimers(task.id, ["heartbeat", "bundle_upload"]);
      const done = await waitForTask(task.id, 30);
      expect(done.status, `boundary ${boundary}`).toBe("completed");
      expect(done.result, `boundary ${boundary}`).toBe(expected.result);
      const messages = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
      expect(withoutToolIds(messages.messages.slice(1).map((m) => m.content)), `boundary ${boundary}`).toEqual(
        withoutToolIds(expected.messages.slice(1)),
      );
      const events = parsed(await allEvents(task.id));
      expect(
        events.map((e) => e.seq),
        `boundary ${boundary}`,
      ).toEqual(events.map((_, i) => i + 1));
      expect(
        events.filter((e) => e.event_type === "todo_list_updated"),
        `boundary ${boundary}`,
      ).toHaveLength(2);
      const positions = events.filter((e) => e.event_type === "checkpoint_saved").map((e) => e.payload.position);
      expect(positions, `boundary ${boundary}`).toEqual([...new Set(positions)]);
      expect(events.at(-1)?.event_type).toBe("run_finished");
    }
  });

  it("evicted inside each step after a boundary, re-runs that step alone, and a command's writes land once", async () => {
    // Every step lasts long enough to be evicted in: model turns wait 300 ms for their first token, commands sleep.
    const agent = defineAgent({ bash: { enabled: true }, fileSystem: { read: true, write: true } });
    const command = (word: string) => ({
      content: [toolUse("Bash", { command: `sleep 0.6; echo ${word} >> log.txt` })],
      stop_reason: "tool_use",
    });
    const expectedSteps = ["turn_1_model", "turn_1_tool_", "turn_2_model", "turn_2_tool_", "turn_3_model"];
    for (let boundary = 1; boundary <= expectedSteps.length; boundary++) {
      const marker = uniqueMarker(`evict-inside-${boundary}`);
      await script(marker, [command("one"), command("two"), done], { ttft_ms: 300 });
      const task = await startTask(agent, `work ${marker}`);
      await waitForEvent(
        task.id,
        (f) =>
          f.event === "checkpoint_saved" &&
          (JSON.parse(f.data) as { payload: { sequence: number } }).payload.sequence === boundary,
      );
      await abortAllDurableObjects();
      await fireTimers(task.id, ["heartbeat", "bundle_upload"]);
      expect((await waitForTask(task.id, 30)).status, `boundary ${boundary}`).toBe("completed");
      const events = parsed(await allEvents(task.id));
      const resumed = events.filter((e) => e.event_type === "step_resumed").map((e) => String(e.payload.step));
      // Exactly the step after the boundary was interrupted and ran again; every other step ran once.
      expect(resumed, `boundary ${boundary}`).toHaveLength(1);
      expect(resumed[0]?.startsWith(expectedSteps[boundary - 1] ?? "?"), `boundary ${boundary}: ${resumed[0]}`).toBe(
        true,
      );
      const log = await (await api(`/v1/tasks/${task.id}/workspace/log.txt`)).text();
      expect(log, `boundary ${boundary}`).toBe("one\ntwo\n");
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    }
  }, 90_000);
});
