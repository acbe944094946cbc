// A person's answer to what a run waits for, over HTTP, for a task (POST /v1/tasks/:id/resume) and a session's turn
// (POST /v1/sessions/:id/resume) alike: the body as the decision the object judges (src/approvals/resume.ts), and
// its refusals as the API's errors, cut to what the request's key may read.
import type { Context } from "hono";
import type { DecisionInput } from "../approvals/requests.ts";
import type { DecisionFailure } from "../approvals/resume.ts";
import type { RpcFailure } from "../contracts/rpc.ts";
import { unhandledCode } from "../errors/codes.ts";
import { ApiError } from "../errors.ts";
import type { JsonObject } from "../lib/json.ts";
import type { AppEnv } from "./app-env.ts";
import type { ResumeBody } from "./schemas.ts";
import { mayRead, readableDetails } from "./task-resource.ts";

/** The decision a resume body asks for; a body that contradicts itself is a 400 naming the field. */
export function decisionInput(c: Context<AppEnv>, body: ResumeBody, what: "task" | "session"): DecisionInput {
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
    // Parsed from the JSON body: JSON.
    tool_input: (body.tool_input as JsonObject | undefined) ?? null,
    state_updates: Object.keys(updates).length > 0 ? updates : null,
    decided_by: c.get("apiKeyId"),
  };
}

/** A decision the object refused, as the API's error. */
export function decisionRefused(c: Context<AppEnv>, error: RpcFailure<DecisionFailure>): never {
  switch (error.code) {
    case "tool_input_required":
      throw new ApiError("validation_failed", error.message, "tool_input");
    case "message_required":
      throw new ApiError("validation_failed", error.message, "message");
    case "pending_input_changed": {
      // The message names the request waiting now: what a key that may not read must not learn (it could then
      // answer a request it was never shown).
      const message = mayRead(c)
        ? error.message
        : "The run waits for another request than the one named; a key with the read scope can see which.";
      throw new ApiError("pending_input_changed", message, "request_id", readableDetails(c, error.details));
    }
    case "already_decided":
      throw new ApiError("already_decided", error.message, "request_id", readableDetails(c, error.details));
    case "task_not_waiting":
      throw new ApiError("task_not_waiting", error.message);
    default:
      return unhandledCode(error.code);
  }
}
