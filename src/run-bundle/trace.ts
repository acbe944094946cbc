// Seed 003's TraceLog and Task, read from what the run recorded: GET /v1/tasks/:id/trace, and trace.json and task.json
// in the run bundle. The event log is the run's history, so the trace is built from it rather than kept beside it: one
// step per model turn with the tool calls it asked for (built-in, MCP and Anthropic's web search), and one per
// moment of the run's life (started, resumed, retried, waiting for a person, answered, ended). What the event log
// keeps out of reach under redaction_mode "redacted" stays out of the trace too.
import type { StepRecord, SubAgentSessionInfo, ToolCallRecord, TraceLog } from "../contracts/trace.ts";
import type { EventRecord } from "../events/event-record.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/** Seed 003 Task, as task.json of the run bundle holds it. */
export interface SeedTask {
  id: string;
  description: string;
  status: string;
  assigned_agent: string;
  result: string | null;
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  retention_days: number;
  parent_task_id: string | null;
}

export function seedTask(task: TaskRecord): SeedTask {
  return {
    id: task.id,
    description: task.input,
    status: task.status,
    assigned_agent: task.assigned_agent,
    result: task.result,
    error: task.error ? `${task.error.code}: ${task.error.message}` : null,
    created_at: task.created_at,
    started_at: task.started_at,
    completed_at: task.completed_at,
    retention_days: task.retention_days,
    parent_task_id: task.parent_task_id,
  };
}

type Payload = Record<string, unknown>;

/** What a trace is of: a task (its record), or a sub-agent known from its parent's records of it. */
export type TraceSubject = Pick<TaskRecord, "id" | "assigned_agent" | "created_at">;

/**
 * The trace of `task` as a tree: its own events, and under `sub_agent_sessions` each of its sub-agents' traces, built
 * from what they forwarded to its log (`forwarded`: every task below it, marked with task_id; src/events/event-tree.ts).
 */
export function traceTree(task: TraceSubject, own: Iterable<EventRecord>, forwarded: Iterable<EventRecord>): TraceLog {
  const byTask = new Map<string, EventRecord[]>();
  for (const event of forwarded) {
    const id = event.task_id;
    if (id === undefined) continue;
    const list = byTask.get(id);
    if (list) list.push(event);
    else byTask.set(id, [event]);
  }
  const build = (subject: TraceSubject, events: Iterable<EventRecord>, depth: number): TraceLog => {
    const list = [...events];
    const trace = traceLog(subject, list);
    // Depth is bounded by the delegation limit; the bound here only guards against a malformed log.
    if (depth > 10) return trace;
    for (const event of list) {
      if (event.event_type !== "subagent_started") continue;
      const p = event.payload as Payload;
      const childId = String(p.child_task_id);
      const childEvents = byTask.get(childId) ?? [];
      const child: TraceSubject = {
        id: childId,
        assigned_agent: String(p.agent),
        created_at: childEvents[0]?.timestamp ?? event.timestamp,
      };
      trace.sub_agent_sessions[childId] = {
        session_id: childId,
        agent: String(p.agent),
        message_count: messageCount(childEvents),
        status: sessionStatus(childEvents),
        parent_task_id: subject.id,
        tool_use_id: String(p.tool_use_id),
        task_description: String(p.description ?? ""),
        trace: build(child, childEvents, depth + 1),
      };
      const last = childEvents.at(-1)?.timestamp;
      if (last && last > trace.updated_at) trace.updated_at = last;
    }
    return trace;
  };
  return build(task, own, 0);
}

/**
 * The length of a task's conversation from its events: what its last model request sent (message_count), plus the
 * reply that came back, or what its last checkpoint recorded, whichever is later.
 */
function messageCount(events: readonly EventRecord[]): number {
  let count = 0;
  let sent = 0;
  for (const event of events) {
    const p = event.payload as Payload;
    if (event.event_type === "llm_request_sent" && typeof p.message_count === "number") sent = p.message_count;
    else if (event.event_type === "llm_response_received") count = Math.max(count, sent + 1);
    else if (event.event_type === "checkpoint_saved" && typeof p.message_count === "number")
      count = Math.max(count, p.message_count);
  }
  // A task that has not called its model yet has its prompt.
  return Math.max(count, events.length > 0 ? 1 : 0);
}

