// The one list of error codes: every code an Outpost error can carry, with what it means where it appears. A route
// answers a code with the HTTP status written here (ApiError reads it), a failed task carries it with the
// retryability written here (OutpostError reads it), and docs/reference/errors.md is this table in prose
// (test/project/docs.unit.test.ts holds the page to it; `npm run docs:errors` rewrites its tables). A code that is not
// here does not compile: ApiError, OutpostError, ErrorInfo and RpcFailure take only these. A leaf: it imports nothing.

/**
 * Where a code can appear, one facet each; a code has at least one. Its kind follows from its facets: `request`
 * alone is a request error, `task` alone a task failure, both are both.
 */
export interface ErrorCodeSpec {
  /** A route answers with it: the HTTP status, and when (naming the `field` it sets, if any). */
  readonly request?: { readonly status: number; readonly when: string };
  /**
   * A failed task can carry it (the task's `error`, `run_failed`, callbacks; the `error` of `llm_request_failed` and
   * `mcp_*` events too): whether the same run could succeed later, unless the error itself says otherwise, and when.
   * `provider` is the text a model provider's failure of this code opens with (src/llm/provider.ts).
   */
  readonly task?: { readonly retryable: boolean; readonly when: string; readonly provider?: string };
  /** In the `error` of an event, with another meaning than a task's (or none): when, naming the event. */
  readonly event?: { readonly when: string };
  /** Never reaches a client as itself (it unwinds a run, stops the Worker, or the Worker maps it): when. */
  readonly internal?: { readonly when: string };
}

