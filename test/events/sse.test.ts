// The event stream, end to end and in parts: GET /v1/tasks/:id/events through the real Worker and Durable Object
// (frame bytes, event order, sequence numbers, replay from a cursor, live follow, many subscribers, disconnects,
// cursor validation), openEventStream against a small in-memory log (heartbeats, terminal close, cancel, overflow),
// and EventLog on a real Durable Object's SQLite (append before broadcast).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { chunkText } from "../../emulator/wire.ts";
import { EventLog } from "../../src/events/event-log.ts";
import { type EventRecord, EventRecordSchema } from "../../src/events/event-record.ts";
import { openEventStream, type EventSource as SseSource, sseFrame } from "../../src/events/sse.ts";
import { ErrorBodySchema, type TaskResource } from "../../src/http/responses.ts";
import { DELTA_WINDOW_MS } from "../../src/runtime/delta-batcher.ts";
import { migrate } from "../../src/storage/migrations.ts";
import {
  api,
  checkEvent,
  parseBody,
  readSse,
  type ScriptTurn,
  script,
  startTask,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** The first bytes of every stream: the client's reconnect delay (src/events/sse.ts RETRY_MS). */
const RETRY_LINE = "retry: 1000\n\n";
const KEEPALIVE = ": keepalive";
/** How long a read may wait for bytes before the test fails instead of hanging until the test timeout. */
const READ_DEADLINE_MS = 10_000;

const decoder = new TextDecoder();

/** An event frame as sent: `id`, `event` and `data` lines parsed, plus the exact text between blank lines. */
interface Frame {
  id: number;
  event: string;
  data: EventRecord;
  block: string;
}

/** The exact text sseFrame writes for a record. */
function frameText(record: EventRecord): string {
  return decoder.decode(sseFrame(record));
}

/** Parses one `id/event/data` block; anything else in its place is a malformed frame and fails the test. */
function parseFrame(block: string): Frame {
  const match = /^id: (\d+)\nevent: ([a-z_]+)\ndata: ([^\n]+)$/.exec(block);
  if (!match) throw new Error(`not an id/event/data frame: ${JSON.stringify(block)}`);
  const [, id = "", event = "", data = ""] = match;
  return { id: Number(id), event, data: JSON.parse(data) as EventRecord, block };
}

/** For the in-memory log's streams, whose types and payloads are made up: their records are not checked. */
const madeUp = (_record: unknown) => undefined;

/** Reads SSE bytes block by block (a block is the text before a blank line), keeping everything it saw. */
class SseReader {
  raw = "";
  private buffer = "";
  private ended = false;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly check: (record: unknown) => unknown;

  /** `check` sees each frame's record: a task's events are checked against the event catalog (checkEvent). */
  constructor(body: ReadableStream<Uint8Array> | null, check: (record: unknown) => unknown = checkEvent) {
    if (!body) throw new Error("response has no body");
    this.reader = body.getReader();
    this.check = check;
  }

  /** The next block, or null once the stream has ended. Fails if no block arrives within `deadlineMs`. */
  async nextBlock(deadlineMs = READ_DEADLINE_MS): Promise<string | null> {
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end !== -1) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        return block;
      }
      if (this.ended) {
        if (this.buffer !== "") throw new Error(`stream ended inside a frame: ${JSON.stringify(this.buffer)}`);
        return null;
      }
      const chunk = await this.readWithin(deadlineMs);
      if (chunk === null) this.ended = true;
      else {
        const text = decoder.decode(chunk, { stream: true });
        this.raw += text;
        this.buffer += text;
      }
    }
  }

  /** The next event frame (skipping the retry line and keepalive comments), or null at the end. */
  async nextFrame(deadlineMs = READ_DEADLINE_MS): Promise<Frame | null> {
    for (;;) {
      const block = await this.nextBlock(deadlineMs);
      if (block === null) return null;
      if (block.startsWith("retry: ") || block.startsWith(":")) continue;
      const frame = parseFrame(block);
      this.check(frame.data);
      return frame;
    }
  }

  /** Every remaining event frame, until the stream ends. */
  async rest(deadlineMs = READ_DEADLINE_MS): Promise<Frame[]> {
    const frames: Frame[] = [];
    for (let frame = await this.nextFrame(deadlineMs); frame; frame = await this.nextFrame(deadlineMs)) {
      frames.push(frame);
    }
    return frames;
  }

  /** Every remaining block of any kind, until the stream ends. */
  async drain(deadlineMs = READ_DEADLINE_MS): Promise<string[]> {
    const blocks: string[] = [];
    for (let block = await this.nextBlock(deadlineMs); block !== null; block = await this.nextBlock(deadlineMs)) {
      blocks.push(block);
    }
    return blocks;
  }

  /** Frames until one satisfies `stop` (inclusive); fails if the stream ends first. */
  async until(stop: (frame: Frame) => boolean): Promise<Frame[]> {
    const frames: Frame[] = [];
    for (;;) {
      const frame = await this.nextFrame();
      if (!frame) throw new Error(`stream ended before the awaited frame; saw ${frames.map((f) => f.event)}`);
      frames.push(frame);
      if (stop(frame)) return frames;
    }
  }

  async cancel(): Promise<void> {
    await this.reader.cancel();
  }

  private async readWithin(deadlineMs: number): Promise<Uint8Array | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no SSE bytes within ${deadlineMs} ms (stream still open)`)),
        deadlineMs,
      );
    });
    try {
      const { value, done } = await Promise.race([this.reader.read(), deadline]);
      return done ? null : value;
    } catch (error) {
      await this.reader.cancel().catch(() => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

function events(taskId: string, options: { lastEventId?: string; after?: string } = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  if (options.lastEventId !== undefined) headers["last-event-id"] = options.lastEventId;
  const query = options.after === undefined ? "" : `?after=${options.after}`;
  return api(`/v1/tasks/${taskId}/events${query}`, { headers });
}

async function readEvents(
  taskId: string,
  options: { lastEventId?: string; after?: string } = {},
): Promise<{ raw: string; frames: Frame[] }> {
  const reader = new SseReader((await events(taskId, options)).body);
  const frames = await reader.rest();
  return { raw: reader.raw, frames };
}

function types(frames: readonly Frame[]): string[] {
  return frames.map((f) => f.event);
}

/**
 * The event types with each run of consecutive deltas of one kind written once. How many deltas a
 * stream of tokens becomes depends on timers (the runtime coalesces tokens that arrive within
 * DELTA_WINDOW_MS, and a loaded machine delays timers), so the order of events is asserted on this.
 */
function shape(frames: readonly Frame[]): string[] {
  return types(frames).filter((type, i, all) => !(type.endsWith("_delta") && all[i - 1] === type));
}

/** Whether `pieces` are `tokens` cut only at token boundaries: each piece is one or more whole tokens. */
function wholeTokens(pieces: readonly string[], tokens: readonly string[]): boolean {
  const ends = (parts: readonly string[]) => parts.map((_, i) => parts.slice(0, i + 1).join("").length);
  const boundaries = new Set(ends(tokens));
  return ends(pieces).every((end) => boundaries.has(end));
}

/** `count` words, streamed by the emulator as `count` text deltas. */
function words(count: number): string {
  return Array.from({ length: count }, (_, i) => `word${i + 1}`).join(" ");
}

/** A run of `agent` against a script of its own, followed live from the moment it was created. */
/** Token spacing well above DELTA_WINDOW_MS: every token arrives after the previous batch went out. */
const SPACED_TOKENS = { token_delay_ms: DELTA_WINDOW_MS * 3 };

async function followedRun(
  label: string,
  turns: ScriptTurn[],
  latency: { ttft_ms?: number; token_delay_ms?: number } = {},
  agent = "assistant",
): Promise<{ task: TaskResource; raw: string; frames: Frame[]; response: Response }> {
  const marker = uniqueMarker(label);
  await script(marker, turns, latency);
  const task = await startTask(agent, `${label} ${marker}`);
  const response = await events(task.id);
  const reader = new SseReader(response.body);
  const frames = await reader.rest();
  return { task, raw: reader.raw, frames, response };
}

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("a one-turn text run streamed live", () => {
  const text = "The quick brown fox jumps over the lazy dog.";
  let run: Awaited<ReturnType<typeof followedRun>>;

  beforeAll(async () => {
    // Tokens further apart than the runtime's delta batching window, so each one is its own event.
    run = await followedRun("sse-text", [{ content: [{ type: "text", text }] }], SPACED_TOKENS);
  });

  it("answers with an uncached text/event-stream", () => {
    expect(run.response.status).toBe(200);
    expect(run.response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(run.response.headers.get("cache-control")).toBe("no-cache, no-transform");
  });

  it("opens the stream with a retry line and then sends only exact sseFrame bytes", () => {
    expect(run.raw.startsWith(RETRY_LINE)).toBe(true);
    expect(run.raw).toBe(RETRY_LINE + run.frames.map((f) => frameText(f.data)).join(""));
  });

  it("writes each event as id, event and data lines where data is the event record with the same seq and type", () => {
    expect(run.frames.length).toBeGreaterThan(0);
    for (const frame of run.frames) {
      expect(Object.keys(frame.data)).toEqual([
        "seq",
        "run_id",
        "trace_id",
        "span_id",
        "timestamp",
        "event_type",
        "payload",
        "redaction_mode",
      ]);
      expect(EventRecordSchema.parse(frame.data)).toEqual(frame.data);
      expect(frame.data.seq).toBe(frame.id);
      expect(frame.data.event_type).toBe(frame.event);
      expect(frame.data.run_id).toBe(run.task.id);
      expect(frame.data.trace_id).toMatch(HEX32);
      expect(frame.data.span_id).toMatch(HEX16);
      expect(frame.data.redaction_mode).toBe("full");
      expect(frame.data.timestamp).toMatch(ISO_TIMESTAMP);
      expect(new Date(frame.data.timestamp).toISOString()).toBe(frame.data.timestamp);
    }
  });

  it("stamps every event of the run with one trace id", () => {
    const traceIds = new Set(run.frames.map((f) => f.data.trace_id));
    expect(traceIds.size).toBe(1);
  });

  it("sends task_created, run_started, the model call with its text deltas, then run_finished", () => {
    expect(shape(run.frames)).toEqual([
      "task_created",
      "run_started",
      "checkpoint_saved",
      "llm_request_sent",
      "llm_text_delta",
      "llm_response_received",
      "checkpoint_saved",
      "run_finished",
    ]);
  });

  it("coalesces a burst of tokens into fewer deltas, sending the first token at once", async () => {
    const burst = words(40);
    const fast = await followedRun("sse-burst", [{ content: [{ type: "text", text: burst }] }]);
    const deltas = fast.frames.filter((f) => f.event === "llm_text_delta").map((f) => f.data.payload.text);
    expect(deltas.join("")).toBe(burst);
    expect(deltas[0]).toBe(chunkText(burst)[0]);
    expect(deltas.length).toBeLessThan(chunkText(burst).length);
  });

  it("streams deltas made of the model's whole tokens that concatenate to its answer", () => {
    const deltas = run.frames.filter((f) => f.event === "llm_text_delta").map((f) => f.data.payload.text);
    expect(deltas.join("")).toBe(text);
    expect(wholeTokens(deltas.map(String), chunkText(text))).toBe(true);
    // Spaced tokens are not held back for a batch: at least the first goes out on its own.
    expect(deltas[0]).toBe(chunkText(text)[0]);
  });

  it("ends the stream right after run_finished", () => {
    // `rest()` returned, so the reader got done; nothing but the frames came after the terminal one.
    expect(run.frames.at(-1)?.event).toBe("run_finished");
    expect(run.raw.endsWith(frameText(run.frames.at(-1)?.data as EventRecord))).toBe(true);
  });

  it("numbers the events 1, 2, 3 and so on without a gap", () => {
    expect(run.frames.map((f) => f.id)).toEqual(run.frames.map((_, i) => i + 1));
  });

  it("replays the same bytes after the run as it streamed live", async () => {
    const replay = await readEvents(run.task.id);
    expect(replay.raw).toBe(run.raw);
  });
});

describe("the event vocabulary of richer runs", () => {
  const todos = [
    { content: "Read the code", status: "pending" },
    { content: "Write the tests", status: "pending" },
  ];
  const plan = "1. Read the code\n2. Write the tests\nStart with the code.";
  let planner: Awaited<ReturnType<typeof followedRun>>;

  beforeAll(async () => {
    planner = await followedRun(
      "sse-planner",
      [
        { content: [{ type: "tool_use", name: "TodoWrite", input: { todos } }] },
        { content: [{ type: "text", text: plan }] },
      ],
      SPACED_TOKENS,
      "planner",
    );
  });

  it("records a planner's TodoWrite call between its two model turns", () => {
    expect(shape(planner.frames)).toEqual([
      "task_created",
      "run_started",
      "checkpoint_saved",
      "llm_request_sent",
      "llm_response_received",
      "checkpoint_saved",
      "tool_call_started",
      "todo_list_updated",
      "tool_call_completed",
      "checkpoint_saved",
      "llm_request_sent",
      "llm_text_delta",
      "llm_response_received",
      "checkpoint_saved",
      "run_finished",
    ]);
    const deltas = planner.frames.filter((f) => f.event === "llm_text_delta").map((f) => f.data.payload.text);
    expect(deltas.join("")).toBe(plan);
  });

  it("numbers a planner's model requests turn 1 and turn 2", () => {
    const requests = planner.frames.filter((f) => f.event === "llm_request_sent");
    expect(requests.map((f) => f.data.payload.turn_index)).toEqual([1, 2]);
  });

  it("carries the tool call and the saved list in the tool events", () => {
    const byType = (t: string) => planner.frames.find((f) => f.event === t)?.data.payload;
    expect(byType("tool_call_started")).toMatchObject({ turn_index: 1, tool_name: "TodoWrite", input: { todos } });
    expect(byType("todo_list_updated")).toEqual({ todos, completed: 0, total: 2 });
    expect(byType("tool_call_completed")).toMatchObject({ turn_index: 1, tool_name: "TodoWrite", is_error: false });
  });

  it("numbers a planner run's events 1, 2, 3 and so on without a gap", () => {
    expect(planner.frames.map((f) => f.id)).toEqual(planner.frames.map((_, i) => i + 1));
  });

  it("streams extended thinking as llm_thinking_delta events before the answer's text deltas", async () => {
    const thinking = "The user wants a greeting, so greet them.";
    const answer = "Hello there.";
    const run = await followedRun(
      "sse-thinking",
      [
        {
          content: [
            { type: "thinking", thinking },
            { type: "text", text: answer },
          ],
        },
      ],
      SPACED_TOKENS,
    );
    expect(shape(run.frames)).toEqual([
      "task_created",
      "run_started",
      "checkpoint_saved",
      "llm_request_sent",
      "llm_thinking_delta",
      "llm_text_delta",
      "llm_response_received",
      "checkpoint_saved",
      "run_finished",
    ]);
    const thoughts = run.frames.filter((f) => f.event === "llm_thinking_delta").map((f) => f.data.payload);
    expect(thoughts.map((p) => p.thinking).join("")).toBe(thinking);
    expect(thoughts.every((p) => p.turn_index === 1 && p.index === 0)).toBe(true);
  });
});

describe("replay from a cursor after the run has ended", () => {
  let task: TaskResource;
  let full: Frame[];

  beforeAll(async () => {
    const marker = uniqueMarker("sse-replay");
    await script(marker, [{ content: [{ type: "text", text: words(6) }] }]);
    task = await startTask("assistant", `replay ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    full = (await readEvents(task.id)).frames;
  });

  it("returns the whole log, ending with run_finished, without a cursor", () => {
    expect(full.map((f) => f.id)).toEqual(full.map((_, i) => i + 1));
    expect(full[0]?.event).toBe("task_created");
    expect(full.at(-1)?.event).toBe("run_finished");
  });

  it("sends only the events after the Last-Event-ID header", async () => {
    const { frames } = await readEvents(task.id, { lastEventId: "4" });
    expect(frames.map((f) => f.block)).toEqual(full.slice(4).map((f) => f.block));
  });

  it("sends only the events after ?after=", async () => {
    const { frames } = await readEvents(task.id, { after: "4" });
    expect(frames.map((f) => f.block)).toEqual(full.slice(4).map((f) => f.block));
  });

  it("prefers the Last-Event-ID header over ?after= when both are given", async () => {
    const { frames } = await readEvents(task.id, { lastEventId: "6", after: "2" });
    expect(frames.map((f) => f.id)).toEqual(full.slice(6).map((f) => f.id));
  });

  it("answers 204 with no body when Last-Event-ID is the finished task's last event, so EventSource stops", async () => {
    const last = full.at(-1)?.id;
    const res = await api(`/v1/tasks/${task.id}/events`, { headers: { "last-event-id": String(last) } });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
  });
});

