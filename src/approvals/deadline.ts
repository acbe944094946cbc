// The approval timeout (an agent's approvalTimeoutSeconds and onApprovalTimeout). A waiting task keeps no heartbeat,
// so its object can sleep for days; only the request's deadline wakes it. When no one answered by then, the call is
// rejected and the run goes on (it ends through its own loop), or the run fails, as the agent says.
import type { AgentUsage } from "../contracts/usage.ts";
import type { ErrorInfo } from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import type { TypedState } from "../lib/state-key.ts";
import { type DecisionInput, type HumanDecision, PENDING_INPUT_KEY, requestIdOf } from "./requests.ts";
import { recordDecision } from "./resume.ts";

/** When the request the task waits for expires (epoch ms), or null when it waits without a deadline. */
export function approvalDueAt(state: Pick<TypedState, "get">): number | null {
  const pending = state.get(PENDING_INPUT_KEY);
  return pending?.expires_at ? Date.parse(pending.expires_at) : null;
}

export interface DeadlineDeps {
  state: Pick<TypedState, "get" | "put">;
  store: { finish(status: "failed", outcome: { error: ErrorInfo }): boolean; get(): { usage: AgentUsage } | null };
  events: Pick<EventLog, "append">;
  /** Runs writes atomically. */
  transaction: <T>(fn: () => T) => T;
  /** The agent's onApprovalTimeout; throws when the agent is gone (removed by a deploy). */
  onTimeout: () => "reject" | "fail";
  /** Answers the request as a person would, and lets the run go on (the supervisor's resume). */
  resume: (decision: DecisionInput) => Promise<unknown>;
  /** Wakes the object at `at` (epoch ms). */
  wakeAt: (at: number) => Promise<void>;
  /**
   * A session's turn waits, not a task's run: "fail" fails the turn (after the decision is on record), and the
   * session goes on with its next message.
   */
  failTurn?: ((error: ErrorInfo) => Promise<void>) | undefined;
}

/**
 * What the deadline alarm did: nothing (no deadline, or not yet: the alarm is set for it), rejected the call, or
 * failed the run (`ended`: this alarm ended it, rather than finding it ended already).
 */
export type DeadlineOutcome = { kind: "none" } | { kind: "rejected" } | { kind: "run_failed"; ended: boolean };

/** The approval wait ran out: the call is rejected and the run goes on, or the run fails (onApprovalTimeout). */
export async function approvalDeadline(deps: DeadlineDeps): Promise<DeadlineOutcome> {
  const pending = deps.state.get(PENDING_INPUT_KEY);
  if (!pending?.expires_at) return { kind: "none" };
  const due = Date.parse(pending.expires_at);
  if (Date.now() < due) {
    await deps.wakeAt(due);
    return { kind: "none" };
  }
  // An agent removed by a deploy cannot say; a rejection lets the run end through its own loop.
  let onTimeout: "reject" | "fail" = "reject";
  try {
    onTimeout = deps.onTimeout();
  } catch {
    // keep "reject"
  }
  if (onTimeout === "reject") {
    await deps.resume({
      request_id: requestIdOf(pending),
      action: "reject",
      message: "No one answered before the approval timeout.",
      tool_input: null,
      state_updates: null,
      decided_by: "timeout",
    });
    return { kind: "rejected" };
  }
  const { store, events } = deps;
  const error: ErrorInfo = {
    code: "approval_timeout",
    message: `No one answered ${pending.tool_name}'s request before its deadline (${pending.expires_at}).`,
    type: "LimitExceededError",
    retryable: false,
  };
  // The timeout decided: on record like any decision (a late answer to the request gets already_decided), then
  // the run's end.
  const decision: HumanDecision = {
    request_id: requestIdOf(pending),
    action: "fail",
    message: error.message,
    tool_input: null,
    state_updates: null,
    decided_by: "timeout",
    decided_at: new Date().toISOString(),
  };
  if (deps.failTurn) {
    deps.transaction(() => recordDecision({ state: deps.state, events }, pending, decision));
    await deps.failTurn(error);
    return { kind: "run_failed", ended: false };
  }
  const ended = deps.transaction(() => {
    if (!store.finish("failed", { error })) return false;
    recordDecision({ state: deps.state, events }, pending, decision);
    events.append("run_failed", { reason: error.message, error, errors: [error], usage: store.get()?.usage });
    return true;
  });
  return { kind: "run_failed", ended };
}
