// Runs an agent to its end on the durable runtime, and records the outcome. What is run is the run's shape: a task's
// one run (its input; the outcome is the terminal status and event, written together before anything else is
// attempted), or a session's turn (src/sessions/: the turn's message on the conversation so far; the outcome ends the
// turn and the session is ready again). The task host picks the shape by what the object holds.
import type { Agent } from "../agents/agent.ts";
import type { AgentContext } from "../agents/context.ts";
import { runtimeAgent } from "../agents/file-agents.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { type AgentResult, failureResult } from "../agents/result.ts";
import type { PendingInput } from "../approvals/requests.ts";
import { recordWait } from "../approvals/wait.ts";
import type { PriceTable } from "../config/prices.ts";
import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { RunLimits } from "../contracts/runtime.ts";
import type { SubagentHost } from "../contracts/subagents.ts";
import type { UsageRollup } from "../contracts/usage.ts";
import {
  AwaitingInputError,
  AwaitingProviderError,
  AwaitingSubagentsError,
  toErrorInfo,
  WorkflowError,
} from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Json } from "../lib/json.ts";
import { promptCacheKey } from "../llm/prompt-cache.ts";
import type { ModelProvider } from "../llm/provider.ts";
import { isTerminal } from "../tasks/task.ts";
import { runLimits } from "../tasks/task-limits.ts";
import { RUNTIME_AGENT_STATE_KEY, type TaskState } from "../tasks/task-state.ts";
import type { TaskRecord, TaskStore } from "../tasks/task-store.ts";
import { Toolbox } from "../tools/toolbox.ts";
import { toAgentPath } from "../workspace/paths.ts";
import type { Workspace } from "../workspace/workspace.ts";
import type { RunEnvironment } from "./run-environment.ts";
import type { RunRuntime } from "./run-runtime.ts";

/**
 * The agent a run of `task` runs: the version of the tenant's own agent the task recorded when it was created, else
 * the Worker's agent of that name if the tenant may still see it (AgentNotFoundError otherwise).
 */
export function taskAgent(task: TaskRecord, state: Pick<TaskState, "get">, registry: AgentRegistry): Agent {
  const record = state.get(RUNTIME_AGENT_STATE_KEY);
  return record ? runtimeAgent(record) : registry.createFor(task.assigned_agent, task.tenant);
}

export interface RunnerDeps {
  store: TaskStore;
  events: EventLog;
  workspace: Workspace;
  /** Runs writes atomically (the object's transactionSync). */
  transaction: <T>(fn: () => T) => T;
  /** What the run takes from its deployment: the redactor, providers, prices, secrets, outbound policy, skills. */
  environment: RunEnvironment;
  /** The task's agent (taskAgent below). */
  agent: (task: TaskRecord) => Agent;
  /**
   * Built inside the run so a provider that is not configured fails the run with a clear error, not the object.
   * `providerWaitMs`: how long one model call may wait out its provider (src/runtime/provider-retry.ts).
   */
  runtime: (prices: PriceTable, limits: RunLimits, provider: ModelProvider, providerWaitMs: number) => RunRuntime;
  /** Stores what the run waits for (PendingInput), inside the transaction that moves it to input_required. */
  pendingInput: (pending: PendingInput) => void;
  /** What this run is: null when there is nothing to run (a session between turns). */
  shape: (task: TaskRecord) => Promise<RunShape | null>;
  /** The task's sub-agents (the Task tool), and how the run stops until one ends; absent where a run cannot delegate. */
  delegation?: { subagents: SubagentHost; awaitSubagents: () => void };
  /** The task's usage with its sub-agents' (null when it delegated nothing): its terminal event carries it. */
  usageRollup?: () => UsageRollup | null;
  /** What sends an MCP server's requests, where not the global fetch (a run with an MCP fault: src/faults/). */
  mcpTransport?: (server: string) => ((request: Request) => Promise<Response>) | undefined;
}

/** What a run does with its agent: the input and the conversation it starts from, and how it records its outcome. */
export interface RunShape {
  /** What the agent is asked: the task's input, or the turn's message. */
  input: string;
  /** A conversation to continue (a fork's, a session's), or undefined to start from `input` alone. */
  startFrom: AgentContext["startFrom"];
  /** Records the outcome; called once the agent has returned (or failed) and its tools are closed. */
  finish(result: AgentResult): Promise<void>;
}

/** Longest final_summary carried by a run_finished event. */
const MAX_SUMMARY_CHARS = 256 * 1024;

