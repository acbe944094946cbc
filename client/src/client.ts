// The client: one object holding the deployment's URL and the API key. `api` is every route, typed from the OpenAPI
// document (openapi-fetch over the generated client/src/schema.ts); beside it a generic JSON request, the routes a
// program uses most as methods that throw, the event-stream reader and wait(). Every failure is an OutpostError
// carrying Outpost's error code. It uses only fetch, streams and TextDecoder, so it runs in Node 22, browsers and
// Workers.
import createClient, { type FetchResponse } from "openapi-fetch";
import { OutpostError, OutpostTimeoutError } from "./errors.ts";
import { type EventStreamOptions, type OutpostEvent, readEventStream, type StreamFetch } from "./event-stream.ts";
import type { components, paths } from "./schema.ts";

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

// The methods below answer with the whole resource, as a key with the read scope gets it: a key that may only run
// gets a receipt (ids, status and links) instead, and should use `api`, whose types say both.

/** The API's wire types, generated from its OpenAPI document (client/src/schema.ts; `npm run build:client`). */
export type Schemas = components["schemas"];
/** A task as GET /v1/tasks/:id shows it to a key that may read. */
export type Task = Schemas["TaskResource"];
export type TaskStatus = Task["status"];
/** What a task waits for: an approval or a question, named by the request id a decision must quote. */
export type PendingInput = NonNullable<Task["pending_input"]>;
/**
 * What a running task waits for other than a person: its model provider, while a model call waits out an outage or
 * a rate limit (`until`, the failed `attempts` so far, the `last_error`). A task's, a session's and each listed one's
 * `waiting_for`; null while it waits for nothing.
 */
