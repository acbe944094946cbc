// Outpost's refusals as A2A's typed errors (A2A v1.0 §3.3.2): the SDK's error classes, which its JSON-RPC transport
// turns into the spec's codes (-32001 TaskNotFound, -32602 invalid params, …) and the HTTP+JSON binding into its
// statuses. A refusal of Outpost's own keeps its HTTP status on the HTTP+JSON binding (413, 409, 429 as /v1 answers
// them) and its code in the error's ErrorInfo on both. Anything that is not Outpost's own error is logged and answered
// without its message.
import {
  A2A_ERROR_CODE,
  A2AError,
  JsonRpcRequestMalformedError,
  RequestMalformedError,
  RestRequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import type { DecisionFailure } from "../approvals/resume.ts";
import { ApiError } from "../errors.ts";

/** The statuses of Outpost's refusals that are about what the request says: invalid params on JSON-RPC. */
const MALFORMED_STATUSES = new Set([400, 409, 413, 415, 422]);

/**
 * An A2A error that keeps the HTTP status of the Outpost refusal it stands for (a rate limit's 429, say): the SDK's
 * REST mapping reads `statusCode` from an error whose transport is "rest"; JSON-RPC answers it as an internal error
 * that carries Outpost's code.
 */
class OutpostStatusError extends A2AError {
  readonly transport = "rest";
  readonly statusCode: number;
  constructor(message: string, metadata: Record<string, string>, statusCode: number) {
    super({ message, metadata });
    this.statusCode = statusCode;
  }
}

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

/**
 * A person's answer the task's object refused (src/approvals/resume.ts), as A2A's error: a stale or another request
 * is invalid params naming Outpost's code, with /v1's 409 on the HTTP+JSON binding.
 */
export function decisionRefused(code: DecisionFailure, message: string): A2AError {
  if (code === "task_not_waiting") return unsupported(message);
  if (code === "already_decided" || code === "pending_input_changed") {
    return new RestRequestMalformedError({ message, metadata: { field: "request_id", code }, statusCode: 409 });
  }
  return invalidParams(message, "message", code);
}

/**
 * An error as the A2A error its handler should answer: A2A's own as it is; Outpost's refusal of the request's content
 * (400, 409, 413, 415, 422) as invalid params naming the field and the code, with its status on HTTP+JSON; another
 * refusal (a rate limit, a deployment without callbacks) keeps its code in the error's metadata and its status on
 * HTTP+JSON; anything else is hidden.
 */
export function toA2AError(error: unknown): A2AError {
  if (error instanceof A2AError) return error;
  if (error instanceof ApiError) {
    const metadata = { code: error.code, ...(error.field !== undefined ? { field: error.field } : {}) };
    if (MALFORMED_STATUSES.has(error.status)) {
      return new RestRequestMalformedError({ message: error.message, metadata, statusCode: error.status });
    }
    return new OutpostStatusError(error.message, metadata, error.status);
  }
  console.error("a2a: internal error", error instanceof Error ? `${error.name}: ${error.message}` : error);
  return new A2AError({ message: "Something went wrong on our side; retry, or report the request." });
}

/**
 * A refusal of a JSON-RPC request's body as JSON-RPC names it: a body that is not JSON (Outpost's invalid_json) is a
 * parse error (-32700), one too large to read (payload_too_large) an invalid request (-32600); anything else as
 * toA2AError maps it. The ErrorInfo keeps Outpost's code.
 */
export function jsonRpcBodyError(error: unknown): A2AError {
  if (error instanceof ApiError && (error.code === "invalid_json" || error.code === "payload_too_large")) {
    const envelopeCode = error.code === "invalid_json" ? A2A_ERROR_CODE.PARSE_ERROR : A2A_ERROR_CODE.INVALID_REQUEST;
    return new JsonRpcRequestMalformedError({ message: error.message, metadata: { code: error.code }, envelopeCode });
  }
  return toA2AError(error);
}
