// What both A2A bindings (src/http/routes/a2a.ts) take from one request: the key's scopes checked (a message that asks
// for a push config needs `read` too), the body read and checked as /v1 reads one, the OutpostPort the request handler
// runs on (src/a2a/outpost-port.ts: the route's agent, the key's reach, and task creation, lookup, listing, decisions
// and push URLs as the /v1 routes do them), the SDK's call context after the A2A-Version check, the Content-Type
// check, and an async iterator of answers as an SSE response.
import {
  A2A_CONTENT_TYPE,
  A2A_VERSION_HEADER,
  type AgentCard,
  Extensions,
  formatSSEEvent,
  HTTP_EXTENSION_HEADER,
  SendMessageRequest,
  SSE_HEADERS,
} from "@a2a-js/sdk";
import { defaultServerCallContextBuilder, type ServerCallContext, validateVersion } from "@a2a-js/sdk/server";
import type { Context } from "hono";
import type { OutpostPort } from "../../a2a/outpost-port.ts";
import { contextTag } from "../../a2a/task-mapping.ts";
import { A2A_CONTEXT_METADATA_KEY } from "../../callbacks/push-configs.ts";
import { pushConfigUrl } from "../../commands/callbacks.ts";
import { decisionInput } from "../../commands/decisions.ts";
import { mayRead } from "../../commands/principal.ts";
import { launchRun, prepareRun } from "../../commands/runs.ts";
import { cancelTask, resumeTask } from "../../commands/task-control.ts";
import { ApiError } from "../../errors.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import type { Scope } from "../../tenants/api-keys.ts";
import { agentFor } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { requireScope } from "../auth.ts";
import { taskIdPage } from "../listing.ts";
import { CreateTaskBody, ResumeBody, TaskIdParam } from "../schemas.ts";
import { commandContext } from "../task-creation.ts";
import { bodyText, jsonBodyProblem, MAX_BODY_BYTES, parseWith } from "../validation.ts";
import { runsToolLoop } from "./agents.ts";

type Binding = "JSONRPC" | "HTTP+JSON";

export function requireScopes(c: Context<AppEnv>, scopes: readonly Scope[]): void {
  for (const scope of scopes) requireScope(c.get("apiKey").scopes, scope);
}

/**
 * The scopes a SendMessage needs besides `run`: a push config carries the task's result and what it waits for, so a
 * message that asks for one needs `read` too, as CreateTaskPushNotificationConfig and a /v1 webhook do. `params` is
 * read as the SDK reads it (SendMessageRequest.fromJSON); what it cannot read asks for nothing more, and is refused by
 * the handler.
 */
export function messageScopes(params: unknown): Scope[] {
  try {
    const request = SendMessageRequest.fromJSON(params);
    return request.configuration?.taskPushNotificationConfig ? ["read"] : [];
  } catch {
    return [];
  }
}

/**
 * An A2A request's body as /v1 reads one (src/http/validation.ts): at most MAX_BODY_BYTES (413 payload_too_large,
 * reading stops there), UTF-8 and JSON (400 invalid_json), and nothing jsonBodyProblem refuses (a lone surrogate, a
 * "__proto__" key, nesting deeper than 32 levels: 400 validation_failed naming its path). `empty` is what an empty
 * body stands for (HTTP+JSON's POSTs without one); a JSON-RPC request has none. Each binding answers these ApiErrors
 * in its own error shape.
 */
export async function a2aBody(c: Context<AppEnv>, empty?: unknown): Promise<unknown> {
  const text = await bodyText(c, MAX_BODY_BYTES);
  if (empty !== undefined && !text.trim()) return empty;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", "The body is not valid JSON.");
  }
  return value;
}

/** What jsonBodyProblem finds in a parsed body, as /v1's 400 naming the path; null when there is nothing. */
export function bodyProblem(value: unknown): ApiError | null {
  const problem = jsonBodyProblem(value);
  return problem
    ? new ApiError("validation_failed", `Invalid ${problem.field}: ${problem.message}.`, problem.field)
    : null;
}

export function agentUrl(c: Context<AppEnv>, name: string): string {
  return `${new URL(c.req.url).origin}/a2a/${encodeURIComponent(name)}`;
}

/** What the request handler needs of this request: the agent, the key's reach, and Outpost's own machinery. */
export async function portFor(c: Context<AppEnv>): Promise<OutpostPort> {
  const agent = await agentFor(c, c.req.param("agent") ?? "");
  const origin = new URL(c.req.url).origin;
  const ctx = commandContext(c, "a2a");
  return {
    agent,
    conversational: runsToolLoop(agent),
    readable: mayRead(ctx.principal),
    url: agentUrl(c, agent.name),
    taskUrl: (id) => `${origin}/v1/tasks/${id}`,
    start: async ({ input, context, contextId }) => {
      // A message's text is a task's input, read as POST /v1/agents/:name/tasks reads its input.
      parseWith(CreateTaskBody.shape.input, input, "message.parts");
      // The whole request is the Idempotency-Key's fingerprint (creationId): a repeat with another message is refused.
      const request = {
        metadata: { [A2A_CONTEXT_METADATA_KEY]: contextId },
        tags: [contextTag(contextId)],
        input,
        context,
      };
      const init = await prepareRun(ctx, agent, request, { input, inputField: "message.parts" });
      // Listed at once: the context's next message finds this task, its newest, through the directory.
      const listed = { ...init, listAtOnce: true };
      const { task } = await launchRun(ctx, context.length > 0 ? { ...listed, context } : listed);
      return task;
    },
    stub: (id) => (TaskIdParam.safeParse(id).success ? taskStubFor(c.env, c.get("tenant"), id) : null),
    list: (query) => taskIdPage(c, { ...query, agent: agent.name }),
    decision: (body, field) => decisionInput(ctx.principal, parseWith(ResumeBody, body, field), "task"),
    resume: (id, decision) => resumeTask(ctx, id, decision),
    cancel: (id) => cancelTask(ctx, id),
    pushUrl: (raw) => pushConfigUrl(c.env, ctx.principal, raw, "url"),
    unsubscribe: (stub, id) => c.executionCtx.waitUntil(stub.unsubscribe(id).catch(() => undefined)),
    signal: c.req.raw.signal,
  };
}

/** The SDK's call context for this request, after the A2A-Version check (an absent header means 0.3, which is refused). */
export function callContext(c: Context<AppEnv>, card: AgentCard, binding: Binding): ServerCallContext {
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
export function jsonContentType(c: Context<AppEnv>): boolean {
  const raw = c.req.header("content-type");
  if (!raw) return true;
  const media = (raw.split(";", 1)[0] ?? "").trim().toLowerCase();
  return media === "application/json" || media === A2A_CONTENT_TYPE;
}

/** An async iterator as an SSE body (one `data:` frame per item), ended early when the client goes. */
export function sseResponse<T>(
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
