// The one error module: every failure Outpost raises is a typed class with a stable string `code` from the registry
// (src/errors/codes.ts), which also gives each code its HTTP status and retryability. Agent-level classes follow
// seed 000's hierarchy (adapted to Workers); ApiError covers request problems. The JSON body is decided in one place:
// src/http/errors.ts.
import {
  type ErrorCode,
  type HttpErrorStatus,
  httpStatus,
  isRetryable,
  type ProviderFailureCode,
  type RequestErrorCode,
} from "./errors/codes.ts";
import type { ErrorInfo } from "./errors/error-info.ts";

/** What a stored or transmitted error looks like: its schema is src/errors/error-info.ts. */
export type { ErrorInfo };

/** Base of every Outpost error. `code` is stable and documented in docs/reference/errors.md; messages are for people. */
export class OutpostError extends Error {
  readonly code: ErrorCode;
  /** Whether retrying the same operation later could succeed: the registry's answer for the code, unless overridden. */
  readonly retryable: boolean;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options?.retryable ?? isRetryable(code);
  }
  /** The plain, serialisable form stored with a failed task and sent in events. */
  toJSON(): ErrorInfo {
    return { code: this.code, message: this.message, type: this.name, retryable: this.retryable };
  }
}

/** Invalid or missing configuration (vars, secrets, agent definitions). */
export class ConfigError extends OutpostError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("config_error", message, options);
  }
}

/**
 * A problem in a definition file (an agent in agents/, a workflow in workflows/, a body PUT at runtime): the file,
 * the line of the key it is about when that is known, and the key.
 */
export class DefinitionFileError extends ConfigError {
  readonly path: string;
  readonly line: number | null;
  readonly key: string | null;

  constructor(path: string, line: number | null, key: string | null, message: string) {
    super(`${path}${line === null ? "" : `:${line}`}: ${key ? `${key}: ` : ""}${message}`);
    this.path = path;
    this.line = line;
    this.key = key;
  }
}

/** A failure in orchestrating runs rather than inside one agent (e.g. an impossible state transition). */
export class WorkflowError extends OutpostError {
  constructor(message: string, code: "workflow_error" | "step_attempts_exhausted" = "workflow_error") {
    super(code, message);
  }
}

/** A workflow's run stopped at a node (src/workflows/run.ts): the node failed, a person rejected it, or max_iterations. */
export class WorkflowRunError extends OutpostError {
  constructor(code: "workflow_node_failed" | "workflow_rejected" | "max_iterations", message: string) {
    super(code, message);
  }
}

/** Base of agent failures (seed 000 AgentError). */
export class AgentError extends OutpostError {}

/** No credentials or endpoint for the model provider (replaces seed 000's CLINotFoundError). */
export class ProviderNotConfiguredError extends AgentError {
  readonly provider: string;
  constructor(provider: string, message: string) {
    super("provider_not_configured", message);
    this.provider = provider;
  }
}

/** An operation ran out of time (seed 000 TimeoutError). */
export class TimeoutError extends AgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("timeout", message, options);
  }
}

/** The provider could not be reached (seed 000 NetworkError). */
export class NetworkError extends AgentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("network_error", message, options);
  }
}

/**
 * The provider answered with an error status or error event. Not in seed 000, which only knew a local CLI:
 * an HTTP API adds rate limits, overload and rejected requests, each with its own code.
 */
export class ProviderError extends AgentError {
  readonly status: number | null;
  readonly requestId: string | null;
  constructor(
    code: ProviderFailureCode,
    message: string,
    options: { status: number | null; requestId: string | null; retryable: boolean; cause?: unknown },
  ) {
    super(code, message, options);
    this.status = options.status;
    this.requestId = options.requestId;
  }
  override toJSON(): ErrorInfo {
    return { ...super.toJSON(), status: this.status, request_id: this.requestId };
  }
}

