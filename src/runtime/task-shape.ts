// What a task's run is asked, and what it starts from: its input; a fork's conversation up to the fork point; or an
// invocation's context (seed 004 invoke_once), whose ExecutionResult is its outcome. A session's turn has its own
// (src/sessions/).
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { emptyUsage, type UsageRollup } from "../contracts/usage.ts";
import type { EventLog } from "../events/event-log.ts";
import { FORK_STATE_KEY, INVOCATION_STATE_KEY, type TaskState } from "../tasks/task-state.ts";
import type { TaskRecord, TaskStore } from "../tasks/task-store.ts";
import type { MessageLog } from "./conversation.ts";
import { executionResult, runOutcome } from "./execution-result.ts";
import { type RunShape, structuredOutputOf, taskRunShape } from "./runner.ts";

export interface TaskShapeDeps {
  store: TaskStore;
  events: EventLog;
  state: Pick<TaskState, "get">;
  conversation: MessageLog;
  transaction: <T>(fn: () => T) => T;
  /** The task's usage with its sub-agents' (null when it delegated nothing): its terminal event shows it. */
  usageRollup?: (() => UsageRollup | null) | undefined;
}

/** A task's run: its input, a fork's conversation up to the fork point, or an invocation's context. */
export function taskShape(deps: TaskShapeDeps, task: TaskRecord): RunShape {
  const { store, events, transaction, usageRollup, state, conversation } = deps;
  const writes = { store, events, transaction, ...(usageRollup ? { usageRollup } : {}) };
  const invocation = state.get(INVOCATION_STATE_KEY);
  if (invocation) {
    const first = invocation.context_messages;
    const messages = conversation.contextMessages().slice(0, first + 1);
    return taskRunShape(writes, task, { messages, turn: 0 }, (result) =>
      executionResult(
        conversation.from(first),
        emptyUsage(),
        store.get()?.usage ?? emptyUsage(),
        runOutcome(result),
        structuredOutputOf(result),
      ),
    );
  }
  const origin = state.get(FORK_STATE_KEY);
  // The fork point only: a resumed fork replays its own steps on top of it, as any run does.
  const startFrom = origin
    ? {
        messages: conversation
          .list()
          .slice(0, origin.message_count)
          .map((m): MessageParam => ({ role: m.role, content: m.content })),
        turn: origin.turn,
      }
    : undefined;
  return taskRunShape(writes, task, startFrom);
}
