// The task's place in a tree of sub-agents, wired to its object: its delegations (the Task tool), its children's
// forwarded events, and, in a child, its own log forwarded to its parent as it grows and the report of its end. The
// forwarding and the report are timers of the object's ledger (src/runtime/timers.ts).

import type { Agent } from "../agents/agent.ts";
import { registry } from "../agents/catalog.ts";
import type { SubagentWaitReport } from "../contracts/subagents.ts";
import type { Env } from "../env.ts";
import type { EventLog } from "../events/event-log.ts";
import { copiedResult } from "../lib/rpc-result.ts";
import type { TaskTimers } from "../runtime/timers.ts";
import { TaskSubagents } from "../subagents/delegations.ts";
import { EventForwarder, ForwardedEventSink } from "../subagents/event-forwarding.ts";
import { ParentReporter } from "../subagents/parent-report.ts";
import { runLimits } from "../tasks/task-limits.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { tenantStubFor } from "../tenants/directory.ts";

export interface TaskTreeDeps {
  env: Env;
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
  const subagents = new TaskSubagents({
    env,
    registry,
    state,
    events,
    task: requireRecord,
    allowedAgents: () => deps.agent(requireRecord()).settings.subagents.agents,
    maxParallel: () => deps.agent(requireRecord()).settings.subagents.max_parallel,
    budgets: () => {
      const task = requireRecord();
      return runLimits(task.limits, deps.agent(task));
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
  return { subagents, forwarded, forwarder, parentReport };
}
