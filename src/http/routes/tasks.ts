// /v1/tasks/:id: read a task, wait for it, stream its events, cancel it, and fetch its run bundle. Every route
// talks to the task's own Durable Object; the Worker only checks input and shapes responses.

import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { type Context, Hono } from "hono";
import type { TaskObject } from "../../../durable-objects/task-object.ts";
import { registry } from "../../agents/catalog.ts";
import { resolveModel } from "../../config/models.ts";
import { unpricedBudget } from "../../config/prices.ts";
import { retentionDays, retentionPolicyOrDefault } from "../../config/retention.ts";
import { unhandledCode } from "../../errors/codes.ts";
import { ApiError } from "../../errors.ts";
import type { JsonObject } from "../../lib/json.ts";
import type { ToolCallLedger } from "../../tasks/task.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import { stricterRedaction } from "../../tasks/task-limits.ts";
import type { AppEnv } from "../app-env.ts";
import type {
  ArtifactList,
  CheckpointList,
  DeliveryList,
  MessageList,
  WorkspaceList,
  WorkspaceListEntry,
} from "../responses.ts";
import { ArtifactPath, EventCursor, ForkBody, ResumeBody, TaskIdParam, WaitQuery, WorkspacePath } from "../schemas.ts";
import { creationId, rateLimitPerMinute, startTask, takeRateToken, takeToken } from "../task-creation.ts";
import { decisionResource, deliveryResource, mayRead, readableDetails, taskResource } from "../task-resource.ts";
import { jsonBody, parseWith } from "../validation.ts";

const TEXT_TYPES: Readonly<Record<string, string>> = {
  md: "text/markdown; charset=utf-8",
  json: "application/json",
  html: "text/html; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  pdf: "application/pdf",
};

/** A workspace file's content type by extension; other files are served as text or bytes. */
function workspaceContentType(path: string): string {
  const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
  return TEXT_TYPES[ext] ?? (path.includes(".") ? "text/plain; charset=utf-8" : "application/octet-stream");
}

/** 404 for a task that never existed; 410 task_expired for one its retention policy has deleted. */
async function missingTask(stub: DurableObjectStub<TaskObject>, id: string): Promise<ApiError> {
  const expired = await stub.expired();
  if (expired) {
    return new ApiError(
      "task_expired",
      `Task ${id} expired at ${expired.expired_at} under the retention policy; its record and files were deleted.`,
      "id",
    );
  }
  return taskNotFound(id);
}

function checkpointNotFound(id: string, checkpointId: string, field = "checkpoint_id"): ApiError {
  return new ApiError("checkpoint_not_found", `Task ${id} has no checkpoint "${checkpointId}".`, field);
}

/** A relative file path as URL path segments: each segment percent-encoded, the slashes kept. */
function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

function taskNotFound(id: string): ApiError {
  return new ApiError("task_not_found", `No task with id "${id}".`, "id");
}

/** The stub of the task's object; a malformed id is answered like an unknown one, without touching storage. */
function taskStub(c: Context<AppEnv>) {
  const raw = c.req.param("id") ?? "";
  if (!TaskIdParam.safeParse(raw).success) throw taskNotFound(raw);
  // The tenant is part of the object's name: another tenant's task id reaches an empty object (404).
  return { id: raw, stub: taskStubFor(c.env, c.get("tenant"), raw) };
}