describe("following a run live", () => {
  it("sends task_created before the model has answered", async () => {
    const marker = uniqueMarker("sse-live");
    await script(marker, [{ content: [{ type: "text", text: "Late answer." }] }], { ttft_ms: 2000 });
    const posted = Date.now();
    const task = await startTask("assistant", `live ${marker}`);
    const reader = new SseReader((await events(task.id)).body);
    const first = await reader.nextFrame();
    const firstAfterMs = Date.now() - posted;
    const untilDelta = await reader.until((f) => f.event === "llm_text_delta");
    const deltaAfterMs = Date.now() - posted;
    await reader.rest();
    expect(first?.event).toBe("task_created");
    expect(first?.id).toBe(1);
    expect(untilDelta.map((f) => f.event)).toEqual([
      "run_started",
      "checkpoint_saved",
      "llm_request_sent",
      "llm_text_delta",
    ]);
    expect(firstAfterMs).toBeLessThan(1000);
    expect(deltaAfterMs).toBeGreaterThanOrEqual(2000);
  });

  it("resumes mid-run from Last-Event-ID without a gap or a duplicate", async () => {
    const marker = uniqueMarker("sse-resume");
    await script(marker, [{ content: [{ type: "text", text: words(20) }] }], { token_delay_ms: 50 });
    const task = await startTask("assistant", `resume ${marker}`);

    const firstReader = new SseReader((await events(task.id)).body);
    let deltas = 0;
    const before = await firstReader.until((f) => f.event === "llm_text_delta" && ++deltas === 3);
    await firstReader.cancel();
    const lastSeen = before.at(-1)?.id;

    const after = await readEvents(task.id, { lastEventId: String(lastSeen) });
    const replay = await readEvents(task.id);

    expect(after.frames[0]?.id).toBe((lastSeen ?? 0) + 1);
    expect([...before, ...after.frames].map((f) => f.block)).toEqual(replay.frames.map((f) => f.block));
    expect(replay.frames.at(-1)?.event).toBe("run_finished");
  });

  it("gives ten concurrent subscribers the identical full sequence", async () => {
    const marker = uniqueMarker("sse-fanout");
    await script(marker, [{ content: [{ type: "text", text: words(10) }] }], { token_delay_ms: 30 });
    const task = await startTask("assistant", `fanout ${marker}`);
    const readings = await Promise.all(Array.from({ length: 10 }, () => readEvents(task.id)));
    const replay = await readEvents(task.id);
    expect(replay.frames.at(-1)?.event).toBe("run_finished");
    for (const reading of readings) expect(reading.raw).toBe(replay.raw);
  });

  it("drops a subscription as soon as its client disconnects, not at the next write", async () => {
    const marker = uniqueMarker("sse-prompt-disconnect");
    await script(marker, [{ content: [{ type: "text", text: "slow answer" }] }], { ttft_ms: 3000 });
    const task = await startTask("assistant", `disconnect promptly ${marker}`);
    const stub = env.TASKS.get(env.TASKS.idFromName(task.id));
    const client = new AbortController();
    const res = await api(`/v1/tasks/${task.id}/events`, { signal: client.signal });
    await readSse(res, (f) => f.event === "llm_request_sent");
    client.abort();
    // The model is silent for 3 s, so no write can reveal the disconnect; only the cancellation can.
    let count = await stub.subscriberCount();
    for (let i = 0; i < 50 && count > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      count = await stub.subscriberCount();
    }
    expect(count).toBe(0);
    expect((await waitForTask(task.id)).status).toBe("completed");
  });

  it("keeps running to completion after its only subscriber disconnects", async () => {
    const text = words(20);
    const marker = uniqueMarker("sse-disconnect");
    await script(marker, [{ content: [{ type: "text", text }] }], { token_delay_ms: 50 });
    const task = await startTask("assistant", `disconnect ${marker}`);
    const reader = new SseReader((await events(task.id)).body);
    const seen = await reader.until((f) => f.event === "run_started");
    await reader.cancel();

    const done = await waitForTask(task.id, 20);
    expect(types(seen)).toEqual(["task_created", "run_started"]);
    expect(done.status).toBe("completed");
    expect(done.result).toBe(text);
  });
});

