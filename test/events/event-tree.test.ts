// One stream for the whole tree (issue 14 §2), through the API against the emulator: a parent's event stream carries
// its sub-agents' events (and theirs), each marked with the task that emitted it, that task's parent and its depth,
// in one sequence of ids that Last-Event-ID resumes without a gap or a duplicate; ?depth= bounds it; an eviction in
// the middle of the forwarding delivers every event once.

import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { REDACTED } from "../../src/events/redaction.ts";
import { FORWARDED_KEY } from "../../src/subagents/event-forwarding.ts";
import {
  api,
  defineAgent,
  done,
  type EventBody,
  editTaskState,
  expectError,
  fireTimers,
  ofType,
  parseEvent,
  readSse,
  script,
  startTask,
  stubFor,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

type TreeEvent = EventBody & { run_id: string; task_id?: string; parent_task_id?: string; depth?: number };

function delegate(agent: string, prompt: string) {
  return toolUse("Task", { agent, description: `do ${prompt.slice(0, 20)}`, prompt });
}

/** A small seeded generator (mulberry32): the disconnects are random, and the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function stream(path: string, lastEventId?: number): Promise<TreeEvent[]> {
  const headers: Record<string, string> = lastEventId === undefined ? {} : { "last-event-id": String(lastEventId) };
  const res = await api(path, { headers });
  if (res.status === 204) return [];
  expect(res.status).toBe(200);
  return (await readSse(res)).map((f) => parseEvent(f.data) as TreeEvent);
}

/** The events of `taskId` as its own stream shows them, and as a parent's shows them: type and payload. */
function shape(list: TreeEvent[]): [string, unknown][] {
  return list.map((e) => [e.event_type, e.payload]);
}

/**
 * A parent delegating to two children, the first of which delegates to a grandchild. Each child streams its answer
 * slowly enough for the stream to interleave the three.
 */
async function startTree(label: string) {
  const grandchild = defineAgent({});
  const middle = defineAgent({ subagents: { enabled: true, agents: [grandchild] } });
  const leaf = defineAgent({});
  const parent = defineAgent({ subagents: { enabled: true, agents: [middle, leaf] } });
  const grandPrompt = `Deep ${uniqueMarker(`${label}-grand`)}`;
  const middlePrompt = `Middle ${uniqueMarker(`${label}-middle`)}`;
  const leafPrompt = `Leaf ${uniqueMarker(`${label}-leaf`)}`;
  const words = (n: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${i}`).join(" ");
  await script(grandPrompt, [{ content: [{ type: "text", text: words(12, "g") }] }], { token_delay_ms: 20 });
  await script(middlePrompt, [
    { content: [delegate(grandchild, grandPrompt)], stop_reason: "tool_use" },
    { content: [{ type: "text", text: "middle done" }] },
  ]);
  await script(leafPrompt, [{ content: [{ type: "text", text: words(12, "l") }] }], { token_delay_ms: 20 });
  const marker = uniqueMarker(`${label}-parent`);
  await script(marker, [
    { content: [delegate(middle, middlePrompt), delegate(leaf, leafPrompt)], stop_reason: "tool_use" },
    done,
  ]);
  const task = await startTask(parent, `Tree ${marker}`);
  return { task };
}

describe("a parent's event stream", () => {
  it("carries its sub-agents' events, marked, in one sequence that Last-Event-ID resumes without gap or duplicate", async () => {
    const { task } = await startTree("resume");
    const path = `/v1/tasks/${task.id}/events`;
    const next = random(14);
    const read: TreeEvent[] = [];
    let connections = 0;
    // Reconnect after a random few frames each time, from the last id read, until the stream ends by itself.
    for (;;) {
      connections++;
      const take = 1 + Math.floor(next() * 6);
      const headers: Record<string, string> = read.length ? { "last-event-id": String(read.at(-1)?.seq) } : {};
      const res = await api(path, { headers });
      if (res.status === 204) break;
      expect(res.status).toBe(200);
      let got = 0;
      const frames = await readSse(res, () => ++got === take);
      read.push(...frames.map((f) => parseEvent(f.data) as TreeEvent));
      if (frames.length < take) break;
    }
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const replay = await stream(path);
    expect(connections).toBeGreaterThan(10);
    expect(read.map((e) => e.seq)).toEqual(replay.map((e) => e.seq));
    expect(read).toEqual(replay);
    // One sequence, numbered 1, 2, 3…: nothing skipped, nothing twice.
    expect(replay.map((e) => e.seq)).toEqual(replay.map((_, i) => i + 1));
    // The parent's own terminal event ends its stream; its children's did not.
    expect(replay.at(-1)).toMatchObject({ event_type: "run_finished" });
    expect(replay.at(-1)?.task_id).toBeUndefined();

    const [middleStart, leafStart] = replay.filter((e) => e.event_type === "subagent_started" && e.depth === undefined);
    const middleId = String(middleStart?.payload.child_task_id);
    const leafId = String(leafStart?.payload.child_task_id);
    const grandStart = replay.find((e) => e.event_type === "subagent_started" && e.task_id === middleId);
    const grandId = String(grandStart?.payload.child_task_id);
    expect(grandStart).toMatchObject({ depth: 1, parent_task_id: task.id });

    // Every event is the parent's own (unmarked) or marked with its task, that task's parent and its depth.
    const expected: Record<string, { parent_task_id: string; depth: number }> = {
      [middleId]: { parent_task_id: task.id, depth: 1 },
      [leafId]: { parent_task_id: task.id, depth: 1 },
      [grandId]: { parent_task_id: middleId, depth: 2 },
    };
    for (const event of replay) {
      if (event.task_id === undefined) {
        expect(event.run_id).toBe(task.id);
        expect([event.parent_task_id, event.depth]).toEqual([undefined, undefined]);
      } else {
        expect({ parent_task_id: event.parent_task_id, depth: event.depth }).toEqual(expected[event.task_id]);
        expect(event.run_id).toBe(event.task_id);
      }
    }
    // Each task's events, exactly as its own stream has them, in its order, once.
    for (const id of [middleId, leafId, grandId]) {
      const own = (await stream(`/v1/tasks/${id}/events`)).filter((e) => e.task_id === undefined);
      expect(own.length).toBeGreaterThan(5);
      expect(shape(replay.filter((e) => e.task_id === id))).toEqual(shape(own));
    }
    // A child's events, its end included, come before the parent records that end.
    for (const id of [middleId, leafId]) {
      const childEnd = replay.find((e) => e.task_id === id && e.event_type === "run_finished");
      const recorded = replay.find((e) => e.event_type === "subagent_finished" && e.payload.child_task_id === id);
      expect(childEnd?.seq).toBeLessThan(recorded?.seq ?? 0);
    }
  });

  it("carries only the task's own events with ?depth=0, and its children's but not theirs with ?depth=1", async () => {
    const { task } = await startTree("depth");
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const path = `/v1/tasks/${task.id}/events`;
    const all = await stream(path);
    expect(all.some((e) => e.depth === 2)).toBe(true);
    const own = await stream(`${path}?depth=0`);
    expect(own).toEqual(all.filter((e) => e.depth === undefined));
    expect(own.at(-1)?.event_type).toBe("run_finished");
    expect(await stream(`${path}?depth=1`)).toEqual(all.filter((e) => (e.depth ?? 0) <= 1));
    // Resumed in the middle, a bounded stream goes on from there.
    const middle = own[Math.floor(own.length / 2)]?.seq ?? 0;
    expect(await stream(`${path}?depth=0`, middle)).toEqual(own.filter((e) => e.seq > middle));
  });

  it("refuses a ?depth= that is not a non-negative integer, naming the field", async () => {
    const { task } = await startTree("bad-depth");
    for (const bad of ["-1", "abc", "1.5", "", "1000"]) {
      await expectError(await api(`/v1/tasks/${task.id}/events?depth=${bad}`), 400, "validation_failed", "depth");
    }
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
  });
});

describe("forwarding a sub-agent's events", () => {
  it("delivers each event once when the child is evicted mid-forwarding and sends again what it had sent", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const prompt = `Long ${uniqueMarker("evict-forward")}`;
    const text = Array.from({ length: 80 }, (_, i) => `w${i}`).join(" ");
    await script(prompt, [{ content: [{ type: "text", text }] }], { token_delay_ms: 25 });
    const marker = uniqueMarker("evict-forward-parent");
    await script(marker, [{ content: [delegate(child, prompt)], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Forward ${marker}`);

    // Wait until the parent holds some of the child's streamed text, then evict every object mid-stream.
    let childId = "";
    await readSse(await api(`/v1/tasks/${task.id}/events`), (frame) => {
      const event = parseEvent(frame.data) as TreeEvent;
      if (event.event_type === "subagent_started") childId = String(event.payload.child_task_id);
      return event.task_id !== undefined && event.event_type === "llm_text_delta" && event.seq > 12;
    });
    expect(childId).not.toBe("");
    await abortAllDurableObjects();
    // As if the child had been reset after its parent stored a push and before it recorded that: it sends it all again.
    await editTaskState(childId, (sql) => {
      sql.exec("UPDATE task_state SET value = '0' WHERE key = ?", FORWARDED_KEY.name);
    });
    expect(await fireTimers(childId, ["heartbeat", "forwarding"])).toBe(true);

    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const tree = await stream(`/v1/tasks/${task.id}/events`);
    const own = (await stream(`/v1/tasks/${childId}/events`)).filter((e) => e.task_id === undefined);
    expect(ofType(own, "run_resumed")).toHaveLength(1);
    expect(shape(tree.filter((e) => e.task_id === childId))).toEqual(shape(own));
    expect(tree.map((e) => e.seq)).toEqual(tree.map((_, i) => i + 1));
  });

  it("ends a canceled parent's stream with its run_canceled, and acknowledges without adding its children's later events", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const prompt = `Cut ${uniqueMarker("cancel-forward")}`;
    const text = Array.from({ length: 80 }, (_, i) => `c${i}`).join(" ");
    await script(prompt, [{ content: [{ type: "text", text }] }], { token_delay_ms: 40 });
    const marker = uniqueMarker("cancel-forward-parent");
    await script(marker, [{ content: [delegate(child, prompt)], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Cancel ${marker}`);
    let childId = "";
    await readSse(await api(`/v1/tasks/${task.id}/events`), (frame) => {
      const event = parseEvent(frame.data) as TreeEvent;
      if (event.event_type === "subagent_started") childId = String(event.payload.child_task_id);
      return event.task_id !== undefined && event.event_type === "llm_text_delta";
    });
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await waitForTask(childId, 10)).status).toBe("canceled");

    // The child sends the rest of its log, its run_canceled included; the ended parent takes none of it.
    const childLog = await stream(`/v1/tasks/${childId}/events`);
    const childLast = childLog.at(-1)?.seq ?? 0;
    expect(childLog.at(-1)?.event_type).toBe("run_canceled");
    let acknowledged = 0;
    for (let i = 0; i < 50 && acknowledged < childLast; i++) {
      acknowledged = await runInDurableObject(stubFor(childId), (_instance, state) => {
        const row = state.storage.sql
          .exec<{ value: string }>("SELECT value FROM task_state WHERE key = ?", FORWARDED_KEY.name)
          .toArray()[0];
        return row ? Number(row.value) : 0;
      });
      if (acknowledged < childLast) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(acknowledged).toBe(childLast);

    const tree = await stream(`/v1/tasks/${task.id}/events`);
    expect(tree.at(-1)).toMatchObject({ event_type: "run_canceled", seq: tree.length });
    expect(tree.at(-1)?.task_id).toBeUndefined();
    const forwarded = tree.filter((e) => e.task_id === childId);
    expect(forwarded.length).toBeGreaterThan(0);
    expect(shape(forwarded)).toEqual(shape(childLog.slice(0, forwarded.length)));
    expect(forwarded.some((e) => e.event_type === "run_canceled")).toBe(false);
    expect(
      (await api(`/v1/tasks/${task.id}/events`, { headers: { "last-event-id": String(tree.length) } })).status,
    ).toBe(204);
  });
});

describe("redaction of forwarded events", () => {
  it("keeps a child's secrets out as the child removed them, and its content out of a redacted parent's stream", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] }, redactionMode: "redacted" });
    const secret = `ghp_${"Q1w2E3r4T5y6U7i8O9p0".repeat(2)}`;
    const prompt = `Leak ${uniqueMarker("redact-child")}`;
    const private_ = uniqueMarker("private-answer");
    await script(prompt, [{ content: [{ type: "text", text: `${private_} with ${secret}` }] }]);
    const marker = uniqueMarker("redact-parent");
    await script(marker, [{ content: [delegate(child, prompt)], stop_reason: "tool_use" }, done]);
    const task = await startTask(parent, `Redact ${marker}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");

    const tree = await stream(`/v1/tasks/${task.id}/events`);
    const childId = String(tree.find((e) => e.event_type === "subagent_started")?.payload.child_task_id);
    const forwarded = tree.filter((e) => e.task_id === childId);
    const childOwn = await stream(`/v1/tasks/${childId}/events`);
    // The child shows its own content, with the secret removed once.
    const childText = childOwn
      .filter((e) => e.event_type === "llm_text_delta")
      .map((e) => e.payload.text)
      .join("");
    expect(childText).toBe(`${private_} with ${REDACTED}`);
    // The redacted parent shows the same events with their content fields hidden, and nothing else changed.
    expect(forwarded.map((e) => e.event_type)).toEqual(childOwn.map((e) => e.event_type));
    expect(forwarded.every((e) => e.redaction_mode === "redacted")).toBe(true);
    expect(forwarded.filter((e) => e.event_type === "llm_text_delta").map((e) => e.payload.text)).toEqual(
      childOwn.filter((e) => e.event_type === "llm_text_delta").map(() => REDACTED),
    );
    const started = (list: TreeEvent[]) => list.find((e) => e.event_type === "run_started")?.payload;
    expect(started(forwarded)).toEqual({ ...started(childOwn), task: REDACTED });
    const raw = await (await api(`/v1/tasks/${task.id}/events`)).text();
    expect(raw).not.toContain(private_);
    expect(raw).not.toContain(secret);
  });
});

