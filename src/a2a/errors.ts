// Outpost's refusals as A2A's typed errors (A2A v1.0 §3.3.2): the SDK's error classes, which its JSON-RPC transport
// turns into the spec's codes (-32001 TaskNotFound, -32602 invalid params, …) and the HTTP+JSON binding into its
// statuses. Anything that is not Outpost's own error is logged and answered without its message.
import {
  A2AError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { DecisionFailure } from "../approvals/resume.ts";
import { ApiError } from "../errors.ts";

export function taskNotFound(id: string): A2AError {
  return new TaskNotFoundError({ message: `No task with id "${id}" for this agent.`, metadata: { task_id: id } });
}

export function taskNotCancelable(id: string, message: string): A2AError {
  return new TaskNotCancelableError({ message, metadata: { task_id: id } });
}

export function unsupported(message: string): A2AError {
  return new UnsupportedOperationError({ message });
}

/** Invalid params, naming the field (and Outpost's code for it, when Outpost's check found it). */
export function invalidParams(message: string, field: string, code = "validation_failed"): A2AError {
  return new RequestMalformedError({ message, metadata: { field, code } });
}

/** A person's answer the task's object refused (src/approvals/resume.ts), as A2A's error. */
export function decisionRefused(code: DecisionFailure, message: string): A2AError {
  if (code === "task_not_waiting") return unsupported(message);
  return invalidParams(message, "message", code);
}

/**
 * An error as the A2A error its handler should answer: A2A's own as it is; Outpost's refusal of the request (a 4xx
 * ApiError) as invalid params naming the field and the code; a refusal that is not about the request's content
 * (rate limit, a deployment without callbacks) keeps its code in the error's metadata; anything else is hidden.
 */
export function toA2AError(error: unknown): A2AError {
  if (error instanceof A2AError) return error;
  if (error instanceof ApiError) {
    const metadata = { code: error.code, ...(error.field !== undefined ? { field: error.field } : {}) };
    if (error.status === 400 || error.status === 422)
      return new RequestMalformedError({ message: error.message, metadata });
    return new A2AError({ message: error.message, metadata });
  }
  console.error("a2a: internal error", error instanceof Error ? `${error.name}: ${error.message}` : error);
  return new A2AError({ message: "Something went wrong on our side; retry, or report the request." });
}
