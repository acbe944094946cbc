// The task routes over real runs: reading and waiting on a task, its conversation, its SSE events, cancelling it,
// the usage and cost it reports, and how a provider failure shows up on it. Every run has its own emulator script.
import { describe, expect, it } from "vitest";
import { MessageListSchema, type TaskResource, TaskResourceSchema } from "../../../src/http/responses.ts";
import {
  api,
  apiJson,
  BASE,
  emulatorRequests,
  eventTypes,
  expectError,
  ISO_TIME,
  parseBody,
  readSse,
  type ScriptTurn,
  script,
  startTask,
  UUID_V4,
  uniqueMarker,
  waitForTask,
} from "../../support/helpers.ts";

/** Registers a script under a fresh marker and starts `agent` on an input that selects it. */
async function begin(
  agent: string,
  turns: ScriptTurn[],
  latency: { ttft_ms?: number; token_delay_ms?: number } = {},
): Promise<{ task: TaskResource; input: string }> {
  const marker = uniqueMarker(agent);
  await script(marker, turns, latency);
  const input = `Please help ${marker}`;
  return { task: await startTask(agent, input), input };
}

/** Resolves once the task's model call is in flight (its llm_request_sent event has been written). */
async function untilModelCalled(id: string): Promise<void> {
  const frames = await readSse(await api(`/v1/tasks/${id}/events`), (f) => f.event === "llm_request_sent");
  expect(frames.at(-1)?.event).toBe("llm_request_sent");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const SLOW = { ttft_ms: 20_000 };
const TODOS = [
  { content: "Read the brief", status: "pending" },
  { content: "Write the tests", status: "pending" },
  { content: "Run them", status: "pending" },
];
const PLANNER_TURNS: ScriptTurn[] = [
  {
    content: [
      { type: "text", text: "Planning first." },
      { type: "tool_use", id: "toolu_plan_1", name: "TodoWrite", input: { todos: TODOS } },
    ],
  },
  { content: [{ type: "text", text: "1. Read the brief\n2. Write the tests\n3. Run them\nStart with the brief." }] },
];

describe("task ids", () => {
  const routes: [string, string, string][] = [
    ["GET", "", "the task"],
    ["GET", "/messages", "its messages"],
    ["GET", "/events", "its events"],
    ["POST", "/cancel", "cancel"],
    ["GET", "/artifacts", "its artifact list"],
    ["GET", "/artifacts/events.jsonl", "one artifact"],
  ];

  it.each(routes)("a malformed id on %s %s (%s) is 404 task_not_found naming id", async (method, suffix) => {
    await expectError(await api(`/v1/tasks/not-a-uuid${suffix}`, { method }), 404, "task_not_found", "id");
  });

  it.each(routes)("an unknown uuid on %s %s (%s) is 404 task_not_found naming id", async (method, suffix) => {
    const res = await api(`/v1/tasks/${crypto.randomUUID()}${suffix}`, { method });
    await expectError(res, 404, "task_not_found", "id");
  });
});

describe("GET /v1/tasks/:id", () => {
  it("returns the completed task with its result, timestamps and links", async () => {
    const { task, input } = await begin("assistant", [{ content: [{ type: "text", text: "Done and dusted." }] }]);
    await waitForTask(task.id);
    const res = await api(`/v1/tasks/${task.id}`);
    expect(res.status).toBe(200);
    const body = await parseBody(res, TaskResourceSchema);
    const self = `${BASE}/v1/tasks/${task.id}`;
    expect(body).toMatchObject({
      id: task.id,
      assigned_agent: "assistant",
      input,
      status: "completed",
      result: "Done and dusted.",
      error: null,
      started_at: expect.stringMatching(ISO_TIME),
      completed_at: expect.stringMatching(ISO_TIME),
      links: { self, events: `${self}/events`, cancel: `${self}/cancel` },
    });
  });

  it("with ?wait blocks until the run has ended", async () => {
    const { task } = await begin("assistant", [{ content: [{ type: "text", text: "Slowly." }] }], { ttft_ms: 300 });
    const now = await apiJson(`/v1/tasks/${task.id}`, TaskResourceSchema);
    expect(["pending", "running"]).toContain(now.status);
    const res = await api(`/v1/tasks/${task.id}?wait=10`);
    expect(res.status).toBe(200);
    const waited = await parseBody(res, TaskResourceSchema);
    expect(waited.status).toBe("completed");
    expect(waited.result).toBe("Slowly.");
  });

  it("with ?wait returns the still-running task when the wait runs out", async () => {
    const { task } = await begin("assistant", [{ content: [{ type: "text", text: "Never in time." }] }], SLOW);
    const started = Date.now();
    const res = await api(`/v1/tasks/${task.id}?wait=0.5`);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    expect((await parseBody(res, TaskResourceSchema)).status).toBe("running");
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(5_000);
    await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" });
  });

  it.each([
    ["abc", /expected number/],
    ["-1", />=0/],
    ["61", /at most 60/],
    ["Infinity", /Infinity/],
  ])("rejects ?wait=%s with 400 validation_failed naming wait", async (value, message) => {
    const res = await api(`/v1/tasks/${crypto.randomUUID()}?wait=${value}`);
    const body = await expectError(res, 400, "validation_failed", "wait");
    expect(body.error.message).toMatch(message);
  });
});

describe("GET /v1/tasks/:id/messages", () => {
  it("is the user's input and the assistant's reply for a one-turn run", async () => {
    const { task, input } = await begin("assistant", [{ content: [{ type: "text", text: "Here you go." }] }]);
    await waitForTask(task.id);
    const res = await api(`/v1/tasks/${task.id}/messages`);
    expect(res.status).toBe(200);
    expect(await parseBody(res, MessageListSchema)).toStrictEqual({
      task_id: task.id,
      messages: [
        { index: 0, role: "user", content: input, created_at: expect.stringMatching(ISO_TIME) },
        {
          index: 1,
          role: "assistant",
          content: [{ type: "text", text: "Here you go." }],
          created_at: expect.stringMatching(ISO_TIME),
        },
      ],
    });
  });

  it("includes the tool call and its result for a planner run that used TodoWrite", async () => {
    const { task, input } = await begin("planner", PLANNER_TURNS);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const res = await api(`/v1/tasks/${task.id}/messages`);
    const body = await parseBody(res, MessageListSchema);
    expect(body.messages.map(({ index, role, content }) => ({ index, role, content }))).toStrictEqual([
      { index: 0, role: "user", content: input },
      {
        index: 1,
        role: "assistant",
        content: [
          { type: "text", text: "Planning first." },
          { type: "tool_use", id: "toolu_plan_1", name: "TodoWrite", input: { todos: TODOS } },
        ],
      },
      {
        index: 2,
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_plan_1",
            content: "Task list saved: 3 items, 0 completed.",
            is_error: false,
          },
        ],
      },
      {
        index: 3,
        role: "assistant",
        content: [{ type: "text", text: "1. Read the brief\n2. Write the tests\n3. Run them\nStart with the brief." }],
      },
    ]);
  });
});

