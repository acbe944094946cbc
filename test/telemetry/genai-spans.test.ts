// OpenTelemetry GenAI spans (semconv 1.40.0), exported over OTLP/HTTP JSON after each run: this file runs in the
// vitest project "telemetry", whose deployment sets OUTPOST_OTEL_ENDPOINT to the emulator's collector (POST
// /v1/traces, emulator/traces.ts) and OUTPOST_OTEL_HEADERS. Runs go through the API against the emulator; the spans
// are read back from what the collector received.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import type { EventRecord } from "../../src/events/event-record.ts";
import { genAiSpans } from "../../src/telemetry/genai-spans.ts";
import { TELEMETRY_EXPORTED_KEY } from "../../src/telemetry/run-telemetry.ts";
import {
  api,
  defineAgent,
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

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean; arrayValue?: unknown };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  status: { code: number; message?: string };
}
interface Received {
  span: OtlpSpan;
  headers: Record<string, string>;
  resource: unknown;
  scope: unknown;
  schemaUrl: unknown;
}

/** What the collector received for a trace. */
async function received(traceId: string): Promise<Received[]> {
  const res = await fetch(`${env.ANTHROPIC_BASE_URL}/_emulator/traces?trace_id=${traceId}`);
  return ((await res.json()) as { spans: Received[] }).spans;
}

/** The trace's spans once `count` have arrived: the export runs in the alarm after the run, not before its end. */
async function exported(traceId: string, count: number): Promise<Received[]> {
  let spans = await received(traceId);
  for (let i = 0; i < 200 && spans.length < count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    spans = await received(traceId);
  }
  return spans;
}

/** A span's attributes as a plain object (int64 values are strings in OTLP JSON). */
function attrs(span: OtlpSpan): Record<string, unknown> {
  return Object.fromEntries(
    span.attributes.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
        value.doubleValue ??
        value.boolValue ??
        value.arrayValue,
    ]),
  );
}

const byName = (spans: OtlpSpan[], name: string) => spans.filter((span) => span.name === name);

function only<T>(list: T[]): T {
  expect(list).toHaveLength(1);
  return list[0] as T;
}

const files = { fileSystem: { read: true } } as const;

/** The task's own events, as its stream sends them. */
async function records(id: string): Promise<EventRecord[]> {
  return (await readSse(await api(`/v1/tasks/${id}/events`))).map((frame) => parseEvent(frame.data));
}

