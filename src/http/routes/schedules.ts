// /v1/schedules: scheduled runs of an agent (LangGraph's crons, cloudflare/agents' schedules). A schedule is created
// with the agent, its timing and the task every run gets, checked exactly as POST /v1/agents/:name/tasks checks it
// (agentTaskInit); it lives in its own Durable Object (durable-objects/schedule-object.ts), whose alarm starts each
// run as an ordinary task. What stored work may cost is checked here too (src/schedules/schedule-limits.ts): a cron
// firing more often than the deployment's floor, or one schedule more than the tenant may hold, is refused. The
// schedule fires as the key that created it (or last resumed it). Listed from the tenant's directory; read, paused,
// resumed and deleted in its object. The object's name includes the tenant, so another tenant's schedule id reaches an
// empty object: 404.
import { type Context, Hono } from "hono";
import type { Agent } from "../../agents/agent.ts";
import { keptPrincipal } from "../../commands/principal.ts";
import { AgentNotFoundError, ApiError } from "../../errors.ts";
import { type ScheduleView, scheduleStubFor } from "../../schedules/schedule.ts";
import { intervalProblem, requireScheduleRoom } from "../../schedules/schedule-limits.ts";
import { isTimingProblem, parseTiming } from "../../schedules/timing.ts";
import { tenantStubFor } from "../../tenants/directory.ts";
import { agentFor } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { listSchedules } from "../listing.ts";
import type { ScheduleLinks, ScheduleReceipt, ScheduleResource } from "../responses.ts";
import { CreateScheduleBody, TaskIdParam } from "../schemas.ts";
import { commandContext, creationRefused } from "../task-creation.ts";
import { mayRead } from "../task-resource.ts";
import { jsonBody } from "../validation.ts";
import { agentTaskInit } from "./agents.ts";

function scheduleNotFound(id: string): ApiError {
  return new ApiError("schedule_not_found", `No schedule with id "${id}".`, "id");
}

/** The stub of the schedule's object; a malformed id is answered like an unknown one, without touching storage. */
function scheduleStub(c: Context<AppEnv>) {
  const raw = c.req.param("id") ?? "";
  if (!TaskIdParam.safeParse(raw).success) throw scheduleNotFound(raw);
  return { id: raw, stub: scheduleStubFor(c.env, c.get("tenant"), raw) };
}

/** The agent a schedule names, for the tenant: like agentFor, but a miss names the body's `agent` field. */
async function scheduledAgent(c: Context<AppEnv>, name: string): Promise<Agent> {
  try {
    return await agentFor(c, name);
  } catch (error) {
    if (error instanceof AgentNotFoundError) throw new ApiError("agent_not_found", error.message, "agent");
    throw error;
  }
}

/** The schedule with its links, cut to when it runs for a key that may act but not read (the runs' content is not). */
function scheduleResource(c: Context<AppEnv>, schedule: ScheduleView): ScheduleResource | ScheduleReceipt {
  const origin = new URL(c.req.url).origin;
  const self = `${origin}/v1/schedules/${schedule.id}`;
  const links: ScheduleLinks = { self, pause: `${self}/pause`, resume: `${self}/resume`, tasks: `${origin}/v1/tasks` };
  if (mayRead(c)) return { ...schedule, links };
  const { id, agent, status, cron, timezone, at, next_run_at } = schedule;
  return { id, agent, status, cron, timezone, at, next_run_at, links };
}

export const scheduleRoutes = new Hono<AppEnv>()
  .get("/", async (c) => c.json(await listSchedules(c)))
  .post("/", async (c) => {
    const body = await jsonBody(c, CreateScheduleBody);
    const timing = parseTiming(body, Date.now());
    if (isTimingProblem(timing)) throw new ApiError(timing.code, timing.message, timing.field);
    const tooOften = intervalProblem(c.env, timing);
    if (tooOften) throw new ApiError(tooOften.code, tooOften.message, tooOften.field);
    const agent = await scheduledAgent(c, body.agent);
    // Each run's task as a task creation builds it (limits, budget, files, callbacks, rate limit, Idempotency-Key),
    // its id and fingerprint being the schedule's: every fire gives the task its own id.
    const { id, fingerprint, tenant, trigger: _none, ...template } = await agentTaskInit(c, agent, body);
    // Counted without this id: a creation repeated under its Idempotency-Key is the same schedule, not one more.
    requireScheduleRoom(c.env, await tenantStubFor(c.env, tenant).countSchedules(id));
    const created = await scheduleStubFor(c.env, tenant, id).create({
      id,
      tenant,
      fingerprint: fingerprint ?? null,
      keyId: c.get("apiKey").id,
      timing,
      missed: body.missed ?? "run_once",
      template,
    });
    if (!created.schedule) {
      if (created.outcome === "deleted") {
        throw new ApiError(
          "schedule_not_found",
          "The schedule this Idempotency-Key created has been deleted; use a new key.",
          "idempotency-key",
        );
      }
      throw creationRefused({ outcome: created.outcome });
    }
    const resource = scheduleResource(c, created.schedule);
    c.header("Location", resource.links.self);
    if (created.outcome === "replayed") c.header("Idempotent-Replayed", "true");
    return c.json(resource, 201);
  })
  .get("/:id", async (c) => {
    const { id, stub } = scheduleStub(c);
    const schedule = await stub.get();
    if (!schedule) throw scheduleNotFound(id);
    return c.json(scheduleResource(c, schedule));
  })
  .post("/:id/pause", async (c) => {
    const { id, stub } = scheduleStub(c);
    const { schedule, error } = await stub.pause();
    if (schedule) return c.json(scheduleResource(c, schedule));
    throw changeRefused(id, error);
  })
  .post("/:id/resume", async (c) => {
    const { id, stub } = scheduleStub(c);
    // It fires as the key that resumes it from now on (a revoked schedule is taken up by a key of the tenant).
    const principal = keptPrincipal(commandContext(c).principal);
    if (!principal.key_id) throw new Error("A /v1 request without its key.");
    const { schedule, error } = await stub.resume({ ...principal, key_id: principal.key_id });
    if (schedule) return c.json(scheduleResource(c, schedule));
    throw changeRefused(id, error);
  })
  .delete("/:id", async (c) => {
    const { id, stub } = scheduleStub(c);
    if (!(await stub.delete())) throw scheduleNotFound(id);
    return c.body(null, 204);
  });

function changeRefused(id: string, error: "schedule_not_found" | "schedule_finished"): ApiError {
  if (error === "schedule_not_found") return scheduleNotFound(id);
  return new ApiError("schedule_finished", `Schedule ${id} has fired its one run (at) and is finished.`, "id");
}
