// The HTTP+JSON binding of A2A (A2A v1.0 §11) under /a2a/<agent>/…: a small Hono adapter of our own (the SDK ships
// its REST handler only inside its Express bundle) over the same request handler as the JSON-RPC binding
// (src/a2a/request-handler.ts). Each route checks the version, the Content-Type and its scopes, reads its body (as /v1
// reads one: size, UTF-8, JSON, the checks of src/http/validation.ts) or query into the SDK's request type, and
// answers A2A's JSON, its SSE stream, or its REST error body (with Outpost's status: 413, 409, 429 as /v1 answers).
import {
  A2A_CONTENT_TYPE,
  AgentCard,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
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
import type { ServerCallContext } from "@a2a-js/sdk/server";
import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { toA2AError } from "../../a2a/errors.ts";
import { OutpostRequestHandler } from "../../a2a/request-handler.ts";
import { ApiError } from "../../errors.ts";
import type { Scope } from "../../tenants/api-keys.ts";
import type { AppEnv } from "../app-env.ts";
import {
  a2aBody,
  bodyProblem,
  callContext,
  jsonContentType,
  messageScopes,
  portFor,
  requireScopes,
  sseResponse,
} from "./a2a-request.ts";

/** A JSON answer through the request's context, keeping the headers set on it (RateLimit-*, a 429's Retry-After). */
function restJson(c: Context<AppEnv>, status: number, body: unknown): Response {
  if (status === 204) return c.body(null, 204);
  return c.body(JSON.stringify(body), status as ContentfulStatusCode, { "content-type": A2A_CONTENT_TYPE });
}

function restError(c: Context<AppEnv>, error: unknown): Response {
  const a2a = toA2AError(error);
  const status = restStatusFor(a2a);
  return restJson(c, status, toRestErrorBody(a2a, status));
}

/**
 * An HTTP+JSON route: the version and content-type checks, the scopes, the handler, errors as A2A's REST errors. A
 * scope refusal is Outpost's own 403 on every route, before A2A (docs/a2a.md), whether the route's scopes or what the
 * body asks for (restMessage) found it.
 */
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
    if (error instanceof ApiError && error.code === "insufficient_scope") throw error;
    return restError(c, error);
  }
}

/**
 * The body of an HTTP+JSON request as a JSON object (an empty body is {}), read and checked as /v1 reads one
 * (a2aBody: 413, invalid_json, validation_failed naming the path); another JSON value is A2A's malformed request.
 */
async function restBody(c: Context<AppEnv>): Promise<Record<string, unknown>> {
  const value = await a2aBody(c, {});
  const problem = bodyProblem(value);
  if (problem) throw problem;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new RequestMalformedError("The body is not a JSON object.");
}

/** A SendMessage body: a message that asks for a push config needs `read` as well (the pushes carry the result). */
async function restMessage(c: Context<AppEnv>): Promise<SendMessageRequest> {
  const body = await restBody(c);
  requireScopes(c, messageScopes(body));
  return SendMessageRequest.fromJSON(body);
}

/** An A2A stream as an HTTP+JSON SSE response: each StreamResponse as JSON; an error before the first as a REST error. */
async function restStream(c: Context<AppEnv>, stream: AsyncGenerator<StreamResponse>): Promise<Response> {
  let first: IteratorResult<StreamResponse>;
  try {
    first = await stream.next();
  } catch (error) {
    return restError(c, error);
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

export const a2aRestRoutes = new Hono<AppEnv>()
  .get("/:agent/extendedAgentCard", (c) =>
    rest(c, ["read"], async (handler) =>
      restJson(c, 200, AgentCard.toJSON(await handler.getAuthenticatedExtendedAgentCard({ tenant: "" }))),
    ),
  )
  // POST /message:send and /message:stream. Hono reads ":…" inside a segment as a parameter, so the route is
  // "message" and a parameter, and the path itself says which (a route of its own parameter in that place would be
  // one the RegExpRouter refuses, beside /tasks).
  .post("/:agent/message:operation", async (c) => {
    const operation = c.req.path.slice(c.req.path.lastIndexOf("/") + 1);
    if (operation === "message:send") {
      return rest(c, ["run"], async (handler) => {
        const result = await handler.sendMessage(await restMessage(c));
        const payload =
          "messageId" in result
            ? ({ $case: "message", value: result } as const)
            : ({ $case: "task", value: result } as const);
        return restJson(c, 200, SendMessageResponse.toJSON({ payload }));
      });
    }
    if (operation === "message:stream") {
      return rest(c, ["run", "read"], async (handler) =>
        restStream(c, handler.sendMessageStream(await restMessage(c))),
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
      return restJson(c, 200, listTasksJson(response, includeArtifacts));
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
      return restJson(c, 200, Task.toJSON(task));
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
        restJson(c, 200, Task.toJSON(await handler.cancelTask({ tenant: "", id, metadata: undefined }))),
      );
    }
    return rest(c, ["read"], async (handler) => restStream(c, handler.resubscribe({ tenant: "", id })));
  })
  .post("/:agent/tasks/:id/pushNotificationConfigs", (c) =>
    rest(c, ["run", "read"], async (handler) => {
      const config = TaskPushNotificationConfig.fromJSON({ ...(await restBody(c)), taskId: c.req.param("id") });
      return restJson(
        c,
        201,
        TaskPushNotificationConfig.toJSON(await handler.createTaskPushNotificationConfig(config)),
      );
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
      return restJson(c, 200, ListTaskPushNotificationConfigsResponse.toJSON(list));
    }),
  )
  .get("/:agent/tasks/:id/pushNotificationConfigs/:configId", (c) =>
    rest(c, ["read"], async (handler) => {
      const config = await handler.getTaskPushNotificationConfig({
        tenant: "",
        taskId: c.req.param("id"),
        id: c.req.param("configId"),
      });
      return restJson(c, 200, TaskPushNotificationConfig.toJSON(config));
    }),
  )
  .delete("/:agent/tasks/:id/pushNotificationConfigs/:configId", (c) =>
    rest(c, ["run"], async (handler) => {
      await handler.deleteTaskPushNotificationConfig({
        tenant: "",
        taskId: c.req.param("id"),
        id: c.req.param("configId"),
      });
      return restJson(c, 204, null);
    }),
  );
