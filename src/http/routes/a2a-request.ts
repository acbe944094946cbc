// What both A2A bindings (src/http/routes/a2a.ts) take from one request: the key's scopes checked, the OutpostPort
// the request handler runs on (src/a2a/outpost-port.ts: the route's agent, the key's reach, and task creation, lookup,
// listing, decisions and push URLs as the /v1 routes do them), the SDK's call context after the A2A-Version check,
// the Content-Type check, and an async iterator of answers as an SSE response.
import {
  A2A_CONTENT_TYPE,
  A2A_VERSION_HEADER,
  type AgentCard,
  Extensions,
  formatSSEEvent,
  HTTP_EXTENSION_HEADER,
  SSE_HEADERS,
} from "@a2a-js/sdk";
import { defaultServerCallContextBuilder, type ServerCallContext, validateVersion } from "@a2a-js/sdk/server";
import type { Context } from "hono";
import type { OutpostPort } from "../../a2a/outpost-port.ts";
import { contextTag } from "../../a2a/task-mapping.ts";
import { A2A_CONTEXT_METADATA_KEY } from "../../callbacks/push-configs.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import type { Scope } from "../../tenants/api-keys.ts";
import { agentFor } from "../agent-lookup.ts";
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

export function requireScopes(c: Context<AppEnv>, scopes: readonly Scope[]): void {
  for (const scope of scopes) requireScope(c.get("apiKey").scopes, scope);
}

export function agentUrl(c: Context<AppEnv>, name: string): string {
  return `${new URL(c.req.url).origin}/a2a/${encodeURIComponent(name)}`;
}

/** What the request handler needs of this request: the agent, the key's reach, and Outpost's own machinery. */
export async function portFor(c: Context<AppEnv>): Promise<OutpostPort> {
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
