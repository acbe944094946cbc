// How the MCP server reports a failure: a tool that could not do its work answers with an `isError` result carrying
// Outpost's error body (the same `{error: {code, message, field, request_id}}` as /v1, so a model or a client reads
// the stable code), and a request that is not a tool's work (listing without the read scope, an unknown tool or
// task) is a JSON-RPC error whose `data` is that error object.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { errorBody } from "../http/errors.ts";

/** A tool call's failure as its result: the error body as text, for the model, and isError. */
export function toolError(requestId: string, error: unknown): CallToolResult {
  const { body } = errorBody(requestId, error);
  return { content: [{ type: "text", text: JSON.stringify(body) }], isError: true };
}

/**
 * A failure as a JSON-RPC error: refused authentication or scope as InvalidRequest, our own fault as InternalError,
 * anything else the client sent as InvalidParams. `data` is the error body's `error` object.
 */
export function protocolError(requestId: string, error: unknown): McpError {
  if (error instanceof McpError) return error;
  const { status, body } = errorBody(requestId, error);
  const code =
    status === 401 || status === 403
      ? ErrorCode.InvalidRequest
      : status >= 500
        ? ErrorCode.InternalError
        : ErrorCode.InvalidParams;
  return new McpError(code, body.error.message, body.error);
}
