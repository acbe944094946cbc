// Creating a task inside its Durable Object, once: the durable half of the object's start(), which then launches the
// run. A repeat of the request that created it (the same idempotency key or webhook delivery, hence the same object)
// gets the original response back, and a different request under that id a mismatch. The task's row, its seeded
// files, a fork's inherited conversation and settled tool calls, and its first event commit together, or not at all.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { EventLog } from "../events/event-log.ts";
import { FAULT_STATE_KEY } from "../faults/faults.ts";
import { WorkspaceFullError } from "../workspace/workspace.ts";
import { PRINCIPAL_STATE_KEY } from "./principal.ts";
import type { StartOutcome, TaskInit, TaskView } from "./task.ts";
import {
  FORK_STATE_KEY,
  type ForkState,
  IDEMPOTENCY_KEY,
  INVOCATION_STATE_KEY,
  REPLAY_STATE_KEY,
  RUNTIME_AGENT_STATE_KEY,
  SUBAGENT_ORIGIN_KEY,
  type TaskState,
  WORKFLOW_STATE_KEY,
} from "./task-state.ts";
import type { TaskRecord, TaskStore } from "./task-store.ts";

/**
 * What creating a task writes to; `Stored` is a tool result as the step journal keeps it, `View` what the object
 * answers with (a task's view, or a session's).
 */
export interface CreationDeps<Stored, View> {
  /** Readies the object's storage for a task (its schema); false when a tombstone holds the id (the task expired). */
  open: () => boolean;
  store: Pick<TaskStore, "get" | "create">;
  state: Pick<TaskState, "get" | "put">;
  events: Pick<EventLog, "append">;
  workspace: { seed(files: readonly [string, string][]): void };
  conversation: { record(index: number, message: MessageParam): void };
  journal: { seedCompleted(name: string, stored: Stored): void };
  /** A result as the new task's journal keeps it: over the row limit it goes to R2 first, under the task's id. */
  storeResult: (name: string, result: unknown) => Promise<Stored>;
  /** The run's heartbeat alarm (src/runtime/run-supervisor.ts). */
  armHeartbeat: () => Promise<void>;
  transaction: <T>(fn: () => T) => T;
  view: (task: TaskRecord) => View;
}

/**
 * Creates the task, its seeded files, its first event and its heartbeat alarm; the caller launches the run, or, when
 * the object is reset before that, the heartbeat does. A session (init.session) is created the same way, but ready:
 * it has no run and no alarm until its first message (src/sessions/).
 */
