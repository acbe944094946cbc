// The event catalog: every event type a task's log can hold (seed 002's names, and the ones Outpost adds), each with
// its payload as a zod schema, whether the run's stream ends after it, which of its fields are content (prompts and
// responses: replaced by [REDACTED] in redacted mode) and one line saying when it is emitted. Everything else about
// events is derived from it: the EventType union and the typed emit (AgentRuntime.emit, EventLog.append), the
// terminal set (src/events/event-record.ts), redaction's content fields (src/events/redaction.ts) and the table in
// docs/reference/events.md (scripts/event-table.ts renders it, `npm run docs:events` writes it,
// test/project/docs.unit.test.ts checks it).
// The schemas give types; nothing parses a payload at runtime (every event is appended on the hot path). The tests
// parse every frame they read with them (test/support/helpers.ts parseEvent), strictly: a field missing here fails them.
// A contract, so the runtime's contract can name the payload types: it imports nothing but zod, other contracts and
// the floor (ErrorInfo, the Json type). Two payloads are also response bodies' parts: input_requested's is the task's
// pending_input, human_decision's the decision (src/approvals/requests.ts); their free-form fields are Json, so a task
// view carries them over RPC.
import { z } from "zod";
import { ErrorInfoSchema as ErrorInfo } from "../errors/error-info.ts";
import { JsonObjectSchema, JsonSchema } from "../lib/json.ts";
import { ExecutionResultSchema } from "./execution-result.ts";
import { AgentUsageSchema, CallUsageSchema, UsageRollupSchema } from "./usage.ts";

/** An event's payload: one object, or objects told apart by a field (llm_decision_decoded's `success`). */
type PayloadSchema = z.ZodObject | z.ZodDiscriminatedUnion<z.ZodObject[]>;

/** The field names of a payload, across the objects of a union. */
type FieldOf<P extends PayloadSchema> = KeysOfUnion<z.infer<P>> & string;
type KeysOfUnion<T> = T extends unknown ? keyof T : never;

export interface EventSpec<P extends PayloadSchema = PayloadSchema> {
  /** When the event is emitted, in one line (the docs table's). */
  description: string;
  readonly payload: P;
  /** The run's stream ends after it, and nothing is appended after it. */
  terminal: boolean;
  /** Fields holding prompts, responses or other content: replaced by [REDACTED] in redacted mode. */
  content: readonly FieldOf<P>[];
}

/**
 * One entry of the catalog. Its payload schema is built on first use: the Worker needs only the flags, and building
 * them all when an isolate starts costs about 45 ms of CPU (in a cold Node process); the tests and the docs script
 * build them.
 */
function event<const P extends PayloadSchema, const C extends readonly FieldOf<P>[] = readonly []>(spec: {
  description: string;
  payload: () => P;
  terminal?: boolean;
  content?: C;
}): EventSpec<P> {
  let payload: P | undefined;
  return {
    description: spec.description,
    get payload() {
      payload ??= spec.payload();
      return payload;
    },
    terminal: spec.terminal ?? false,
    content: spec.content ?? [],
  };
}

// ---- Shapes more than one event carries ------------------------------------------------------------------------

const turnIndex = z.number().int();
const count = z.number().int().nonnegative();
/** Seed 004's startup warnings about what a task or session starts with (rule 4); absent when there are none. */
const WARNINGS = z.array(z.string()).optional().describe("seed 004 startup warnings (rule 4: CLAUDE.md)");

/** Which part of a run made a model call (seed 002 call_site). */
const CallSite = z.enum(["decision_loop", "final_answer_synthesis", "context_compaction", "unspecified"]);
export type CallSite = z.infer<typeof CallSite>;

/** What every llm_* event of one call says about it. */
const modelCall = { turn_index: turnIndex, call_site: CallSite, attempt: count };

/** A built-in tool call. */
const toolCall = { turn_index: turnIndex, tool_use_id: z.string(), tool_name: z.string() };

