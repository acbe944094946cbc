// The client: one object holding the deployment's URL and the API key, with a generic JSON request, the routes a
// program uses most as methods, the event-stream reader and wait(). Every failure is an OutpostError carrying
// Outpost's error code. It uses only fetch, streams and TextDecoder, so it runs in Node 22, browsers and Workers.
import { OutpostError, OutpostTimeoutError } from "./errors.ts";
import { type EventStreamOptions, type OutpostEvent, readEventStream } from "./event-stream.ts";

export interface OutpostClientOptions {
  /** Where Outpost answers, e.g. http://127.0.0.1:8787 under `npm run dev`. */
  baseUrl: string;
  /** An API key (docs/operations/tenants-and-keys.md); sent as a bearer token, never logged. */
  apiKey: string;
  /** The fetch to use (a Worker's service binding, a test's); the global fetch by default. */
  fetch?: (input: Request | string | URL, init?: RequestInit) => Promise<Response>;
}

export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A task as GET /v1/tasks/:id shows it (docs/reference/http-api.md); the members a program mostly reads. */
export interface Task {
  id: string;
  assigned_agent: string;
  status: TaskStatus;
  input: string;
  result: string | null;
  structured_output: unknown;
  error: { code: string; message: string; [member: string]: unknown } | null;
  pending_input: PendingInput | null;
  usage: Record<string, unknown>;
  last_event_seq: number;
  created_at: string;
  completed_at: string | null;
  [member: string]: unknown;
}

export type TaskStatus = "pending" | "running" | "input_required" | "completed" | "failed" | "canceled";

/** What a task waits for: an approval or a question, named by the request id a decision must quote. */
export interface PendingInput {
  request_id: string;
  kind: string;
  [member: string]: unknown;
}

const ENDED: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "canceled"]);
/** The longest wait one GET /v1/tasks/:id?wait= may ask for (seconds). */
const MAX_WAIT_SECONDS = 60;

export interface WaitOptions {
  /** Give up after this long (OutpostTimeoutError); no limit by default. */
  timeoutMs?: number;
  /** "ended" (default) waits through input_required; "ended_or_input" returns when the task waits for a person. */
  until?: "ended" | "ended_or_input";
  signal?: AbortSignal;
}

export type OutpostClient = ReturnType<typeof createOutpostClient>;