describe("OpenTelemetry GenAI spans", () => {
  it("exports the run, each model call and each tool call, with tokens, cost and a failing tool's error", async () => {
    const agent = defineAgent({ ...files });
    const marker = uniqueMarker("otel-run");
    // The first call writes the prompt cache, the second reads it back: the conventions' input_tokens is all of the
    // input, cached or not, and the cache's part is apart. (The emulator takes the cache's counts too.)
    const writes = { input_tokens: 120, output_tokens: 30, cache_creation_input_tokens: 1000 };
    const reads = { input_tokens: 200, output_tokens: 8, cache_read_input_tokens: 1000 };
    await script(marker, [
      {
        content: [toolUse("Read", { file_path: "a.txt" }), toolUse("Read", { file_path: "missing.txt" })],
        stop_reason: "tool_use",
        usage: writes,
      },
      { content: [{ type: "text", text: "Read it." }], usage: reads },
    ]);
    const task = await startTask(agent, `Read the file ${marker}`, { files: { "a.txt": "secret plans\n" } });
    expect((await waitForTask(task.id)).status).toBe("completed");
    const log = await records(task.id);
    const traceId = (log[0] as EventRecord).trace_id;
    const list = await exported(traceId, 5);
    const spans = list.map((r) => r.span);
    const started = only(ofType(log, "run_started")).payload;
    const model = String(started.model);

    expect(spans.map((s) => s.name).sort()).toEqual(
      [`chat ${model}`, `chat ${model}`, "execute_tool Read", "execute_tool Read", `invoke_agent ${agent}`].sort(),
    );
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceId]));
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(5);

    const run = only(byName(spans, `invoke_agent ${agent}`));
    expect(run.parentSpanId).toBeUndefined();
    expect(run.kind).toBe(1);
    expect(run.status).toEqual({ code: 0 });
    const finished = only(ofType(log, "run_finished")).payload as { usage: { total_cost_usd: number } };
    expect(attrs(run)).toEqual({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": agent,
      "outpost.task.id": task.id,
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": model,
      "gen_ai.usage.input_tokens": 2320,
      "gen_ai.usage.output_tokens": 38,
      "gen_ai.usage.cache_creation.input_tokens": 1000,
      "gen_ai.usage.cache_read.input_tokens": 1000,
      "outpost.usage.cost_usd": finished.usage.total_cost_usd,
      "outpost.task.status": "completed",
    });
    expect(run.startTimeUnixNano).toBe(`${BigInt(Date.parse((log[0] as EventRecord).timestamp)) * 1_000_000n}`);
    expect(run.endTimeUnixNano).toBe(`${BigInt(Date.parse((log.at(-1) as EventRecord).timestamp)) * 1_000_000n}`);

    const responses = ofType(log, "llm_response_received").map(
      (e) => e.payload.meta as { request_id: string; usage: { model: string; cost_usd: number } },
    );
    const chats = byName(spans, `chat ${model}`).sort((a, b) =>
      Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)),
    );
    expect(chats.map((c) => ({ parent: c.parentSpanId, kind: c.kind, status: c.status }))).toEqual([
      { parent: run.spanId, kind: 3, status: { code: 0 } },
      { parent: run.spanId, kind: 3, status: { code: 0 } },
    ]);
    expect(chats.map(attrs)).toEqual(
      [
        [1120, 30, 1000, 0, "tool_use"],
        [1200, 8, 0, 1000, "end_turn"],
      ].map(([input, output, written, read, stop], i) => ({
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model,
        "gen_ai.response.model": responses[i]?.usage.model,
        "outpost.task.id": task.id,
        "gen_ai.provider.name": "anthropic",
        "outpost.llm.call_site": "decision_loop",
        "outpost.llm.turn_index": i + 1,
        "gen_ai.usage.input_tokens": input,
        "gen_ai.usage.output_tokens": output,
        "gen_ai.usage.cache_creation.input_tokens": written,
        "gen_ai.usage.cache_read.input_tokens": read,
        "outpost.usage.cost_usd": responses[i]?.usage.cost_usd,
        "gen_ai.response.finish_reasons": { values: [{ stringValue: stop }] },
        "outpost.llm.request_id": responses[i]?.request_id,
      })),
    );

    const calls = ofType(log, "tool_call_completed").map((e) => e.payload);
    const tools = byName(spans, "execute_tool Read");
    const good = calls.find((c) => c.is_error === false);
    const bad = calls.find((c) => c.is_error === true);
    const toolSpan = (id: unknown) => only(tools.filter((s) => attrs(s)["gen_ai.tool.call.id"] === id));
    const common = {
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "Read",
      "gen_ai.tool.type": "function",
      "outpost.task.id": task.id,
      "gen_ai.provider.name": "anthropic",
    };
    expect(toolSpan(good?.tool_use_id)).toMatchObject({ parentSpanId: run.spanId, kind: 1, status: { code: 0 } });
    expect(attrs(toolSpan(good?.tool_use_id))).toEqual({ ...common, "gen_ai.tool.call.id": good?.tool_use_id });
    expect(toolSpan(bad?.tool_use_id)).toMatchObject({
      parentSpanId: run.spanId,
      status: { code: 2, message: "tool_error" },
    });
    expect(attrs(toolSpan(bad?.tool_use_id))).toEqual({
      ...common,
      "gen_ai.tool.call.id": bad?.tool_use_id,
      "error.type": "tool_error",
    });

    // One export, with the configured headers, the resource and the pinned conventions; no prompt or file content.
    expect(list.map((r) => r.headers["x-collector-token"])).toEqual(Array(5).fill("test-otel-token"));
    expect(list[0]?.headers["x-team"]).toBe("outpost tests");
    expect(list[0]?.headers["content-type"]).toBe("application/json");
    expect(list[0]?.resource).toEqual({ attributes: [{ key: "service.name", value: { stringValue: "outpost" } }] });
    expect(list[0]?.scope).toEqual({ name: "outpost", version: "1.40.0" });
    expect(list[0]?.schemaUrl).toBe("https://opentelemetry.io/schemas/1.40.0");
    const text = JSON.stringify(spans);
    expect(text).not.toContain(marker);
    expect(text).not.toContain("secret plans");
    expect(text).not.toContain("Read it.");
  });

  it("puts a sub-agent's run under the Task call that started it, in the parent's trace", async () => {
    const child = defineAgent({});
    const parent = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const part = `Part ${uniqueMarker("otel-child")}`;
    await script(part, [
      { content: [{ type: "text", text: "part done" }], usage: { input_tokens: 40, output_tokens: 4 } },
    ]);
    const marker = uniqueMarker("otel-parent");
    await script(marker, [
      {
        content: [toolUse("Task", { agent: child, description: "a part", prompt: part })],
        stop_reason: "tool_use",
      },
      { content: [{ type: "text", text: "all done" }] },
    ]);
    const task = await startTask(parent, `Delegate ${marker}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const log = await records(task.id);
    const traceId = (log[0] as EventRecord).trace_id;
    const spans = (await exported(traceId, 6)).map((r) => r.span);
    const delegated = only(ofType(log, "subagent_started")).payload;
    const childId = String(delegated.child_task_id);

    expect(spans.map((s) => s.name).sort()).toEqual(
      [
        `invoke_agent ${parent}`,
        expect.stringMatching(/^chat /),
        expect.stringMatching(/^chat /),
        "execute_tool Task",
        `invoke_agent ${child}`,
        expect.stringMatching(/^chat /),
      ].sort(),
    );
    expect(spans).toHaveLength(6);
    const root = only(byName(spans, `invoke_agent ${parent}`));
    const taskCall = only(byName(spans, "execute_tool Task"));
    const childRun = only(byName(spans, `invoke_agent ${child}`));
    expect(taskCall.parentSpanId).toBe(root.spanId);
    expect(attrs(taskCall)).toMatchObject({
      "gen_ai.tool.call.id": delegated.tool_use_id,
      "outpost.subagent.task_id": childId,
      "outpost.subagent.agent": child,
    });
    expect(childRun.parentSpanId).toBe(taskCall.spanId);
    expect(childRun.traceId).toBe(traceId);
    expect(attrs(childRun)).toMatchObject({ "outpost.task.id": childId, "outpost.task.status": "completed" });
    const childChat = only(spans.filter((s) => s.parentSpanId === childRun.spanId));
    expect(childChat.name).toMatch(/^chat /);
    expect(attrs(childChat)).toMatchObject({
      "outpost.task.id": childId,
      "gen_ai.usage.input_tokens": 40,
      "gen_ai.usage.output_tokens": 4,
    });
    // The child exported nothing of its own: its spans left with its root's, under the root's trace.
    const childTrace = (await records(childId))[0]?.trace_id as string;
    expect(childTrace).not.toBe(traceId);
    expect(await received(childTrace)).toEqual([]);
  });

  it("sends the same span ids again when an export is repeated, so a receiver can drop the copies", async () => {
    const agent = defineAgent({});
    const marker = uniqueMarker("otel-again");
    await script(marker, [{ content: [{ type: "text", text: "once" }] }]);
    const task = await startTask(agent, `Answer ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const traceId = (await records(task.id))[0]?.trace_id as string;
    const first = (await exported(traceId, 2)).map((r) => r.span);

    expect(first).toHaveLength(2);
    // As after an eviction between the export and its record: the object forgets it exported, and its alarm runs again.
    await runInDurableObject(stubFor(task.id), (_instance, state) => {
      state.storage.sql.exec("UPDATE task SET bundle_flushed = 0");
      state.storage.sql.exec("DELETE FROM task_state WHERE key = ?", TELEMETRY_EXPORTED_KEY.name);
      // The upload's timer is deleted only once its duty has run to the end: the eviction left it in the ledger.
      state.storage.sql.exec(
        "INSERT OR REPLACE INTO timers (kind, due_at, payload) VALUES ('bundle_upload', ?, 'null')",
        Date.now(),
      );
    });
    await evictDurableObject(stubFor(task.id));
    expect(await fireTimers(task.id, ["bundle_upload"])).toBe(true);
    const both = (await exported(traceId, 4)).map((r) => r.span);
    expect(both).toHaveLength(4);
    expect(both.slice(2)).toEqual(first);
  });

  it("exports each turn of a session once it has ended, each an invoke_agent span of the conversation", async () => {
    const agent = defineAgent({});
    const marker = uniqueMarker("otel-session");
    await script(marker, [
      { content: [{ type: "text", text: "Hello." }], usage: { input_tokens: 10, output_tokens: 2 } },
      { content: [{ type: "text", text: "Bye." }], usage: { input_tokens: 20, output_tokens: 3 } },
    ]);
    const created = await api(`/v1/agents/${agent}/sessions`, { method: "POST", body: "{}" });
    const session = (await created.json()) as { id: string };
    const send = async (message: string) => {
      const turn = await api(`/v1/sessions/${session.id}/messages?wait=20`, {
        method: "POST",
        body: JSON.stringify({ message }),
      });
      expect(turn.status).toBe(200);
    };
    // An open session's stream does not end: read up to its first event, or, once closed, all of it.
    const sessionLog = async (until?: () => boolean) =>
      (await readSse(await api(`/v1/sessions/${session.id}/events`), until)).map((f) => parseEvent(f.data));
    await send(`Hi ${marker}`);
    const traceId = ((await sessionLog(() => true))[0] as EventRecord).trace_id;
    // The first turn's spans leave when it ends, while the session stays open.
    const first = (await exported(traceId, 2)).map((r) => r.span);
    expect(first.map((s) => s.name).sort()).toEqual([expect.stringMatching(/^chat /), `invoke_agent ${agent}`]);
    await send("Bye");
    expect((await api(`/v1/sessions/${session.id}`, { method: "DELETE" })).status).toBe(200);
    const log = await sessionLog();
    const spans = (await exported(traceId, 4)).map((r) => r.span);
    const turns = ofType(log, "turn_started").map((e) => String(e.payload.turn_id));
    const runs = byName(spans, `invoke_agent ${agent}`).sort((a, b) =>
      Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)),
    );
    // Each span once: the second turn's at its end or at the close, never both.
    expect(spans).toHaveLength(4);
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(4);
    expect(spans.slice(0, 2)).toEqual(first);
    expect(runs.map((r) => [r.parentSpanId, attrs(r)["outpost.turn.id"], attrs(r)["gen_ai.conversation.id"]])).toEqual([
      [undefined, turns[0], session.id],
      [undefined, turns[1], session.id],
    ]);
    expect(runs.map((r) => attrs(r)["outpost.turn.status"])).toEqual(["completed", "completed"]);
    const chats = spans.filter((s) => s.name.startsWith("chat "));
    expect(chats.map((c) => [c.parentSpanId, attrs(c)["gen_ai.usage.input_tokens"]]).sort()).toEqual(
      [
        [runs[0]?.spanId, 10],
        [runs[1]?.spanId, 20],
      ].sort(),
    );
  });

  it("marks a failed model call and the run it failed with their error codes", async () => {
    const agent = defineAgent({});
    const marker = uniqueMarker("otel-failed");
    await script(marker, [{ content: [{ type: "text", text: "never" }], faults: [{ kind: "http", status: 400 }] }]);
    const task = await startTask(agent, `Fail ${marker}`);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("failed");
    const log = await records(task.id);
    const callError = (only(ofType(log, "llm_request_failed")).payload.error as { code: string }).code;
    const spans = (await exported((log[0] as EventRecord).trace_id, 2)).map((r) => r.span);
    expect(spans).toHaveLength(2);
    const run = only(byName(spans, `invoke_agent ${agent}`));
    const chat = only(spans.filter((s) => s.name.startsWith("chat ")));
    expect(chat.parentSpanId).toBe(run.spanId);
    expect(chat.status).toEqual({ code: 2, message: callError });
    expect(attrs(chat)["error.type"]).toBe(callError);
    expect(run.status).toEqual({ code: 2, message: done.error?.code });
    expect(attrs(run)).toMatchObject({ "error.type": done.error?.code, "outpost.task.status": "failed" });
  });

  it("exports an MCP call as an extension tool of its server, and a refused call with the refusal as its error", async () => {
    const agent = defineAgent({
      mcpServers: {
        everything: {
          url: inject("mcpUrl"),
          headers: { Authorization: { secret: "MCP_TEST_TOKEN", prefix: "Bearer " } },
        },
      },
    });
    const marker = uniqueMarker("otel-mcp");
    await script(marker, [
      {
        content: [
          toolUse("mcp__everything__echo", { message: "hello" }),
          toolUse("Write", { file_path: "x.txt", content: "x" }),
        ],
        stop_reason: "tool_use",
      },
      { content: [{ type: "text", text: "Done." }] },
    ]);
    const task = await startTask(agent, `Echo ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const log = await records(task.id);
    const spans = (await exported((log[0] as EventRecord).trace_id, 5)).map((r) => r.span);
    expect(spans).toHaveLength(5);
    const run = only(byName(spans, `invoke_agent ${agent}`));
    const mcp = only(ofType(log, "mcp_tool_call_completed")).payload;
    const echo = only(byName(spans, `execute_tool ${String(mcp.tool_name)}`));
    expect(echo).toMatchObject({ parentSpanId: run.spanId, status: { code: 0 } });
    expect(attrs(echo)).toMatchObject({
      "gen_ai.tool.name": mcp.tool_name,
      "gen_ai.tool.call.id": mcp.step_id,
      "gen_ai.tool.type": "extension",
      "outpost.mcp.server": "everything",
    });
    const denied = only(ofType(log, "tool_denied")).payload;
    const write = only(byName(spans, "execute_tool Write"));
    expect(write).toMatchObject({ parentSpanId: run.spanId, status: { code: 2, message: denied.reason } });
    expect(attrs(write)).toMatchObject({ "gen_ai.tool.call.id": denied.tool_use_id, "error.type": denied.reason });
  });
});

describe("the spans' token counts", () => {
  /** A log's record: what genAiSpans reads of it. */
  const record = (seq: number, event_type: string, payload: Record<string, unknown>): EventRecord => ({
    seq,
    run_id: "run-1",
    trace_id: "0af7651916cd43dd8448eb211c80319c",
    span_id: "b7ad6b7169203331",
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString(),
    event_type,
    payload,
    redaction_mode: "full",
  });
  const call = { turn_index: 1, call_site: "decision_loop", attempt: 1 };
  const usage = {
    input_tokens: 50,
    output_tokens: 20,
    cache_creation_input_tokens: 900,
    cache_read_input_tokens: 4000,
    cache_creation_1h_input_tokens: 600,
  };

  it("adds the cache writes at the 1-hour TTL as an attribute of their own, beside the conventions' counts", async () => {
    const spans = await genAiSpans(
      { id: "task-1", kind: "task", assigned_agent: "planner", traceId: "0af7651916cd43dd8448eb211c80319c" },
      [
        record(1, "task_created", { model: "claude-sonnet-5-5" }),
        record(2, "run_started", { agent: "planner", provider: "anthropic", model: "claude-sonnet-5-5" }),
        record(3, "llm_request_sent", { ...call, provider: "anthropic", model: "claude-sonnet-5-5" }),
        record(4, "llm_response_received", {
          ...call,
          meta: { stop_reason: "end_turn", request_id: null, usage: { model: "claude-sonnet-5-5", ...usage } },
        }),
        record(5, "run_finished", { usage: { ...usage, total_cost_usd: 0.0123 } }),
      ],
      [],
    );
    const expected = {
      "gen_ai.usage.input_tokens": 4950,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.usage.cache_creation.input_tokens": 900,
      "gen_ai.usage.cache_read.input_tokens": 4000,
      "outpost.usage.cache_creation_1h_input_tokens": 600,
    };
    expect(spans.map((span) => [span.name, span.attributes])).toEqual([
      ["invoke_agent planner", expect.objectContaining({ ...expected, "outpost.usage.cost_usd": 0.0123 })],
      ["chat claude-sonnet-5-5", expect.objectContaining(expected)],
    ]);
  });
});