/** Where a sub-agent stands, from its events. */
function sessionStatus(events: readonly EventRecord[]): SubAgentSessionInfo["status"] {
  let status: SubAgentSessionInfo["status"] = "running";
  for (const event of events) {
    if (event.event_type === "run_finished") status = "completed";
    else if (event.event_type === "run_failed") status = "failed";
    else if (event.event_type === "run_canceled") status = "canceled";
    else if (event.event_type === "input_requested") status = "input_required";
    else if (event.event_type === "human_decision" || event.event_type === "run_resumed") {
      if (status === "input_required") status = "running";
    }
  }
  return status;
}

/** The trace of `task` from its own events, oldest first (sub_agent_sessions empty: see traceTree). */
export function traceLog(task: TraceSubject, events: Iterable<EventRecord>): TraceLog {
  const steps: StepRecord[] = [];
  /** The open step of each model turn, and its tool calls by tool_use id. */
  const turns = new Map<string, { step: StepRecord; calls: Map<string, ToolCallRecord>; started: number }>();
  let agent = task.assigned_agent;
  /** What each Task call delegated (its tool_call_started is not sent: subagent_started says it). */
  const delegations = new Map<string, Record<string, unknown>>();
  /** A session's turn under way: model turns are numbered within the conversation, keyed within the session turn. */
  let sessionTurn = "";
  let updated = task.created_at;
  /** Seed 003: when the log was created, i.e. its first event (a sub-agent's trace in its parent's knows no more). */
  let created: string | null = null;

  const add = (event: EventRecord, name: string, status: StepRecord["status"], message: string) => {
    steps.push({ step_name: name, message, timestamp: event.timestamp, status, agent, tool_calls: [], duration_ms: 0 });
  };
  /** The step of the turn an event belongs to, opened by its first event. */
  const turnOf = (event: EventRecord, index: number) => {
    const key = `${sessionTurn}#${index}`;
    let turn = turns.get(key);
    if (!turn) {
      const step: StepRecord = {
        step_name: `turn_${index}`,
        message: `Model turn ${index}.`,
        timestamp: event.timestamp,
        status: "info",
        agent,
        tool_calls: [],
        duration_ms: 0,
      };
      steps.push(step);
      turn = { step, calls: new Map(), started: Date.parse(event.timestamp) };
      turns.set(key, turn);
    }
    turn.step.duration_ms = Math.max(0, Date.parse(event.timestamp) - turn.started);
    return turn;
  };
  const callOf = (event: EventRecord, index: number, id: string, tool: string, server: string | null) => {
    const turn = turnOf(event, index);
    let call = turn.calls.get(id);
    if (!call) {
      call = { tool_use_id: id, server, tool, arguments: {}, result: null, error: null, duration_ms: null };
      turn.calls.set(id, call);
      turn.step.tool_calls.push(call);
    }
    return call;
  };

  for (const event of events) {
    const p = event.payload as Payload;
    updated = event.timestamp;
    created ??= event.timestamp;
    const turnIndex = typeof p.turn_index === "number" ? p.turn_index : null;
    switch (event.event_type) {
      case "task_created":
      case "session_created":
        add(event, event.event_type, "info", `Created for agent ${String(p.agent)} on ${String(p.model)}.`);
        break;
      case "run_started":
        agent = String(p.agent);
        add(event, "run_started", "info", `The run started: ${String(p.provider)} ${String(p.model)}.`);
        break;
      case "run_resumed":
        add(event, "run_resumed", "warning", "The run continued in a new instance of its object.");
        break;
      case "step_resumed":
        add(event, "step_resumed", "warning", `The interrupted step ${String(p.step)} ran again.`);
        break;
      case "turn_started":
        sessionTurn = String(p.turn_id);
        add(event, "turn_started", "info", `Session turn ${Number(p.index)} started (${sessionTurn}).`);
        break;
      case "llm_request_sent":
        if (turnIndex !== null) turnOf(event, turnIndex);
        break;
      case "llm_response_received":
        if (turnIndex !== null) {
          const meta = (p.meta ?? {}) as Payload;
          const usage = (meta.usage ?? {}) as Payload;
          turnOf(event, turnIndex).step.message =
            `Model turn ${turnIndex}: stop_reason ${String(meta.stop_reason)}, ${Number(usage.input_tokens ?? 0)} ` +
            `input and ${Number(usage.output_tokens ?? 0)} output tokens.`;
        }
        break;
      case "llm_retry_scheduled":
        add(event, "llm_retry", "warning", `The model call will be sent again (status ${String(p.status)}).`);
        break;
      case "llm_request_failed": {
        const error = (p.error ?? {}) as Payload;
        add(
          event,
          "llm_request_failed",
          p.retryable ? "warning" : "error",
          `${String(error.code)}: ${String(error.message)}`,
        );
        if (turnIndex !== null && !p.retryable) turnOf(event, turnIndex).step.status = "error";
        break;
      }
      case "tool_call_started":
        if (turnIndex !== null) {
          const call = callOf(event, turnIndex, String(p.tool_use_id), String(p.tool_name), null);
          call.arguments = asObject(p.input);
        }
        break;
      case "subagent_started":
        delegations.set(String(p.tool_use_id), {
          agent: p.agent,
          description: p.description,
          child_task_id: p.child_task_id,
        });
        break;
      case "tool_call_completed":
        if (turnIndex !== null) {
          const call = callOf(event, turnIndex, String(p.tool_use_id), String(p.tool_name), null);
          call.arguments = delegations.get(String(p.tool_use_id)) ?? call.arguments;
          call.result = {
            content: p.output_preview,
            is_error: p.is_error,
            ...(p.details !== undefined ? { details: p.details } : {}),
          };
          call.error = p.is_error ? String(p.output_preview) : null;
          call.duration_ms = typeof p.duration_ms === "number" ? p.duration_ms : null;
        }
        break;
      case "tool_denied":
        if (turnIndex !== null) {
          const call = callOf(event, turnIndex, String(p.tool_use_id), String(p.tool_name), null);
          call.error = `not run: ${String(p.reason)}`;
        }
        break;
      case "mcp_tool_call_started":
        if (turnIndex !== null) {
          const call = callOf(event, turnIndex, callKey(p), String(p.tool_name), String(p.server));
          call.arguments = asObject(p.arguments);
        }
        break;
      case "mcp_tool_call_completed":
        if (turnIndex !== null) {
          const call = callOf(event, turnIndex, callKey(p), String(p.tool_name), String(p.server));
          call.result = { content: p.output_preview, is_error: p.is_error, structured_content: p.structured_content };
          call.error = p.is_error ? String(p.output_preview) : null;
          call.duration_ms = typeof p.duration_ms === "number" ? p.duration_ms : null;
        }
        break;
      case "mcp_tool_call_failed":
        if (turnIndex !== null) {
          const call = callOf(event, turnIndex, callKey(p), String(p.tool_name), String(p.server));
          const error = (p.error ?? {}) as Payload;
          call.error = `${String(error.code)}: ${String(error.message)}`;
          call.duration_ms = typeof p.duration_ms === "number" ? p.duration_ms : null;
        }
        break;
      case "mcp_connection_failed": {
        const error = (p.error ?? {}) as Payload;
        add(event, "mcp_connection_failed", "warning", `MCP server ${String(p.server)}: ${String(error.message)}`);
        break;
      }
      case "web_search_started":
        if (turnIndex !== null) {
          const call = callOf(event, turnIndex, String(p.tool_use_id), "web_search", "anthropic");
          call.arguments = { query: p.query };
        }
        break;
      case "web_search_completed":
        if (turnIndex !== null) {
          const call = callOf(event, turnIndex, String(p.tool_use_id), "web_search", "anthropic");
          call.arguments = { query: p.query };
          call.result = { results: p.results };
          call.error = typeof p.error_code === "string" ? p.error_code : null;
        }
        break;
      case "input_requested":
        add(event, "input_requested", "info", `Waiting for a person: ${String(p.kind)} of ${String(p.tool_name)}.`);
        break;
      case "human_decision":
        add(event, "human_decision", "info", `A person answered: ${String(p.action)} ${String(p.tool_name)}.`);
        break;
      case "run_finished":
        add(event, "run_finished", "info", "The run completed.");
        break;
      case "run_failed":
        add(event, "run_failed", "error", String(p.reason));
        break;
      case "run_canceled":
        add(event, "run_canceled", "warning", String(p.reason));
        break;
      case "turn_finished":
        add(
          event,
          "turn_finished",
          p.status === "completed" ? "info" : p.status === "failed" ? "error" : "warning",
          `Session turn ${Number(p.index)} ended: ${String(p.status)}.`,
        );
        break;
      case "session_closed":
        add(event, "session_closed", "info", "The session was closed.");
        break;
    }
  }
  for (const { step } of turns.values()) {
    if (step.status === "info" && step.tool_calls.some((call) => call.error !== null)) step.status = "warning";
  }
  return {
    task_id: task.id,
    steps,
    sub_agent_sessions: {},
    created_at: created ?? task.created_at,
    updated_at: updated,
  };
}

/** An MCP call's key: its tool_use id, and the tool it stands in for when it is a fallback. */
function callKey(p: Payload): string {
  return p.fallback_for === undefined ? String(p.step_id) : `${String(p.step_id)}:${String(p.tool_name)}`;
}

function asObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { value };
}
