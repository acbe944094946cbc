// A parent's delegations (seed 003 SubAgentSession), on the object's side: each recorded under its Task call's
// tool_use id before its child task is started in its own Durable Object (the child's id is derived from the parent's
// and the call's, so starting it again finds the same child). The parent records each child's outcome once, as the
// child reports it (src/subagents/parent-report.ts), and the report wakes its run (src/runtime/run-supervisor.ts).
// Before a child starts, its tree gives it a place and its root's key a token (src/commands/children.ts). What
// the model wrote (the prompt, the description) is recorded redacted: it is the child's input, and shown.
import { z } from "zod";
import type { Agent } from "../agents/agent.ts";
import { runtimeAgent } from "../agents/file-agents.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import type { RuntimeAgentRecord } from "../contracts/agent-version.ts";
import type {
  SubagentHost,
  SubagentRecord,
  SubagentReport,
  SubagentRequest,
  SubagentWaitReport,
} from "../contracts/subagents.ts";
import { SubtreeUsageSchema, type UsageRollup, usageRollup } from "../contracts/usage.ts";
import type { Env } from "../env.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Redactor } from "../events/redaction.ts";
import { type StateKey, stateKey } from "../lib/state-key.ts";
import { PRINCIPAL_STATE_KEY } from "../tasks/principal.ts";
import { isTerminal, type TaskInit } from "../tasks/task.ts";
import { derivedTaskId, taskStubFor } from "../tasks/task-ids.ts";
import { taskInit } from "../tasks/task-init.ts";
import { SUBAGENT_ORIGIN_KEY, type TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { addSpend, type Budgets, type ChildBudget, childBudget, held, NO_SPEND, type Spend } from "./tree-budget.ts";

type Stored = SubagentRecord & { started: boolean };

/** A delegation as the parent keeps it (SubagentRecord, src/contracts/subagents.ts), and whether its child started. */
export const StoredDelegationSchema = z.lazy(() =>
  z.object({
    tool_use_id: z.string(),
    agent: z.string(),
    description: z.string(),
    prompt: z.string(),
    child_task_id: z.string().nullable(),
    // Delegations recorded before a tenant's own agents could be sub-agents have none (agentOf reads it `?? null`).
    agent_version: z.number().int().nullable().default(null),
    depth: z.number().int(),
    created_at: z.string(),
    outcome: z
      .object({ status: z.enum(["completed", "failed", "canceled"]), summary: z.string(), is_error: z.boolean() })
      .nullable(),
    usage: SubtreeUsageSchema.exactOptional(),
    budget: z
      .object({ max_budget_usd: z.number().exactOptional(), max_tokens: z.number().exactOptional() })
      .exactOptional(),
    waiting: z
      .custom<NonNullable<SubagentWaitReport["pending"]>>(
        (w) => typeof w === "object" && w !== null && "request_id" in w && typeof w.request_id === "string",
        "must be the child's request (request_id, kind, tool_name, question)",
      )
      .nullable()
      .exactOptional(),
    started: z.boolean(),
  }),
) satisfies z.ZodType<Stored, unknown>;

/** In a parent: every delegation, by its Task call's tool_use id. */
const RECORDS_KEY: StateKey<Record<string, Stored>> = stateKey(
  "subagents",
  z.lazy(() => z.record(z.string(), StoredDelegationSchema)),
);
/** In a parent: each child request it has shown, by request id → the child task that holds it. */
const REQUESTS_KEY = stateKey("subagent_requests", z.record(z.string(), z.string()));

/** How deep a tree of delegations may grow: a root task's children are at depth 1. */
export const MAX_SUBAGENT_DEPTH = 3;
/** How many delegations one task may make in all. */
export const MAX_SUBAGENTS_PER_TASK = 50;

export interface SubagentDeps {
  env: Pick<Env, "TASKS" | "OUTPOST_DEFAULT_MODEL" | "OUTPOST_RETENTION">;
  registry: AgentRegistry;
  state: Pick<TaskState, "get" | "put">;
  events: Pick<EventLog, "append">;
  /** The deployment's redactor: a delegation's prompt and description are recorded through it. */
  redactor: Pick<Redactor, "text">;
  /**
   * The check a child passes before it starts, as its tree's root principal (src/commands/children.ts): a place in
   * the tree and a token of the root key's rate; null when it may start, else the refusal for the model.
   */
  admitChild: (childId: string) => Promise<string | null>;
  task: () => TaskRecord;
  /** The agents this task's agent may delegate to (its subagents.agents). */
  allowedAgents: () => readonly string[];
  /** How many children may run at once (its subagents.max_parallel). */
  maxParallel: () => number;
  /** The task's budgets as its run enforces them: its sub-agents' spending counts against them. */
  budgets: () => Budgets;
  /**
   * The tenant's own agent of that name (PUT /v1/agents/:name): its current version when `version` is null, else
   * that version; null when the tenant has none.
   */
  tenantAgent: (name: string, version: number | null) => Promise<RuntimeAgentRecord | null>;
  transaction: <T>(fn: () => T) => T;
}

export class TaskSubagents implements SubagentHost {
  private readonly deps: SubagentDeps;

  constructor(deps: SubagentDeps) {
    this.deps = deps;
  }

  get(toolUseId: string): SubagentRecord | undefined {
    return this.records()[toolUseId];
  }

  running(): number {
    return Object.values(this.records()).filter((r) => r.child_task_id !== null && r.outcome === null).length;
  }

  /** Every delegation, oldest first (seed 003 SubAgentSession, GET /v1/tasks/:id/subagents). */
  list(): SubagentRecord[] {
    return Object.values(this.records())
      .map(({ started: _started, ...record }) => record)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async start(request: SubagentRequest, places = 1): Promise<void> {
    const existing = this.records()[request.tool_use_id];
    if (existing) {
      if (existing.child_task_id !== null && !existing.started) await this.launch(existing);
      return;
    }
    const task = this.deps.task();
    const depth = (this.deps.state.get(SUBAGENT_ORIGIN_KEY)?.depth ?? 0) + 1;
    // The tenant's own agent of that name shadows the Worker's, as for a task the tenant starts; the version is
    // recorded with the delegation, so a replay starts the child on the same one.
    const own = this.allowed(request.agent) ? await this.deps.tenantAgent(request.agent, null) : null;
    let refusal = this.refusal(request.agent, depth, own !== null);
    let budget: ChildBudget | undefined;
    if (!refusal) {
      const share = this.childBudget(places);
      if ("refusal" in share) refusal = share.refusal;
      else budget = share.budget;
    }
    const childId = await derivedTaskId("subagent", task.tenant, task.id, request.tool_use_id);
    // Last, as it reserves: a place in the tree, and a token of the key that started it.
    if (!refusal) refusal = await this.deps.admitChild(childId);
    const redact = (text: string) => this.deps.redactor.text(text);
    const record: Stored = {
      ...request,
      description: redact(request.description),
      prompt: redact(request.prompt),
      child_task_id: refusal ? null : childId,
      agent_version: own?.version ?? null,
      ...(budget && Object.keys(budget).length > 0 ? { budget } : {}),
      depth,
      created_at: new Date().toISOString(),
      outcome: refusal ? { status: "failed", summary: refusal, is_error: true } : null,
      started: false,
    };
    // Recorded first: a run evicted before the child starts finds the record, and starts the same child.
    this.deps.transaction(() => {
      this.deps.state.put(RECORDS_KEY, { ...this.records(), [record.tool_use_id]: record });
      if (record.child_task_id) {
        this.deps.events.append("subagent_started", {
          tool_use_id: record.tool_use_id,
          child_task_id: record.child_task_id,
          agent: record.agent,
          description: record.description,
          depth,
        });
      }
    });
    if (record.child_task_id) await this.launch(record);
  }

  /** Cancels the children still running; one that cannot be reached now is left to end on its own. */
  async cancelRunning(): Promise<void> {
    const task = this.deps.task();
    const running = Object.values(this.records()).filter((r) => r.child_task_id !== null && r.outcome === null);
    await Promise.all(
      running.map(async (record) => {
        try {
          await taskStubFor(this.deps.env, task.tenant, record.child_task_id as string).cancel();
        } catch (error) {
          console.error(
            "canceling a sub-agent failed",
            record.child_task_id,
            error instanceof Error ? error.message : error,
          );
        }
      }),
    );
  }

  /**
   * Records what a child waits for from a person (its report, sent until acknowledged): the parent shows it and
   * answers it through its own resume (childFor). A report of what is already recorded changes nothing.
   */
  waiting(report: SubagentWaitReport): void {
    const records = this.records();
    const record = records[report.tool_use_id];
    if (!record || record.child_task_id !== report.child_task_id || record.outcome !== null) return;
    if (isTerminal(this.deps.task().status)) return;
    const before = record.waiting ?? null;
    if ((before?.request_id ?? null) === (report.pending?.request_id ?? null)) return;
    const base = { tool_use_id: record.tool_use_id, child_task_id: report.child_task_id, agent: record.agent };
    this.deps.transaction(() => {
      this.deps.state.put(RECORDS_KEY, { ...records, [report.tool_use_id]: { ...record, waiting: report.pending } });
      if (before) this.deps.events.append("subagent_input_answered", { ...base, request_id: before.request_id });
      const pending = report.pending;
      if (pending) {
        const requests = this.deps.state.get(REQUESTS_KEY) ?? {};
        this.deps.state.put(REQUESTS_KEY, { ...requests, [pending.request_id]: report.child_task_id });
        this.deps.events.append("subagent_input_requested", {
          ...base,
          request_id: pending.request_id,
          kind: pending.kind,
          tool_name: pending.tool_name,
          question: pending.question ?? null,
        });
      }
    });
  }

  /** The children waiting for a person now, oldest delegation first, with what each waits for. */
  waitingChildren(): { child_task_id: string; pending: NonNullable<SubagentWaitReport["pending"]> }[] {
    return this.list().flatMap((record) =>
      record.waiting && record.child_task_id && record.outcome === null
        ? [{ child_task_id: record.child_task_id, pending: record.waiting }]
        : [],
    );
  }

  /** The child task a request the parent showed belongs to (a decision sent to the parent is its), if any. */
  childFor(requestId: string): string | undefined {
    return this.deps.state.get(REQUESTS_KEY)?.[requestId];
  }

  /** Records a child's reported end once; false when there is nothing to record (unknown, or already recorded). */
  record(report: SubagentReport): boolean {
    const records = this.records();
    const record = records[report.tool_use_id];
    if (!record || record.child_task_id !== report.child_task_id || record.outcome !== null) return false;
    if (isTerminal(this.deps.task().status)) return false;
    const ended: Stored = {
      ...record,
      outcome: report.outcome,
      waiting: null,
      ...(report.usage ? { usage: report.usage } : {}),
    };
    this.deps.state.put(RECORDS_KEY, { ...records, [report.tool_use_id]: ended });
    // A child that ended while the parent still showed its request: that wait is over too.
    if (record.waiting) {
      this.deps.events.append("subagent_input_answered", {
        tool_use_id: record.tool_use_id,
        child_task_id: report.child_task_id,
        agent: record.agent,
        request_id: record.waiting.request_id,
      });
    }
    this.deps.events.append("subagent_finished", {
      tool_use_id: report.tool_use_id,
      child_task_id: report.child_task_id,
      agent: record.agent,
      status: report.outcome.status,
      is_error: report.outcome.is_error,
    });
    return true;
  }

  /**
   * The task's usage with its children's, as each reported it with its end (null while no child has: a task that
   * never delegated carries no rollup). A child that has not reported is not in it yet.
   */
  usageRollup(): UsageRollup | null {
    const reported = this.list().flatMap((record) =>
      record.child_task_id !== null && record.outcome !== null && record.usage
        ? [
            {
              task_id: record.child_task_id,
              tool_use_id: record.tool_use_id,
              status: record.outcome.status,
              usage: record.usage,
            },
          ]
        : [],
    );
    if (reported.length === 0) return null;
    const task = this.deps.task();
    return usageRollup({ agent: task.assigned_agent, model: task.model, usage: task.usage }, reported);
  }

  spent(): Spend {
    let spend = NO_SPEND;
    for (const record of Object.values(this.records())) {
      if (record.outcome === null || !record.usage) continue;
      const total = record.usage.total;
      spend = addSpend(spend, { cost_usd: total.total_cost_usd ?? 0, tokens: total.total_tokens });
    }
    return spend;
  }

  /** A new child's share of what the task's budgets have left (src/subagents/tree-budget.ts). */
  private childBudget(places: number): ReturnType<typeof childBudget> {
    const budgets = this.deps.budgets();
    if (budgets.maxBudgetUsd === null && budgets.maxTokens === null) return { budget: {} };
    const usage = this.deps.task().usage;
    const running = Object.values(this.records()).filter((r) => r.child_task_id !== null && r.outcome === null);
    return childBudget({
      budgets,
      own: { cost_usd: usage.total_cost_usd ?? 0, tokens: usage.total_tokens },
      delegated: this.spent(),
      reserved: running.reduce((sum, r) => addSpend(sum, held(r.budget)), NO_SPEND),
      places: Math.min(places, this.deps.maxParallel() - running.length),
    });
  }

  private allowed(agent: string): boolean {
    return this.deps.allowedAgents().includes(agent);
  }

  private refusal(agent: string, depth: number, tenantOwn: boolean): string | null {
    if (!this.allowed(agent)) {
      const allowed = this.deps.allowedAgents();
      return `This agent may not delegate to "${agent}"; it may delegate to: ${allowed.join(", ") || "none"}.`;
    }
    if (!tenantOwn && !this.deps.registry.visible(agent, this.deps.task().tenant)) {
      return `There is no agent "${agent}" in this deployment.`;
    }
    if (depth > MAX_SUBAGENT_DEPTH) {
      return `Sub-agents may nest ${MAX_SUBAGENT_DEPTH} deep; this one would be at depth ${depth}. Do the work yourself.`;
    }
    if (Object.keys(this.records()).length >= MAX_SUBAGENTS_PER_TASK) {
      return `A task may delegate at most ${MAX_SUBAGENTS_PER_TASK} times; do the rest yourself.`;
    }
    return null;
  }

  /** Starts the child task in its own object (idempotent: its id is the record's). */
  private async launch(record: Stored): Promise<void> {
    const task = this.deps.task();
    const childId = record.child_task_id as string;
    const agent = await this.agentOf(record, task.tenant);
    const init: TaskInit = {
      ...taskInit(this.deps.env, {
        id: childId,
        tenant: task.tenant,
        agent,
        input: record.prompt,
        metadata: {},
        tags: task.tags,
        parentTaskId: task.id,
        ...(record.budget ? { limits: record.budget } : {}),
        // The child counts against the key that started the root, as the root does.
        principal: this.deps.state.get(PRINCIPAL_STATE_KEY),
      }),
      subagent: {
        parent_task_id: task.id,
        tool_use_id: record.tool_use_id,
        depth: record.depth,
        root_task_id: this.rootTaskId(),
      },
    };
    await taskStubFor(this.deps.env, task.tenant, childId).start(init);
    const records = this.records();
    const current = records[record.tool_use_id];
    if (current) this.deps.state.put(RECORDS_KEY, { ...records, [record.tool_use_id]: { ...current, started: true } });
  }

  /** The root of this task's tree: itself, else its origin's root (its parent, for a child started before roots). */
  private rootTaskId(): string {
    const origin = this.deps.state.get(SUBAGENT_ORIGIN_KEY);
    return origin ? (origin.root_task_id ?? origin.parent_task_id) : this.deps.task().id;
  }

  /** The agent a delegation runs: the tenant's version it recorded, else the Worker's agent of that name. */
  private async agentOf(record: Stored, tenant: string): Promise<Agent> {
    const version = record.agent_version ?? null;
    if (version === null) return this.deps.registry.createFor(record.agent, tenant);
    const stored = await this.deps.tenantAgent(record.agent, version);
    if (!stored) throw new Error(`The tenant's agent ${record.agent} v${version} is gone.`);
    return runtimeAgent(stored);
  }

  private records(): Record<string, Stored> {
    return this.deps.state.get(RECORDS_KEY) ?? {};
  }
}