export type WaitingFor = NonNullable<Task["waiting_for"]>;
/** A chat session as a key that may read sees it. */
export type Session = Schemas["SessionResource"];
/** A schedule (POST /v1/schedules) as a key that may read sees it. */
export type Schedule = Schemas["ScheduleResource"];
/** A collection of documents for the knowledge tools (PUT /v1/collections/:name/documents). */
export type Collection = Schemas["Collection"];
/** An evaluation run (POST /v1/agents/:name/evaluations) as a key that may read sees it. */
export type Evaluation = Schemas["EvaluationResource"];
/** Two evaluations of an agent compared, case by case and metric by metric. */
export type EvaluationComparison = Schemas["EvaluationComparison"];

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

  /** Every route, typed by its path: `api.GET("/v1/tasks/{id}", { params: { path: { id } } })` → { data, error }. */
  const api = createClient<paths>({ baseUrl: base, headers: auth, fetch: (request) => doFetch(request) });

  /** The data of a typed call's 2xx answer, an OutpostError otherwise. */
  async function ok<T extends Record<string | number, unknown>, O, M extends `${string}/${string}`>(
    call: Promise<FetchResponse<T, O, M>>,
  ): Promise<NonNullable<FetchResponse<T, O, M>["data"]>> {
    const { data, error, response } = await call;
    if (!response.ok) throw OutpostError.fromBody(response, error);
    return data as NonNullable<FetchResponse<T, O, M>["data"]>;
  }

  const id = (value: string) => ({ path: { id: value } });
  const named = (value: string) => ({ path: { name: value } });
  return {
    baseUrl: base,
    api,
    send,
    request,
    events,
    wait,
    agents: {
      list: () => ok(api.GET("/v1/agents")),
      get: (name: string) => ok(api.GET("/v1/agents/{name}", { params: { path: { name } } })),
    },
    tasks: {
      create: async (agent: string, body: Schemas["CreateTaskBody"], opts: { idempotencyKey?: string } = {}) => {
        const header = opts.idempotencyKey ? { header: { "idempotency-key": opts.idempotencyKey } } : {};
        const path = { path: { name: agent } };
        return (await ok(api.POST("/v1/agents/{name}/tasks", { params: { ...path, ...header }, body }))) as Task;
      },
      /**
       * Starts a task and follows its events in the same request (POST with Accept: text/event-stream): the task's id
       * at once, then every event from its first to its terminal one, resumed with Last-Event-ID from
       * GET /v1/tasks/:id/events if the connection drops. Needs a key with `read`.
       */
      run: async (
        agent: string,
        body: Schemas["CreateTaskBody"],
        opts: { idempotencyKey?: string } & Omit<EventStreamOptions, "after" | "depth"> = {},
      ): Promise<{ id: string; events: AsyncGenerator<OutpostEvent, void, undefined> }> => {
        const { idempotencyKey, ...streamOptions } = opts;
        const created = await send("POST", `/v1/agents/${encodeURIComponent(agent)}/tasks`, {
          body,
          headers: {
            accept: "text/event-stream",
            ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
          },
          ...(streamOptions.signal ? { signal: streamOptions.signal } : {}),
        });
        if (!created.ok) throw await OutpostError.from(created);
        const taskId = created.headers.get("x-task-id");
        if (!taskId) throw new OutpostError(created.status, "unexpected_response", "The answer named no task.");
        // The creating answer is the stream's first connection; a reconnection reads the task's own stream.
        let first: Response | null = created;
        const connect: StreamFetch = (path, init) => {
          const response = first;
          first = null;
          return response ? Promise.resolve(response) : send("GET", path, init);
        };
        return {
          id: taskId,
          events: readEventStream(connect, `/v1/tasks/${encodeURIComponent(taskId)}/events`, streamOptions),
        };
      },
      get: async (task: string, opts: { wait?: number } = {}) => {
        const query = opts.wait ? { query: { wait: opts.wait } } : {};
        return (await ok(api.GET("/v1/tasks/{id}", { params: { ...id(task), ...query } }))) as Task;
      },
      list: (query: NonNullable<paths["/v1/tasks"]["get"]["parameters"]["query"]> = {}) =>
        ok(api.GET("/v1/tasks", { params: { query } })),
      cancel: async (task: string) => (await ok(api.POST("/v1/tasks/{id}/cancel", { params: id(task) }))) as Task,
      resume: async (task: string, body: Schemas["ResumeBody"]) =>
        (await ok(api.POST("/v1/tasks/{id}/resume", { params: id(task), body }))) as Schemas["ResumedTask"],
      fork: async (task: string, body: Schemas["ForkBody"]) =>
        (await ok(api.POST("/v1/tasks/{id}/fork", { params: id(task), body }))) as Task,
      /** Runs an ended task's agent again, answered by the task's recorded model responses and tool results. */
      replay: async (task: string) => (await ok(api.POST("/v1/tasks/{id}/replay", { params: id(task) }))) as Task,
      /**
       * Replays a run from its bundle (the bytes GET /v1/tasks/:id/bundle downloads, from this deployment or another):
       * the recorded agent, or `agent`, answered by the bundle's recorded model responses and tool results.
       */
      replayBundle: (bundle: Uint8Array, opts: { agent?: string; idempotencyKey?: string } = {}) =>
        request<Task>("POST", "/v1/replays", {
          body: bundle,
          headers: {
            "content-type": "application/x-tar",
            ...(opts.idempotencyKey ? { "idempotency-key": opts.idempotencyKey } : {}),
          },
          ...(opts.agent !== undefined ? { query: { agent: opts.agent } } : {}),
        }),
      /** What a replay did differently from the task it replays, or from the bundle it replays (once it has ended). */
      compareReplay: (task: string) => ok(api.GET("/v1/tasks/{id}/replay", { params: id(task) })),
      events: (task: string, streamOptions: EventStreamOptions = {}) =>
        events(`/v1/tasks/${encodeURIComponent(task)}/events`, streamOptions),
    },
    sessions: {
      create: async (agent: string, body: Schemas["CreateSessionBody"] = {}) =>
        (await ok(api.POST("/v1/agents/{name}/sessions", { params: { path: { name: agent } }, body }))) as Session,
      get: async (session: string) => (await ok(api.GET("/v1/sessions/{id}", { params: id(session) }))) as Session,
      /** Sends a message and waits (`wait` seconds; the server's default otherwise) for its turn; the turn then. */
      send: async (session: string, body: Schemas["SendMessageBody"], opts: { wait?: number } = {}) => {
        const query = opts.wait !== undefined ? { query: { wait: opts.wait } } : {};
        const turn = await ok(api.POST("/v1/sessions/{id}/messages", { params: { ...id(session), ...query }, body }));
        return turn as Schemas["TurnResource"];
      },
      events: (session: string, streamOptions: EventStreamOptions = {}) =>
        events(`/v1/sessions/${encodeURIComponent(session)}/events`, streamOptions),
      close: async (session: string) => (await ok(api.DELETE("/v1/sessions/{id}", { params: id(session) }))) as Session,
    },
    evaluations: {
      /** Runs the agent's test cases (all, or those named or tagged), each `repeat` times, and grades them. */
      start: async (
        agent: string,
        body: Schemas["CreateEvaluationBody"] = {},
        opts: { idempotencyKey?: string } = {},
      ) => {
        const header = opts.idempotencyKey ? { header: { "idempotency-key": opts.idempotencyKey } } : {};
        const params = { path: { name: agent }, ...header };
        return (await ok(api.POST("/v1/agents/{name}/evaluations", { params, body }))) as Evaluation;
      },
      get: async (evaluation: string) =>
        (await ok(api.GET("/v1/evaluations/{id}", { params: id(evaluation) }))) as Evaluation,
      /** The agent's evaluations, newest first. */
      list: async (agent: string, query: { limit?: number; cursor?: string } = {}) =>
        (await ok(
          api.GET("/v1/agents/{name}/evaluations", { params: { path: { name: agent }, query } }),
        )) as Schemas["EvaluationList"],
      /** Evaluation b against evaluation a (both of this agent). */
      compare: async (agent: string, a: string, b: string) =>
        (await ok(
          api.GET("/v1/agents/{name}/evaluations", {
            params: { path: { name: agent }, query: { compare: `${a},${b}` } },
          }),
        )) as EvaluationComparison,
      /** The Markdown report of a completed evaluation. */
      markdown: async (evaluation: string): Promise<string> => {
        const res = await send("GET", `/v1/evaluations/${encodeURIComponent(evaluation)}/report.md`);
        if (!res.ok) throw OutpostError.fromBody(res, await res.json().catch(() => null));
        return res.text();
      },
    },
    schedules: {
      create: async (body: Schemas["CreateScheduleBody"], opts: { idempotencyKey?: string } = {}) => {
        const header = opts.idempotencyKey ? { header: { "idempotency-key": opts.idempotencyKey } } : {};
        return (await ok(api.POST("/v1/schedules", { params: header, body }))) as Schedule;
      },
      get: async (schedule: string) => (await ok(api.GET("/v1/schedules/{id}", { params: id(schedule) }))) as Schedule,
      list: (query: NonNullable<paths["/v1/schedules"]["get"]["parameters"]["query"]> = {}) =>
        ok(api.GET("/v1/schedules", { params: { query } })),
      pause: async (schedule: string) =>
        (await ok(api.POST("/v1/schedules/{id}/pause", { params: id(schedule) }))) as Schedule,
      resume: async (schedule: string) =>
        (await ok(api.POST("/v1/schedules/{id}/resume", { params: id(schedule) }))) as Schedule,
      delete: async (schedule: string): Promise<void> => {
        const { error, response } = await api.DELETE("/v1/schedules/{id}", { params: id(schedule) });
        if (!response.ok) throw OutpostError.fromBody(response, error);
      },
    },
    collections: {
      list: () => ok(api.GET("/v1/collections")),
      get: (collection: string) => ok(api.GET("/v1/collections/{name}", { params: named(collection) })),
      /** Adds or replaces documents (chunked, embedded, indexed); the first put names the embedding provider. */
      put: (collection: string, body: Schemas["PutDocumentsBody"]) =>
        ok(api.PUT("/v1/collections/{name}/documents", { params: named(collection), body })),
      /** A page of the collection's documents, by id (`limit`, and `cursor`: the previous page's next_cursor). */
      documents: (
        collection: string,
        query: NonNullable<paths["/v1/collections/{name}/documents"]["get"]["parameters"]["query"]> = {},
      ) => ok(api.GET("/v1/collections/{name}/documents", { params: { path: { name: collection }, query } })),
      document: (collection: string, document: string) =>
        ok(
          api.GET("/v1/collections/{name}/documents/{id}", {
            params: { path: { name: collection, id: document } },
          }),
        ),
      deleteDocument: async (collection: string, document: string): Promise<void> => {
        const { error, response } = await api.DELETE("/v1/collections/{name}/documents/{id}", {
          params: { path: { name: collection, id: document } },
        });
        if (!response.ok) throw OutpostError.fromBody(response, error);
      },
      /** Deletes the collection with its documents, freeing its name and its place under the tenant's cap. */
      delete: async (collection: string): Promise<void> => {
        const { error, response } = await api.DELETE("/v1/collections/{name}", { params: named(collection) });
        if (!response.ok) throw OutpostError.fromBody(response, error);
      },
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
