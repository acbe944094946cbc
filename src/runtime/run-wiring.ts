// What the supervisor is given (SupervisorDeps), and what each run of the task is given from it (RunnerDeps): the
// task's storage, the deployment's environment with the task's faults wrapped around its provider, the agent, what
// the run is (a task's shape or a session's turn), its durable runtime, and its sub-agents.
import { z } from "zod";
import type { Agent } from "../agents/agent.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { PENDING_INPUT_KEY } from "../approvals/requests.ts";
import type { SubagentHost } from "../contracts/subagents.ts";
import type { UsageRollup } from "../contracts/usage.ts";
import type { ErrorInfo } from "../errors.ts";
import type { FaultInjector } from "../faults/fault-injector.ts";
import { stateKey } from "../lib/state-key.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import type { RunEnvironment } from "./run-environment.ts";
import { RunRuntime, type TaskStorage } from "./run-runtime.ts";
import type { RunnerDeps, RunShape } from "./runner.ts";
import type { Outbox } from "./task-alarm.ts";
import { taskShape } from "./task-shape.ts";

/** Set while the run has stopped until a sub-agent ends: no heartbeat resumes it meanwhile, only the child's report. */
export const AWAITING_SUBAGENTS_KEY = stateKey("awaiting_subagents", z.boolean());

export interface SupervisorDeps extends TaskStorage {
  /** What runs take from the deployment (src/runtime/run-environment.ts), built once per object. */
  environment: RunEnvironment;
  /** The object's transactionSync. */
  transactionSync: <T>(fn: () => T) => T;
  /** After a rolled-back transaction: every part of the storage reads it again. */
  forget: () => void;
  /**
   * What leaves the object on its own schedule, each a timer: the task's callbacks (src/callbacks/outbox.ts), its
   * entry in the tenant's directory (src/task-host/directory-report.ts), a sub-agent's events and end. Armed whenever
   * the task changes status.
   */
  outbox: Outbox;
  registry: AgentRegistry;
  /** False once the task has expired (its storage, ledger included, is gone). */
  alive: () => boolean;
  /** Deletes everything the task has (storage and R2), leaving a tombstone. */
  expire: () => Promise<void>;
  /** The faults the task asked for, injected into each of its runs (src/faults/); null when it asked for none. */
  faults?: () => FaultInjector | null;
  /** A session's run: its current turn (src/sessions/), or null when no turn is under way. */
  turnShape?: () => Promise<RunShape | null>;
  /** A session's turn kept crashing, or its approval wait ran out: it fails, and the session goes on. */
  turnCrashed?: (error: ErrorInfo) => Promise<void>;
  /** The task's sub-agents (the Task tool): child tasks in their own objects, which report their end here. */
  subagents?: SubagentHost;
  /** The task's usage with its sub-agents' (null when it delegated nothing): its terminal event and bundle show it. */
  usageRollup?: () => UsageRollup | null;
  /** The agent a run of the task runs, when it is not taskAgent()'s (a workflow's task runs its workflow agent). */
  agentFor?: (task: TaskRecord) => Agent | null;
  /** OpenTelemetry spans (src/telemetry/): a task's beside its bundle, a session's turn by turn; absent when off. */
  telemetry?: { runEnded(task: TaskRecord): Promise<void>; runStopped(task: TaskRecord): void } | null;
}

/** One run's collaborators, from the supervisor's: `run` is what this run alone has (its abort signal, its faults). */
export function runnerDeps(
  deps: SupervisorDeps,
  run: {
    transaction: <T>(fn: () => T) => T;
    agent: (task: TaskRecord) => Agent;
    taskId: () => string;
    signal: AbortSignal;
    faults: FaultInjector | null;
  },
): RunnerDeps {
  const { environment } = deps;
  const { faults, transaction } = run;
  return {
    store: deps.store,
    events: deps.events,
    workspace: deps.workspace,
    transaction,
    environment: {
      ...environment,
      provider: async (llm) =>
        faults ? faults.provider(await environment.provider(llm, faults.transport)) : environment.provider(llm),
    },
    agent: run.agent,
    ...(faults ? { mcpTransport: (server: string) => faults.mcpTransport(server) } : {}),
    pendingInput: (pending) => deps.state.put(PENDING_INPUT_KEY, pending),
    ...(deps.subagents
      ? {
          delegation: {
            subagents: deps.subagents,
            awaitSubagents: () => deps.state.put(AWAITING_SUBAGENTS_KEY, true),
          },
        }
      : {}),
    ...(deps.usageRollup ? { usageRollup: deps.usageRollup } : {}),
    shape: async (task) => {
      if (task.kind === "task") return taskShape({ ...deps, transaction }, task);
      return deps.turnShape ? deps.turnShape() : null;
    },
    runtime: (prices, limits, provider, providerWaitMs) =>
      new RunRuntime({
        ...deps,
        transaction,
        redactor: environment.redactor,
        taskId: run.taskId(),
        provider,
        prices,
        limits,
        ...(deps.subagents ? { delegated: () => deps.subagents?.spent() ?? { cost_usd: 0, tokens: 0 } } : {}),
        signal: run.signal,
        providerWaitMs,
        faults,
      }),
  };
}