export async function runTask(deps: RunnerDeps): Promise<void> {
  const { store, events } = deps;
  const task = store.get();
  // A task that waits for a person runs again only through resume.
  if (!task || isTerminal(task.status) || task.status === "input_required" || task.status === "ready") return;
  const shape = await deps.shape(task);
  if (!shape) return;
  let result: AgentResult;
  let tools: Toolbox | undefined;
  try {
    // The tenant is checked again at every run, not only when the task was created: a deploy that takes the agent
    // from this tenant (e.g. it now carries another tenant's MCP credentials) stops its queued and waiting tasks too.
    const agent = deps.agent(task);
    // The stricter of the task's and the agent's: the API refuses a task that would loosen its agent's limits, and a
    // fork onto another agent inherits its origin's, which may be looser than the new agent's.
    const limits: RunLimits = runLimits(task.limits, agent);
    if (store.markRunning()) {
      events.append("run_started", {
        task: shape.input,
        agent: agent.name,
        provider: agent.llmConfig?.provider ?? "anthropic",
        model: task.model,
        dry_run: task.dry_run,
        max_turns: limits.maxTurns,
        max_budget_usd: limits.maxBudgetUsd,
        max_tokens: limits.maxTokens,
      });
    } else {
      events.append("run_resumed", { agent: agent.name });
    }
    const { environment } = deps;
    const subagents = deps.delegation?.subagents ?? null;
    const prices = environment.prices();
    const waitMs = environment.providerWaitMs(agent.providerWaitSeconds);
    const runtime = deps.runtime(prices, limits, await environment.provider(agent.llmConfig), waitMs);
    tools = new Toolbox(agent.toolDeclaration(), {
      taskId: task.id,
      runtime,
      secret: environment.secret,
      // An agent the tenant added at runtime never reaches the operator's private hosts, only its tenant's.
      outbound: environment.outbound({ tenant: task.tenant, runtimeAgent: agent.runtime !== null }),
      workspace: deps.workspace,
      redactor: environment.redactor,
      subagents,
      knowledge: agent.knowledgeTools.length > 0 ? environment.knowledge(task.tenant) : null,
      ...(deps.mcpTransport ? { mcpTransport: deps.mcpTransport } : {}),
    });
    await tools.open();
    const context: AgentContext = {
      taskId: task.id,
      input: shape.input,
      workspace: toAgentPath(agent.settings.workingDirectory),
      branch: typeof task.metadata.branch === "string" ? task.metadata.branch : undefined,
      config: {
        model: task.model,
        prices,
        limits,
        // Only an OpenAI-compatible agent sends one: no other run pays for the hash.
        cacheKey:
          agent.llmConfig?.provider === "openai_compatible"
            ? await promptCacheKey(task.tenant, agent.name, agent.runtime?.version ?? null)
            : null,
      },
      extra: task.metadata,
      runtime,
      tools,
      startFrom: shape.startFrom,
      skills: environment.skills,
      dryRun: task.dry_run,
      subagents,
    };
    result = await agent.execute(context);
  } catch (error) {
    // A tool call waits for a person: the run stops here, at no cost, until POST /v1/tasks/:id/resume.
    if (error instanceof AwaitingInputError) {
      await tools?.close();
      recordWait(deps, error);
      return;
    }
    // A model call waits out its provider: the run stops, holding nothing, until its provider_wait timer (already set).
    if (error instanceof AwaitingProviderError) {
      await tools?.close();
      return;
    }
    // A Task call waits for its sub-agent: the run stops, holding nothing, until the child's end starts it again.
    if (error instanceof AwaitingSubagentsError && deps.delegation) {
      await tools?.close();
      deps.delegation.awaitSubagents();
      return;
    }
    // A cancel (or a session's close) already wrote the outcome; any other error, CanceledError included, fails
    // the run.
    const now = store.get()?.status;
    if (now === undefined || isTerminal(now)) {
      await tools?.close();
      return;
    }
    result = failureResult([toErrorInfo(error)], store.get()?.usage ?? task.usage);
  }
  // Seed 002 cleanup: sessions end, and mcp_servers_disconnected comes before the terminal event.
  await tools?.close();
  await shape.finish(result);
}

/**
 * A task's one run: its input, a fork's conversation or an invocation's context, and the terminal status and event
 * as its outcome; an invocation's terminal event carries its ExecutionResult (`invocation`: it from the run's
 * result).
 */
/** The validated answer of an agent with a response_format (the tool loop puts it in the result's metadata). */
export function structuredOutputOf(result: AgentResult): Json | null {
  return result.success && result.metadata.structured_output !== undefined
    ? (result.metadata.structured_output as Json)
    : null;
}

export function taskRunShape(
  deps: Pick<RunnerDeps, "store" | "events" | "transaction" | "usageRollup">,
  task: TaskRecord,
  startFrom: AgentContext["startFrom"],
  invocation?: (result: AgentResult) => ExecutionResult,
): RunShape {
  return {
    input: task.input,
    startFrom,
    finish: async (result) => finishTask(deps, result, invocation?.(result)),
  };
}

/**
 * Writes the outcome once: the status check-and-set and the terminal event commit together or not at all, and
 * everything read from the agent's result is read before either is written.
 */
export function finishTask(
  deps: Pick<RunnerDeps, "store" | "events" | "transaction" | "usageRollup">,
  result: AgentResult,
  executionResult?: ExecutionResult,
): void {
  const { store, events } = deps;
  const success = result.success;
  const output = result.output;
  const metadata = result.metadata;
  const errors = result.errors;
  const first = errors[0] ?? new WorkflowError("The run failed without a reported error.").toJSON();
  // A task that delegated: its usage with its sub-agents'; a task that did not keeps the events it always had.
  const rolledUp = () => {
    const rollup = deps.usageRollup?.() ?? null;
    return rollup ? { usage_rollup: rollup } : {};
  };
  deps.transaction(() => {
    if (success) {
      const structured = structuredOutputOf(result);
      if (
        !store.finish("completed", { result: output, ...(structured === null ? {} : { structuredOutput: structured }) })
      ) {
        return;
      }
      events.append("run_finished", {
        turn_index: typeof metadata.turns === "number" ? metadata.turns : null,
        // The whole result is in the task and final_summary.md; the event stays well inside a storage row.
        final_summary: output.length > MAX_SUMMARY_CHARS ? output.slice(0, MAX_SUMMARY_CHARS) : output,
        final_summary_truncated: output.length > MAX_SUMMARY_CHARS,
        usage: store.get()?.usage,
        ...rolledUp(),
        metadata,
        ...(executionResult ? { execution_result: executionResult } : {}),
      });
      return;
    }
    if (!store.finish("failed", { error: first, ...(output ? { result: output } : {}) })) return;
    events.append("run_failed", {
      reason: first.message,
      error: first,
      errors,
      usage: store.get()?.usage,
      ...rolledUp(),
      ...(executionResult ? { execution_result: executionResult } : {}),
    });
  });
}
