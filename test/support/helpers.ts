// Shared test helpers: calls into the Worker exactly as an HTTP client would, scripts for the model emulator, and
// an SSE reader that parses frames the way a browser EventSource does, checking every event it reads against the
// event catalog (parseEvent). Every JSON answer a helper reads is checked against its response schema
// (src/http/responses.ts) with parseBody, strictly: a member the schema does not list fails the test.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { z } from "zod";
import type { TaskObject } from "../../durable-objects/task-object.ts";
import { Agent, type AgentDefinition } from "../../src/agents/agent.ts";
import { registry } from "../../src/agents/catalog.ts";
import type { RequestErrorCode } from "../../src/errors/codes.ts";
import type { EventRecord } from "../../src/events/event-record.ts";
import { type ErrorBody, ErrorBodySchema, type TaskResource, TaskResourceSchema } from "../../src/http/responses.ts";
import type { ContentBlock, MessageContent } from "../../src/runtime/conversation.ts";
import type { TaskTimerKind, TaskTimers } from "../../src/runtime/timers.ts";
import type { Timer } from "../../src/storage/timer-ledger.ts";
import { taskObjectName } from "../../src/tasks/task-ids.ts";
import { DEFAULT_TENANT } from "../../src/tenants/api-keys.ts";
import { checkEvent } from "./checks.ts";

// The checks that need no Worker, kept in checks.ts for the unit tests; the tests in workerd take them from here.
export { checkEvent, errorOf, NO_WORKSPACE } from "./checks.ts";

export const API_KEY = "test-key-1";

export const BASE = "https://outpost.test";

/** When the test file last called the API (ms since the epoch), or 0: test/support/tenant-objects.ts waits after it. */
export let lastApiCallAt = 0;

export function api(path: string, init: RequestInit & { key?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.key !== null) headers.set("authorization", `Bearer ${init.key ?? API_KEY}`);
  if (init.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  return workerFetch(new Request(BASE + path, { ...init, headers }));
}

/**
 * A request into the Worker, for a test that builds its own (an official protocol client's fetch): noted, as api()
 * notes its calls, so that the file's end waits for the directory reports its tasks owe.
 */
export function workerFetch(request: Request): Promise<Response> {
  lastApiCallAt = Date.now();
  return exports.default.fetch(request);
}

export interface ScriptTurn {
  content: (
    | { type: "text"; text: string; citations?: { url: string; title?: string; cited_text: string }[] }
    | { type: "tool_use"; name: string; input: Record<string, unknown>; id?: string }
    | { type: "thinking"; thinking: string; signature?: string }
    | {
        type: "web_search";
        query: string;
        results?: { url: string; title: string; page_age?: string }[];
        error_code?: string;
      }
  )[];
  stop_reason?: string;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_creation_input_tokens?: number;
    cache_read_input_tokens?: number;
  };
  faults?: Record<string, unknown>[];
  /** This turn's time to first token, in ms. */
  ttft_ms?: number;
}

/**
 * Registers an emulator script answering any conversation whose first user message contains `match`; `prompt_cache`
 * makes the emulator bill its requests as the provider would, prompt cache included (docs/development/emulator.md).
 */
