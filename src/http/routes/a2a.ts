// /a2a: every agent the tenant may run as an A2A v1.0 agent (docs/a2a.md). GET /a2a lists the tenant's Agent Cards;
// /a2a/<agent>/.well-known/agent-card.json is one; POST /a2a/<agent> is the JSON-RPC binding (the SDK's
// JsonRpcTransportHandler); the HTTP+JSON binding's routes under /a2a/<agent>/… are this file's own small Hono
// adapter (the SDK ships its REST handler only inside its Express bundle). Both call one request handler per request,
// src/a2a/request-handler.ts, given what it needs of this request (an OutpostPort). Every route needs an API key;
// reading needs `read`, starting or changing a task `run`, and a stream both.
import {
  A2A_CONTENT_TYPE,
  A2A_VERSION_HEADER,
  AgentCard,
  Extensions,
  formatSSEEvent,
  HTTP_EXTENSION_HEADER,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  SSE_HEADERS,
  StreamResponse,
  Task,
  TaskPushNotificationConfig,
  taskStateFromJSON,
} from "@a2a-js/sdk";
import {
  ContentTypeNotSupportedError,
  RequestMalformedError,
  restStatusFor,
  toRestErrorBody,
} from "@a2a-js/sdk/errors";
import {
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  type ServerCallContext,
  validateVersion,
} from "@a2a-js/sdk/server";
import type { Context } from "hono";
import { Hono } from "hono";
import { agentCard } from "../../a2a/agent-card.ts";
import { toA2AError } from "../../a2a/errors.ts";
import { type OutpostPort, OutpostRequestHandler } from "../../a2a/request-handler.ts";
import { contextTag } from "../../a2a/task-mapping.ts";
import { A2A_CONTEXT_METADATA_KEY } from "../../callbacks/push-configs.ts";
import { ApiError } from "../../errors.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import type { Scope } from "../../tenants/api-keys.ts";
import { agentFor, agentsFor } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { requireScope } from "../auth.ts";
import { decisionInput } from "../decisions.ts";
import { taskIdPage } from "../listing.ts";
import { ResumeBody, TaskIdParam } from "../schemas.ts";
import { callbackUrl, launch, newRun } from "../task-creation.ts";
import { mayRead } from "../task-resource.ts";
import { parseWith } from "../validation.ts";
import { runsToolLoop } from "./agents.ts";

type Binding = "JSONRPC" | "HTTP+JSON";

/** The scopes each JSON-RPC method needs: reading `read`, acting `run`, a stream of a run's content both. */
const METHOD_SCOPES: Readonly<Record<string, readonly Scope[]>> = {
  SendMessage: ["run"],
  SendStreamingMessage: ["run", "read"],
  GetTask: ["read"],
  ListTasks: ["read"],
  CancelTask: ["run"],
  SubscribeToTask: ["read"],
  CreateTaskPushNotificationConfig: ["run", "read"],
  GetTaskPushNotificationConfig: ["read"],
  ListTaskPushNotificationConfigs: ["read"],
  DeleteTaskPushNotificationConfig: ["run"],
  GetExtendedAgentCard: ["read"],
};

function requireScopes(c: Context<AppEnv>, scopes: readonly Scope[]): void {
  for (const scope of scopes) requireScope(c.get("apiKey").scopes, scope);
}

function agentUrl(c: Context<AppEnv>, name: string): string {
  return `${new URL(c.req.url).origin}/a2a/${encodeURIComponent(name)}`;
}

/** What the request handler needs of this request: the agent, the key's reach, and Outpost's own machinery. */
async function portFor(c: Context<AppEnv>): Promise<OutpostPort> {
  const agent = await agentFor(c, c.req.param("agent") ?? "");
  const origin = new URL(c.req.url).origin;
  return {
    agent,
    conversational: runsToolLoop(agent),
    readable: mayRead(c),
    url: agentUrl(c, agent.name),
    taskUrl: (id) => `${origin}/v1/tasks/${id}`,
    start: async ({ input, context, contextId }) => {
      // The whole request is the Idempotency-Key's fingerprint (creationId): a repeat with another message is refused.
      const request = {
        metadata: { [A2A_CONTEXT_METADATA_KEY]: contextId },
        tags: [contextTag(contextId)],
        input,
        context,
      };
      const init = await newRun(c, agent, request, { input });
      // Listed at once: the context's next message finds this task, its newest, through the directory.
      const listed = { ...init, listAtOnce: true };
      const { task } = await launch(c, init.tenant, context.length > 0 ? { ...listed, context } : listed);
      return task;
    },
    stub: (id) => (TaskIdParam.safeParse(id).success ? taskStubFor(c.env, c.get("tenant"), id) : null),
    list: (query) => taskIdPage(c, { ...query, agent: agent.name }),
    decision: (body, field) => decisionInput(c, parseWith(ResumeBody, body, field), "task"),
    pushUrl: (raw) => callbackUrl(c.env, raw, { url: "url", secret: "url" }).href,
    unsubscribe: (stub, id) => c.executionCtx.waitUntil(stub.unsubscribe(id).catch(() => undefined)),
    signal: c.req.raw.signal,
  };
}

