// Starting a run, the command behind every way a task starts on an agent: POST /v1/agents/:name/tasks, /invoke and
// /sessions, a workflow's task, a fork, A2A's SendMessage, the MCP server's agent tools and start-session, a hook's
// delivery, and (with their own principals) a schedule's fire and an evaluation's run. prepareRun checks what the
// request may set and takes the creation token; launchRun makes the task durable in its object, carrying the
// principal its tree's children are checked as.
import type { Agent } from "../agents/agent.ts";
import { ApiError } from "../errors.ts";
import type { RedactionMode } from "../events/redaction.ts";
import { type Faults, faultInjectionAllowed, faultInjectionOffMessage } from "../faults/faults.ts";
import { sha256Hex } from "../lib/sha256.ts";
import type { TaskInit, TaskLimits, TaskView } from "../tasks/task.ts";
import { derivedTaskId, startInObject } from "../tasks/task-ids.ts";
import { taskInit, taskModel } from "../tasks/task-init.ts";
import { loosenedLimit, MAX_INPUT_CHARS, type RequestedLimits, requirePricedBudget } from "../tasks/task-limits.ts";
import type { CommandContext } from "./context.ts";
import { keptPrincipal, requireScope } from "./principal.ts";
import { requireCreationToken } from "./rate.ts";

/** What a request that starts a run on an agent may set (the task, session and invoke bodies share these). */
export interface RunRequest extends RequestedLimits {
  metadata?: Record<string, unknown> | undefined;
  tags?: string[] | undefined;
  retention_days?: number | undefined;
  redaction_mode?: RedactionMode | undefined;
  max_iterations?: number | undefined;
  max_tokens?: number | undefined;
}

/** 400 naming `field` when a run's input is longer than a task's input may be (MAX_INPUT_CHARS). */
export function checkInput(input: string, field: string): void {
  if (input.length <= MAX_INPUT_CHARS) return;
  throw new ApiError(
    "validation_failed",
    `Invalid ${field}: must be at most ${MAX_INPUT_CHARS} characters (it has ${input.length}).`,
    field,
  );
}

/** The task's own limits from the request; max_turns and max_iterations are one limit, the smaller winning. */
export function taskLimits(body: RunRequest): TaskLimits {
  const turns = [body.max_turns, body.max_iterations].filter((n): n is number => n !== undefined);
  return {
    ...(turns.length > 0 ? { max_turns: Math.min(...turns) } : {}),
    ...(body.max_budget_usd !== undefined ? { max_budget_usd: body.max_budget_usd } : {}),
    ...(body.max_tokens !== undefined ? { max_tokens: body.max_tokens } : {}),
  };
}

/** An Idempotency-Key: 1 to 255 printable ASCII characters (the OpenAPI document states it too). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * The task id for this command: derived from the Idempotency-Key when there is one (so a repeat reaches the same
 * object), random otherwise; and the request's fingerprint, to tell a repeat from misuse of the key.
 */
export async function creationId(ctx: CommandContext, body: unknown): Promise<{ id: string; fingerprint?: string }> {
  const idempotency = ctx.idempotency;
  if (!idempotency) return { id: crypto.randomUUID() };
  if (!IDEMPOTENCY_KEY_PATTERN.test(idempotency.key)) {
    throw new ApiError(
      "validation_failed",
      "Idempotency-Key must be 1–255 printable ASCII characters.",
      "idempotency-key",
    );
  }
  return {
    id: await derivedTaskId("idempotency", ctx.principal.tenant, idempotency.key),
    fingerprint: await sha256Hex(`${idempotency.request}\n${JSON.stringify(body)}`),
  };
}

/**
 * What every command that starts a run on an agent checks before it starts one: the principal may run; the input
 * fits; its limits and redaction may tighten the agent's, never loosen them (refused, not clamped, so that the client
 * never believes it got what it asked for); a budget needs a priced model; then the way in's own checks (`check`),
 * the creation token, and the id. Returns the TaskInit, carrying the principal.
 */