/** A stream broke after it had started; `partialMessages` holds everything that arrived (FR-005). */
export class StreamingError extends AgentError {
  readonly partialMessages: readonly unknown[];
  constructor(message: string, partialMessages: readonly unknown[], options?: { cause?: unknown }) {
    // As retryable as what broke it: a server error or a lost connection is, a refused request is not.
    super("streaming_error", message, {
      ...options,
      ...(options?.cause instanceof AgentError ? { retryable: options.cause.retryable } : {}),
    });
    this.partialMessages = partialMessages;
  }
  override toJSON(): ErrorInfo {
    return { ...super.toJSON(), partial_message_count: this.partialMessages.length };
  }
}

/** The provider sent something that could not be parsed; `rawResponse` keeps it for diagnosis. */
export class MalformedResponseError extends AgentError {
  readonly rawResponse: string;
  constructor(message: string, rawResponse: string, options?: { cause?: unknown }) {
    super("malformed_response", message, options);
    this.rawResponse = rawResponse;
  }
  override toJSON(): ErrorInfo {
    return { ...super.toJSON(), raw_response: this.rawResponse.slice(0, 2000) };
  }
}

/** A tool name that is neither built in nor a valid `mcp__<server>__<tool>` name (FR-002). */
export class InvalidToolError extends AgentError {
  readonly toolName: string;
  readonly availableTools: readonly string[];
  /** `problem` completes "Tool "<name>" …" when the name is known but still not allowed (e.g. "is listed twice"). */
  constructor(toolName: string, availableTools: readonly string[], problem?: string) {
    super(
      "invalid_tool",
      `${problem ? `Tool "${toolName}" ${problem}` : `Unknown tool "${toolName}"`}. ` +
        `Available tools: ${availableTools.join(", ") || "none"}; MCP tools are named mcp__<server>__<tool>.`,
    );
    this.toolName = toolName;
    this.availableTools = availableTools;
  }
  override toJSON(): ErrorInfo {
    return { ...super.toJSON(), tool_name: this.toolName, available_tools: [...this.availableTools] };
  }
}

/** An outbound URL that points at a private, loopback or link-local address, or uses another scheme than http(s). */
export class BlockedUrlError extends AgentError {
  readonly url: string;
  /** Why, without the URL: callbacks word their own message (their policy has its own variable). */
  readonly reason: string;
  /** True when the host is private, loopback or link-local (an allow-list could admit it), not a bad URL. */
  readonly privateHost: boolean;
  /** `hint`: what would allow the host, when not OUTPOST_ALLOW_PRIVATE_HOSTS (an agent a tenant added at runtime). */
  constructor(url: string, reason: string, options: { privateHost?: boolean; hint?: string } = {}) {
    super(
      "url_not_allowed",
      `${url} is not allowed: ${reason}. ${options.hint ?? "Private, loopback and link-local hosts need OUTPOST_ALLOW_PRIVATE_HOSTS"}.`,
    );
    this.url = url;
    this.reason = reason;
    this.privateHost = options.privateHost ?? false;
  }
  override toJSON(): ErrorInfo {
    return { ...super.toJSON(), url: this.url };
  }
}

/** An MCP server could not be connected, or its session could not be used (seed 002 mcp_connection_failed). */
export class McpConnectionError extends AgentError {
  readonly server: string;
  constructor(server: string, message: string, options?: { cause?: unknown }) {
    super("mcp_connection_failed", `MCP server "${server}": ${message}`, options);
    this.server = server;
  }
  override toJSON(): ErrorInfo {
    return { ...super.toJSON(), server: this.server };
  }
}

/** A second agent registered under a name already taken (FR-011). */
export class DuplicateAgentError extends AgentError {
  readonly agentName: string;
  constructor(agentName: string) {
    super("duplicate_agent", `An agent named "${agentName}" is already registered; agent names must be unique.`);
    this.agentName = agentName;
  }
  override toJSON(): ErrorInfo {
    return { ...super.toJSON(), agent_name: this.agentName };
  }
}