export async function createTask<Stored, View extends object = TaskView>(
  deps: CreationDeps<Stored, View>,
  init: TaskInit,
): Promise<StartOutcome<View>> {
  // An id derived from a key or delivery whose task has expired cannot be given to a new task.
  if (!deps.open()) return { outcome: "expired" };
  const files = Object.entries(init.files ?? {});
  const existing = deps.store.get();
  if (existing) {
    const original = deps.state.get(IDEMPOTENCY_KEY);
    if (init.fingerprint !== undefined && original?.fingerprint !== init.fingerprint) return { outcome: "mismatch" };
    // The view this object answered the creation with: a task's, or a session's (the View of the same object).
    return { outcome: "replayed", task: (original?.response as View | undefined) ?? deps.view(existing) };
  }
  // Inherited results over the row limit go to R2 first (under this task's id), so the transaction stays synchronous.
  const fork = init.fork;
  const settled = fork
    ? await Promise.all(
        Object.entries(fork.settled).map(async ([id, result]) => {
          const name = `turn_${fork.settled_turns?.[id] ?? fork.turn}_tool_${id}`;
          return [name, await deps.storeResult(name, result)] as const;
        }),
      )
    : [];
  // The heartbeat comes first: from the commit on, the task is never without one (an alarm that finds no task,
  // because the commit did not happen, does nothing).
  if (!init.session) await deps.armHeartbeat();
  // Seed files that do not fit the workspace (the Worker checks them first) are refused as a value: an exception
  // would reach the client as a 500.
  let created: boolean;
  try {
    created = deps.transaction(() => {
      if (!deps.store.create(init)) return false;
      const task = requireTask(deps);
      // The version of a tenant's own agent the task runs, whatever versions come after (src/contracts/agent-version.ts).
      if (init.runtimeAgent) deps.state.put(RUNTIME_AGENT_STATE_KEY, init.runtimeAgent);
      if (init.subagent) deps.state.put(SUBAGENT_ORIGIN_KEY, init.subagent);
      if (init.principal) deps.state.put(PRINCIPAL_STATE_KEY, init.principal);
      if (init.workflow) deps.state.put(WORKFLOW_STATE_KEY, init.workflow);
      if (init.replay) deps.state.put(REPLAY_STATE_KEY, init.replay);
      if (init.faults) deps.state.put(FAULT_STATE_KEY, { faults: init.faults, fired: {} });
      deps.workspace.seed(files);
      if (init.context) {
        // The context, then the input as the next user message: the run continues from there.
        const messages: MessageParam[] = [...init.context, { role: "user", content: init.input }];
        for (const [index, message] of messages.entries()) deps.conversation.record(index, message);
        deps.state.put(INVOCATION_STATE_KEY, { context_messages: init.context.length });
      }
      if (init.fork) {
        for (const [index, message] of init.fork.messages.entries()) deps.conversation.record(index, message);
        // The ledger of settled tool calls carries over: the fork replays these results instead of running the calls.
        for (const [name, stored] of settled) deps.journal.seedCompleted(name, stored);
        const origin: ForkState = {
          task_id: init.fork.task_id,
          checkpoint_id: init.fork.checkpoint_id,
          turn: init.fork.turn,
          // The fork point: a resumed fork replays its own steps on top of these messages, never past them.
          message_count: init.fork.messages.length,
          ...(init.fork.uncertain && Object.keys(init.fork.uncertain).length > 0
            ? { uncertain: init.fork.uncertain }
            : {}),
        };
        deps.state.put(FORK_STATE_KEY, origin);
      }
      if (init.session) {
        deps.events.append("session_created", {
          session_id: task.id,
          agent: task.assigned_agent,
          metadata: task.metadata,
          model: task.model,
          busy: init.session.busy,
          files: files.map(([path]) => path.slice(1)),
          ...(init.warnings ? { warnings: init.warnings } : {}),
        });
      } else
        deps.events.append("task_created", {
          task_id: task.id,
          agent: task.assigned_agent,
          input: task.input,
          metadata: task.metadata,
          model: task.model,
          parent_task_id: task.parent_task_id,
          files: files.map(([path]) => path.slice(1)),
          ...(init.trigger ? { trigger: init.trigger } : {}),
          ...(init.warnings ? { warnings: init.warnings } : {}),
          ...(init.fork
            ? {
                forked_from: { task_id: init.fork.task_id, checkpoint_id: init.fork.checkpoint_id },
                settled_tool_calls: Object.keys(init.fork.settled),
                uncertain_tool_calls: Object.keys(init.fork.uncertain ?? {}),
              }
            : {}),
        });
      if (init.fingerprint !== undefined) {
        deps.state.put(IDEMPOTENCY_KEY, { fingerprint: init.fingerprint, response: deps.view(requireTask(deps)) });
      }
      return true;
    });
  } catch (error) {
    if (error instanceof WorkspaceFullError) return { outcome: "workspace_full", message: error.message };
    throw error;
  }
  const task = requireTask(deps);
  if (!created) return { outcome: "replayed", task: deps.view(task) };
  return { outcome: "created", task: deps.view(task) };
}

function requireTask(deps: Pick<CreationDeps<unknown, unknown>, "store">): TaskRecord {
  const task = deps.store.get();
  if (!task) throw new Error("This object holds no task.");
  return task;
}