export async function script(
  match: string,
  turns: ScriptTurn[],
  options: {
    ttft_ms?: number;
    token_delay_ms?: number;
    prompt_cache?: boolean;
    min_cacheable_tokens?: number;
    /** The emulator refuses a prompt past it as the provider does (emulator/conditions.ts). */
    context_window?: number;
    /** The Messages API's compaction requests fail: a block with no content (emulator/compaction.ts). */
    compaction_fails?: boolean;
  } = {},
): Promise<void> {
  const res = await fetch(`${env.ANTHROPIC_BASE_URL}/_emulator/scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ match, turns, ...options }),
  });
  if (res.status !== 201) throw new Error(`emulator script registration failed: ${res.status} ${await res.text()}`);
}

export interface EmulatorRequestRecord {
  task_id: string | null;
  turn: number;
  status: number;
  fault: string | null;
  service_ms: number;
}

export async function emulatorRequests(taskId: string): Promise<EmulatorRequestRecord[]> {
  const res = await fetch(`${env.ANTHROPIC_BASE_URL}/_emulator/stats`);
  const body = (await res.json()) as { requests: EmulatorRequestRecord[] };
  return body.requests.filter((r) => r.task_id === taskId);
}

/** The stub of a task's Durable Object, for tests that reach into it (alarms, evictions, storage). */
export function stubFor(id: string, tenant = DEFAULT_TENANT) {
  return env.TASKS.get(env.TASKS.idFromName(taskObjectName(tenant, id)));
}

/**
 * Changes a task's per-task state in its storage (task_state) from a test, as a crash or a clock would, and makes the
 * object read it again: the object remembers what it read and wrote there, being the table's only writer.
 */
export async function editTaskState(id: string, edit: (sql: SqlStorage) => void): Promise<void> {
  await runInDurableObject(stubFor(id), (instance: TaskObject, state) => {
    edit(state.storage.sql);
    (instance as unknown as { host: { state: { invalidate(): void } } }).host.state.invalidate();
  });
}

/**
 * Waits (up to 5 s) until the task's object keeps `expected` as its alarm, and returns the alarm it keeps then. Right
 * after a status change the alarm is due soon for the tenant's directory report (src/task-host/directory-report.ts);
 * once that is sent, the alarm is the task's own again (its expiry, an approval deadline, the heartbeat) or none.
 */
export async function settledAlarm(
  id: string,
  expected: number | null,
  tenant = DEFAULT_TENANT,
): Promise<number | null> {
  const read = () => runInDurableObject(stubFor(id, tenant), (_instance, state) => state.storage.getAlarm());
  for (let i = 0; i < 100 && (await read()) !== expected; i++) await new Promise((r) => setTimeout(r, 50));
  return read();
}

function timersOfInstance(instance: TaskObject): TaskTimers {
  return (instance as unknown as { host: { timers: TaskTimers } }).host.timers;
}

/** A task object's ledger of timers (src/runtime/timers.ts), earliest first. */
export function timersOf(id: string, tenant = DEFAULT_TENANT): Promise<Timer<TaskTimerKind>[]> {
  return runInDurableObject(stubFor(id, tenant), (instance: TaskObject) => timersOfInstance(instance).list());
}

/**
 * Fires the task object's timers of these kinds now, as if the clock had reached them (the others keep their time),
 * through the object's alarm, without waiting for the clock. False when the ledger holds none of them: nothing ran.
 */
export async function fireTimers(
  id: string,
  kinds: readonly TaskTimerKind[],
  tenant = DEFAULT_TENANT,
): Promise<boolean> {
  const stub = stubFor(id, tenant);
  const found = await runInDurableObject(stub, async (instance: TaskObject, state) => {
    const timers = timersOfInstance(instance);
    const now = Date.now();
    let any = false;
    for (const kind of kinds) {
      const timer = timers.get(kind);
      if (!timer) continue;
      any = true;
      if (timer.due_at > now) timers.set(kind, now, timer.payload, timer.attempts);
    }
    // The alarm a little ahead, so the runtime does not fire it before runDurableObjectAlarm does; the ledger reads
    // the alarm back at its next arm().
    await state.storage.setAlarm(now + 60_000);
    timers.invalidate();
    return any;
  });
  return found && (await runDurableObjectAlarm(stub));
}

/**
 * The tables version 6 of a task object's storage schema renamed (src/storage/migrations.ts), old name → new name.
 * Written out here rather than imported, so that the tests of older objects check what the migrations do.
 */
export const TABLES_RENAMED_IN_VERSION_6: Readonly<Record<string, string>> = {
  steps_journal: "runtime_steps",
  conversation_messages: "runtime_messages",
  checkpoints: "runtime_checkpoints",
  pending_calls: "runtime_pending_calls",
  llm_transcript: "bundle_transcript",
  deliveries: "callbacks_deliveries",
  delivery_attempts: "callbacks_attempts",
};

/**
 * Puts a task object's storage back as objects deployed before version 6 hold it: without what version 12 added (the
 * steps' retries), version 11 (the ledger of timers), version 10 (where each file is in the bundle's archive), version 9 added (the
 * task's structured output) and version 8 added (the row's kind and busy policy, the sessions' turns), and its tables
 * under the names they had (the test then deletes the newer schema_migrations rows and resets the object). Version 7
 * only adds what may be missing, so it leaves nothing to undo.
 */
export function storageAsBeforeVersion6(sql: SqlStorage): void {
  sql.exec("ALTER TABLE runtime_steps DROP COLUMN retries");
  sql.exec("DROP TABLE timers");
  sql.exec("ALTER TABLE bundle_files DROP COLUMN archive_offset");
  sql.exec("ALTER TABLE task DROP COLUMN structured_output");
  sql.exec("DROP TABLE sessions_turns");
  sql.exec("ALTER TABLE task DROP COLUMN kind");
  sql.exec("ALTER TABLE task DROP COLUMN busy");
  for (const [old, now] of Object.entries(TABLES_RENAMED_IN_VERSION_6)) sql.exec(`ALTER TABLE ${now} RENAME TO ${old}`);
}

export function uniqueMarker(label: string): string {
  return `[${label}-${crypto.randomUUID()}]`;
}

/**
 * A JSON value checked against a response schema (src/http/responses.ts), strictly: a member the schema does not
 * list, or one of another type, throws with what does not match. Returns the value as it is (not zod's copy), so
 * assertions see exactly what was sent.
 */
export function checkBody<S extends z.ZodType>(schema: S, json: unknown): z.output<S> {
  const checked = schema.safeParse(json);
  if (!checked.success) {
    throw new Error(`The answer does not match its schema: ${z.prettifyError(checked.error)}\n${JSON.stringify(json)}`);
  }
  return json as z.output<S>;
}

/** A response's JSON body, checked against its response schema (checkBody). */
export async function parseBody<S extends z.ZodType>(res: Response, schema: S): Promise<z.output<S>> {
  return checkBody(schema, await res.json());
}

/** Calls `path` (GET unless `init` says otherwise) and returns its JSON body, checked against `schema`. */
export async function apiJson<S extends z.ZodType>(
  path: string,
  schema: S,
  init: Parameters<typeof api>[1] = {},
): Promise<z.output<S>> {
  return parseBody(await api(path, init), schema);
}

/** A message's content blocks of `type`; a message that is text, or absent, fails the test. */
export function blocksOfType<T extends ContentBlock["type"]>(
  message: { content: MessageContent } | undefined,
  type: T,
): Extract<ContentBlock, { type: T }>[] {
  const content = message?.content;
  if (!Array.isArray(content)) throw new Error(`expected content blocks, got ${JSON.stringify(content)}`);
  return content.filter((block): block is Extract<ContentBlock, { type: T }> => block.type === type);
}

/** The request a waiting task shows (its pending_input's request_id); a task that waits for nothing fails the test. */
export function pendingRequestId(task: Pick<TaskResource, "id" | "pending_input">): string {
  if (!task.pending_input) throw new Error(`task ${task.id} waits for nothing`);
  return task.pending_input.request_id;
}

export async function startTask(
  agent: string,
  input: string,
  extra: Record<string, unknown> = {},
): Promise<TaskResource> {
  const res = await api(`/v1/agents/${agent}/tasks`, { method: "POST", body: JSON.stringify({ input, ...extra }) });
  if (res.status !== 202) throw new Error(`start failed: ${res.status} ${await res.text()}`);
  return parseBody(res, TaskResourceSchema);
}

export async function waitForTask(id: string, seconds = 20, key?: string): Promise<TaskResource> {
  const res = await api(`/v1/tasks/${id}?wait=${seconds}`, key === undefined ? {} : { key });
  if (res.status !== 200) throw new Error(`get failed: ${res.status}`);
  return parseBody(res, TaskResourceSchema);
}

export interface SseFrame {
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/**
 * Parses an SSE body into frames until the stream ends (or `until` says stop, which cancels the body). Every frame is
 * a task's event: parseEvent checks it against the event catalog, and a frame that breaks it fails the test.
 */
export async function readSse(res: Response, until?: (frame: SseFrame) => boolean): Promise<SseFrame[]> {
  if (!res.body) throw new Error("no body");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const frames: SseFrame[] = [];
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end = buffer.indexOf("\n\n");
    while (end !== -1) {
      const raw = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      const frame: SseFrame = { id: undefined, event: undefined, data: "" };
      let hasData = false;
      for (const line of raw.split("\n")) {
        if (line.startsWith("id: ")) frame.id = line.slice(4);
        else if (line.startsWith("event: ")) frame.event = line.slice(7);
        else if (line.startsWith("data: ")) {
          frame.data += line.slice(6);
          hasData = true;
        }
      }
      if (!hasData) continue;
      const record = parseEvent(frame.data);
      if (frame.event !== record.event_type)
        throw new Error(`frame ${frame.id}: event ${frame.event}, record ${record.event_type}`);
      frames.push(frame);
      if (until?.(frame)) {
        await reader.cancel();
        return frames;
      }
    }
  }
  return frames;
}

export function eventTypes(frames: SseFrame[]): string[] {
  return frames.map((f) => f.event ?? "");
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Asserts the JSON error shape exactly: status, code, field (or its absence), request_id = x-request-id, and the
 * error's further members (`details`, matchers allowed) or their absence.
 */
export async function expectError(
  res: Response,
  status: number,
  code: RequestErrorCode,
  field?: string,
  details: Record<string, unknown> = {},
): Promise<ErrorBody> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/json");
  const requestId = res.headers.get("x-request-id");
  expect(requestId).toMatch(UUID_V4);
  const body: unknown = await res.json();
  const expected: Record<string, unknown> = {
    ...details,
    code,
    message: expect.any(String),
    request_id: requestId ?? "",
  };
  if (field !== undefined) expected.field = field;
  expect(body).toStrictEqual({ error: expected });
  return checkBody(ErrorBodySchema, body);
}

// ---- Runs of agents defined by the test itself -----------------------------------------------------------------

export interface EventBody {
  seq: number;
  event_type: string;
  payload: Record<string, unknown>;
  redaction_mode: "full" | "redacted";
}

/** One SSE frame's record (its `data:`), parsed and checked against the event catalog: see checkEvent. */
export function parseEvent(data: string): EventRecord {
  return checkEvent(JSON.parse(data));
}

let agentCounter = 0;

/** Registers an agent class for this definition (agents are classes, built with no arguments) and returns its name. */
export function defineAgent(definition: Omit<AgentDefinition, "name" | "systemPrompt">): string {
  const name = `test_agent_${++agentCounter}`;
  registry.register(
    name,
    class extends Agent {
      constructor() {
        super({ name, systemPrompt: "You use tools.", maxTurns: 4, ...definition });
      }
    },
  );
  return name;
}

/** The task's events, read with `key` (the test key unless given: a task of another tenant needs its key). */
export async function events(id: string, key?: string): Promise<EventBody[]> {
  const frames = await readSse(await api(`/v1/tasks/${id}/events`, key === undefined ? {} : { key }));
  return frames.map((f) => parseEvent(f.data));
}

export function ofType(list: EventBody[], type: string): EventBody[] {
  return list.filter((e) => e.event_type === type);
}

export async function waitForEvent(id: string, predicate: (e: EventBody) => boolean): Promise<void> {
  const match = (f: SseFrame) => predicate(parseEvent(f.data));
  const frames = await readSse(await api(`/v1/tasks/${id}/events`), match);
  if (!frames.some(match)) throw new Error("the run ended before the awaited event");
}

/** The request the model received on `turn` (from the run bundle), parsed. */
export async function modelRequest(
  id: string,
  turn: number,
  key?: string,
): Promise<{ tools?: { name: string; input_schema: unknown }[]; messages: { role: string; content: unknown }[] }> {
  const res = await api(
    `/v1/tasks/${id}/artifacts/artifacts/llm/decision_loop_turn_${turn}_attempt_1_request.txt`,
    key === undefined ? {} : { key },
  );
  expect(res.status).toBe(200);
  return JSON.parse(await res.text());
}

/**
 * The text of a request's system prompt or of a message's content: a string as it is, text blocks joined. The
 * runtime sends both as blocks, the last one carrying its cache breakpoint (src/llm/prompt-cache.ts).
 */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw new Error(`not a prompt's content: ${JSON.stringify(content)}`);
  return content
    .filter((block): block is { type: "text"; text: string } => block?.type === "text")
    .map((block) => block.text)
    .join("\n");
}

type ToolResultBlock = {
  type: string;
  tool_use_id: string;
  content: unknown;
  is_error: boolean;
  cache_control?: unknown;
};

/** The tool_result blocks the model got on `turn`. */
export async function toolResults(
  id: string,
  turn: number,
  key?: string,
): Promise<{ tool_use_id: string; content: unknown; is_error: boolean }[]> {
  const request = await modelRequest(id, turn, key);
  const last = request.messages.at(-1);
  const blocks = (last?.content ?? []) as ToolResultBlock[];
  // What the model got, without the last block's cache breakpoint: an instruction to the API's cache, not content.
  return blocks.filter((b) => b.type === "tool_result").map(({ cache_control: _marker, ...block }) => block);
}

export function toolUse(name: string, input: Record<string, unknown>): ScriptTurn["content"][number] {
  return { type: "tool_use", name, input };
}

export const done: ScriptTurn = { content: [{ type: "text", text: "Done." }] };