export function createOutpostClient(options: OutpostClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? ((input: Request | string | URL, init?: RequestInit) => fetch(input, init));
  const auth = { authorization: `Bearer ${options.apiKey}` };

  /** The raw response of any route: for streams, downloads and answers whose status matters. */
  async function send(method: string, path: string, init: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...auth, ...init.headers };
    let body: BodyInit | undefined;
    if (init.body !== undefined) {
      if (typeof init.body === "string" || init.body instanceof Uint8Array || init.body instanceof Blob) {
        body = init.body as BodyInit;
      } else {
        body = JSON.stringify(init.body);
        headers["content-type"] ??= "application/json";
      }
    }
    return doFetch(`${base}${path}${queryString(init.query)}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
    });
  }

  /** A JSON route: the parsed body of a 2xx answer (undefined for 204), an OutpostError otherwise. */
  async function request<T = unknown>(method: string, path: string, init: RequestOptions = {}): Promise<T> {
    const response = await send(method, path, { ...init, headers: { accept: "application/json", ...init.headers } });
    if (!response.ok) throw await OutpostError.from(response);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }

  /** Every event of a task's or a session's stream (their /events routes), resumed across dropped connections. */
  function events(path: string, streamOptions: EventStreamOptions = {}): AsyncGenerator<OutpostEvent, void, undefined> {
    return readEventStream((p, init) => send("GET", p, init), path, streamOptions);
  }

  /** The task once it has ended (or, with until "ended_or_input", once it waits for a person). */
  async function wait(id: string, waitOptions: WaitOptions = {}): Promise<Task> {
    const deadline =
      waitOptions.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + waitOptions.timeoutMs;
    const path = `/v1/tasks/${encodeURIComponent(id)}`;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw new OutpostTimeoutError(`Task ${id} had not ended after ${waitOptions.timeoutMs} ms.`);
      const seconds = Math.max(1, Math.min(MAX_WAIT_SECONDS, Math.floor(left / 1000)));
      const task = await request<Task>("GET", path, {
        query: { wait: seconds },
        ...(waitOptions.signal ? { signal: waitOptions.signal } : {}),
      });
      if (ENDED.has(task.status)) return task;
      if (task.status === "input_required") {
        if (waitOptions.until === "ended_or_input") return task;
        // ?wait= answers at once while the task waits for a person: follow its stream to the end instead of polling.
        const controller = new AbortController();
        const timer = Number.isFinite(left) ? setTimeout(() => controller.abort(), left) : undefined;
        const signal = waitOptions.signal
          ? AbortSignal.any([waitOptions.signal, controller.signal])
          : controller.signal;
        try {
          for await (const _event of events(`${path}/events`, { after: task.last_event_seq, depth: 0, signal })) {
            // drained to the terminal event
          }
        } catch (error) {
          if (!controller.signal.aborted) throw error;
        } finally {
          if (timer !== undefined) clearTimeout(timer);
        }
      }
    }
  }

  const enc = encodeURIComponent;
  return {
    baseUrl: base,
    send,
    request,
    events,
    wait,
    agents: {
      list: () => request<{ agents: Record<string, unknown>[] }>("GET", "/v1/agents"),
      get: (name: string) => request<Record<string, unknown>>("GET", `/v1/agents/${enc(name)}`),
    },
    tasks: {
      create: (agent: string, body: Record<string, unknown>, opts: { idempotencyKey?: string } = {}) =>
        request<Task>("POST", `/v1/agents/${enc(agent)}/tasks`, {
          body,
          ...(opts.idempotencyKey ? { headers: { "idempotency-key": opts.idempotencyKey } } : {}),
        }),
      get: (id: string, opts: { wait?: number } = {}) =>
        request<Task>("GET", `/v1/tasks/${enc(id)}`, opts.wait ? { query: { wait: opts.wait } } : {}),
      list: (query: Query = {}) =>
        request<{ tasks: Task[]; next_cursor: string | null; [member: string]: unknown }>("GET", "/v1/tasks", {
          query,
        }),
      cancel: (id: string) => request<Task>("POST", `/v1/tasks/${enc(id)}/cancel`),
      resume: (id: string, body: Record<string, unknown>) =>
        request<Task>("POST", `/v1/tasks/${enc(id)}/resume`, { body }),
      fork: (id: string, body: Record<string, unknown>) => request<Task>("POST", `/v1/tasks/${enc(id)}/fork`, { body }),
      events: (id: string, streamOptions: EventStreamOptions = {}) =>
        events(`/v1/tasks/${enc(id)}/events`, streamOptions),
    },
    sessions: {
      create: (agent: string, body: Record<string, unknown> = {}) =>
        request<Record<string, unknown> & { id: string }>("POST", `/v1/agents/${enc(agent)}/sessions`, { body }),
      get: (id: string) => request<Record<string, unknown>>("GET", `/v1/sessions/${enc(id)}`),
      send: (id: string, body: { message: string }, opts: { wait?: number } = {}) =>
        request<Record<string, unknown>>("POST", `/v1/sessions/${enc(id)}/messages`, {
          body,
          ...(opts.wait !== undefined ? { query: { wait: opts.wait } } : {}),
        }),
      events: (id: string, streamOptions: EventStreamOptions = {}) =>
        events(`/v1/sessions/${enc(id)}/events`, streamOptions),
      close: (id: string) => request<Record<string, unknown>>("DELETE", `/v1/sessions/${enc(id)}`),
    },
  };
}

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) params.append(name, item);
    else params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}
