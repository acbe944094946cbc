// The one place where errors become HTTP responses: `{error: {code, message, request_id, field?}}` with a stable
// code, answered with the status the registry gives it (src/errors/codes.ts). Client mistakes are 4xx; anything
// unexpected is a 500 whose body hides the internal message; a 401 carries the Bearer challenge. The MCP server
// (src/mcp-server/) shows the same bodies.
import type { Context } from "hono";
import { type HttpErrorStatus, httpStatus } from "../errors/codes.ts";
import { AgentNotFoundError, ApiError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";
import type { ErrorBody } from "./responses.ts";

/**
 * The challenge every 401 carries (RFC 9110 §11.6.1 requires one): a bearer token, in Outpost's one realm. No
 * `resource_metadata` (RFC 9728): Outpost serves no OAuth metadata; its keys come from the operator.
 */
export const AUTH_CHALLENGE = 'Bearer realm="outpost"';

export function errorResponse(c: Context<AppEnv>, error: unknown): Response {
  const { status, body } = errorBody(c.get("requestId") ?? "unknown", error);
  if (body.error.code === "object_unavailable") c.header("Retry-After", "1");
  if (status === 401) c.header("WWW-Authenticate", AUTH_CHALLENGE);
  return c.json(body, status);
}

/**
 * An error of a Durable Object call that the platform marks transient: the object was reset while it answered (an
 * eviction, a deploy, a fault injected by evict_after_step) or is overloaded. Its state is intact; the request may be
 * repeated.
 */
function isTransientObjectError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const flags = error as { retryable?: unknown; durableObjectReset?: unknown; overloaded?: unknown };
  return flags.retryable === true || flags.durableObjectReset === true || flags.overloaded === true;
}

/** Anything thrown as the API's error body and status; an unexpected error is logged and shown as internal_error. */
export function errorBody(requestId: string, error: unknown): { status: HttpErrorStatus; body: ErrorBody } {
  if (error instanceof ApiError) {
    // Details first, so they can never replace the members every error body has (ErrorBody lists the details).
    const body: ErrorBody = {
      error: { ...error.details, code: error.code, message: error.message, request_id: requestId },
    };
    if (error.field !== undefined) body.error.field = error.field;
    return { status: error.status, body };
  }
  if (error instanceof AgentNotFoundError) {
    return {
      status: httpStatus("agent_not_found"),
      body: { error: { code: "agent_not_found", message: error.message, request_id: requestId, field: "name" } },
    };
  }
  if (isTransientObjectError(error)) {
    return {
      status: httpStatus("object_unavailable"),
      body: {
        error: {
          code: "object_unavailable",
          message: "The object behind this request restarted or is overloaded; nothing was lost. Retry shortly.",
          request_id: requestId,
        },
      },
    };
  }
  console.error("unhandled error", requestId, error instanceof Error ? `${error.name}: ${error.message}` : error);
  return {
    status: httpStatus("internal_error"),
    body: {
      error: {
        code: "internal_error",
        message: "Something went wrong on our side; retry, or report the request_id.",
        request_id: requestId,
      },
    },
  };
}
