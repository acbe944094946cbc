// The rules a person's answer goes through (POST /v1/tasks/:id/resume, seed 003 human feedback). A decision names
// the request it answers: another request than the one waiting is pending_input_changed (the reviewer saw something
// else), an answered request replays the recorded decision when it is the same and is already_decided when it is
// not, and a task that waits for nothing is task_not_waiting. Everything is checked and written synchronously, in
// one transaction, so concurrent answers to one request cannot both be taken; the caller then lets the run go on.
import type { RpcFailure } from "../contracts/rpc.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Redactor } from "../events/redaction.ts";
import { canonicalJson } from "../lib/canonical-json.ts";
import type { JsonObject } from "../lib/json.ts";
import type { TypedState } from "../lib/state-key.ts";
import {
  type DecisionInput,
  decisionKey,
  type HumanDecision,
  PENDING_INPUT_KEY,
  type PendingInput,
  pendingRequest,
} from "./requests.ts";

/** What the rules read and write: the task's status and row, its key/value state and its log. */
export interface ResumeDeps {
  /** The task's status now. */
  status: () => string;
  store: { resumeInput(): boolean; setMetadata(metadata: Record<string, unknown>): void };
  state: TypedState;
  events: Pick<EventLog, "append">;
  /** The pending_input a refused decision is shown may hold a secret, like any text the runtime did not write. */
  redactor: Pick<Redactor, "value">;
  /** Runs writes atomically. */
  transaction: <T>(fn: () => T) => T;
}

/** Why a decision is refused: the registry's codes applyDecision can return, which the resume route maps. */
export type DecisionFailure =
  | "already_decided"
  | "task_not_waiting"
  | "pending_input_changed"
  | "message_required"
  | "tool_input_required";

/** What a decision did: recorded now (the run may go on), found recorded before (a replay), or refused. */
export type ResumeResult =
  | { ok: true; decision: HumanDecision; replayed: boolean }
  | { ok: false; error: RpcFailure<DecisionFailure> };

/** Checks `decision` against what the task waits for, and records it with who gave it and when. */
export function applyDecision(deps: ResumeDeps, decision: DecisionInput): ResumeResult {
  const { store, events, state } = deps;
  const fail = (code: DecisionFailure, message: string, details?: JsonObject) =>
    ({ ok: false, error: { code, message, ...(details ? { details } : {}) } }) as const;
  const answered = state.get(decisionKey(decision.request_id));
  if (answered) {
    if (sameDecision(answered, decision)) return { ok: true, decision: answered, replayed: true };
    return fail(
      "already_decided",
      `Request ${decision.request_id} was already answered: ${answered.action} by ${answered.decided_by} at ${answered.decided_at}.`,
      { decision: { request_id: decision.request_id, ...answered } },
    );
  }
  const status = deps.status();
  const pending = pendingRequest(state);
  if (status !== "input_required" || !pending) {
    return fail("task_not_waiting", `The task is ${status}, not waiting for input.`);
  }
  if (pending.request_id !== decision.request_id) {
    return fail(
      "pending_input_changed",
      `The task waits for request ${pending.request_id} (${pending.tool_name}), not ${decision.request_id}: review what it waits for now.`,
      { pending_input: deps.redactor.value(pending) },
    );
  }
  if (pending.kind === "question" && decision.action !== "reject" && !decision.message) {
    return fail("message_required", "An answer to the agent's question needs message: the answer.");
  }
  if (decision.action === "modify" && pending.kind === "approval" && !decision.tool_input && !decision.state_updates) {
    return fail(
      "tool_input_required",
      "modify needs tool_input (the arguments to run the call with), state_updates, or both.",
    );
  }
  const recorded: HumanDecision = { ...decision, decided_at: new Date().toISOString() };
  const resumed = deps.transaction(() => {
    if (!store.resumeInput()) return false;
    // Seed 003: metadata replaces; messages are appended by the run, after this turn's tool results.
    if (decision.state_updates?.metadata) store.setMetadata(decision.state_updates.metadata);
    state.delete(PENDING_INPUT_KEY);
    recordDecision({ state, events }, pending, recorded);
    return true;
  });
  if (!resumed) return fail("task_not_waiting", "The task is no longer waiting for input.");
  return { ok: true, decision: recorded, replayed: false };
}

/** Keeps a decision on `pending` for good and puts it on record (a person's, or the approval timeout's). */
export function recordDecision(
  deps: { state: Pick<TypedState, "put">; events: Pick<EventLog, "append"> },
  pending: PendingInput,
  decision: HumanDecision,
): void {
  deps.state.put(decisionKey(pending.tool_use_id), decision);
  deps.events.append("human_decision", {
    tool_use_id: pending.tool_use_id,
    tool_name: pending.tool_name,
    kind: pending.kind,
    ...decision,
  });
}

/** Whether a decision sent again is the recorded one: the same answer, whoever sends it and whenever. */
function sameDecision(
  recorded: HumanDecision,
  sent: Pick<HumanDecision, "action" | "message" | "tool_input" | "state_updates">,
): boolean {
  const answer = (d: Pick<HumanDecision, "action" | "message" | "tool_input" | "state_updates">) =>
    canonicalJson([d.action, d.message ?? null, d.tool_input ?? null, d.state_updates ?? null]);
  return answer(recorded) === answer(sent);
}
