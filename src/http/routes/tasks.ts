// /v1/tasks: the tenant's tasks, newest first (listing.ts). /v1/tasks/:id: read a task, wait for it, stream its events, cancel it, read its messages and checkpoints, fork it,
// answer what it waits for, and see its callback deliveries; its files are task-files.ts. Every route talks to the
// task's own Durable Object; the Worker only checks input and shapes responses (the fork's rules are
// src/tasks/fork.ts).
import { Hono } from "hono";
import { decisionInput, decisionRefused } from "../../commands/decisions.ts";
import { cancelTask, resumeTask } from "../../commands/task-control.ts";
import { unhandledCode } from "../../errors/codes.ts";
import { ApiError } from "../../errors.ts";
import { planFork } from "../../tasks/fork.ts";
import { taskStubFor, waitOnTask } from "../../tasks/task-ids.ts";
import { taskInit } from "../../tasks/task-init.ts";
import { agentVersion, visibleAgent } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { streamResponse } from "../event-stream.ts";
import { listTasks } from "../listing.ts";
import type { CheckpointList, DeliveryList, MessageList, SubagentSessionList } from "../responses.ts";
import { EventCursor, EventDepth, ForkBody, ResumeBody, WaitQuery } from "../schemas.ts";
import {
  commandContext,
  creationId,
  rateLimitPerMinute,
  startTask,
  takeRateToken,
  takeToken,
} from "../task-creation.ts";
import { decisionResource, deliveryResource, missingTask, taskResource, taskStub } from "../task-resource.ts";
import { jsonBody, parseWith } from "../validation.ts";
import { forkWorkflow } from "../workflow-fork.ts";
import { taskFileRoutes } from "./task-files.ts";
import { taskReplayRoutes } from "./task-replay.ts";

/** state_updates.routing_key sent for a task of one agent, whose State has none to set. */
function noRoutingKey(): ApiError {
  return new ApiError(
    "validation_failed",
    "Only a workflow's run has a routing_key to set; this task runs one agent.",
    "state_updates.routing_key",
  );
}

function checkpointNotFound(id: string, checkpointId: string, field = "checkpoint_id"): ApiError {
  return new ApiError("checkpoint_not_found", `Task ${id} has no checkpoint "${checkpointId}".`, field);
}

