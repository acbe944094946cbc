// A person's answer to what a run waits for, the command behind POST /v1/tasks/:id/resume, a session's resume and an
// A2A reply to an input-required task. A decision names the request it answers (request_id): the task's object
// judges it against the request pending now (src/approvals/resume.ts), so a stale one is refused (409
// pending_input_changed) and a repeat gets the original answer. Deciding needs `run`; what a refusal tells (the
// request waiting now, the decision already recorded) is the task's content, for a principal that may read.
import type { DecisionInput } from "../approvals/requests.ts";
import type { DecisionFailure } from "../approvals/resume.ts";
import type { RpcFailure } from "../contracts/rpc.ts";
import { unhandledCode } from "../errors/codes.ts";
import { ApiError } from "../errors.ts";
import type { JsonObject } from "../lib/json.ts";
import { mayRead, type Principal, requireScope } from "./principal.ts";

/** What a resume body says (POST /v1/tasks/:id/resume's; an A2A reply is read into one). */
export interface ResumeRequest {
  request_id: string;
  action: DecisionInput["action"];
  message?: string | undefined;
  tool_input?: Record<string, unknown> | undefined;
  state_updates?: (NonNullable<DecisionInput["state_updates"]> & { current_agent?: string | undefined }) | undefined;
}

/** The decision a resume body asks for, by `principal`; a body that contradicts itself is a 400 naming the field. */
export function decisionInput(principal: Principal, body: ResumeRequest, what: "task" | "session"): DecisionInput {
  requireScope(principal, "run");
  const { current_agent, ...updates } = body.state_updates ?? {};
  if (body.tool_input !== undefined && body.action !== "modify") {
    throw new ApiError("validation_failed", "tool_input goes with action modify.", "tool_input");
  }
  if (current_agent !== undefined) {
    throw new ApiError(
      "validation_failed",
      what === "task"
        ? "A task keeps its agent while it runs; to hand the conversation to another agent, fork from the waiting checkpoint (turn_<n>_await_<tool_use_id>) with state_updates.current_agent."
        : "A session keeps its agent.",
      "state_updates.current_agent",
    );
  }
  if (updates.routing_key !== undefined && what === "session") {
    throw new ApiError(
      "validation_failed",
      "A session has no routing_key: only a workflow's run does.",
      "state_updates.routing_key",
    );
  }
  return {
    request_id: body.request_id,
    action: body.action,
    message: body.message ?? null,
    // Parsed from a JSON body: JSON.
    tool_input: (body.tool_input as JsonObject | undefined) ?? null,
    state_updates: Object.keys(updates).length > 0 ? updates : null,
    // Who decided is recorded by the key's id, never the key (a hook decides nothing).
    decided_by: principal.key_id ?? principal.adapter,
  };
}

/**
 * A refusal as the principal may see it: the request waiting now, or the decision already recorded, is the task's
 * content, for a principal that may read (else it could answer a request it was never shown).
 */
export function readableRefusal(principal: Principal, error: RpcFailure<DecisionFailure>): RpcFailure<DecisionFailure> {
  if (mayRead(principal)) return error;
  const { details: _hidden, ...rest } = error;
  if (error.code !== "pending_input_changed") return rest;
  return {
    ...rest,
    message: "The run waits for another request than the one named; a key with the read scope can see which.",
  };
}

/** A refusal (cut by readableRefusal) as the API's error. */
export function decisionRefused(error: RpcFailure<DecisionFailure>): ApiError {
  switch (error.code) {
    case "tool_input_required":
      return new ApiError("validation_failed", error.message, "tool_input");
    case "message_required":
      return new ApiError("validation_failed", error.message, "message");
    case "pending_input_changed":
    case "already_decided":
      return new ApiError(error.code, error.message, "request_id", error.details);
    case "task_not_waiting":
      return new ApiError("task_not_waiting", error.message);
    default:
      return unhandledCode(error.code);
  }
}
