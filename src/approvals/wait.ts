// Both ends of a wait for a person. Inside the run, a tool call that needs an answer records a checkpoint and throws
// AwaitingInputError, which unwinds the agent's loop without failing it; the runner then moves the task to
// input_required with the request stored, at no cost until POST /v1/tasks/:id/resume.
import type { ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { EventPayload } from "../contracts/events.ts";
import type { ToolRuntime } from "../contracts/runtime.ts";
import { AwaitingInputError } from "../errors.ts";
import type { EventLog } from "../events/event-log.ts";
import type { Json } from "../lib/json.ts";
import type { PendingInput } from "./requests.ts";

/** What a waiting run stores and puts on record (input_requested): the PendingInput, with the turn it waits in. */
export type InputRequest = EventPayload<"input_requested">;

/** What a call waits for. */
export interface WaitRequest {
  kind: "approval" | "question";
  use: ToolUseBlock;
  turnIndex: number;
  question: string | null;
  /** Why a person is asked when it is not the agent's permissions. */
  reason?: string;
}

/**
 * Records what the run waits for as a checkpoint, and stops the run (status input_required) by throwing. A wait
 * with `timeoutSeconds` expires that long from now (see deadline.ts).
 */
export function waitForPerson(
  runtime: Pick<ToolRuntime, "checkpoint">,
  timeoutSeconds: number | null,
  request: WaitRequest,
): never {
  const now = Date.now();
  const pending: PendingInput = {
    kind: request.kind,
    // The call's id is unique within the task, and the same on every replay of this step.
    request_id: request.use.id,
    tool_use_id: request.use.id,
    tool_name: request.use.name,
    // The SDK types a tool call's input as unknown; it is the JSON the model sent.
    input: request.use.input as Json,
    question: request.question,
    requested_at: new Date(now).toISOString(),
    expires_at: timeoutSeconds ? new Date(now + timeoutSeconds * 1000).toISOString() : null,
    ...(request.reason ? { reason: request.reason } : {}),
    turn_index: request.turnIndex,
  };
  // Seed 003: the wait is a checkpoint of its own (awaiting_human), which a fork can continue from.
  runtime.checkpoint(
    `turn_${request.turnIndex}_await_${request.use.id}`,
    "tool_calls",
    { turn: request.turnIndex },
    true,
  );
  throw new AwaitingInputError(
    request.kind === "approval" ? `Tool ${request.use.name} waits for approval.` : "The agent waits for an answer.",
    pending,
  );
}

/** What recording a wait writes: the task's status, the stored request and the log, in one transaction. */
export interface WaitRecordDeps {
  store: { awaitInput(): boolean };
  events: Pick<EventLog, "append">;
  transaction: <T>(fn: () => T) => T;
  /** Stores what the run waits for (under PENDING_INPUT_KEY). */
  pendingInput: (pending: PendingInput) => void;
}

/** After the run stopped at waitForPerson: the request, the status and the event change together. */
export function recordWait(deps: WaitRecordDeps, stopped: AwaitingInputError): void {
  // waitForPerson, the error's only thrower, built what it carries as an InputRequest.
  const pending = stopped.pending as InputRequest;
  deps.transaction(() => {
    // Only for a run that is still running (a cancel may have ended it meanwhile).
    if (!deps.store.awaitInput()) return;
    deps.pendingInput(pending);
    deps.events.append("input_requested", pending);
  });
}