export const ERROR_CODES = {
  // Request errors, by status.
  validation_failed: {
    request: {
      status: 400,
      when: "a body field, parameter, query value or header is invalid; `field` names it (e.g. `input`, `metadata.x`, the unknown key, `wait`, `after`, `last-event-id`, `path`)",
    },
  },
  invalid_json: { request: { status: 400, when: "the body is not valid JSON or not valid UTF-8" } },
  invalid_bundle: {
    request: {
      status: 400,
      when: "the body of `POST /v1/replays` is not a tar archive, or a corrupt one: a bad header checksum, a size that is not octal, an entry cut short (`field`: `body`)",
    },
  },
  workspace_full: {
    request: {
      status: 400,
      when: "the seed `files`, with the folders they imply, exceed the workspace's 10,000 files and folders (`field`: `files.<path>` of the first past the limit)",
    },
  },
  invalid_callback_url: {
    request: {
      status: 400,
      when: "`webhook.url` is not https (unless the operator allows the host), is private or loopback, carries credentials, or is not a URL (`field`: `webhook.url`)",
    },
  },
  invalid_cron: {
    request: {
      status: 400,
      when: "a schedule's `cron` is not a 5-field cron expression, or never matches a date (`field`: `cron`)",
    },
  },
  schedule_interval_too_short: {
    request: {
      status: 400,
      when: "a schedule's `cron` has two due times closer together than the deployment's floor, OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS (60 by default: cron's own minute); the message says how close (`field`: `cron`)",
    },
  },
  invalid_timezone: {
    request: { status: 400, when: "a schedule's `timezone` is not an IANA time zone (`field`: `timezone`)" },
  },
  invalid_schedule_time: {
    request: {
      status: 400,
      when: "a schedule's `at` is not an ISO 8601 instant with its offset, or is not in the future (`field`: `at`)",
    },
  },
  unauthorized: {
    request: { status: 401, when: "missing, malformed or unknown API key (`field`: `authorization`)" },
  },
  signature_missing: {
    request: { status: 401, when: "a webhook delivery without its signature headers (`field`: `signature`)" },
  },
  signature_invalid: {
    request: {
      status: 401,
      when: "a webhook delivery whose signature does not match the hook's secret (`field`: `signature`)",
    },
  },
  timestamp_out_of_tolerance: {
    request: {
      status: 401,
      when: "a Standard Webhooks delivery whose `webhook-timestamp` is more than 5 minutes from now (`field`: `signature`)",
    },
  },
  fault_injection_disabled: {
    request: {
      status: 403,
      when: "a task or an evaluation asks for `faults` and the operator has not turned fault injection on for the tenant (OUTPOST_FAULT_INJECTION)",
    },
  },
  insufficient_scope: {
    request: {
      status: 403,
      when: "the API key lacks the scope: `read` for GET, `run` for anything that acts, `admin` for `/v1/tenant` (`field`: `authorization`); `read` too for a task with callbacks (`field`: `webhook`)",
    },
  },
  origin_not_allowed: {
    request: {
      status: 403,
      when: "a request to `/mcp` with an `Origin` header that OUTPOST_ALLOWED_ORIGINS does not list (none by default; a request without `Origin` passes) (`field`: `origin`); answered as the MCP transport's JSON-RPC error, this body its `error.data`",
    },
  },
  hook_not_found: { request: { status: 404, when: "no agent declares that hook (`field`: `hook_id`)" } },
  delivery_not_found: {
    request: { status: 404, when: "the task has no callback delivery with that id (`field`: `delivery_id`)" },
  },
  task_not_found: {
    request: { status: 404, when: "no task with that id, or a malformed id (`field`: `id`)" },
  },
  session_not_found: {
    request: { status: 404, when: "no session with that id, or a malformed id (`field`: `id`)" },
  },
  workflow_not_found: {
    request: { status: 404, when: "no workflow with that name that the key's tenant may see (`field`: `name`)" },
  },
  turn_not_found: { request: { status: 404, when: "the session has no turn with that id (`field`: `turn_id`)" } },
  checkpoint_not_found: {
    request: { status: 404, when: "the task has no checkpoint with that id (`field`: `checkpoint_id`)" },
  },
  artifact_not_found: { request: { status: 404, when: "the task has no such bundle file (`field`: `path`)" } },
  workspace_file_not_found: {
    request: {
      status: 404,
      when: "the task's workspace has no such file, or the path is a folder (`field`: `path`)",
    },
  },
  evaluation_not_found: {
    request: {
      status: 404,
      when: "no evaluation with that id, or a malformed one (`field`: `id`); in `compare`, one of another agent too (`field`: `compare`)",
    },
  },
  evaluation_not_completed: {
    request: {
      status: 409,
      when: "the report of an evaluation still running: it is written when it completes (`field`: `id`)",
    },
  },
  schedule_not_found: {
    request: {
      status: 404,
      when: "no schedule with that id (a malformed or deleted one too) (`field`: `id`); a creation whose `Idempotency-Key` made a schedule since deleted (`field`: `idempotency-key`)",
    },
  },
  collection_not_found: {
    request: { status: 404, when: "the tenant has no collection of that name (`field`: `name`)" },
  },
  document_not_found: {
    request: { status: 404, when: "the collection has no document with that id (`field`: `document_id`)" },
  },
  route_not_found: { request: { status: 404, when: "no such route or method" } },
  task_already_finished: { request: { status: 409, when: "cancel of a task that has already ended" } },
  replay_unavailable: {
    request: {
      status: 409,
      when: "a replay of a task that cannot be replayed: a workflow's run, or one that recorded no model call",
    },
  },
  run_not_ended: {
    request: {
      status: 409,
      when: "the bundle archive of a task that is still running, or of a session that is still open: it is written when the run ends",
    },
  },
  session_busy: {
    request: {
      status: 409,
      when: 'a message while a turn is under way, to a session whose busy policy is "reject" (the default)',
    },
  },
  session_closed: { request: { status: 409, when: "a message or an answer to a session that has been closed" } },
  agent_not_conversational: {
    request: {
      status: 400,
      when: "a session with an agent that does not run the default tool loop (a skill agent, a custom `execute()`)",
    },
  },
  agent_version_conflict: {
    request: {
      status: 409,
      when: "a `PUT /v1/agents/:name` whose `If-Match` names another version than the agent's current one (`field`: `if-match`)",
    },
  },
  agent_limit_reached: {
    request: {
      status: 409,
      when: "a `PUT /v1/agents/:name` of a new agent when the tenant already has `OUTPOST_MAX_RUNTIME_AGENTS` agents of its own (`field`: `name`)",
    },
  },
  agent_version_limit_reached: {
    request: {
      status: 409,
      when: "a `PUT /v1/agents/:name` that would add a version to an agent that has `OUTPOST_MAX_AGENT_VERSIONS` of them; none is dropped (`field`: `name`)",
    },
  },
  agent_version_invalid: {
    request: {
      status: 409,
      when: "a run (task, session, invocation, fork, schedule, evaluation, A2A, MCP) of a tenant's agent whose current version, stored by an earlier Outpost, no longer passes the definition checks; `field` is the file's key at fault (e.g. `claude.max_turns`), and a corrected `PUT /v1/agents/:name` lifts it",
    },
  },
  schedule_finished: {
    request: { status: 409, when: "a pause or resume of an `at` schedule that has already fired" },
  },
  task_not_waiting: {
    request: { status: 409, when: "a resume of a task that is not waiting for input (`input_required`)" },
  },
  pending_input_changed: {
    request: {
      status: 409,
      when: "a resume names a `request_id` other than the one the task waits for; the body's `pending_input` is what it waits for (`field`: `request_id`)",
    },
  },
  already_decided: {
    request: {
      status: 409,
      when: "a resume gives another answer to a request already answered; the body's `decision` is the recorded one (`field`: `request_id`)",
    },
  },
  tool_call_in_flight: {
    request: {
      status: 409,
      when: "a fork of a checkpoint whose tool calls the task is still running; the body's `tool_use_ids` lists them (`field`: `checkpoint_id`)",
    },
  },
  embedding_mismatch: {
    request: {
      status: 409,
      when: "a put names an `embedding_provider` whose model is not the one the collection was created with (`field`: `embedding_provider`)",
    },
  },
  task_expired: {
    request: {
      status: 410,
      when: "the task's retention period ran out and it was deleted (`field`: `id`), or a webhook delivery repeats one whose task expired",
    },
  },
  payload_too_large: {
    request: {
      status: 413,
      when: "body over 256 KiB (a run bundle at `POST /v1/replays`: over 32 MiB), with or without a Content-Length (reading stops at the limit)",
    },
  },
  unsupported_media_type: {
    request: {
      status: 415,
      when: "body not sent as `application/json` (a run bundle at `POST /v1/replays`: as `application/x-tar`)",
    },
  },
  idempotency_key_reused: {
    request: {
      status: 422,
      when: "the `Idempotency-Key` was used for a different request, another body or route (`field`: `idempotency-key`)",
    },
  },
  collection_limit_reached: {
    request: {
      status: 422,
      when: "a put's document makes more than 500 chunks (`field`: `documents.<i>.text`), its documents more than 1,000 (`field`: `documents`), or it would give the collection more than 1,000 documents or 10,000 chunks (`field`: `documents`) or the tenant more than 100 collections (`field`: `name`); refused before anything is embedded",
    },
  },
  schedule_limit_reached: {
    request: {
      status: 422,
      when: "a new schedule when the tenant already holds as many schedules that may fire (active, paused or revoked) as OUTPOST_MAX_SCHEDULES_PER_TENANT allows (100 by default); finished and deleted ones do not count",
    },
  },
  bundle_not_replayable: {
    request: {
      status: 422,
      when: "the run bundle at `POST /v1/replays` lacks `task.json`, `checkpoints.json` or `events.jsonl`, one of them is not what Outpost writes, or its `bundle.json` names a format this deployment does not read (`field`: the file)",
    },
  },
  hook_input_empty: { request: { status: 422, when: "the hook's input template rendered nothing for this delivery" } },
  hook_input_too_long: {
    request: { status: 422, when: "the hook's input template rendered more than a task's input may hold" },
  },
  embedding_failed: {
    request: {
      status: 502,
      when: "the embedding provider failed or refused the request while a put embedded its documents; the message is the provider's, with the deployment's secrets redacted (`field`: `embedding_provider`)",
    },
  },
  api_keys_not_configured: { request: { status: 503, when: "the server has no `OUTPOST_API_KEYS` secret" } },
  api_keys_invalid: {
    request: { status: 503, when: "`OUTPOST_API_KEYS` is not a valid key list (the operator's log says where)" },
  },
  callbacks_not_configured: {
    request: {
      status: 503,
      when: "a task asked for callbacks, but the deployment has no `OUTPOST_WEBHOOK_SECRET` to sign them (`field`: `webhook`)",
    },
  },
  index_unavailable: {
    request: {
      status: 503,
      when: "Vectorize failed while a put wrote its documents' vectors: the documents are stored but may not be searchable until the same put is repeated, which repairs them",
    },
  },
  embedding_not_configured: {
    request: {
      status: 503,
      when: "the Worker secret holding the embedding provider's key is not set (`field`: `embedding_provider.api_key`), or an `azure_openai` provider has no endpoint (`field`: `embedding_provider.endpoint`)",
    },
  },
  hook_not_configured: { request: { status: 503, when: "the Worker secret that verifies the hook is not set" } },
  object_unavailable: {
    request: {
      status: 503,
      when: "the Durable Object behind the request was reset while it answered (an eviction or a deploy) or is overloaded; nothing was lost: retry after the `Retry-After` seconds",
    },
  },

  // Task failures (some are request errors too), in the order of the docs' list. The seven with a `provider` text
  // are the failures every model provider's errors are mapped onto (providerFailure).
  provider_not_configured: {
    task: {
      retryable: false,
      when: "the agent's model provider has no API key (its Worker secret is not set) or, for `openai_compatible`, no `llmConfig.endpoint`",
    },
  },
  provider_auth_failed: {
    task: {
      retryable: false,
      when: "the model provider refused the API key (401 or 403; Gemini's `API_KEY_INVALID`)",
      provider: "The model provider rejected the credentials",
    },
  },
  provider_rejected_request: {
    task: {
      retryable: false,
      when: "the model provider refused the request as invalid (400)",
      provider: "The model provider rejected the request",
    },
  },
  context_window_exceeded: {
    task: {
      retryable: false,
      when: "the prompt did not fit the model's context window even after a compaction (the provider's 400 `prompt is too long`, OpenAI's `context_length_exceeded`, Gemini's token count)",
      provider: "The prompt does not fit the model's context window",
    },
  },
  model_not_found: {
    task: {
      retryable: false,
      when: "the model provider does not know the model or the endpoint (404)",
      provider: "The model or endpoint was not found",
    },
  },
  rate_limited: {
    request: {
      status: 429,
      when: "the API key created its tasks-per-minute, or a hook started its runs-per-minute; `Retry-After` says when to try again",
    },
    task: {
      retryable: true,
      when: "the model provider still answered 429 when the call's wait ran out (its horizon, docs/provider-waits.md)",
      provider: "The model provider is rate limiting requests",
    },
  },
  provider_overloaded: {
    task: {
      retryable: true,
      when: "the model provider was still overloaded (Anthropic's `overloaded_error`, 503 or 529) when the call's wait ran out",
      provider: "The model provider is overloaded",
    },
  },
  provider_unavailable: {
    task: {
      retryable: true,
      when: "the model provider still failed with a server error (500, 502, 504) when the call's wait ran out",
      provider: "The model provider failed",
    },
  },
  provider_error: {
    task: {
      retryable: false,
      when: "any other error the model provider reported, e.g. an error event inside a streamed answer (retryable when the provider says it is a server error)",
      provider: "The model provider reported an error",
    },
  },
  network_error: {
    task: { retryable: true, when: "the model provider could not be reached, or the call failed without an answer" },
  },
  timeout: {
    task: {
      retryable: true,
      when: "the model provider did not answer in time, or its streamed answer went silent for 120 s",
    },
    event: { when: "an MCP tool call did not finish within its timeout (`mcp_tool_call_failed`)" },
  },
  streaming_error: {
    task: {
      retryable: true,
      when: "the model's stream broke after it had started and the call's wait ran out, or the error that broke it may not be repeated (then not retryable; `partial_message_count` says how much had arrived)",
    },
  },
  malformed_response: {
    task: {
      retryable: false,
      when: "the model provider sent something that is not valid JSON, or a stream without a message (`raw_response` keeps its first 2,000 characters)",
    },
  },
  invalid_structured_output: {
    task: {
      retryable: false,
      when: "the agent's final answer did not conform to its `response_format`, also when asked again with the validation errors (the answer is kept as the task's `result`)",
    },
  },
  max_turns: {
    task: {
      retryable: false,
      when: "the run used its model turns (the task's `max_turns` or the agent's `maxTurns`) before a final answer",
    },
  },
  replay_exhausted: {
    task: {
      retryable: false,
      when: "a replay's agent asked for more model calls than the task it replays recorded (a change made it take another turn)",
    },
  },
  max_iterations: {
    task: {
      retryable: false,
      when: "a workflow's node executions and pattern rounds reached its `max_iterations` (or the task's, when smaller)",
    },
  },
  workflow_node_failed: {
    task: {
      retryable: false,
      when: "a workflow's node failed, named in the message: its agent's child task failed or was canceled, its tool call returned an error, a condition could not be evaluated or none held, or a supervisor's router named no worker",
    },
  },
  workflow_rejected: {
    task: {
      retryable: false,
      when: "a person rejected a workflow's run at a `human` node or a node listed in `checkpoints` (the message carries theirs)",
    },
  },
  max_budget_usd: {
    task: {
      retryable: false,
      when: "the task's model calls cost its `max_budget_usd` (or the agent's `maxBudgetUsd`)",
    },
  },
  max_tokens: { task: { retryable: false, when: "the task's model calls used its `max_tokens`" } },
  config_error: {
    task: {
      retryable: false,
      when: "the agent's definition or the deployment's configuration is invalid (an agent option, a tool setting, an MCP server, a skill, `OUTPOST_PRICES`)",
    },
  },
  agent_not_found: {
    request: { status: 404, when: "no agent with that name that the key's tenant may see (`field`: `name`)" },
    task: { retryable: false, when: "the task's agent is no longer registered for its tenant (a deploy removed it)" },
  },
  step_attempts_exhausted: {
    task: { retryable: false, when: "a step was interrupted 3 times, e.g. its object kept dying during it" },
  },
  invalid_tool: {
    task: {
      retryable: false,
      when: "the agent's tools name one that does not exist, e.g. an allowed tool the MCP server does not offer (`tool_name`, `available_tools`)",
    },
  },
  mcp_connection_failed: {
    task: {
      retryable: true,
      when: "a required MCP server could not be connected when the run started (`server`)",
    },
    event: {
      when: "an MCP server could not be connected (`mcp_connection_failed`), or its session was lost during a tool call (`mcp_tool_call_failed`)",
    },
  },
  url_not_allowed: {
    task: {
      retryable: false,
      when: "the agent's model endpoint is a URL the outbound guard refuses: a private, loopback or link-local host, another scheme than http(s), or credentials in the URL (`url`)",
    },
    event: {
      when: "an MCP server's URL that the outbound guard refuses (`mcp_connection_failed`; a required server then fails the task with `mcp_connection_failed`)",
    },
  },
  workflow_error: {
    task: {
      retryable: false,
      when: "the run ended in a way the runtime cannot explain, e.g. a failure without an error",
    },
  },
  approval_timeout: {
    task: {
      retryable: false,
      when: "no one answered an approval request before its deadline, and the agent's `onApprovalTimeout` is `fail`",
    },
  },
  internal_error: {
    request: { status: 500, when: "a bug on our side; the message never carries internal details" },
    task: {
      retryable: false,
      when: "an error Outpost did not expect (a storage failure, a bug): only the error's class is shown; the details go to the operator's logs",
    },
  },

  // Only in events.
  mcp_error: {
    event: {
      when: "an MCP server answered a tool call with a protocol error (an unknown tool, invalid arguments), or with a result that breaks the tool's output schema (`mcp_tool_call_failed`)",
    },
  },

  // Never sent to a client as they are.
  canceled: {
    internal: {
      when: "a client canceled the task: the run unwinds, and the task's status is `canceled`, without an error",
    },
  },
  awaiting_input: {
    internal: { when: "a tool call waits for a person: the run stops, and the task's status is `input_required`" },
  },
  awaiting_subagents: {
    internal: { when: "a Task call waits for its sub-agent: the run stops until the child task's end wakes it" },
  },
  awaiting_provider: {
    internal: {
      when: "a model call waits out the provider (an outage or a rate limit): the run stops until its `provider_wait` timer",
    },
  },
  duplicate_agent: {
    internal: { when: "two agents are registered under one name: the Worker does not start" },
  },
  message_required: {
    internal: {
      when: "the task's object refuses an answer to a question without `message`; the Worker answers 400 `validation_failed` (`field`: `message`)",
    },
  },
  tool_input_required: {
    internal: {
      when: "the task's object refuses a `modify` without `tool_input` or `state_updates`; the Worker answers 400 `validation_failed` (`field`: `tool_input`)",
    },
  },
} as const satisfies Readonly<Record<string, ErrorCodeSpec>>;