export const taskRoutes = new Hono<AppEnv>()
  .get("/:id", async (c) => {
    const { id, stub } = taskStub(c);
    const waitParam = c.req.query("wait");
    const waitSeconds = waitParam === undefined ? 0 : parseWith(WaitQuery, waitParam, "wait");
    const task = waitSeconds > 0 ? await stub.wait(Math.round(waitSeconds * 1000)) : await stub.get();
    if (!task) throw await missingTask(stub, id);
    return c.json(taskResource(c, task));
  })
  .get("/:id/messages", async (c) => {
    const { id, stub } = taskStub(c);
    const messages = await stub.messages();
    if (!messages) throw await missingTask(stub, id);
    return c.json({ task_id: id, messages } satisfies MessageList);
  })
  .get("/:id/events", async (c) => {
    const { id, stub } = taskStub(c);
    const header = c.req.header("last-event-id");
    const query = c.req.query("after");
    const cursor =
      header !== undefined
        ? parseWith(EventCursor, header.trim(), "last-event-id")
        : query !== undefined
          ? parseWith(EventCursor, query, "after")
          : 0;
    const subscription = await stub.subscribe(cursor);
    if (!subscription) throw await missingTask(stub, id);
    // The run has ended and the client has every event: 204 tells an EventSource to stop reconnecting.
    if ("finished" in subscription) return c.body(null, 204);
    // The object would notice a cancelled stream only at its next write; the request signal (enable_request_signal)
    // says at once that the client has gone. waitUntil: the response is over by then, and a plain call would drop.
    const unsubscribe = () => c.executionCtx.waitUntil(stub.unsubscribe(subscription.id).catch(() => undefined));
    if (c.req.raw.signal.aborted) unsubscribe();
    else c.req.raw.signal.addEventListener("abort", unsubscribe, { once: true });
    return new Response(subscription.stream, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
        "x-request-id": c.get("requestId"),
      },
    });
  })
  .post("/:id/cancel", async (c) => {
    const { id, stub } = taskStub(c);
    const outcome = await stub.cancel();
    const { value, error } = outcome;
    if (value) return c.json(taskResource(c, value));
    switch (error.code) {
      case "task_not_found":
        throw await missingTask(stub, id);
      case "task_already_finished":
        throw new ApiError("task_already_finished", error.message);
      default:
        return unhandledCode(error.code);
    }
  })
  .get("/:id/checkpoints", async (c) => {
    const { id, stub } = taskStub(c);
    const checkpoints = await stub.checkpointList();
    if (!checkpoints) throw await missingTask(stub, id);
    return c.json({ task_id: id, checkpoints } satisfies CheckpointList);
  })
  .get("/:id/checkpoints/:checkpoint_id", async (c) => {
    const { id, stub } = taskStub(c);
    const checkpointId = c.req.param("checkpoint_id");
    const checkpoint = await stub.checkpoint(checkpointId);
    if (checkpoint) return c.json(checkpoint);
    if (!(await stub.get())) throw await missingTask(stub, id);
    throw checkpointNotFound(id, checkpointId);
  })
  .post("/:id/fork", async (c) => {
    const { id, stub } = taskStub(c);
    const body = await jsonBody(c, ForkBody);
    const original = await stub.get();
    if (!original) throw await missingTask(stub, id);
    const checkpoint = await stub.forkPoint(body.checkpoint_id);
    if (!checkpoint) throw checkpointNotFound(id, body.checkpoint_id, "checkpoint_id");
    const updates = body.state_updates ?? {};
    const agentName = updates.current_agent ?? checkpoint.state.current_agent;
    // Another tenant's agent is answered like an unknown one, and so is the checkpoint's own agent once a deploy
    // has taken it from this tenant.
    const agent = registry.visible(agentName, c.get("tenant"));
    if (!agent) {
      throw new ApiError(
        "agent_not_found",
        `No agent named "${agentName}".`,
        updates.current_agent ? "state_updates.current_agent" : "checkpoint_id",
      );
    }
    const model = updates.current_agent ? resolveModel(agent.model, c.env.OUTPOST_DEFAULT_MODEL) : original.model;
    const unpriced = unpricedBudget({
      budget: original.limits.max_budget_usd ?? agent.maxBudgetUsd,
      model,
      prices: c.env.OUTPOST_PRICES,
      agent: agent.name,
    });
    if (unpriced) throw new ApiError("validation_failed", unpriced, "state_updates.current_agent");
    // A fork between a model turn and its tool calls inherits the calls its origin already ran (the ledger).
    const pending = checkpoint.state.next_action === "tool_calls" ? checkpoint.state.messages.at(-1) : undefined;
    const pendingIds = Array.isArray(pending?.content)
      ? pending.content.flatMap((b) => (b.type === "tool_use" ? [b.id] : []))
      : [];
    if (pendingIds.length > 0 && updates.messages?.length) {
      throw new ApiError(
        "validation_failed",
        "This checkpoint is between a model turn and its tool calls; messages can be added at a model_turn or finish checkpoint.",
        "state_updates.messages",
      );
    }
    if (checkpoint.state.next_action === "finish" && !updates.messages?.some((m) => m.role === "user")) {
      throw new ApiError(
        "validation_failed",
        "This checkpoint holds the model's final answer: add a user message (state_updates.messages) to continue from it.",
        "state_updates.messages",
      );
    }
    let ledger: ToolCallLedger = { settled: {}, in_flight: [], uncertain: {} };
    if (pendingIds.length > 0) {
      const found = await stub.toolCallLedger(pendingIds);
      // The origin went (expired) between the reads: never guess that its calls did not run.
      if (!found) throw await missingTask(stub, id);
      // A call the origin runs (or is about to) has no known outcome yet: a fork now would be a second run of it.
      if (found.in_flight.length > 0) {
        throw new ApiError(
          "tool_call_in_flight",
          `Task ${id} is still running this checkpoint's tool calls (${found.in_flight.join(", ")}); fork from it once they have settled, or from another checkpoint.`,
          "checkpoint_id",
          { tool_use_ids: found.in_flight },
        );
      }
      ledger = found;
    }
    await takeRateToken(c);
    const { id: forkId, fingerprint } = await creationId(c, body);
    return startTask(c, c.get("tenant"), {
      id: forkId,
      tenant: c.get("tenant"),
      ...(fingerprint ? { fingerprint } : {}),
      webhook: original.webhook,
      // Never looser than the agent it moves to (a fork onto a redacting agent is redacted too).
      redactionMode: stricterRedaction(original.redaction_mode, agent.redactionMode),
      agent: agent.name,
      input: original.input,
      metadata: updates.metadata ?? original.metadata,
      model,
      retentionDays: retentionDays(retentionPolicyOrDefault(c.env.OUTPOST_RETENTION), {
        explicit: null,
        tags: original.tags,
      }),
      retentionExplicit: false,
      tags: original.tags,
      parentTaskId: id,
      // Inherited as they are; the run takes the smaller of these and the new agent's (runLimits).
      limits: original.limits,
      fork: {
        task_id: id,
        checkpoint_id: checkpoint.checkpoint_id,
        // Seed 003 State: messages follow the append reducer.
        messages: [...checkpoint.state.messages, ...((updates.messages ?? []) as MessageParam[])],
        turn: typeof checkpoint.state.metadata.turn === "number" ? checkpoint.state.metadata.turn : 0,
        settled: ledger.settled,
        uncertain: ledger.uncertain,
      },
    });
  })
  .post("/:id/resume", async (c) => {
    const { id, stub } = taskStub(c);
    const body = await jsonBody(c, ResumeBody);
    const { current_agent, ...updates } = body.state_updates ?? {};
    if (body.tool_input !== undefined && body.action !== "modify") {
      throw new ApiError("validation_failed", "tool_input goes with action modify.", "tool_input");
    }
    if (current_agent !== undefined) {
      throw new ApiError(
        "validation_failed",
        "A task keeps its agent while it runs; to hand the conversation to another agent, fork from the waiting checkpoint (turn_<n>_await_<tool_use_id>) with state_updates.current_agent.",
        "state_updates.current_agent",
      );
    }
    const outcome = await stub.resume({
      request_id: body.request_id,
      action: body.action,
      message: body.message ?? null,
      // Parsed from the JSON body: JSON.
      tool_input: (body.tool_input as JsonObject | undefined) ?? null,
      state_updates: Object.keys(updates).length > 0 ? updates : null,
      decided_by: c.get("apiKeyId"),
    });
    const { value, error } = outcome;
    if (value) {
      const { task, decision, replayed } = value;
      // A repeat of a recorded decision is answered like the original: the task and the decision, marked replayed.
      if (replayed) c.header("Idempotent-Replayed", "true");
      return c.json({ ...taskResource(c, task), decision: decisionResource(c, decision) });
    }
    switch (error.code) {
      case "task_not_found":
        throw await missingTask(stub, id);
      case "tool_input_required":
        throw new ApiError("validation_failed", error.message, "tool_input");
      case "message_required":
        throw new ApiError("validation_failed", error.message, "message");
      case "pending_input_changed": {
        // The message names the request waiting now: what a key that may not read must not learn (it could then
        // answer a request it was never shown).
        const message = mayRead(c)
          ? error.message
          : "The task waits for another request than the one named; a key with the read scope can see which.";
        throw new ApiError("pending_input_changed", message, "request_id", readableDetails(c, error.details));
      }
      case "already_decided":
        throw new ApiError("already_decided", error.message, "request_id", readableDetails(c, error.details));
      case "task_not_waiting":
        throw new ApiError("task_not_waiting", error.message);
      default:
        return unhandledCode(error.code);
    }
  })
  .get("/:id/deliveries", async (c) => {
    const { id, stub } = taskStub(c);
    const deliveries = await stub.deliveries();
    if (!deliveries) throw await missingTask(stub, id);
    return c.json({ task_id: id, deliveries } satisfies DeliveryList);
  })
  .post("/:id/deliveries/:delivery_id/redeliver", async (c) => {
    const { id, stub } = taskStub(c);
    const deliveryId = c.req.param("delivery_id");
    // Every redelivery makes the task send again: limited per key (a key's tasks share one budget, so more tasks do
    // not buy more sends), at the key's per-minute rate, in a bucket apart from its task creations.
    const limit = rateLimitPerMinute(c);
    await takeToken(
      c,
      `redeliver:${c.get("apiKey").id}`,
      limit,
      `This API key may ask for ${limit} redeliveries a minute`,
    );
    const { value, error } = await stub.redeliver(deliveryId);
    if (value) return c.json(deliveryResource(c, value), 202);
    switch (error.code) {
      case "task_not_found":
        throw await missingTask(stub, id);
      case "delivery_not_found":
        throw new ApiError("delivery_not_found", `Task ${id} has no delivery "${deliveryId}".`, "delivery_id");
      default:
        return unhandledCode(error.code);
    }
  })
  .get("/:id/artifacts", async (c) => {
    const { id, stub } = taskStub(c);
    const artifacts = await stub.artifacts();
    if (!artifacts) throw await missingTask(stub, id);
    const base = `${new URL(c.req.url).origin}/v1/tasks/${id}/artifacts/`;
    return c.json({
      task_id: id,
      artifacts: artifacts.map((a) => ({ ...a, url: base + encodePath(a.path) })),
    } satisfies ArtifactList);
  })
  .get("/:id/workspace", async (c) => {
    const { id, stub } = taskStub(c);
    const files = await stub.workspaceList();
    if (!files) throw await missingTask(stub, id);
    const base = `${new URL(c.req.url).origin}/v1/tasks/${id}/workspace/`;
    return c.json({
      task_id: id,
      files: files.map(
        (f): WorkspaceListEntry =>
          f.type === "file" ? { ...f, type: "file", url: base + encodePath(f.path) } : { ...f, type: "directory" },
      ),
    } satisfies WorkspaceList);
  })
  .get("/:id/workspace/:path{[\\s\\S]+}", async (c) => {
    const { id, stub } = taskStub(c);
    const path = parseWith(WorkspacePath, c.req.param("path"), "path");
    const found = await stub.workspaceFile(path);
    if (found === null && !(await stub.get())) throw await missingTask(stub, id);
    if (found === null || found === "directory") {
      const what = found === "directory" ? "is a folder; GET /v1/tasks/:id/workspace lists it" : "does not exist";
      throw new ApiError("workspace_file_not_found", `${path.slice(1)} ${what}.`, "path");
    }
    let body: ReadableStream<Uint8Array> | undefined = found.body;
    if (found.r2Key !== undefined) {
      const object = await c.env.RUNS.get(found.r2Key);
      if (!object) throw new ApiError("workspace_file_not_found", `${path.slice(1)} does not exist.`, "path");
      body = object.body;
    }
    return new Response(body, {
      headers: {
        "content-type": workspaceContentType(path),
        "content-length": String(found.size),
        "last-modified": new Date(found.modified_at).toUTCString(),
        // Files an agent wrote are data, never a page of this API's origin: no sniffing, no scripts.
        "x-content-type-options": "nosniff",
        "content-security-policy": "sandbox; default-src 'none'",
      },
    });
  })
  .get("/:id/artifacts/:path{[\\s\\S]+}", async (c) => {
    const { id, stub } = taskStub(c);
    const path = parseWith(ArtifactPath, c.req.param("path"), "path");
    const found = await stub.artifact(path);
    if (!found && !(await stub.get())) throw await missingTask(stub, id);
    if (!found) throw new ApiError("artifact_not_found", `Task ${id} has no artifact "${path}".`, "path");
    if (found.kind === "staged") {
      return new Response(found.content, { headers: { "content-type": found.content_type } });
    }
    const object = await c.env.RUNS.get(found.key);
    if (!object) throw new ApiError("artifact_not_found", `Task ${id} has no artifact "${path}".`, "path");
    return new Response(object.body, {
      headers: {
        "content-type": object.httpMetadata?.contentType ?? "application/octet-stream",
        "content-length": String(object.size),
        etag: object.httpEtag,
      },
    });
  });