describe("GET /v1/tasks/:id/events", () => {
  it("streams every event as SSE, ids equal to seq, ending with run_finished", async () => {
    const { task } = await begin("assistant", [{ content: [{ type: "text", text: "Streamed." }] }]);
    const res = await api(`/v1/tasks/${task.id}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-cache, no-transform");
    expect(res.headers.get("x-request-id")).toMatch(UUID_V4);
    const frames = await readSse(res);
    expect(frames.map((f) => f.id)).toStrictEqual(frames.map((_, i) => String(i + 1)));
    expect(frames.map((f) => (JSON.parse(f.data) as { event_type: string }).event_type)).toStrictEqual(
      eventTypes(frames),
    );
    expect(eventTypes(frames)[0]).toBe("task_created");
    expect(eventTypes(frames).at(-1)).toBe("run_finished");
  });

  it("with ?after replays only the events after that sequence number", async () => {
    const { task } = await begin("assistant", [{ content: [{ type: "text", text: "Resumed." }] }]);
    const done = await waitForTask(task.id);
    const frames = await readSse(await api(`/v1/tasks/${task.id}/events?after=2`));
    expect(frames.map((f) => f.id)).toStrictEqual(
      Array.from({ length: done.last_event_seq }, (_, i) => String(i + 1)).slice(2),
    );
  });

  it("rejects a malformed ?after with 400 validation_failed naming after", async () => {
    await expectError(await api(`/v1/tasks/${crypto.randomUUID()}/events?after=x`), 400, "validation_failed", "after");
  });

  it("rejects a malformed Last-Event-ID with 400 validation_failed naming last-event-id", async () => {
    const res = await api(`/v1/tasks/${crypto.randomUUID()}/events`, { headers: { "last-event-id": "x" } });
    await expectError(res, 400, "validation_failed", "last-event-id");
  });
});

describe("POST /v1/agents/:name/tasks with Accept: text/event-stream", () => {
  const stream = (input: string, headers: Record<string, string> = {}, key?: string) =>
    api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input }),
      headers: { accept: "text/event-stream", ...headers },
      ...(key ? { key } : {}),
    });

  it("answers with the task's events from its first, its id in x-task-id, in one request", async () => {
    const marker = uniqueMarker("create-stream");
    await script(marker, [{ content: [{ type: "text", text: "Streamed from the POST." }] }]);
    const res = await stream(`Please help ${marker}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const id = res.headers.get("x-task-id") ?? "";
    expect(id).toMatch(UUID_V4);
    expect(res.headers.get("location")).toBe(`${BASE}/v1/tasks/${id}`);
    const frames = await readSse(res);
    // The same frames GET /v1/tasks/:id/events sends: every event, ids equal to seq.
    expect(frames.map((f) => f.id)).toStrictEqual(frames.map((_, i) => String(i + 1)));
    expect(eventTypes(frames)[0]).toBe("task_created");
    expect(eventTypes(frames).at(-1)).toBe("run_finished");
    const done = await waitForTask(id);
    expect(done).toMatchObject({ status: "completed", result: "Streamed from the POST." });
    expect(frames).toHaveLength(done.last_event_seq);
  });

  it("replays the stream of the task an Idempotency-Key created, saying so", async () => {
    const marker = uniqueMarker("create-stream-replay");
    await script(marker, [{ content: [{ type: "text", text: "Once." }] }]);
    const key = crypto.randomUUID();
    const first = await stream(`Please help ${marker}`, { "idempotency-key": key });
    const id = first.headers.get("x-task-id");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    await readSse(first);
    const again = await stream(`Please help ${marker}`, { "idempotency-key": key });
    expect(again.status).toBe(200);
    expect(again.headers.get("x-task-id")).toBe(id);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(eventTypes(await readSse(again)).at(-1)).toBe("run_finished");
    expect(await emulatorRequests(id ?? "")).toHaveLength(1);
  });

  it("refuses a key that may not read with 403 insufficient_scope, before any task is created", async () => {
    const key = crypto.randomUUID();
    const res = await stream("Never started.", { "idempotency-key": key }, "test-run-key");
    await expectError(res, 403, "insufficient_scope", "authorization");
    // The same request as JSON starts the task: the refused one had not.
    const json = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: "Never started." }),
      headers: { "idempotency-key": key },
      key: "test-run-key",
    });
    expect(json.status).toBe(202);
    expect(json.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("POST /v1/tasks/:id/cancel", () => {
  it("cancels a task whose model call is in flight with 200 and the canceled task", async () => {
    const { task } = await begin("assistant", [{ content: [{ type: "text", text: "Too late." }] }], SLOW);
    await untilModelCalled(task.id);
    const res = await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" });
    expect(res.status).toBe(200);
    expect(await parseBody(res, TaskResourceSchema)).toMatchObject({
      id: task.id,
      status: "canceled",
      result: null,
      error: null,
      completed_at: expect.stringMatching(ISO_TIME),
      links: { self: `${BASE}/v1/tasks/${task.id}` },
    });
  });

  it("leaves the task canceled, with run_canceled as its last event", async () => {
    const { task } = await begin("assistant", [{ content: [{ type: "text", text: "Too late." }] }], SLOW);
    await untilModelCalled(task.id);
    const canceled = await apiJson(`/v1/tasks/${task.id}/cancel`, TaskResourceSchema, { method: "POST" });
    await sleep(500);
    const later = await apiJson(`/v1/tasks/${task.id}`, TaskResourceSchema);
    expect(later).toMatchObject({ status: "canceled", result: null, error: null });
    expect(later.last_event_seq).toBe(canceled.last_event_seq);
    const frames = await readSse(await api(`/v1/tasks/${task.id}/events`));
    const last = frames.at(-1);
    expect(last?.event).toBe("run_canceled");
    expect(last?.id).toBe(String(later.last_event_seq));
    expect(JSON.parse(last?.data ?? "{}").payload).toStrictEqual({
      reason: "canceled by client",
      previous_status: "running",
    });
  });

  it("refuses to cancel a canceled task with 409 task_already_finished", async () => {
    const { task } = await begin("assistant", [{ content: [{ type: "text", text: "Too late." }] }], SLOW);
    await untilModelCalled(task.id);
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
    const body = await expectError(
      await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" }),
      409,
      "task_already_finished",
    );
    expect(body.error.message).toBe("The task has already ended with status canceled.");
  });

  it("refuses to cancel a completed task with 409 task_already_finished", async () => {
    const { task } = await begin("assistant", [{ content: [{ type: "text", text: "Finished." }] }]);
    await waitForTask(task.id);
    const body = await expectError(
      await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" }),
      409,
      "task_already_finished",
    );
    expect(body.error.message).toBe("The task has already ended with status completed.");
    expect((await apiJson(`/v1/tasks/${task.id}`, TaskResourceSchema)).status).toBe("completed");
  });
});

describe("usage and cost", () => {
  it("reports the emulator's token counts and the cost at claude-sonnet-5-5 prices for one call", async () => {
    const { task } = await begin("assistant", [
      { content: [{ type: "text", text: "Counted." }], usage: { input_tokens: 1200, output_tokens: 350 } },
    ]);
    const done = await waitForTask(task.id);
    expect(done.usage).toStrictEqual({
      input_tokens: 1200,
      output_tokens: 350,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      total_tokens: 1550,
      // 1200 × $2/M + 350 × $10/M
      total_cost_usd: 0.0059,
      unpriced_models: [],
      model_calls: 1,
      duration_ms: expect.any(Number),
      recovery: { attempts: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
    });
  });

  it("sums token counts and cost over the calls of a two-turn run", async () => {
    const turns: ScriptTurn[] = [
      { ...(PLANNER_TURNS[0] as ScriptTurn), usage: { input_tokens: 1000, output_tokens: 100 } },
      { ...(PLANNER_TURNS[1] as ScriptTurn), usage: { input_tokens: 3000, output_tokens: 250 } },
    ];
    const { task } = await begin("planner", turns);
    const done = await waitForTask(task.id);
    expect(done.usage).toMatchObject({
      input_tokens: 4000,
      output_tokens: 350,
      total_tokens: 4350,
      // (1000 × 2 + 100 × 10) / 1e6 + (3000 × 2 + 250 × 10) / 1e6
      total_cost_usd: 0.0115,
      model_calls: 2,
    });
  });
});

describe("provider failures", () => {
  it("fails the task with provider_rejected_request when the model call gets HTTP 400, without retrying", async () => {
    const { task } = await begin("assistant", [
      { content: [{ type: "text", text: "unused" }], faults: [{ kind: "http", status: 400 }] },
    ]);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("failed");
    expect(done.result).toBeNull();
    expect(done.error).toMatchObject({
      code: "provider_rejected_request",
      type: "ProviderError",
      retryable: false,
      status: 400,
    });
    expect((await emulatorRequests(task.id)).map((r) => r.status)).toStrictEqual([400]);
  });

  it("ends the events of a run rejected with HTTP 400 with run_failed carrying the error", async () => {
    const { task } = await begin("assistant", [
      { content: [{ type: "text", text: "unused" }], faults: [{ kind: "http", status: 400 }] },
    ]);
    const frames = await readSse(await api(`/v1/tasks/${task.id}/events`));
    expect(eventTypes(frames).slice(-2)).toStrictEqual(["llm_request_failed", "run_failed"]);
    const payload = JSON.parse(frames.at(-1)?.data ?? "{}").payload as { error: { code: string } };
    expect(payload.error.code).toBe("provider_rejected_request");
  });

  it("fails the task with provider_auth_failed when the model call gets HTTP 401", async () => {
    const { task } = await begin("assistant", [
      { content: [{ type: "text", text: "unused" }], faults: [{ kind: "http", status: 401 }] },
    ]);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("failed");
    expect(done.error).toMatchObject({ code: "provider_auth_failed", retryable: false, status: 401 });
  });
});
