// /v1/agents: starting a task, a chat session or an invocation on an agent the tenant can run (the Worker's, from
// agents/ files and classes, or the tenant's own). Describing agents and adding them at runtime is
// agent-definitions.ts, mounted here.
import type { Context } from "hono";
import { Hono } from "hono";
import { Agent } from "../../agents/agent.ts";
import { SkillAgent } from "../../agents/skill-agent.ts";
import type { Adapter } from "../../commands/principal.ts";
import { ApiError } from "../../errors.ts";
import type { Faults } from "../../faults/faults.ts";
import type { SessionView } from "../../sessions/session.ts";
import type { TaskInit, TaskWebhook } from "../../tasks/task.ts";
import { taskStubFor, waitOnTask } from "../../tasks/task-ids.ts";
import { agentFor } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { creationStream, requireRead, wantsStream } from "../event-stream.ts";
import type { Invocation } from "../responses.ts";
import { CreateSessionBody, CreateTaskBody, InvokeBody, WaitQuery } from "../schemas.ts";
import {
  allowedFaults,
  creationRefused,
  launch,
  newRun,
  requestedWebhook,
  seedFiles,
  startTask,
} from "../task-creation.ts";
import { mayRead, taskResource } from "../task-resource.ts";
import { jsonBody, parseWith } from "../validation.ts";
import { agentDefinitionRoutes } from "./agent-definitions.ts";
import { sessionResource } from "./sessions.ts";

/** How long POST /v1/agents/:name/invoke waits for the run's end unless ?wait= says (seconds). */
const DEFAULT_INVOKE_WAIT_SECONDS = 30;

/** 400 agent_not_conversational unless the agent runs the default tool loop, which can continue a conversation. */
function requireConversational(agent: Agent, what: string): void {
  if (runsToolLoop(agent)) return;
  throw new ApiError(
    "agent_not_conversational",
    `Agent "${agent.name}" does not run the default tool loop, so it cannot ${what}.`,
    "name",
  );
}

/**
 * Whether the agent runs the default tool loop (not a skill agent's decision loop, not a custom execute()): what
 * continues a conversation (sessions, invocations with a context, an A2A context's follow-ups).
 */
export function runsToolLoop(agent: Agent): boolean {
  return !(agent instanceof SkillAgent) && agent.execute === Agent.prototype.execute;
}

/**
 * A task's TaskInit from POST /v1/agents/:name/tasks's body (and from the MCP server's agent tools, whose input is
 * that body): its files, its limits and checks (newRun), and the callbacks it asks for.
 */
export async function agentTaskInit(
  c: Context<AppEnv>,
  agent: Agent,
  body: CreateTaskBody,
  adapter: Adapter = "v1",
): Promise<TaskInit> {
  const files = seedFiles(body.files);
  let webhook: TaskWebhook | null = null;
  let faults: Faults | undefined;
  const init = await newRun(
    c,
    agent,
    body,
    {
      input: body.input,
      files,
      dryRun: body.dry_run === true,
      check: () => {
        webhook = requestedWebhook(c, body);
        if (body.faults) faults = allowedFaults(c, agent, body.faults);
      },
    },
    adapter,
  );
  return { ...init, webhook, ...(faults ? { faults } : {}) };
}

/**
 * Opens a chat session on the agent (POST /v1/agents/:name/sessions, and the MCP server's start_session tool): the
 * session, and whether a repeated request (the same Idempotency-Key) found it rather than created it.
 */
export async function openSession(
  c: Context<AppEnv>,
  agent: Agent,
  body: CreateSessionBody,
  adapter: Adapter = "v1",
): Promise<{ session: SessionView; replayed: boolean }> {
  // A session's turns continue one conversation through the default tool loop.
  requireConversational(agent, "hold a conversation; start tasks on it instead");
  const files = seedFiles(body.files);
  const init = await newRun(c, agent, body, { input: "", files }, adapter);
  const started = await taskStubFor(c.env, init.tenant, init.id).startSession({
    ...init,
    session: { busy: body.busy ?? "reject" },
  });
  if (!started.task) throw creationRefused(started);
  return { session: started.task, replayed: started.outcome === "replayed" };
}

export const agentRoutes = new Hono<AppEnv>()
  .route("/", agentDefinitionRoutes)
  .post("/:name/sessions", async (c) => {
    const agent = await agentFor(c, c.req.param("name"));
    const { session, replayed } = await openSession(c, agent, await jsonBody(c, CreateSessionBody));
    const resource = sessionResource(c, session);
    c.header("Location", resource.links.self);
    if (replayed) c.header("Idempotent-Replayed", "true");
    return c.json(resource, 201);
  })
  .post("/:name/invoke", async (c) => {
    const agent = await agentFor(c, c.req.param("name"));
    const body = await jsonBody(c, InvokeBody);
    // The context is a conversation the run continues: the default tool loop's to continue.
    requireConversational(agent, "continue a conversation; start a task on it instead");
    const streaming = wantsStream(c);
    if (streaming) requireRead(c, "A streamed answer");
    const waitParam = c.req.query("wait");
    const waitSeconds = waitParam === undefined ? DEFAULT_INVOKE_WAIT_SECONDS : parseWith(WaitQuery, waitParam, "wait");
    const init = await newRun(c, agent, body, { input: body.message });
    const { task, replayed } = await launch(c, { ...init, context: body.context ?? [] });
    const resource = taskResource(c, task);
    c.header("Location", resource.links.self);
    if (replayed) c.header("Idempotent-Replayed", "true");
    if (streaming) {
      const headers = { location: resource.links.self, ...(replayed ? { "idempotent-replayed": "true" } : {}) };
      const stream = await creationStream(c, init.tenant, task.id, headers);
      if (stream) return stream;
    }
    const stub = taskStubFor(c.env, init.tenant, task.id);
    const now =
      waitSeconds > 0
        ? ((await waitOnTask(() => taskStubFor(c.env, init.tenant, task.id), Math.round(waitSeconds * 1000))) ?? task)
        : task;
    const result = mayRead(c) ? await stub.executionResult() : null;
    if (!result) return c.json(taskResource(c, now), 202);
    return c.json({ task_id: now.id, status: now.status, result, links: resource.links } satisfies Invocation, 200);
  })
  .post("/:name/tasks", async (c) => {
    const agent = await agentFor(c, c.req.param("name"));
    const init = await agentTaskInit(c, agent, await jsonBody(c, CreateTaskBody));
    return startTask(c, init.tenant, init);
  });