/** The SDK's call context for this request, after the A2A-Version check (an absent header means 0.3, which is refused). */
function callContext(c: Context<AppEnv>, card: ReturnType<typeof agentCard>, binding: Binding): ServerCallContext {
  const version = c.req.header(A2A_VERSION_HEADER);
  const context = defaultServerCallContextBuilder({
    extensions: Extensions.parseServiceParameter(c.req.header(HTTP_EXTENSION_HEADER)),
    user: undefined,
    headers: Object.fromEntries(c.req.raw.headers),
    ...(version ? { requestedVersion: version } : {}),
  });
  validateVersion(context.requestedVersion, card, binding);
  return context;
}

/** Whether a body's Content-Type is JSON (A2A takes application/json and application/a2a+json); no header is JSON. */
function jsonContentType(c: Context<AppEnv>): boolean {
  const raw = c.req.header("content-type");
  if (!raw) return true;
  const media = (raw.split(";", 1)[0] ?? "").trim().toLowerCase();
  return media === "application/json" || media === A2A_CONTENT_TYPE;
}

/** An async iterator as an SSE body (one `data:` frame per item), ended early when the client goes. */
function sseResponse<T>(
  c: Context<AppEnv>,
  first: IteratorResult<T>,
  iterator: AsyncIterator<T>,
  frame: (item: T) => unknown,
  onError: (error: unknown) => unknown,
): Response {
  const encoder = new TextEncoder();
  let pendingFirst: IteratorResult<T> | null = first;
  // Once the client has gone, nothing more is written (and a failure after that is nobody's to hear).
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = pendingFirst ?? (await iterator.next());
        pendingFirst = null;
        if (cancelled) return;
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(formatSSEEvent(frame(next.value))));
      } catch (error) {
        if (cancelled) return;
        controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify(onError(error))}\n\n`));
        controller.close();
      }
    },
    async cancel() {
      cancelled = true;
      await iterator.return?.();
    },
  });
  return new Response(body, { headers: { ...SSE_HEADERS, "x-request-id": c.get("requestId") } });
}

function restJson(status: number, body: unknown): Response {
  return new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: status === 204 ? {} : { "content-type": A2A_CONTENT_TYPE },
  });
}

function restError(error: unknown): Response {
  const a2a = toA2AError(error);
  const status = restStatusFor(a2a);
  return restJson(status, toRestErrorBody(a2a, status));
}

/** An HTTP+JSON route: the version and content-type checks, the scopes, the handler, errors as A2A's REST errors. */
async function rest(
  c: Context<AppEnv>,
  scopes: readonly Scope[],
  run: (handler: OutpostRequestHandler, context: ServerCallContext) => Promise<Response>,
): Promise<Response> {
  requireScopes(c, scopes);
  const port = await portFor(c);
  const handler = new OutpostRequestHandler(port);
  try {
    if (!jsonContentType(c)) {
      throw new ContentTypeNotSupportedError(
        `Unsupported Content-Type "${c.req.header("content-type")}"; expected application/json or ${A2A_CONTENT_TYPE}.`,
      );
    }
    const context = callContext(c, await handler.getAgentCard(), "HTTP+JSON");
    return await run(handler, context);
  } catch (error) {
    return restError(error);
  }
}

/** The body of an HTTP+JSON request as JSON (an empty body is {}), or A2A's malformed-request error. */
async function restBody(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (!text.trim()) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new RequestMalformedError("The body is not a JSON object.");
}

/** An A2A stream as an HTTP+JSON SSE response: each StreamResponse as JSON; an error before the first as a REST error. */
async function restStream(c: Context<AppEnv>, stream: AsyncGenerator<StreamResponse>): Promise<Response> {
  let first: IteratorResult<StreamResponse>;
  try {
    first = await stream.next();
  } catch (error) {
    return restError(error);
  }
  return sseResponse(
    c,
    first,
    stream,
    (item) => StreamResponse.toJSON(item),
    (error) => {
      const a2a = toA2AError(error);
      return toRestErrorBody(a2a, restStatusFor(a2a));
    },
  );
}

/** ListTasks' answer as the SDK's serializer writes it: artifacts only when asked for. */
function listTasksJson(response: ListTasksResponse, includeArtifacts: boolean): unknown {
  const json = ListTasksResponse.toJSON(response) as { tasks?: Record<string, unknown>[] } & Record<string, unknown>;
  const tasks = (json.tasks ?? []).map((task) => (includeArtifacts ? { artifacts: [], ...task } : task));
  return {
    ...json,
    tasks,
    nextPageToken: response.nextPageToken,
    pageSize: response.pageSize,
    totalSize: response.totalSize,
  };
}

/** ?historyLength= and ?pageSize= as numbers; anything else is the client's mistake. */
function intQuery(c: Context<AppEnv>, name: string): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d+$/.test(raw)) throw new RequestMalformedError(`${name} must be a non-negative integer.`);
  return Number(raw);
}

export const a2aRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    requireScopes(c, ["read"]);
    const agents = await agentsFor(c);
    return c.json({ agents: agents.map((agent) => AgentCard.toJSON(agentCard(agent, agentUrl(c, agent.name)))) });
  })
  .get("/:agent/.well-known/agent-card.json", async (c) => {
    requireScopes(c, ["read"]);
    const agent = await agentFor(c, c.req.param("agent"));
    return c.json(AgentCard.toJSON(agentCard(agent, agentUrl(c, agent.name))));
  })
  // The JSON-RPC binding.
  .post("/:agent", async (c) => {
    const port = await portFor(c);
    const handler = new OutpostRequestHandler(port);
    const rpcError = (id: unknown, error: unknown) => ({
      jsonrpc: "2.0",
      id: typeof id === "string" || typeof id === "number" ? id : null,
      error: JsonRpcTransportHandler.mapToJSONRPCError(toA2AError(error)),
    });
    if (!jsonContentType(c)) {
      return c.json(
        rpcError(
          null,
          new ContentTypeNotSupportedError(
            `Unsupported Content-Type "${c.req.header("content-type")}"; expected application/json.`,
          ),
        ),
      );
    }
    const text = await c.req.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return c.json(rpcError(null, new RequestMalformedError("The body is not JSON.")));
    }
    const request = typeof body === "object" && body !== null ? (body as { id?: unknown; method?: unknown }) : {};
    const method = typeof request.method === "string" ? request.method : "";
    requireScopes(c, METHOD_SCOPES[method] ?? ["read"]);
    let context: ServerCallContext;
    try {
      context = callContext(c, await handler.getAgentCard(), "JSONRPC");
    } catch (error) {
      return c.json(rpcError(request.id, error));
    }
    const answer = await new JsonRpcTransportHandler(handler).handle(body as Record<string, unknown>, context);
    if (!(Symbol.asyncIterator in answer)) return c.json(answer);
    const iterator = answer[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await iterator.next();
    } catch (error) {
      return c.json(rpcError(request.id, error));
    }
    return sseResponse(
      c,
      first,
      iterator,
      (item) => item,
      (error) => rpcError(request.id, error),
    );
  })
  // The HTTP+JSON binding (A2A v1.0 §11).
  .get("/:agent/extendedAgentCard", (c) =>
    rest(c, ["read"], async (handler) =>
      restJson(200, AgentCard.toJSON(await handler.getAuthenticatedExtendedAgentCard({ tenant: "" }))),
    ),
  )
  // POST /message:send and /message:stream. Hono reads ":…" inside a segment as a parameter, so the route is
  // "message" and a parameter, and the path itself says which (a route of its own parameter in that place would be
  // one the RegExpRouter refuses, beside /tasks).
  .post("/:agent/message:operation", async (c) => {
    const operation = c.req.path.slice(c.req.path.lastIndexOf("/") + 1);
    if (operation === "message:send") {
      return rest(c, ["run"], async (handler) => {
        const result = await handler.sendMessage(SendMessageRequest.fromJSON(await restBody(c)));
        const payload =
          "messageId" in result
            ? ({ $case: "message", value: result } as const)
            : ({ $case: "task", value: result } as const);
        return restJson(200, SendMessageResponse.toJSON({ payload }));
      });
    }
    if (operation === "message:stream") {
      return rest(c, ["run", "read"], async (handler) =>
        restStream(c, handler.sendMessageStream(SendMessageRequest.fromJSON(await restBody(c)))),
      );
    }
    throw new ApiError("route_not_found", `No route for POST ${c.req.path}.`);
  })
  .get("/:agent/tasks", (c) =>
    rest(c, ["read"], async (handler) => {
      const status = c.req.query("status");
      const includeArtifacts = c.req.query("includeArtifacts") === "true";
      const pageSize = intQuery(c, "pageSize");
      const historyLength = intQuery(c, "historyLength");
      const response = await handler.listTasks({
        tenant: "",
        contextId: c.req.query("contextId") ?? "",
        status: status ? taskStateFromJSON(Number.isNaN(Number(status)) ? status : Number(status)) : 0,
        ...(pageSize !== undefined ? { pageSize } : {}),
        pageToken: c.req.query("pageToken") ?? "",
        ...(historyLength !== undefined ? { historyLength } : {}),
        statusTimestampAfter: c.req.query("statusTimestampAfter") || undefined,
        includeArtifacts,
      });
      return restJson(200, listTasksJson(response, includeArtifacts));
    }),
  )
  .get("/:agent/tasks/:id", (c) =>
    rest(c, ["read"], async (handler) => {
      const historyLength = intQuery(c, "historyLength");
      const task = await handler.getTask({
        tenant: "",
        id: c.req.param("id"),
        ...(historyLength !== undefined ? { historyLength } : {}),
      });
      return restJson(200, Task.toJSON(task));
    }),
  )
  // POST /tasks/{id}:cancel and /tasks/{id}:subscribe: one segment, so one parameter (named as GET /tasks/:id names
  // it: Hono's RegExpRouter refuses two names for one place, and the fallback router it leaves to routes "/*" badly).
  .post("/:agent/tasks/:id", async (c) => {
    const operation = c.req.param("id");
    const match = /^(.+):(cancel|subscribe)$/.exec(operation);
    if (!match?.[1]) throw new ApiError("route_not_found", `No route for POST ${c.req.path}.`);
    const id = match[1];
    if (match[2] === "cancel") {
      return rest(c, ["run"], async (handler) =>
        restJson(200, Task.toJSON(await handler.cancelTask({ tenant: "", id, metadata: undefined }))),
      );
    }
    return rest(c, ["read"], async (handler) => restStream(c, handler.resubscribe({ tenant: "", id })));
  })
  .post("/:agent/tasks/:id/pushNotificationConfigs", (c) =>
    rest(c, ["run", "read"], async (handler) => {
      const config = TaskPushNotificationConfig.fromJSON({ ...(await restBody(c)), taskId: c.req.param("id") });
      return restJson(201, TaskPushNotificationConfig.toJSON(await handler.createTaskPushNotificationConfig(config)));
    }),
  )
  .get("/:agent/tasks/:id/pushNotificationConfigs", (c) =>
    rest(c, ["read"], async (handler) => {
      const list = await handler.listTaskPushNotificationConfigs({
        tenant: "",
        taskId: c.req.param("id"),
        pageSize: 0,
        pageToken: "",
      });
      return restJson(200, ListTaskPushNotificationConfigsResponse.toJSON(list));
    }),
  )
  .get("/:agent/tasks/:id/pushNotificationConfigs/:configId", (c) =>
    rest(c, ["read"], async (handler) => {
      const config = await handler.getTaskPushNotificationConfig({
        tenant: "",
        taskId: c.req.param("id"),
        id: c.req.param("configId"),
      });
      return restJson(200, TaskPushNotificationConfig.toJSON(config));
    }),
  )
  .delete("/:agent/tasks/:id/pushNotificationConfigs/:configId", (c) =>
    rest(c, ["run"], async (handler) => {
      await handler.deleteTaskPushNotificationConfig({
        tenant: "",
        taskId: c.req.param("id"),
        id: c.req.param("configId"),
      });
      return restJson(204, null);
    }),
  );