export async function prepareRun(
  ctx: CommandContext,
  agent: Agent,
  body: RunRequest,
  run: { input: string; inputField?: string; files?: Record<string, string>; dryRun?: boolean; check?: () => void },
): Promise<TaskInit> {
  requireScope(ctx.principal, "run");
  checkInput(run.input, run.inputField ?? "input");
  const loosened = loosenedLimit(body, agent);
  if (loosened) throw new ApiError("validation_failed", loosened.message, loosened.field);
  const model = taskModel(agent, ctx.env);
  const limits = taskLimits(body);
  requirePricedBudget({ limits, agent, model, prices: ctx.env.OUTPOST_PRICES, field: "max_budget_usd" });
  run.check?.();
  await requireCreationToken(ctx);
  const { id, fingerprint } = await creationId(ctx, body);
  return taskInit(ctx.env, {
    id,
    fingerprint,
    tenant: ctx.principal.tenant,
    agent,
    input: run.input,
    metadata: body.metadata ?? {},
    model,
    redactionMode: body.redaction_mode,
    ...(run.dryRun !== undefined ? { dryRun: run.dryRun } : {}),
    tags: body.tags,
    retentionDays: body.retention_days,
    limits,
    ...(run.files ? { files: run.files, warnings: agent.startupWarnings(Object.keys(run.files)) } : {}),
    // Kept in a schedule's or an evaluation's template too: the runs they start count against this principal.
    principal: keptPrincipal(ctx.principal),
  });
}

/** Starts the task in its object (durably, before anything is answered); a repeated request finds it instead. */
export async function launchRun(ctx: CommandContext, init: TaskInit): Promise<{ task: TaskView; replayed: boolean }> {
  // Whatever made the TaskInit, the task counts its tree against the command's principal unless it names its own.
  const principal = init.principal ?? keptPrincipal(ctx.principal);
  const started = await startInObject(ctx.env, ctx.principal.tenant, { ...init, principal });
  if (started.task) return { task: started.task, replayed: started.outcome === "replayed" };
  throw creationRefused(started);
}

/** Why an object created nothing (StartOutcome), as the API's error. */
export function creationRefused(
  started: { outcome: "mismatch" | "expired" } | { outcome: "workspace_full"; message: string },
): ApiError {
  if (started.outcome === "mismatch") {
    return new ApiError(
      "idempotency_key_reused",
      "This Idempotency-Key was used for a different request (another route or body); use a new key.",
      "idempotency-key",
    );
  }
  if (started.outcome === "expired") {
    return new ApiError(
      "task_expired",
      "What this request created has expired under the retention policy; use a new Idempotency-Key.",
      "idempotency-key",
    );
  }
  return new ApiError(
    "workspace_full",
    `The seed files do not fit the workspace: ${"message" in started ? started.message : ""}.`,
    "files",
  );
}

/**
 * Faults a run may inject: only where the operator turned fault injection on for the tenant (else 403
 * fault_injection_disabled), and an MCP fault only on one of the agent's servers. `field` names them in errors.
 */
export function allowedFaults(
  ctx: CommandContext,
  agent: Pick<Agent, "toolDeclaration">,
  faults: Faults,
  field: string,
): Faults {
  const tenant = ctx.principal.tenant;
  if (!faultInjectionAllowed(ctx.env.OUTPOST_FAULT_INJECTION, tenant)) {
    throw new ApiError("fault_injection_disabled", faultInjectionOffMessage(tenant), field);
  }
  const server = faults.mcp_fault?.server;
  if (server !== undefined && !agent.toolDeclaration().mcpServers.some((s) => s.name === server)) {
    throw new ApiError(
      "validation_failed",
      `The agent has no MCP server named "${server}" for the fault to strike.`,
      `${field}.mcp_fault.server`,
    );
  }
  return faults;
}