describe("cursor validation", () => {
  let taskId: string;

  beforeAll(async () => {
    const marker = uniqueMarker("sse-cursor");
    await script(marker, [{ content: [{ type: "text", text: "Done." }] }]);
    taskId = (await startTask("assistant", `cursor ${marker}`)).id;
    await waitForTask(taskId);
  });

  async function expectValidationError(res: Response, field: string): Promise<void> {
    const body = await parseBody(res, ErrorBodySchema);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(body.error.code).toBe("validation_failed");
    expect(body.error.field).toBe(field);
  }

  it("rejects a non-numeric Last-Event-ID with 400 validation_failed naming the header", async () => {
    // Header fields are named in lowercase, like `authorization` and `content-type`.
    await expectValidationError(await events(taskId, { lastEventId: "abc" }), "last-event-id");
  });

  it("rejects ?after=-1 with 400 validation_failed naming the parameter", async () => {
    await expectValidationError(await events(taskId, { after: "-1" }), "after");
  });

  it("rejects ?after=1.5 with 400 validation_failed naming the parameter", async () => {
    await expectValidationError(await events(taskId, { after: "1.5" }), "after");
  });

  it("answers 404 task_not_found for a task that does not exist", async () => {
    const res = await events(crypto.randomUUID());
    const body = await parseBody(res, ErrorBodySchema);
    expect(res.status).toBe(404);
    expect(body.error.code).toBe("task_not_found");
    expect(body.error.field).toBe("id");
  });
});