/** No agent registered under the name (FR-012). */
export class AgentNotFoundError extends AgentError {
  readonly agentName: string;
  readonly availableAgents: readonly string[];
  constructor(agentName: string, availableAgents: readonly string[]) {
    super(
      "agent_not_found",
      `No agent named "${agentName}". Registered agents: ${availableAgents.join(", ") || "none"}.`,
    );
    this.agentName = agentName;
    this.availableAgents = availableAgents;
  }
  override toJSON(): ErrorInfo {
    return { ...super.toJSON(), agent_name: this.agentName, available_agents: [...this.availableAgents] };
  }
}

/** A run that stopped because a limit was reached (max turns). */
export class LimitExceededError extends AgentError {
  constructor(code: "max_turns" | "max_budget_usd" | "max_tokens", message: string) {
    super(code, message);
  }
}

/** A replay's agent asked for a model call its recorded task has no response for (src/llm/replay-provider.ts). */
export class ReplayExhaustedError extends AgentError {
  constructor(message: string) {
    super("replay_exhausted", message);
  }
}

/** The final answer did not conform to the agent's response_format, also when the model was asked again. */
export class StructuredOutputError extends AgentError {
  constructor(message: string) {
    super("invalid_structured_output", message);
  }
}

/** A tool call waits for a person; carried so the run stops (status input_required) without failing. */
export class AwaitingInputError extends OutpostError {
  /** What the run waits for (a PendingInput), for the input_requested event. */
  readonly pending: Record<string, unknown>;
  constructor(message: string, pending: Record<string, unknown>) {
    super("awaiting_input", message);
    this.pending = pending;
  }
}

/**
 * A Task call waits for its sub-agent (a child task in its own object): the run stops without failing, holding
 * nothing, and the child's end starts it again from its journal.
 */
export class AwaitingSubagentsError extends OutpostError {
  constructor(message: string) {
    super("awaiting_subagents", message);
  }
}

/**
 * A model call waits out its provider (down, overloaded or limiting) on a timer of the object's ledger: the run stops
 * without failing, holding no connection, and the timer starts it again from its journal (src/runtime/provider-retry.ts).
 */
export class AwaitingProviderError extends OutpostError {
  constructor(message: string) {
    super("awaiting_provider", message);
  }
}

/** The run was canceled by a client; carried so the loop unwinds without treating it as a failure. */
export class CanceledError extends OutpostError {
  constructor(message = "The task was canceled.") {
    super("canceled", message);
  }
}

/**
 * A problem with an HTTP request. `status` is the registry's HTTP status for the code; `field` names the offending
 * input; `details` are further members of the error body that let a client act without another request (e.g. the
 * input a task now waits for, with a 409 pending_input_changed).
 */
export class ApiError extends OutpostError {
  declare readonly code: RequestErrorCode;
  readonly status: HttpErrorStatus;
  readonly field: string | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;
  constructor(code: RequestErrorCode, message: string, field?: string, details?: Record<string, unknown>) {
    // Not retryable whatever the code: a client learns whether to retry from the status and Retry-After.
    super(code, message, { retryable: false });
    this.status = httpStatus(code);
    this.field = field;
    this.details = details;
  }
}

/**
 * Turns anything thrown into an ErrorInfo that is safe to store and show. Outpost's own errors carry messages
 * written for clients; anything else (a storage error, a bug) is logged and shown only as its class name.
 */
export function toErrorInfo(error: unknown): ErrorInfo {
  if (error instanceof OutpostError) return error.toJSON();
  const type = error instanceof Error ? error.name : "Error";
  console.error("internal error", type, error instanceof Error ? error.message : String(error));
  return {
    code: "internal_error",
    message: `The run failed on an internal error (${type}); the operator's logs have the details.`,
    type,
    retryable: false,
  };
}