describe("a session's event stream", () => {
  it("carries the sub-agents of its turns too, and ?depth=0 leaves them out", async () => {
    const child = defineAgent({});
    const agent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const prompt = `Session child ${uniqueMarker("session-child")}`;
    await script(prompt, [{ content: [{ type: "text", text: "from the child" }] }]);
    const marker = uniqueMarker("session-parent");
    await script(marker, [{ content: [delegate(child, prompt)], stop_reason: "tool_use" }, done]);
    const created = await api(`/v1/agents/${agent}/sessions`, { method: "POST", body: "{}" });
    expect(created.status).toBe(201);
    const session = (await created.json()) as { id: string };
    const sent = await api(`/v1/sessions/${session.id}/messages?wait=20`, {
      method: "POST",
      body: JSON.stringify({ message: `Delegate ${marker}` }),
    });
    expect(sent.status).toBe(200);
    expect(((await sent.json()) as { status: string }).status).toBe("completed");

    // A session's stream stays open between turns: read it to the turn's end.
    const read = async (query: string) =>
      (await readSse(await api(`/v1/sessions/${session.id}/events${query}`), (f) => f.event === "turn_finished")).map(
        (f) => parseEvent(f.data) as TreeEvent,
      );
    const all = await read("");
    const childId = String(all.find((e) => e.event_type === "subagent_started")?.payload.child_task_id);
    const forwarded = all.filter((e) => e.task_id !== undefined);
    expect(forwarded.length).toBeGreaterThan(3);
    expect(forwarded.every((e) => e.task_id === childId && e.parent_task_id === session.id && e.depth === 1)).toBe(
      true,
    );
    const childOwn = await stream(`/v1/tasks/${childId}/events`);
    expect(shape(forwarded)).toEqual(shape(childOwn));
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(await read("?depth=0")).toEqual(all.filter((e) => e.task_id === undefined));
    await expectError(await api(`/v1/sessions/${session.id}/events?depth=x`), 400, "validation_failed", "depth");
  });
});