/** An in-memory event log speaking the narrow interface openEventStream needs: stored first, then broadcast. */
class FakeLog implements SseSource {
  readonly records: EventRecord[] = [];
  readonly listeners = new Set<(record: EventRecord) => void>();
  listenCalls = 0;

  append(eventType: string, payload: Record<string, unknown> = {}): EventRecord {
    const record: EventRecord = {
      seq: this.records.length + 1,
      run_id: "00000000-0000-4000-8000-000000000000",
      trace_id: "0123456789abcdef0123456789abcdef",
      span_id: "0123456789abcdef",
      timestamp: new Date(0).toISOString(),
      event_type: eventType,
      payload,
      redaction_mode: "full",
    };
    this.records.push(record);
    for (const listener of this.listeners) listener(record);
    return record;
  }

  readAfter(after: number, limit: number): EventRecord[] {
    return this.records.filter((r) => r.seq > after).slice(0, limit);
  }

  listen(listener: (record: EventRecord) => void): () => void {
    this.listenCalls++;
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

const running = { isFinished: () => false };

describe("sseFrame", () => {
  it("writes id, event and a single data line holding the record's JSON, newlines escaped", () => {
    const record: EventRecord = {
      seq: 7,
      run_id: "r",
      trace_id: "t",
      span_id: "s",
      timestamp: "2026-01-01T00:00:00.000Z",
      event_type: "llm_text_delta",
      payload: { text: "line one\nline two" },
      redaction_mode: "full",
    };
    expect(frameText(record)).toBe(
      'id: 7\nevent: llm_text_delta\ndata: {"seq":7,"run_id":"r","trace_id":"t","span_id":"s",' +
        '"timestamp":"2026-01-01T00:00:00.000Z","event_type":"llm_text_delta",' +
        '"payload":{"text":"line one\\nline two"},"redaction_mode":"full"}\n\n',
    );
  });
});

const nextTick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("openEventStream", () => {
  it("replays the records after the cursor as exact frames after the retry line", async () => {
    const log = new FakeLog();
    const [, second, third] = [log.append("task_created"), log.append("run_started"), log.append("llm_request_sent")];
    const reader = new SseReader(openEventStream(log, 1, { ...running, heartbeatMs: 60_000 }), madeUp);
    expect(await reader.nextBlock()).toBe("retry: 1000");
    expect(await reader.nextFrame()).toEqual(parseFrame(frameText(second as EventRecord).slice(0, -2)));
    expect(await reader.nextFrame()).toEqual(parseFrame(frameText(third as EventRecord).slice(0, -2)));
    await reader.cancel();
    expect(reader.raw).toBe(RETRY_LINE + frameText(second as EventRecord) + frameText(third as EventRecord));
  });

  it("replays a backlog longer than one replay batch without a gap", async () => {
    const log = new FakeLog();
    for (let i = 0; i < 1203; i++) log.append("llm_text_delta", { text: `t${i}` });
    log.append("run_finished");
    const reader = new SseReader(openEventStream(log, 0, { isFinished: () => true }), madeUp);
    const frames = await reader.rest();
    expect(frames.map((f) => f.id)).toEqual(log.records.map((r) => r.seq));
  });

  it("closes after a terminal event found in the replay without registering a listener", async () => {
    const log = new FakeLog();
    log.append("task_created");
    log.append("run_finished");
    const reader = new SseReader(openEventStream(log, 0, { isFinished: () => true }), madeUp);
    await reader.rest();
    expect(reader.raw).toBe(RETRY_LINE + log.records.map(frameText).join(""));
    expect(log.listenCalls).toBe(0);
  });

  it("closes right after the retry line when the run is finished and nothing follows the cursor", async () => {
    const log = new FakeLog();
    log.append("task_created");
    log.append("run_finished");
    const reader = new SseReader(openEventStream(log, 2, { isFinished: () => true }), madeUp);
    expect(await reader.rest()).toEqual([]);
    expect(reader.raw).toBe(RETRY_LINE);
  });

  it("follows live records in order and closes after the terminal one, unregistering its listener", async () => {
    const log = new FakeLog();
    log.append("task_created");
    const reader = new SseReader(openEventStream(log, 0, { ...running, heartbeatMs: 60_000 }), madeUp);
    // The stream listens once its pulled replay has caught up.
    await nextTick();
    expect(log.listeners.size).toBe(1);
    log.append("run_started");
    log.append("run_finished");
    log.append("llm_text_delta", { text: "after the end" });
    await reader.rest();
    expect(reader.raw).toBe(RETRY_LINE + log.records.slice(0, 3).map(frameText).join(""));
    expect(log.listeners.size).toBe(0);
  });

  it("ends a stream whose cursor is ahead of the log once the run's terminal event is appended", async () => {
    const log = new FakeLog();
    log.append("task_created");
    const reader = new SseReader(openEventStream(log, 50, { ...running, heartbeatMs: 60_000 }), madeUp);
    await nextTick();
    log.append("run_started");
    log.append("run_finished");
    expect(await reader.rest(2000)).toEqual([]);
    expect(reader.raw).toBe(RETRY_LINE);
    expect(log.listeners.size).toBe(0);
  });

  it("sends a keepalive comment every heartbeatMs while no event arrives", async () => {
    const log = new FakeLog();
    log.append("task_created");
    const reader = new SseReader(openEventStream(log, 0, { ...running, heartbeatMs: 50 }), madeUp);
    const blocks = [await reader.nextBlock(), await reader.nextBlock(), await reader.nextBlock(1000)];
    blocks.push(await reader.nextBlock(1000));
    await reader.cancel();
    expect(blocks).toEqual([
      "retry: 1000",
      frameText(log.records[0] as EventRecord).slice(0, -2),
      KEEPALIVE,
      KEEPALIVE,
    ]);
    expect(reader.raw.endsWith(`${KEEPALIVE}\n\n`)).toBe(true);
  });

  it("unregisters its listener when the reader cancels, and later appends still succeed", async () => {
    const log = new FakeLog();
    log.append("task_created");
    const reader = new SseReader(openEventStream(log, 0, { ...running, heartbeatMs: 50 }), madeUp);
    await reader.nextFrame();
    expect(log.listeners.size).toBe(1);
    await reader.cancel();
    expect(log.listeners.size).toBe(0);
    expect(() => log.append("run_started")).not.toThrow();
  });

  it("sends stream_overflow with the last delivered seq and closes when a reader stops reading", async () => {
    const log = new FakeLog();
    const stream = openEventStream(log, 0, { ...running, heartbeatMs: 60_000, maxBufferedBytes: 1024 });
    const padding = "x".repeat(2000);
    await nextTick();
    // The stream is live; nobody reads while these pile up, far past the limit and any queue high-water mark.
    for (let i = 0; i < 100; i++) log.append("llm_text_delta", { text: padding });
    const reader = new SseReader(stream, madeUp);
    const blocks = await reader.drain();
    const last =
      blocks
        .filter((b) => b.startsWith("id: "))
        .map(parseFrame)
        .at(-1)?.id ?? 0;
    expect(last).toBeGreaterThan(0);
    expect(last).toBeLessThan(100);
    expect(reader.raw).toBe(
      RETRY_LINE +
        log.records.slice(0, last).map(frameText).join("") +
        `event: stream_overflow\ndata: {"reconnect_after":${last}}\n\n`,
    );
    expect(log.listeners.size).toBe(0);
  });

  it("trips the overflow guard as soon as the unread bytes exceed maxBufferedBytes", async () => {
    const log = new FakeLog();
    const maxBufferedBytes = 4096;
    const stream = openEventStream(log, 0, { ...running, heartbeatMs: 60_000, maxBufferedBytes });
    let unread = RETRY_LINE.length;
    let expectedLast = 0;
    // One event per tick, so each frame is its own chunk and the guard looks after every one.
    for (let i = 0; i < 20; i++) {
      const record = log.append("llm_text_delta", { text: "y".repeat(1000) });
      await new Promise((resolve) => setTimeout(resolve, 0));
      unread += sseFrame(record).byteLength;
      if (expectedLast === 0 && unread > maxBufferedBytes) expectedLast = record.seq;
    }
    const reader = new SseReader(stream, madeUp);
    await reader.drain(2000);
    expect(expectedLast).toBe(4);
    expect(reader.raw).toBe(
      RETRY_LINE +
        log.records.slice(0, expectedLast).map(frameText).join("") +
        `event: stream_overflow\ndata: {"reconnect_after":${expectedLast}}\n\n`,
    );
  });
});

describe("openEventStream chunking", () => {
  it("ends a pulled replay and drops its subscription when the client leaves in the middle of it", async () => {
    const log = new FakeLog();
    for (let i = 0; i < 3000; i++) log.append("llm_text_delta", { text: "q".repeat(200) });
    const client = new AbortController();
    let closed = 0;
    const stream = openEventStream(log, 0, {
      ...running,
      heartbeatMs: 60_000,
      signal: client.signal,
      onClose: () => closed++,
    });
    const reader = stream.getReader();
    await reader.read();
    await reader.read();
    client.abort();
    for (;;) if ((await reader.read()).done) break;
    expect(closed).toBe(1);
    expect(log.listeners.size).toBe(0);
  });

  it("replays a backlog far larger than maxBufferedBytes by pulling it, without overflowing", async () => {
    const log = new FakeLog();
    for (let i = 0; i < 3000; i++) log.append("llm_text_delta", { text: "z".repeat(200) });
    log.append("run_finished");
    const reader = new SseReader(
      openEventStream(log, 0, { isFinished: () => true, heartbeatMs: 60_000, maxBufferedBytes: 16 * 1024 }),
      madeUp,
    );
    await reader.rest(5000);
    expect(reader.raw).toBe(RETRY_LINE + log.records.map(frameText).join(""));
  });

  it("sends the frames of events appended in one tick as a single chunk, byte for byte", async () => {
    const log = new FakeLog();
    const stream = openEventStream(log, 0, { ...running, heartbeatMs: 60_000 });
    const reader = stream.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe(RETRY_LINE);
    const records = [log.append("tool_call_started", {}), log.append("tool_call_completed", {}), log.append("x", {})];
    const chunk = await reader.read();
    expect(new TextDecoder().decode(chunk.value)).toBe(records.map(frameText).join(""));
    await reader.cancel();
  });
});

describe("EventLog on a Durable Object's SQLite", () => {
  const identity = () => ({
    runId: "11111111-1111-4111-8111-111111111111",
    traceId: "abcdefabcdefabcdefabcdefabcdefab",
    rootSpanId: "abcdefabcdefabcd",
  });

  function freshObject() {
    return env.TASKS.get(env.TASKS.idFromName(`eventlog-unit-${crypto.randomUUID()}`));
  }

  it("stores an event before telling listeners, so a listener can already read it back", async () => {
    const seenInStorage = await runInDurableObject(freshObject(), (_instance, state) => {
      migrate(state.storage);
      const log = new EventLog(state.storage.sql, identity);
      const readBack: (EventRecord | undefined)[] = [];
      log.listen((record) => readBack.push(log.readAfter(record.seq - 1, 1)[0]));
      const first = log.append("run_resumed", { agent: "assistant" });
      const second = log.append("step_resumed", { step: "turn_1_model", attempt: 2 });
      return { readBack, appended: [first, second] };
    });
    expect(seenInStorage.readBack).toEqual(seenInStorage.appended);
  });

  it("drops a listener that throws without failing the append or starving other listeners", async () => {
    const outcome = await runInDurableObject(freshObject(), (_instance, state) => {
      migrate(state.storage);
      const log = new EventLog(state.storage.sql, identity);
      let thrown = 0;
      const delivered: number[] = [];
      log.listen(() => {
        thrown++;
        throw new Error("a broken subscriber");
      });
      log.listen((record) => delivered.push(record.seq));
      const seqs = [
        log.append("run_resumed", { agent: "assistant" }).seq,
        log.append("step_resumed", { step: "turn_1_model", attempt: 2 }).seq,
      ];
      return { thrown, delivered, seqs, lastSeq: log.lastSeq() };
    });
    expect(outcome).toEqual({ thrown: 1, delivered: [1, 2], seqs: [1, 2], lastSeq: 2 });
  });
});
