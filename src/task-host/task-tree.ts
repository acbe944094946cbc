// The task's place in a tree of sub-agents, wired to its object: its delegations (the Task tool), its children's
// forwarded events, and, in a child, its own log forwarded to its parent as it grows and the report of its end. The
// forwarding and the report are timers of the object's ledger (src/runtime/timers.ts). In a root, the places of its
// whole tree (src/subagents/tree-limits.ts), which every task of the tree asks for before a child starts.

import type { Agent } from "../agents/agent.ts";
import { registry } from "../agents/catalog.ts";
import { admitChild } from "../commands/children.ts";
import type { SubagentWaitReport } from "../contracts/subagents.ts";
import type { Env } from "../env.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Redactor } from "../events/redaction.ts";
import { copiedResult } from "../lib/rpc-result.ts";
import type { TaskTimers } from "../runtime/timers.ts";
import { TaskSubagents } from "../subagents/delegations.ts";
import { EventForwarder, ForwardedEventSink } from "../subagents/event-forwarding.ts";
import { ParentReporter } from "../subagents/parent-report.ts";
import { rootBudgets } from "../subagents/tree-budget.ts";
import { defaultTreeBudgetUsd, TreePlaces, type TreeRoot } from "../subagents/tree-limits.ts";
import { PRINCIPAL_STATE_KEY } from "../tasks/principal.ts";
import { isTerminal } from "../tasks/task.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import { runLimits } from "../tasks/task-limits.ts";
import { SUBAGENT_ORIGIN_KEY, type TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { tenantStubFor } from "../tenants/directory.ts";

export interface TaskTreeDeps {
  env: Env;
  /** The deployment's redactor: what a parent's model writes into a delegation is stored redacted. */
  redactor: Pick<Redactor, "text">;
  state: TaskState;
  events: EventLog;
  timers: TaskTimers;
  record: () => TaskRecord | null;
  /** The agent a run of the task runs: its delegations follow its settings and budgets. */
  agent: (task: TaskRecord) => Agent;
  /** What the task waits for from a person, as its view shows it (redacted), or null. */
  pendingInput: () => SubagentWaitReport["pending"];
  transaction: <T>(fn: () => T) => T;
  /** Brings the object's timers up to date (the supervisor's armOutbox): an ended child's report is due. */
  rearm: () => Promise<void>;
}

export interface TaskTree {
  subagents: TaskSubagents;
  /** In a root: the places its tree has given (asked for over RPC by the tasks below it). */
  places: TreePlaces;
  forwarded: ForwardedEventSink;
  forwarder: EventForwarder;
  parentReport: ParentReporter;
}

export function taskTree(deps: TaskTreeDeps): TaskTree {
  const { env, state, events, timers } = deps;
  const requireRecord = () => {
    const record = deps.record();
    if (!record) throw new Error("This object holds no task.");
    return record;
  };
  const places = new TreePlaces({
    state,
    transaction: deps.transaction,
    holds: () => deps.record() !== null,
    ended: () => isTerminal(requireRecord().status),
  });
  // The root's places: this object's own, or, in a child, its root's (its parent's, for a child started before roots
  // were recorded).
  const root = (): TreeRoot => {
    const origin = state.get(SUBAGENT_ORIGIN_KEY);
    if (!origin) return places;
    const stub = taskStubFor(env, requireRecord().tenant, origin.root_task_id ?? origin.parent_task_id);
    return {
      admit: async (childId, limit) => copiedResult(await stub.admitToTree(childId, limit)),
      release: (childId) => stub.leaveTree(childId),
    };
  };
  const subagents = new TaskSubagents({
    env,
    registry,
    state,
    events,
    redactor: deps.redactor,
    admitChild: (childId) =>
      admitChild(
        {
          env,
          root,
          rootTaskId: () => {
            const origin = state.get(SUBAGENT_ORIGIN_KEY);
            return origin ? (origin.root_task_id ?? origin.parent_task_id) : requireRecord().id;
          },
          principal: () => state.get(PRINCIPAL_STATE_KEY),
        },
        childId,
      ),
    task: requireRecord,
    allowedAgents: () => deps.agent(requireRecord()).settings.subagents.agents,
    maxParallel: () => deps.agent(requireRecord()).settings.subagents.max_parallel,
    budgets: () => {
      const task = requireRecord();
      // A root that sets no budget shares the deployment's default tree budget among its sub-agents.
      const isRoot = state.get(SUBAGENT_ORIGIN_KEY) === undefined;
      return rootBudgets(runLimits(task.limits, deps.agent(task)), isRoot ? defaultTreeBudgetUsd(env) : null);
    },
    tenantAgent: async (name, version) => {
      const tenant = tenantStubFor(env, requireRecord().tenant);
      const result = version === null ? await tenant.agent(name) : await tenant.agentAt(name, version);
      if (!result) return null;
      const { version: stored, definition, warnings } = copiedResult(result);
      return { version: stored, definition, warnings };
    },
    transaction: deps.transaction,
  });
  const forwarder = new EventForwarder({
    env,
    state,
    events,
    task: deps.record,
    wake: async (at) => {
      timers.setEarliest("forwarding", at);
      await timers.arm();
    },
    forwardedAll: deps.rearm,
  });
  events.onAppended(() => forwarder.poke());
  const forwarded = new ForwardedEventSink({
    events,
    record: deps.record,
    delegations: () => subagents.list(),
    transaction: deps.transaction,
  });
  const parentReport = new ParentReporter({
    env,
    state,
    task: deps.record,
    forwarded: () => forwarder.caughtUp(),
    usageRollup: () => subagents.usageRollup(),
    pending: deps.pendingInput,
  });
  return { subagents, places, forwarded, forwarder, parentReport };
}
