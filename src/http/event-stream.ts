// Event streams as HTTP responses, for every route that answers with one (a task's events, a session's, a turn's, a
// task, message or invocation created with Accept: text/event-stream): the SSE headers, and the subscription ended on
// the object's side as soon as the client goes.
import type { Context } from "hono";
import type { TaskObject } from "../../durable-objects/task-object.ts";
import { ApiError } from "../errors.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import type { AppEnv } from "./app-env.ts";
import { mayRead } from "./task-resource.ts";

/**
 * An event stream as the response, ended on the object's side as soon as the client goes: the object would notice
 * a cancelled stream only at its next write, and the request signal (enable_request_signal) says at once that the
 * client has gone. waitUntil, since the response is over by then and a plain call would be dropped.
 */
export function streamResponse(
  c: Context<AppEnv>,
  stub: DurableObjectStub<TaskObject>,
  subscription: { id: string; stream: ReadableStream<Uint8Array> },
  headers: Record<string, string> = {},
): Response {
  const unsubscribe = () => c.executionCtx.waitUntil(stub.unsubscribe(subscription.id).catch(() => undefined));
  if (c.req.raw.signal.aborted) unsubscribe();
  else c.req.raw.signal.addEventListener("abort", unsubscribe, { once: true });
  return new Response(subscription.stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      "x-request-id": c.get("requestId"),
      ...headers,
    },
  });
}

/**
 * A task's events from its first, as the answer of the request that created it (Accept: text/event-stream): the
 * stream GET /v1/tasks/:id/events opens, without a second request, and where the task is in its headers (`headers`,
 * with `x-task-id`). Null when its object has nothing to stream (the task is gone): the caller answers with the task.
 */
export async function creationStream(
  c: Context<AppEnv>,
  tenant: string,
  taskId: string,
  headers: Record<string, string>,
): Promise<Response | null> {
  const stub = taskStubFor(c.env, tenant, taskId);
  const subscription = await stub.subscribe(0);
  if (!subscription || !("id" in subscription)) return null;
  return streamResponse(c, stub, subscription, { ...headers, "x-task-id": taskId });
}

/** Whether the client asks for the answer as an event stream (send_streaming). */
export function wantsStream(c: Context<AppEnv>): boolean {
  return (c.req.header("accept") ?? "").toLowerCase().includes("text/event-stream");
}

/** A stream is what a task or session holds: only for a key that may read. */
export function requireRead(c: Context<AppEnv>, what: string): void {
  if (!mayRead(c)) throw new ApiError("insufficient_scope", `${what} needs the read scope.`, "authorization");
}
