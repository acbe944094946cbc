// What a new task is made of (TaskInit), assembled in one place for every way a task starts: a request to an agent
// (POST /v1/agents/:name/tasks), a fork of a checkpoint (src/tasks/fork.ts) and an inbound webhook's delivery. Each
// says what it brings (the input, tags, limits, files, origin, who started it); the model, the retention days and
// the redaction mode follow the same rules for all of them.
import { resolveModel } from "../config/models.ts";
import { retentionDays, retentionPolicyOrDefault } from "../config/retention.ts";
import type { RuntimeAgentRecord } from "../contracts/agent-version.ts";
import type { Env } from "../env.ts";
import type { RedactionMode } from "../events/redaction.ts";
import type { Faults } from "../faults/faults.ts";
import type { TaskPrincipal } from "./principal.ts";
import type { ForkOrigin, TaskInit, TaskLimits, TaskTrigger, TaskWebhook } from "./task.ts";
import type { AgentLimits } from "./task-limits.ts";
import type { ReplayState } from "./task-state.ts";

/** What a task takes from its agent (an Agent has these members). */
export interface TaskAgent extends AgentLimits {
  /** The agent's own model, if its definition names one. */
  readonly model: string | undefined;
  /** The version of a tenant's own agent (PUT /v1/agents/:name) the task runs; null for an agent of the Worker. */
  readonly runtime: RuntimeAgentRecord | null;
}

/** A task about to start: what its route knows, the rest following from the rules of taskInit. */
export interface NewTask {
  id: string;
  /** The request's fingerprint, for a task created under an Idempotency-Key. */
  fingerprint?: string | undefined;
  tenant: string;
  agent: TaskAgent;
  input: string;
  metadata: Record<string, unknown>;
  /** The agent's model (else the deployment's default) unless given: a fork that keeps its agent keeps its model. */
  model?: string | undefined;
  /** The agent's unless given (a task may only tighten it; the route checks). */
  redactionMode?: RedactionMode | undefined;
  dryRun?: boolean | undefined;
  /** Labels for the retention policy; repeats count once. */
  tags?: readonly string[] | undefined;
  /** retention_days as the request chose it; else the policy decides from the tags (and later the outcome). */
  retentionDays?: number | null | undefined;
  limits?: TaskLimits | undefined;
  webhook?: TaskWebhook | null | undefined;
  trigger?: TaskTrigger | undefined;
  files?: Record<string, string> | undefined;
  /** Seed 004's startup warnings about the agent and the files (rule 4), for the task's first event. */
  warnings?: readonly string[] | undefined;
  /** The task a fork continues. */
  parentTaskId?: string | null | undefined;
  fork?: ForkOrigin | undefined;
  /** A replay: the recorded task's responses (src/tasks/replay.ts). */
  replay?: ReplayState | undefined;
  /** Faults its runs inject (src/faults/); the route has checked the operator allows them. */
  faults?: Faults | undefined;
  /** Who started it (src/tasks/principal.ts): its sub-agents count against that key's creation rate. */
  principal?: TaskPrincipal | undefined;
}

/** The model a task of `agent` runs on: the agent's own, else the deployment's default. */
export function taskModel(agent: Pick<TaskAgent, "model">, env: Pick<Env, "OUTPOST_DEFAULT_MODEL">): string {
  return resolveModel(agent.model, env.OUTPOST_DEFAULT_MODEL);
}

export function taskInit(env: Pick<Env, "OUTPOST_DEFAULT_MODEL" | "OUTPOST_RETENTION">, task: NewTask): TaskInit {
  const tags = [...new Set(task.tags ?? [])];
  const explicit = task.retentionDays ?? null;
  return {
    id: task.id,
    tenant: task.tenant,
    ...(task.fingerprint ? { fingerprint: task.fingerprint } : {}),
    ...(task.webhook !== undefined ? { webhook: task.webhook } : {}),
    ...(task.trigger ? { trigger: task.trigger } : {}),
    redactionMode: task.redactionMode ?? task.agent.redactionMode,
    ...(task.dryRun !== undefined ? { dryRun: task.dryRun } : {}),
    agent: task.agent.name,
    ...(task.agent.runtime ? { runtimeAgent: task.agent.runtime } : {}),
    input: task.input,
    metadata: task.metadata,
    model: task.model ?? taskModel(task.agent, env),
    retentionDays: retentionDays(retentionPolicyOrDefault(env.OUTPOST_RETENTION), { explicit, tags }),
    retentionExplicit: explicit !== null,
    tags,
    parentTaskId: task.parentTaskId ?? null,
    ...(task.limits ? { limits: task.limits } : {}),
    ...(task.fork ? { fork: task.fork } : {}),
    ...(task.replay ? { replay: task.replay } : {}),
    ...(task.faults ? { faults: task.faults } : {}),
    ...(task.principal ? { principal: task.principal } : {}),
    ...(task.files ? { files: task.files } : {}),
    ...(task.warnings && task.warnings.length > 0 ? { warnings: [...task.warnings] } : {}),
  };
}