export const taskRoutes = new Hono<AppEnv>()
  .get("/", async (c) => c.json(await listTasks(c)))
  .get("/:id", async (c) => {
    const { id, stub } = taskStub(c);
    const waitParam = c.req.query("wait");
    const waitSeconds = waitParam === undefined ? 0 : parseWith(WaitQuery, waitParam, "wait");
    const task =
      waitSeconds > 0 ? await waitOnTask(() => taskStub(c).stub, Math.round(waitSeconds * 1000)) : await stub.get();
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
    const depth = c.req.query("depth");
    const subscription = await stub.subscribe(
      cursor,
      depth === undefined ? undefined : parseWith(EventDepth, depth, "depth"),
    );
    if (!subscription) throw await missingTask(stub, id);
    // The run has ended and the client has every event: 204 tells an EventSource to stop reconnecting.
    if ("finished" in subscription) return c.body(null, 204);
    return streamResponse(c, stub, subscription);
  })
  .post("/:id/cancel", async (c) => {
    const { id, stub } = taskStub(c);
    const canceled = await cancelTask(commandContext(c), id);
    if (!canceled) throw await missingTask(stub, id);
    return c.json(taskResource(c, canceled));
  })
  .get("/:id/checkpoints", async (c) => {
    const { id, stub } = taskStub(c);
    const checkpoints = await stub.checkpointList();
    if (!checkpoints) throw await missingTask(stub, id);
    return c.json({ task_id: id, checkpoints } satisfies CheckpointList);
  })
  .get("/:id/subagents", async (c) => {
    const { id, stub } = taskStub(c);
    const records = await stub.subagentList();
    if (!records) throw await missingTask(stub, id);
    const tenant = c.get("tenant");
    // Seed 003 SubAgentSession: each child's own conversation is read from its object.
    const subagents = await Promise.all(
      records.flatMap((record) => {
        const childId = record.child_task_id;
        if (childId === null) return [];
        return [
          (async (): Promise<SubagentSessionList["subagents"][number]> => ({
            session_id: childId,
            parent_task_id: id,
            agent_name: record.agent,
            agent_version: record.agent_version ?? null,
            task_description: record.description,
            tool_use_id: record.tool_use_id,
            message_history: [...((await taskStubFor(c.env, tenant, childId).messages()) ?? [])],
            summary: record.outcome?.summary ?? null,
            status: record.outcome === null ? "running" : record.outcome.is_error ? "failed" : "completed",
            created_at: record.created_at,
          }))(),
        ];
      }),
    );
    return c.json({ task_id: id, subagents } satisfies SubagentSessionList);
  })
  .get("/:id/trace", async (c) => {
    const { id, stub } = taskStub(c);
    const trace = await stub.runTrace();
    if (!trace) throw await missingTask(stub, id);
    return c.json(trace);
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
    const origin = await stub.get();
    if (!origin) throw await missingTask(stub, id);
    const checkpoint = await stub.forkPoint(body.checkpoint_id);
    if (!checkpoint) throw checkpointNotFound(id, body.checkpoint_id, "checkpoint_id");
    // A workflow's task forks into a run of its workflow from the checkpoint's node (src/http/workflow-fork.ts).
    if (origin.workflow !== null) return forkWorkflow(c, { ...origin, workflow: origin.workflow }, checkpoint, body);
    if (body.state_updates?.routing_key !== undefined) throw noRoutingKey();
    const tenant = c.get("tenant");
    const fork = await planFork({
      origin,
      checkpoint,
      updates: body.state_updates ?? {},
      agent: (name) => visibleAgent(c, name),
      agentVersion: (name, version) => agentVersion(c, name, version),
      env: c.env,
      ledger: async (toolUseIds) => {
        const ledger = await stub.toolCallLedger(toolUseIds);
        // The origin went (expired) between the reads: never guess that its calls did not run.
        if (!ledger) throw await missingTask(stub, id);
        return ledger;
      },
    });
    await takeRateToken(c);
    const { id: forkId, fingerprint } = await creationId(c, body);
    return startTask(c, tenant, taskInit(c.env, { ...fork, id: forkId, fingerprint, tenant }));
  })
  .post("/:id/resume", async (c) => {
    const { id, stub } = taskStub(c);
    const ctx = commandContext(c);
    const decision = decisionInput(ctx.principal, await jsonBody(c, ResumeBody), "task");
    if (decision.state_updates?.routing_key !== undefined || decision.tool_input !== null) {
      const task = await stub.get();
      if (!task) throw await missingTask(stub, id);
      if (task.workflow === null && decision.state_updates?.routing_key !== undefined) throw noRoutingKey();
      // A workflow's own wait is before a node; a request of one of its children (pending_input.task_id) is a tool
      // call's, whose arguments a person may replace.
      const own = task.pending_input !== null && task.pending_input.task_id === undefined;
      if (task.workflow !== null && own && decision.tool_input !== null) {
        throw new ApiError(
          "validation_failed",
          "A workflow's run waits before a node, not a tool call: there are no arguments to replace (use state_updates).",
          "tool_input",
        );
      }
    }
    const decided = await resumeTask(ctx, id, decision);
    if (!decided) throw await missingTask(stub, id);
    if ("refused" in decided) throw decisionRefused(decided.refused);
    const { task, decision: recorded, replayed } = decided.decided;
    // A repeat of a recorded decision is answered like the original: the task and the decision, marked replayed.
    if (replayed) c.header("Idempotent-Replayed", "true");
    return c.json({ ...taskResource(c, task), decision: decisionResource(c, recorded) });
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
  .route("/", taskFileRoutes)
  .route("/", taskReplayRoutes);