/** An MCP tool call (seed 002 mcp_tool_call_*): the primary call, or one of its fallbacks. */
const mcpCall = {
  step_id: z.string().describe("the tool_use id"),
  turn_index: turnIndex,
  tool_name: z.string(),
  server: z.string(),
  attempt: count,
  fallback_for: z.string().optional().describe("the tool it stands in for"),
  fallback_index: count.optional(),
};

/** A seed 002 ModelDecision's action. */
const ActionStep = z.strictObject({
  type: z.enum(["call_skill", "run_command", "ask_user", "finish", "mcp_call"]),
  params: z.record(z.string(), z.unknown()),
  expected_output: z.string().nullable(),
});

const JsonObject = z.record(z.string(), z.unknown());

// ---- The catalog, in the order a run emits them ------------------------------------------------------------------

export const EVENT_CATALOG = {
  // The task and its run
  task_created: event({
    description: "The task was created: its first event.",
    payload: () =>
      z.strictObject({
        task_id: z.string(),
        agent: z.string(),
        input: z.string(),
        metadata: JsonObject,
        model: z.string(),
        parent_task_id: z.string().nullable(),
        files: z.array(z.string()).describe("seeded paths"),
        warnings: WARNINGS,
        trigger: z
          .union([
            z.strictObject({ hook_id: z.string(), delivery_id: z.string(), event: z.string().nullable() }),
            z.strictObject({
              kind: z.literal("schedule"),
              schedule_id: z.string(),
              due_at: z.string(),
              due_times: z.number().int().positive(),
            }),
            z.strictObject({
              kind: z.literal("evaluation"),
              evaluation_id: z.string(),
              case: z.string(),
              repetition: z.number().int().positive(),
            }),
            z.strictObject({
              kind: z.literal("replay"),
              task_id: z.string(),
              source: z.literal("bundle").optional().describe("a replay of an uploaded run bundle"),
            }),
          ])
          .optional()
          .describe(
            "the inbound webhook delivery, the schedule, the evaluation run or the replayed task that started it",
          ),
        forked_from: z
          .strictObject({ task_id: z.string(), checkpoint_id: z.string() })
          .optional()
          .describe("a fork's origin"),
        settled_tool_calls: z.array(z.string()).optional().describe("a fork's: calls it replays"),
        uncertain_tool_calls: z.array(z.string()).optional().describe("a fork's: calls a person must approve again"),
      }),
    content: ["input"],
  }),
  run_started: event({
    description: "The run started.",
    payload: () =>
      z.strictObject({
        task: z.string(),
        agent: z.string(),
        provider: z.string(),
        model: z.string(),
        dry_run: z.boolean(),
        max_turns: count,
        max_budget_usd: z.number().nullable(),
        max_tokens: count.nullable(),
      }),
    content: ["task"],
  }),
  run_resumed: event({
    description: "The run continued in a new instance of its object (eviction, restart, deploy).",
    payload: () => z.strictObject({ agent: z.string() }),
  }),
  step_resumed: event({
    description:
      "A step runs again: it was interrupted (an eviction or restart during it), or it is a model call the runtime tries again (its stream broke, or the provider refused it).",
    payload: () =>
      z.strictObject({
        step: z.string(),
        attempt: count,
        reason: z
          .enum(["interrupted", "stream_broken", "provider_retry"])
          .optional()
          .describe("absent from events logged before it was added: interrupted"),
        delay_ms: count.optional().describe("stream_broken, provider_retry: the pause before the attempt"),
      }),
  }),
  fault_injected: event({
    description:
      "A fault the task asked for was injected (docs/evaluations.md#fault-injection): a model or MCP call's, the object reset, or its clients dropped.",
    payload: () =>
      z.strictObject({
        fault: z.enum(["model_fault", "mcp_fault", "evict_after_step", "drop_client"]),
        kind: z.string().describe("429, 529, midstream, malformed; down, timeout; evict; drop"),
        call: count.nullable().describe("the model call struck"),
        step: count.nullable().describe("the checkpoint after which the object was reset or the clients dropped"),
        server: z.string().nullable(),
        tool: z.string().nullable(),
      }),
  }),

  // Model calls
  llm_request_sent: event({
    description: "A model call was sent.",
    payload: () => z.strictObject({ ...modelCall, provider: z.string(), model: z.string(), message_count: count }),
  }),
  llm_text_delta: event({
    description: "Text of the answer as it streams; the deltas of a call concatenate to its text.",
    payload: () => z.strictObject({ turn_index: turnIndex, index: count.describe("content block"), text: z.string() }),
    content: ["text"],
  }),
  llm_thinking_delta: event({
    description: "The model's thinking as it streams.",
    payload: () =>
      z.strictObject({ turn_index: turnIndex, index: count.describe("content block"), thinking: z.string() }),
    content: ["thinking"],
  }),
  web_search_started: event({
    description: "The model searched the web with Anthropic's server tool, inside the call: its query.",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex,
        index: count.describe("content block"),
        tool_use_id: z.string().describe("the server_tool_use id (srvtoolu_…)"),
        query: z.string(),
      }),
    content: ["query"],
  }),
  web_search_completed: event({
    description: "A web search's results came back, or the API's error for it.",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex,
        index: count.describe("content block"),
        tool_use_id: z.string(),
        query: z.string(),
        results: z.array(z.strictObject({ url: z.string(), title: z.string(), page_age: z.string().nullable() })),
        error_code: z.string().nullable().describe("e.g. max_uses_exceeded (no results then)"),
      }),
    content: ["query", "results"],
  }),
  llm_citation: event({
    description: "The answer's text cites a web search result, as it streams.",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex,
        index: count.describe("the citing text block"),
        url: z.string(),
        title: z.string().nullable(),
        cited_text: z.string(),
      }),
    content: ["url", "title", "cited_text"],
  }),
  llm_call_abandoned: event({
    description: "A call an eviction or restart cut short, or whose stream broke, counted in `usage.recovery`.",
    payload: () =>
      z.strictObject({
        call: z.string(),
        model: z.string(),
        input_tokens: count,
        output_tokens_estimated: count,
        cost_usd: z.number().nullable(),
        recovery: AgentUsageSchema.shape.recovery,
      }),
  }),
  llm_retry_scheduled: event({
    description:
      "The runtime will send a failed model call again after a short pause inside the run (a longer wait is provider_wait_started).",
    payload: () =>
      z.strictObject({
        ...modelCall,
        status: z
          .number()
          .int()
          .nullable()
          .describe("the refusal's HTTP status; null for a lost connection or a broken stream"),
        delay_seconds: z.number().nullable().describe("the pause before the next try"),
        http_attempt: count.describe("the try about to be made: 2 after the first failure"),
      }),
  }),
  context_compacted: event({
    description:
      "The conversation was compacted to stay inside the model's context window: from now on the model is sent its latest messages after a shorter form of the earlier ones (the event log, the conversation and the run bundle keep all of it).",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex.describe("the model turn it was made before"),
        strategy: z
          .enum(["clear_tool_results", "summarize", "anthropic_compaction"])
          .describe(
            "clear_tool_results: old tool results became notes; summarize: the earlier turns became a summary written with Outpost's prompt; anthropic_compaction: the Messages API's own compaction wrote it (summarizer anthropic)",
          ),
        reason: z
          .enum(["threshold", "prompt_too_long"])
          .describe("the prompt passed the agent's compact_at, or the provider refused it as too long"),
        tokens_before: count.describe("the prompt's estimated tokens before"),
        tokens_after: count.describe("and after"),
        messages_compacted: count.describe("the conversation's messages now sent in their shorter form"),
        tool_results_cleared: count,
        summary_calls: count.describe("the model calls that wrote the summary (call_site context_compaction)"),
      }),
  }),
  provider_wait_started: event({
    description:
      "A model call waits out its provider (an outage, a rate limit): the run stops, holding no connection, until `until`; the task shows it as waiting_for.",
    payload: () =>
      z.strictObject({
        step: z.string().describe("the journal step of the call, e.g. turn_3_model"),
        failures: z.number().int().positive().describe("the call's failures so far"),
        until: z.iso.datetime().describe("when the call is tried again"),
        delay_ms: count,
        horizon_at: z.iso.datetime().describe("past it, the run fails with the last error"),
        last_error: ErrorInfo,
      }),
  }),
  provider_wait_ended: event({
    description: "A model call's wait on its provider is over: the run goes on and tries the call again.",
    payload: () =>
      z.strictObject({
        step: z.string(),
        failures: z.number().int().positive(),
        waited_ms: count,
      }),
  }),
  llm_response_received: event({
    description: "A model call completed.",
    payload: () =>
      z.strictObject({
        ...modelCall,
        meta: z
          .strictObject({
            stop_reason: z.string().nullable(),
            request_id: z.string().nullable(),
            latency_ms: count,
            usage: CallUsageSchema,
            cache_miss_reason: z
              .strictObject({ type: z.string(), cache_missed_input_tokens: count.exactOptional() })
              .exactOptional()
              .describe(
                "Why the prompt cache missed the previous call's prefix, as the provider diagnosed it (Anthropic's API)",
              ),
          })
          .describe("stop_reason, request_id, latency_ms, usage with cost_usd, and cache_miss_reason after a miss"),
        response_preview: z.string(),
      }),
    content: ["response_preview"],
  }),
  llm_request_failed: event({
    description: "A model call failed.",
    payload: () => z.strictObject({ ...modelCall, error: ErrorInfo, retryable: z.boolean() }),
  }),

  // Tools (MCP tools use seed 002's mcp_tool_call_* names)
  tool_call_started: event({
    description: "A built-in tool call started.",
    payload: () => z.strictObject({ ...toolCall, input: z.unknown(), attempt: count }),
    content: ["input"],
  }),
  tool_call_completed: event({
    description: "A built-in tool call ended.",
    payload: () =>
      z.strictObject({
        ...toolCall,
        is_error: z.boolean(),
        output_preview: z.string(),
        duration_ms: count,
        recovered: z.literal(true).optional().describe("its changes were committed before an eviction: not run again"),
        details: JsonObject.optional().describe("e.g. a command's step_result and changed_paths"),
      }),
    content: ["output_preview", "details"],
  }),
  tool_denied: event({
    description: "A tool call was not run.",
    payload: () =>
      z.strictObject({
        ...toolCall,
        reason: z.enum(["not_allowed", "capability_off", "rejected_by_reviewer"]),
        decided_by: z.string().optional().describe("who rejected it"),
      }),
  }),
  todo_list_updated: event({
    description: "The agent's task list changed (TodoWrite).",
    payload: () =>
      z.strictObject({
        todos: z.array(
          z.strictObject({
            content: z.string(),
            status: z.enum(["pending", "in_progress", "completed"]),
            activeForm: z.string().optional(),
          }),
        ),
        completed: count,
        total: count,
      }),
    content: ["todos"],
  }),
  mcp_servers_connected: event({
    description: "The agent's MCP servers answered and listed their tools.",
    payload: () =>
      z.strictObject({
        server_count: count,
        tool_count: count,
        tools: z.array(z.string()).describe("full names"),
        servers: z.record(z.string(), z.strictObject({ transport: z.string() })).describe("transport used per server"),
        skipped_tools: z.array(z.strictObject({ server: z.string(), tool: z.string(), reason: z.string() })),
      }),
  }),
  mcp_connection_failed: event({
    description: "An MCP server could not be connected.",
    payload: () => z.strictObject({ server: z.string(), error: ErrorInfo }),
  }),
  mcp_tool_call_started: event({
    description: "An MCP tool call started.",
    payload: () => z.strictObject({ ...mcpCall, arguments: JsonObject, timeout_seconds: z.number() }),
    content: ["arguments"],
  }),
  mcp_tool_call_completed: event({
    description: "An MCP tool call returned a result.",
    payload: () =>
      z.strictObject({
        ...mcpCall,
        status: z.enum(["success", "error"]),
        is_error: z.boolean(),
        output_preview: z.string(),
        structured_content: z.unknown(),
        step_result: z.strictObject({
          step_id: z.string(),
          exit_code: z.number().int(),
          stdout_summary: z.string(),
          stderr_summary: z.string(),
          retry_count: count,
          status: z.enum(["success", "failed"]),
          stdout_artifact: z.string().nullable(),
          stderr_artifact: z.null(),
        }),
        duration_ms: count,
      }),
    content: ["output_preview", "structured_content", "step_result"],
  }),
  mcp_tool_call_failed: event({
    description: "An MCP tool call returned no result (its fallbacks may follow).",
    payload: () =>
      z.strictObject({
        ...mcpCall,
        error: z.strictObject({ code: z.string(), message: z.string() }).describe("code, message"),
        duration_ms: count,
      }),
  }),
  mcp_servers_disconnected: event({
    description: "The run's MCP sessions were closed, before its terminal event.",
    payload: () => z.strictObject({ servers: z.array(z.string()) }),
  }),

  // The run's end
  run_finished: event({
    description: "The run completed.",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex.nullable(),
        final_summary: z.string(),
        final_summary_truncated: z.boolean().describe("cut at 256 KiB; the task's result is whole"),
        usage: AgentUsageSchema.optional(),
        usage_rollup: UsageRollupSchema.optional().describe(
          "a task that delegated: its usage, each sub-agent's, by agent and model, and the tree's total",
        ),
        metadata: JsonObject,
        execution_result: ExecutionResultSchema.optional().describe(
          "an invocation's (`POST /v1/agents/:name/invoke`) seed 004 ExecutionResult",
        ),
      }),
    terminal: true,
    content: ["final_summary", "execution_result"],
  }),
  run_failed: event({
    description: "The run failed.",
    payload: () =>
      z.strictObject({
        reason: z.string(),
        error: ErrorInfo,
        errors: z.array(ErrorInfo),
        usage: AgentUsageSchema.optional().describe("absent for a crashed run"),
        usage_rollup: UsageRollupSchema.optional().describe("as run_finished's"),
        execution_result: ExecutionResultSchema.optional().describe(
          "an invocation's (`POST /v1/agents/:name/invoke`) seed 004 ExecutionResult",
        ),
      }),
    terminal: true,
    content: ["execution_result"],
  }),

  // Human feedback and checkpoints (seed 003)
  input_requested: event({
    description: "A tool call waits for a person: the task is now `input_required`.",
    payload: () =>
      z.strictObject({
        // Approve a tool call, or answer the agent's question.
        kind: z.enum(["approval", "question"]),
        // What a decision names to answer it (POST /v1/tasks/:id/resume request_id): the waiting call's tool_use id,
        // unique within the task. A decision for another request never applies to this one.
        request_id: z.string(),
        tool_use_id: z.string(),
        tool_name: z.string(),
        // The call's arguments.
        input: JsonSchema,
        // The agent's question (kind question).
        question: z.string().nullable(),
        requested_at: z.iso.datetime(),
        // When the wait ends by itself (the agent's approvalTimeoutSeconds), or null.
        expires_at: z.iso.datetime().nullable(),
        reason: z.string().optional().describe("why a person is asked, when not for the agent's permissions"),
        turn_index: turnIndex,
      }),
    content: ["input", "question"],
  }),
  human_decision: event({
    description: "A person answered a request, or its approval timeout did.",
    payload: () =>
      z.strictObject({
        tool_use_id: z.string(),
        tool_name: z.string(),
        kind: z.enum(["approval", "question"]),
        // The request it answers (input_requested's request_id); absent on decisions stored before request ids existed.
        request_id: z.string().optional(),
        // "fail" is the approval timeout's own decision, when the agent says a timeout fails the run.
        action: z.enum(["approve", "reject", "modify", "fail"]),
        // The answer to a question, or the reason given to the model with a rejection.
        message: z.string().nullable(),
        // modify: the arguments the waiting call runs with instead.
        tool_input: JsonObjectSchema.nullable(),
        state_updates: z
          .strictObject({
            messages: z
              .array(
                z.strictObject({
                  role: z.literal("user"),
                  content: z.union([
                    z.string(),
                    z.array(z.strictObject({ type: z.literal("text"), text: z.string() })),
                  ]),
                }),
              )
              .optional(),
            metadata: JsonObjectSchema.optional(),
            // A workflow's State routing_key, replaced (null clears it).
            routing_key: z.string().nullable().optional(),
          })
          // Seed 003 state_updates: messages are appended after the turn's tool results; metadata replaces the task's.
          .nullable(),
        decided_by: z.string().describe("a fingerprint of the API key, or `timeout`"),
        decided_at: z.iso.datetime(),
      }),
    content: ["message", "tool_input", "state_updates"],
  }),
  checkpoint_saved: event({
    description: "A checkpoint was recorded: see [checkpoints](../checkpoints-and-forks.md).",
    payload: () =>
      z.strictObject({
        checkpoint_id: z.uuid(),
        position: z.string(),
        sequence: count,
        next_action: z.enum(["model_turn", "tool_calls", "finish", "run_node"]),
        message_count: count,
        awaiting_human: z.boolean(),
      }),
  }),

  // Workflow runs (seed 003 Workflow; see docs/workflows.md)
  workflow_node_started: event({
    description: "A workflow's node started: the State as it was is its checkpoint (`position` = the node id).",
    payload: () =>
      z.strictObject({
        node: z.string(),
        type: z.enum(["agent", "tool", "condition", "human"]),
        iteration: count.describe("the node executions and pattern rounds counted against max_iterations so far"),
      }),
  }),
  workflow_node_completed: event({
    description: "A workflow's node completed; the State was updated with what it did.",
    payload: () =>
      z.strictObject({
        node: z.string(),
        type: z.enum(["agent", "tool", "condition", "human"]),
        iteration: count,
        current_agent: z.string().nullable(),
        routing_key: z.string().nullable(),
        message_count: count.describe("the State's messages after the node"),
      }),
  }),
  workflow_edge_taken: event({
    description: "A workflow run follows an edge to the next node.",
    payload: () =>
      z.strictObject({
        from: z.string(),
        to: z.string(),
        edge_index: count.describe("the edge's place in the workflow's `edges`"),
        condition: z.string().nullable().describe("the edge's condition, which held; null for an unconditional edge"),
      }),
  }),
  subagent_started: event({
    description: "A Task call delegated to a sub-agent: its child task was started in its own object.",
    payload: () =>
      z.strictObject({
        tool_use_id: z.string(),
        child_task_id: z.string(),
        agent: z.string(),
        description: z.string(),
        depth: count.describe("1 for a root task's children"),
      }),
    content: ["description"],
  }),
  subagent_finished: event({
    description: "A sub-agent's child task ended; its answer is the Task call's result.",
    payload: () =>
      z.strictObject({
        tool_use_id: z.string(),
        child_task_id: z.string(),
        agent: z.string(),
        status: z.enum(["completed", "failed", "canceled"]),
        is_error: z.boolean(),
      }),
  }),
  subagent_input_requested: event({
    description:
      "A sub-agent waits for a person: the parent shows its request, and POST /v1/tasks/:id/resume on the parent answers it.",
    payload: () =>
      z.strictObject({
        tool_use_id: z.string().describe("the parent's Task call"),
        child_task_id: z.string(),
        agent: z.string(),
        request_id: z.string().describe("the child's request, as a decision names it"),
        kind: z.enum(["approval", "question"]),
        tool_name: z.string(),
        question: z.string().nullable(),
      }),
    content: ["question"],
  }),
  subagent_input_answered: event({
    description: "A sub-agent's request was answered (through its parent or directly): it runs again.",
    payload: () =>
      z.strictObject({
        tool_use_id: z.string(),
        child_task_id: z.string(),
        agent: z.string(),
        request_id: z.string(),
      }),
  }),
  run_canceled: event({
    description: "A client canceled the task.",
    payload: () => z.strictObject({ reason: z.string(), previous_status: z.string() }),
    terminal: true,
  }),

  // A chat session's turns (seed 004 AgentSession; see docs/sessions.md)
  session_created: event({
    description: "The session was created: its first event.",
    payload: () =>
      z.strictObject({
        session_id: z.string(),
        agent: z.string(),
        metadata: JsonObject,
        model: z.string(),
        busy: z.enum(["reject", "enqueue", "interrupt"]),
        files: z.array(z.string()).describe("seeded paths"),
        warnings: WARNINGS,
      }),
  }),
  turn_queued: event({
    description: "A message was accepted as the session's next turn.",
    payload: () => z.strictObject({ turn_id: z.string(), index: count, message: z.string(), streaming: z.boolean() }),
    content: ["message"],
  }),
  turn_started: event({
    description: "A turn started: its message is now the conversation's last.",
    payload: () =>
      z.strictObject({
        turn_id: z.string(),
        index: count,
        message: z.string(),
        streaming: z.boolean(),
        unanswered_tool_calls: z
          .array(z.string())
          .describe("calls the turn before left without a result, answered before the message"),
      }),
    content: ["message"],
  }),
  turn_finished: event({
    description: "A turn ended: its ExecutionResult (seed 004). The turn's stream ends after it.",
    payload: () =>
      z.strictObject({
        turn_id: z.string(),
        index: count,
        status: z.enum(["completed", "failed", "canceled"]),
        result: ExecutionResultSchema,
      }),
    content: ["result"],
  }),
  session_closed: event({
    description: "The session was closed: its last event.",
    payload: () => z.strictObject({ reason: z.string(), turns: count, usage: AgentUsageSchema }),
    terminal: true,
  }),

  // The skill agent's decision loop (seed 002; see docs/skills.md)
  skill_catalog_loaded: event({
    description: "The skill agent's catalog was loaded: see [skills](../skills.md).",
    payload: () =>
      z.strictObject({
        skills_count: count,
        skills_dir: z.string(),
        skills: z
          .array(z.strictObject({ name: z.string(), source: z.enum(["bundled", "r2"]), files: count }))
          .describe("name, source, files"),
        skipped: z.array(z.strictObject({ name: z.string(), reason: z.string() })).readonly(),
      }),
  }),
  skill_prefilter_completed: event({
    description: "The skills shown to the model were chosen.",
    payload: () =>
      z.strictObject({
        candidates: z
          .array(
            z.strictObject({
              name: z.string(),
              description: z.string(),
              score: z.number(),
              matched_terms: z.array(z.string()),
            }),
          )
          .describe("name, description, score, matched_terms"),
        candidate_count: count,
      }),
  }),
  skill_disclosure_loaded: event({
    description: "Skill files were loaded into the prompt.",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex,
        stage: z.enum(["skill_instructions", "skill_files"]),
        paths: z.array(z.string()),
        total_bytes: count,
        total_tokens: count,
        refused: z.array(
          z.strictObject({ path: z.string(), reason: z.enum(["unknown_path", "over_budget", "already_disclosed"]) }),
        ),
      }),
  }),
  prompt_budget_computed: event({
    description: "A decision turn's token budget was computed.",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex,
        max_context_tokens: count,
        response_headroom_tokens: count,
        allocated_prompt_tokens: count,
        allocated_disclosure_tokens: count,
      }),
  }),
  prompt_composed: event({
    description: "A decision turn's prompt was composed.",
    payload: () => z.strictObject({ turn_index: turnIndex, prompt_hash: z.string(), estimated_input_tokens: count }),
  }),
  native_tool_fallback: event({
    description: "The model called tools instead of answering with a decision; its calls became the plan.",
    payload: () => z.strictObject({ turn_index: turnIndex, reason: z.string() }),
    // The reason quotes why the answer did not decode, which may quote the answer itself.
    content: ["reason"],
  }),
  llm_decision_decoded: event({
    description: "The model's answer was decoded into a decision, or could not be (`success` false, with `error`).",
    payload: () =>
      z.discriminatedUnion("success", [
        z.strictObject({
          turn_index: turnIndex,
          success: z.literal(true),
          selected_skill: z.string().nullable(),
          reasoning_summary: z.string(),
          required_disclosure_paths: z.array(z.string()),
          planned_actions: z.array(ActionStep),
          raw_action_types: z.array(z.string()),
          response_kind: z.enum(["skill_call", "tool_call", "response"]),
          response_kind_reason: z.string(),
        }),
        z.strictObject({
          turn_index: turnIndex,
          success: z.literal(false),
          error: z.string(),
          raw_action_types: z.array(z.string()),
        }),
      ]),
    // A decode error may quote the model's answer.
    content: ["reasoning_summary", "planned_actions", "error"],
  }),
  self_handoff_detected: event({
    description: "A skill handed off to itself again and again.",
    payload: () => z.strictObject({ turn_index: turnIndex, selected_skill: z.string(), count }),
  }),
  self_handoff_constraint_applied: event({
    description: "The skill may not be called again.",
    payload: () => z.strictObject({ turn_index: turnIndex, blocked_skill: z.string() }),
  }),
  self_handoff_recovery_applied: event({
    description: "Still handing off to itself: the run finishes with what it has.",
    payload: () => z.strictObject({ turn_index: turnIndex, recovery_action_types: z.array(ActionStep.shape.type) }),
  }),
  skill_invocation_started: event({
    description: "A turn's actions started.",
    payload: () => z.strictObject({ turn_index: turnIndex, selected_skill: z.string().nullable() }),
  }),
  skill_step_executed: event({
    description: "An action ran (a try of it).",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex,
        step_id: z.string(),
        type: ActionStep.shape.type,
        status: z.enum(["success", "failed"]),
        retry_count: count,
        command: z.unknown().describe("run_command's, else null"),
        tool_name: z.unknown().describe("mcp_call's, else null"),
        output_preview: z.string(),
      }),
    content: ["command", "output_preview"],
  }),
  step_retry_scheduled: event({
    description: "A failed action will be tried again.",
    payload: () => z.strictObject({ turn_index: turnIndex, step_id: z.string(), retry_count: count }),
  }),
  skill_invocation_finished: event({
    description: "A turn's actions ended.",
    payload: () =>
      z.strictObject({
        turn_index: turnIndex,
        step_results: z.array(
          z.strictObject({
            turn: turnIndex,
            step_id: z.string(),
            type: ActionStep.shape.type,
            status: z.enum(["success", "failed", "skipped"]),
            summary: z.string(),
          }),
        ),
      }),
    content: ["step_results"],
  }),
  final_answer_synthesis_started: event({
    description: "The finish action's answer is being written (seed 002 final answer synthesis).",
    payload: () => z.strictObject({ turn_index: turnIndex, evidence_items: count }),
  }),
  final_answer_synthesis_completed: event({
    description: "The final answer was written.",
    payload: () => z.strictObject({ turn_index: turnIndex, summary_preview: z.string() }),
    content: ["summary_preview"],
  }),
  final_answer_synthesis_failed: event({
    description: "The synthesis call failed: the finish action's own text is the answer.",
    payload: () => z.strictObject({ turn_index: turnIndex, reason: z.string() }),
  }),
} as const;

/** The built-in event types. */
export type EventType = keyof typeof EVENT_CATALOG;

/** Every built-in event type, in the catalog's order. */
export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as EventType[];

/**
 * An event of an agent's own (a custom `execute()` calling `runtime.emit`): its name starts with `custom_`, which no
 * built-in type does, and its payload is any JSON object. It is never terminal and has no content fields.
 */
export type CustomEventType = `custom_${string}`;
export const CUSTOM_EVENT_PREFIX = "custom_";

/** What an event of type `T` carries. */
export type EventPayload<T extends EventType | CustomEventType> = T extends EventType
  ? z.infer<(typeof EVENT_CATALOG)[T]["payload"]>
  : Record<string, unknown>;
