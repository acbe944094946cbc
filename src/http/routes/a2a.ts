// /a2a: every agent the tenant may run as an A2A v1.0 agent (docs/a2a.md). GET /a2a lists the tenant's Agent Cards;
// /a2a/<agent>/.well-known/agent-card.json is one; POST /a2a/<agent> is the JSON-RPC binding (the SDK's
// JsonRpcTransportHandler); the HTTP+JSON binding's routes under /a2a/<agent>/… are our own small Hono adapter,
// a2a-rest.ts, mounted here. Both call one request handler per request, src/a2a/request-handler.ts, given what it
// needs of this request (an OutpostPort, built in a2a-request.ts). Every route needs an API key; reading needs
// `read`, starting or changing a task `run`, and a stream both (and a message that asks for a push config both). A
// body is read as /v1 reads one: its size, UTF-8, JSON and the checks of src/http/validation.ts.
import { AgentCard } from "@a2a-js/sdk";
import { ContentTypeNotSupportedError } from "@a2a-js/sdk/errors";
import { JsonRpcTransportHandler, type ServerCallContext } from "@a2a-js/sdk/server";
import { Hono } from "hono";
import { agentCard } from "../../a2a/agent-card.ts";
import { jsonRpcBodyError, toA2AError } from "../../a2a/errors.ts";
import { OutpostRequestHandler } from "../../a2a/request-handler.ts";
import { ApiError } from "../../errors.ts";
import type { Scope } from "../../tenants/api-keys.ts";
import { agentFor, agentsFor } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import {
  a2aBody,
  agentUrl,
  bodyProblem,
  callContext,
  jsonContentType,
  messageScopes,
  portFor,
  requireScopes,
  sseResponse,
} from "./a2a-request.ts";
import { a2aRestRoutes } from "./a2a-rest.ts";

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
    // Read and checked as /v1 reads a body; what is refused is answered as JSON-RPC answers it (the request's id once
    // the body could be read), a body too large to read with 413 as well.
    let body: unknown;
    try {
      body = await a2aBody(c);
    } catch (error) {
      const status = error instanceof ApiError && error.code === "payload_too_large" ? 413 : 200;
      return c.json(rpcError(null, jsonRpcBodyError(error)), status);
    }
    const request = typeof body === "object" && body !== null ? (body as { id?: unknown; method?: unknown }) : {};
    const problem = bodyProblem(body);
    if (problem) return c.json(rpcError(problem.field === "id" ? null : request.id, problem));
    const method = typeof request.method === "string" ? request.method : "";
    requireScopes(c, METHOD_SCOPES[method] ?? ["read"]);
    // A message that asks for a push config needs `read` as well: the pushes carry the task's result.
    if (method === "SendMessage" || method === "SendStreamingMessage") {
      requireScopes(c, messageScopes((body as { params?: unknown }).params));
    }
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
  .route("/", a2aRestRoutes);