type Codes = typeof ERROR_CODES;

/** Every code Outpost knows. */
export type ErrorCode = keyof Codes;

/** The codes a route may answer with (those with a `request` facet). */
export type RequestErrorCode = { [C in ErrorCode]: Codes[C] extends { request: object } ? C : never }[ErrorCode];

/** The codes a failed task may carry (those with a `task` facet). */
export type TaskFailureCode = { [C in ErrorCode]: Codes[C] extends { task: object } ? C : never }[ErrorCode];

/** The failures every model provider's errors are mapped onto (those with a `provider` text). */
export type ProviderFailureCode = {
  [C in ErrorCode]: Codes[C] extends { task: { provider: string } } ? C : never;
}[ErrorCode];

/** Every code, in the registry's order (the error schemas' enums: src/errors/error-info.ts, src/http/responses.ts). */
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as ErrorCode[];

/** The codes a route may answer with, in the registry's order. */
export const REQUEST_ERROR_CODES: readonly RequestErrorCode[] = ERROR_CODE_NAMES.filter(
  (code): code is RequestErrorCode => "request" in ERROR_CODES[code],
);

/** The HTTP statuses the registry gives its request errors. */
export type HttpErrorStatus = Codes[RequestErrorCode]["request"]["status"];

/** The HTTP status a route answers `code` with. */
export function httpStatus(code: RequestErrorCode): HttpErrorStatus {
  return ERROR_CODES[code].request.status;
}

/** Whether a failure with `code` could succeed if run again (false for a code no task carries). */
export function isRetryable(code: ErrorCode): boolean {
  const spec: ErrorCodeSpec = ERROR_CODES[code];
  return spec.task?.retryable ?? false;
}

/** The text a model provider's failure of `code` opens with. */
export function providerText(code: ProviderFailureCode): string {
  return ERROR_CODES[code].task.provider;
}

/**
 * For the `default` of a switch over codes: tsc rejects the call while a code of the union is not handled, so a
 * code added to what an RPC method returns fails the build until its route maps it.
 */
export function unhandledCode(code: never): never {
  throw new TypeError(`Unhandled error code: ${String(code)}`);
}
