// Runs a task's agent to its end on the durable runtime, and records the outcome: the terminal status and the
// terminal event are written together, before anything else is attempted.
import type { AgentContext } from "../agents/context.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { type AgentResult, failureResult } from "../agents/result.ts";
import type { PriceTable } from "../config/prices.ts";
import { CanceledError, toErrorInfo } from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import type { TaskStore } from "../tasks/task-store.ts";
import type { RunRuntime } from "./run-runtime.ts";

export interface RunnerDeps {
  store: TaskStore;
  events: EventLog;
  registry: AgentRegistry;
  /** Read inside the run so a bad OUTPOST_PRICES fails the run with config_error rather than the request. */
  prices: () => PriceTable;
  /** Built lazily so a provider that is not configured fails the run with a clear error instead of the object. */
  runtime: () => RunRuntime;
  providerName: string;
}

/** Virtual root of the task's workspace; the workspace tools resolve every path under it. */
export const WORKSPACE_ROOT = "/workspace";

export async function runTask(deps: RunnerDeps): Promise<void> {
  const { store, events } = deps;
  const task = store.get();
  if (!task || task.status === "completed" || task.status === "failed" || task.status === "canceled") return;
  let result: AgentResult;
  try {
    const agent = deps.registry.create(task.assigned_agent);
    if (store.markRunning()) {
      events.append("run_started", {
        task: task.input,
        agent: agent.name,
        provider: deps.providerName,
        model: task.model,
        dry_run: false,
        max_turns: agent.maxTurns,
      });
    } else {
      events.append("run_resumed", { agent: agent.name });
    }
    const runtime = deps.runtime();
    const context: AgentContext = {
      taskId: task.id,
      input: task.input,
      workspace: WORKSPACE_ROOT,
      branch: typeof task.metadata.branch === "string" ? task.metadata.branch : undefined,
      config: { model: task.model, prices: deps.prices() },
      extra: task.metadata,
      runtime,
    };
    result = await agent.execute(context);
  } catch (error) {
    if (error instanceof CanceledError || store.get()?.status === "canceled") return;
    result = failureResult([toErrorInfo(error)], store.get()?.usage ?? task.usage);
  }
  finishTask(deps, result);
}

/** Writes the outcome once: the status check-and-set and the terminal event happen in one synchronous block. */
export function finishTask(deps: Pick<RunnerDeps, "store" | "events">, result: AgentResult): void {
  const { store, events } = deps;
  if (result.success) {
    if (!store.finish("completed", { result: result.output })) return;
    events.append("run_finished", {
      turn_index: typeof result.metadata.turns === "number" ? result.metadata.turns : null,
      final_summary: result.output,
      usage: store.get()?.usage,
      metadata: result.metadata,
    });
    return;
  }
  const first = result.errors[0] ?? toErrorInfo(new Error("The run failed without a reported error."));
  if (!store.finish("failed", { error: first, ...(result.output ? { result: result.output } : {}) })) return;
  events.append("run_failed", {
    reason: first.message,
    error: first,
    errors: result.errors,
    usage: store.get()?.usage,
  });
}
