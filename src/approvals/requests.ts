// What a run asks a person for and what the person answers (seed 003 human feedback): the pending request, the
// decision, and where both are kept in the task's key/value state. The request waits under PENDING_INPUT_KEY while
// the task is input_required; each decision is kept per request for good, so a replay and a repeated answer agree.

/** A request for a person (seed 003 human feedback): approve a tool call, or answer the agent's question. */
export interface PendingInput {
  kind: "approval" | "question";
  /**
   * What a decision names to answer this request (POST /v1/tasks/:id/resume request_id): the waiting call's
   * tool_use id, unique within the task. A decision for another request never applies to this one.
   */
  request_id: string;
  tool_use_id: string;
  tool_name: string;
  input: unknown;
  /** The agent's question (kind question). */
  question: string | null;
  requested_at: string;
  /** When the wait ends by itself (the agent's approvalTimeoutSeconds), or null. */
  expires_at: string | null;
  /** Why a person is asked when it is not the agent's permissions (a call whose earlier outcome is unknown). */
  reason?: string;
}

/**
 * A person's answer (POST /v1/tasks/:id/resume), kept per request (the tool_use id). "fail" is the approval
 * timeout's own decision when the agent says a timeout fails the run.
 */
export interface HumanDecision {
  /** The request it answers (PendingInput.request_id); absent on decisions stored before request ids existed. */
  request_id?: string;
  action: "approve" | "reject" | "modify" | "fail";
  message: string | null;
  tool_input: Record<string, unknown> | null;
  /** Seed 003 state_updates: messages appended after the turn's tool results; metadata replaces the task's. */
  state_updates: HumanStateUpdates | null;
  decided_by: string;
  decided_at: string;
}

export interface HumanStateUpdates {
  messages?: { role: "user"; content: string | { type: "text"; text: string }[] }[] | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** A decision as sent: it names its request, and the time it is recorded at is the runtime's. */
export type DecisionInput = Omit<HumanDecision, "decided_at" | "request_id"> & { request_id: string };

/** The part of the task's key/value state (src/tasks/task-state.ts) that requests and decisions live in. */
export interface DecisionState {
  get<T>(key: string): T | undefined;
  put(key: string, value: unknown): void;
  delete(key: string): void;
}

/** What a task waiting for a person waits for (PendingInput), while its status is input_required. */
export const PENDING_INPUT_KEY = "pending_input";
/** A person's decision on a tool call: `decision:<tool_use_id>` → HumanDecision. */
export const decisionKey = (toolUseId: string): string => `decision:${toolUseId}`;

/** The request id of a stored request; requests stored before request ids existed are named by their call. */
export function requestIdOf(pending: Omit<PendingInput, "request_id"> & { request_id?: string }): string {
  return pending.request_id ?? pending.tool_use_id;
}

/** The request the task waits for, named by its request id; undefined when it waits for none. */
export function pendingRequest(state: Pick<DecisionState, "get">): PendingInput | undefined {
  const stored = state.get<PendingInput>(PENDING_INPUT_KEY);
  return stored ? { ...stored, request_id: requestIdOf(stored) } : undefined;
}
