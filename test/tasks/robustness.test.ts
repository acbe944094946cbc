// Failure paths of the task lifecycle: nothing follows a cancel's terminal event, a step that keeps dying with its
// object is not paid for forever, a run that keeps crashing ends as failed, unknown ids write nothing, and a body
// without a length cannot grow past the limit.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { registry } from "../../src/agents/catalog.ts";
import type { AgentContext } from "../../src/agents/context.ts";
import { type AgentResult, successResult } from "../../src/agents/result.ts";
import { ArtifactListSchema } from "../../src/http/responses.ts";
import { MAX_STEP_ATTEMPTS } from "../../src/runtime/step-journal.ts";
import {
  API_KEY,
  api,
  apiJson,
  BASE,
  expectError,
  fireTimers,
  parseEvent,
  readSse,
  script,
  startTask,
  stubFor,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

interface Event {
  seq: number;
  event_type: string;
  payload: Record<string, unknown>;
}

async function events(id: string): Promise<Event[]> {
  return (await readSse(await api(`/v1/tasks/${id}/events`))).map((f) => parseEvent(f.data));
}

/** A buggy agent: its result throws when read, so recording the outcome fails every time. */
class BrokenResultAgent extends Agent {
  constructor() {
    super({ name: "broken_result", systemPrompt: "Returns a broken result." });
  }
  override async execute(context: AgentContext): Promise<AgentResult> {
    const result = successResult("done", context.runtime.usage());
    return Object.defineProperty(result, "output", {
      get() {
        throw new Error("output is not available");
      },
    });
  }
}
registry.register("broken_result", BrokenResultAgent);

/** Returns metadata JSON cannot represent. */
class BigIntAgent extends Agent {
  constructor() {
    super({ name: "bigint_metadata", systemPrompt: "Counts." });
  }
  override async execute(context: AgentContext): Promise<AgentResult> {
    return successResult("counted", context.runtime.usage(), { count: 10n });
  }
}
registry.register("bigint_metadata", BigIntAgent);

describe("after a cancel", () => {
  it("appends nothing after run_canceled, even with token deltas waiting to be sent", async () => {
    const marker = uniqueMarker("cancel-deltas");
    const text = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    await script(marker, [{ content: [{ type: "text", text }] }], { token_delay_ms: 2 });
    const task = await startTask("assistant", `cancel ${marker}`);
    await readSse(await api(`/v1/tasks/${task.id}/events`), (f) => f.event === "llm_text_delta");
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
    await waitForTask(task.id);
    // Let the run unwind completely before reading the log.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const log = await events(task.id);
    expect(log.at(-1)?.event_type).toBe("run_canceled");
    expect(log.filter((e) => e.event_type === "run_canceled")).toHaveLength(1);
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
  });
});

describe("a step interrupted again and again", () => {
  it(`fails the run with step_attempts_exhausted instead of starting attempt ${MAX_STEP_ATTEMPTS + 1}`, async () => {
    const marker = uniqueMarker("doomed-step");
    // Every attempt stalls, so every attempt is still in flight when the object dies.
    const stall = { kind: "stall" };
    await script(marker, [{ content: [{ type: "text", text: "never" }], faults: [stall, stall, stall, stall] }]);
    const task = await startTask("assistant", `doomed ${marker}`);
    for (let attempt = 1; attempt <= MAX_STEP_ATTEMPTS; attempt++) {
      await readSse(await api(`/v1/tasks/${task.id}/events`), (f) => {
        const e = JSON.parse(f.data) as Event;
        return e.event_type === "llm_request_sent" && e.payload.attempt === attempt;
      });
      await abortAllDurableObjects();
      await fireTimers(task.id, ["heartbeat"]);
    }
    const done = await waitForTask(task.id);
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("step_attempts_exhausted");
    const log = await events(task.id);
    expect(log.filter((e) => e.event_type === "llm_request_sent")).toHaveLength(MAX_STEP_ATTEMPTS);
    expect(log.at(-1)?.event_type).toBe("run_failed");
  });
});

describe("a run that crashes outside the agent's error handling", () => {
  it("is retried by the heartbeat a few times, then fails with internal_error and keeps its bundle", async () => {
    const task = await startTask("broken_result", "go");
    // The first run crashes on its own; each heartbeat alarm runs it again.
    for (let i = 0; i < 10; i++) {
      if ((await waitForTask(task.id, 0)).status === "failed") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
      await fireTimers(task.id, ["heartbeat"]);
    }
    const done = await waitForTask(task.id);
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("internal_error");
    expect(done.error?.message).toMatch(/^The run crashed 3 times and was stopped: /);
    const log = await events(task.id);
    expect(log.filter((e) => e.event_type === "run_resumed")).toHaveLength(2);
    expect(log.at(-1)?.event_type).toBe("run_failed");
    const listing = await apiJson(`/v1/tasks/${task.id}/artifacts`, ArtifactListSchema);
    expect(listing.artifacts.map((a) => a.path)).toContain("final_summary.md");
  });
});

/** Reports progress with a value JSON cannot represent, through the runtime's own emit. */
class BigIntProgressAgent extends Agent {
  constructor() {
    super({ name: "bigint_progress", systemPrompt: "Reports progress." });
  }
  override async execute(context: AgentContext): Promise<AgentResult> {
    context.runtime.emit("custom_progress", { done: 5n });
    await new Promise((resolve) => setTimeout(resolve, 20));
    return successResult("finished", context.runtime.usage());
  }
}
registry.register("bigint_progress", BigIntProgressAgent);

describe("event payloads", () => {
  it("reach live readers even with values JSON cannot represent, and the stream still ends", async () => {
    const task = await startTask("bigint_progress", "go");
    const frames = await readSse(await api(`/v1/tasks/${task.id}/events`));
    const types = frames.map((f) => f.event);
    expect(types.at(-1)).toBe("run_finished");
    const progress = frames.find((f) => f.event === "custom_progress");
    expect(JSON.parse(progress?.data ?? "{}").payload).toEqual({ done: "5" });
  });

  it("are recorded even when an agent's metadata holds values JSON cannot represent", async () => {
    const task = await startTask("bigint_metadata", "count");
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    const log = await events(task.id);
    expect(log.at(-1)).toMatchObject({ event_type: "run_finished", payload: { metadata: { count: "10" } } });
  });
});

describe("unknown task ids", () => {
  it("answer 404 without writing anything to the object they name", async () => {
    const id = crypto.randomUUID();
    await expectError(await api(`/v1/tasks/${id}`), 404, "task_not_found", "id");
    await expectError(await api(`/v1/tasks/${id}/events`), 404, "task_not_found", "id");
    const tables = await runInDurableObject(stubFor(id), (_instance, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
    );
    expect(tables).toEqual([]);
  });
});

describe("request bodies", () => {
  it("stops reading a body sent without Content-Length once it passes 256 KiB", async () => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        // 1 MiB in 64 KiB chunks, unless the server stops reading first.
        if (sent >= 1024 * 1024) return controller.close();
        sent += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    const res = await exports.default.fetch(
      new Request(`${BASE}/v1/agents/assistant/tasks`, {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body,
      }),
    );
    await expectError(res, 413, "payload_too_large");
    expect(sent).toBeLessThan(1024 * 1024);
  });
});
