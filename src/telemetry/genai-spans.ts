// A run's OpenTelemetry spans, by the GenAI semantic conventions of semconv 1.40.0 (SEMCONV_VERSION), derived from
// what the task's object already keeps: its event log, with the events its sub-agents forwarded to it. Nothing is
// held in memory while the run goes on (a run crosses many alarms and evictions), so the spans are rebuilt from the
// log when they are exported, with ids derived from it: the same log gives the same spans, and a second export
// after a restart sends the same span ids again (receivers dedupe by span id).
//
//   invoke_agent <agent>   the task's run (a session: each turn), INTERNAL
//   ├── chat <model>       each model call: tokens (cache reads and writes apart), finish reason, provider, Outpost's
//   │                      cost (outpost.usage.cost_usd)
//   └── execute_tool <tool> each tool call (built-in, MCP, Task); error.type when it failed
//       └── invoke_agent <sub-agent>  a Task call's child task, in the same trace
//
// No prompt or response content: the conventions make content capture opt-in, and Outpost does not capture it. The
// attributes are names, ids, counts and error codes, none of them content.
import type { EventRecord } from "../events/event-record.ts";
import { sha256Bytes, toHex } from "../lib/sha256.ts";
import {
  type AttributeValue,
  callKey,
  mcpKey,
  ms,
  PROVIDER_NAMES,
  STATUS,
  str,
  usageAttributes,
} from "./span-values.ts";

export type { AttributeValue };

/**
 * The semantic conventions these spans follow (their schema URL names it too): 1.40.0, the release that added
 * gen_ai.usage.cache_read.input_tokens and gen_ai.usage.cache_creation.input_tokens and made gen_ai.usage.input_tokens
 * the whole input, cached or not. (From 1.42 the GenAI conventions are deprecated in this schema: they moved to
 * open-telemetry/semantic-conventions-genai, with a schema URL of its own.)
 */
export const SEMCONV_VERSION = "1.40.0";

/** OTLP span kinds (opentelemetry-proto trace.proto SpanKind). */
export const SPAN_KIND = { internal: 1, client: 3 } as const;

export interface GenAiSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: (typeof SPAN_KIND)[keyof typeof SPAN_KIND];
  /** Milliseconds since the epoch (the log's timestamps have millisecond precision). */
  startMs: number;
  endMs: number;
  attributes: Record<string, AttributeValue>;
  /** ERROR with the failure's code (also its error.type), or UNSET. */
  error: string | null;
  /** The session turn the span is part of (its invoke_agent span's turn); null in a task's trace. */
  turnId: string | null;
}

/** What the spans are of: the root of the tree being exported (a task, or a session). */
export interface SpanSubject {
  id: string;
  kind: "task" | "session";
  assigned_agent: string;
  /** The task's W3C trace id (on every event of its log): the whole tree's spans share it. */
  traceId: string;
}

type Payload = Record<string, unknown>;

/**
 * A span id: the first 8 bytes of SHA-256 over the task's id and what the span is of within it (a tool_use id, the
 * sequence number of the event that opened a model call). Stable across exports of the same log.
 */
async function spanIdOf(taskId: string, key: string): Promise<string> {
  return toHex((await sha256Bytes(`outpost-span/${taskId}/${key}`)).subarray(0, 8));
}

/** A span being assembled: its id comes later (hashing is async), its parent by reference. */
interface Draft {
  taskId: string;
  key: string;
  parent: Draft | null;
  name: string;
  kind: GenAiSpan["kind"];
  startMs: number;
  endMs: number | null;
  attributes: Record<string, AttributeValue>;
  error: string | null;
  spanId?: string;
  /** A session turn's invoke_agent span: its turn. */
  turnId?: string;
}

/**
 * Every span of `subject`'s run: its own events (`own`, oldest first) and, from `forwarded`, each sub-agent's, as
 * children of the Task call that started it.
 */
export async function genAiSpans(
  subject: SpanSubject,
  own: Iterable<EventRecord>,
  forwarded: Iterable<EventRecord>,
): Promise<GenAiSpan[]> {
  const byTask = new Map<string, EventRecord[]>();
  for (const event of forwarded) {
    if (event.task_id === undefined) continue;
    const list = byTask.get(event.task_id);
    if (list) list.push(event);
    else byTask.set(event.task_id, [event]);
  }
  const drafts: Draft[] = [];
  const build = (
    taskId: string,
    kind: SpanSubject["kind"],
    agent: string,
    events: EventRecord[],
    parent: Draft | null,
    depth: number,
  ) => {
    const children = taskDrafts(taskId, kind, agent, events, parent, drafts);
    // The delegation limit bounds the depth; this only guards against a malformed log.
    if (depth > 10) return;
    for (const { childId, agent: childAgent, tool } of children) {
      build(childId, "task", childAgent, byTask.get(childId) ?? [], tool, depth + 1);
    }
  };
  build(subject.id, subject.kind, subject.assigned_agent, [...own], null, 0);
  for (const draft of drafts) draft.spanId = await spanIdOf(draft.taskId, draft.key);
  return drafts.map((draft) => ({
    traceId: subject.traceId,
    spanId: draft.spanId as string,
    parentSpanId: draft.parent?.spanId ?? "",
    name: draft.name,
    kind: draft.kind,
    startMs: draft.startMs,
    endMs: Math.max(draft.endMs ?? draft.startMs, draft.startMs),
    attributes: draft.attributes,
    error: draft.error,
    turnId: rootOf(draft).turnId ?? null,
  }));
}

function rootOf(draft: Draft): Draft {
  let root = draft;
  while (root.parent) root = root.parent;
  return root;
}

/** The drafts of one task's events, appended to `out`; returns the sub-agents it started, under their Task calls. */
function taskDrafts(
  taskId: string,
  kind: SpanSubject["kind"],
  assignedAgent: string,
  events: readonly EventRecord[],
  parent: Draft | null,
  out: Draft[],
): { childId: string; agent: string; tool: Draft }[] {
  const children: { childId: string; agent: string; tool: Draft }[] = [];
  let agent = assignedAgent;
  let provider: string | null = null;
  let model: string | null = null;
  /** The invoke_agent span events belong to: the task's run, or a session's current turn. */
  let run: Draft | null = null;
  const chats = new Map<string, Draft>();
  const tools = new Map<string, Draft>();
  const base = (): Record<string, AttributeValue> => ({
    "outpost.task.id": taskId,
    ...(provider ? { "gen_ai.provider.name": provider } : {}),
  });

  const openRun = (event: EventRecord, key: string, extra: Record<string, AttributeValue>): Draft => {
    const draft: Draft = {
      taskId,
      key,
      parent,
      name: `invoke_agent ${agent}`,
      kind: SPAN_KIND.internal,
      startMs: ms(event),
      endMs: null,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "outpost.task.id": taskId,
        ...(kind === "session" ? { "gen_ai.conversation.id": taskId } : {}),
        ...extra,
      },
      error: null,
    };
    out.push(draft);
    return draft;
  };
  /** Ends what the run left open (a call cut short by its end), then the run. */
  const closeRun = (at: number) => {
    for (const open of [...chats.values(), ...tools.values()]) {
      if (open.endMs === null) {
        open.endMs = at;
        open.attributes["outpost.incomplete"] = true;
      }
    }
    chats.clear();
    tools.clear();
    if (run && run.endMs === null) run.endMs = at;
  };
  const currentRun = (event: EventRecord): Draft => {
    run ??= openRun(event, "invoke_agent", {});
    return run;
  };
  const tool = (event: EventRecord, id: string, name: string, type: "function" | "extension"): Draft => {
    let draft = tools.get(id);
    if (!draft) {
      draft = {
        taskId,
        key: `execute_tool/${id}`,
        parent: currentRun(event),
        name: `execute_tool ${name}`,
        kind: SPAN_KIND.internal,
        startMs: ms(event),
        endMs: null,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": name,
          "gen_ai.tool.call.id": id,
          "gen_ai.tool.type": type,
          ...base(),
        },
        error: null,
      };
      tools.set(id, draft);
      out.push(draft);
    }
    return draft;
  };
  const fail = (draft: Draft, code: string) => {
    draft.error = code;
    draft.attributes["error.type"] = code;
  };

  for (const event of events) {
    const p = event.payload as Payload;
    switch (event.event_type) {
      case "task_created":
        model = str(p.model);
        currentRun(event);
        break;
      case "session_created":
        model = str(p.model);
        break;
      case "run_started": {
        agent = str(p.agent) ?? agent;
        provider = PROVIDER_NAMES[str(p.provider) ?? ""] ?? str(p.provider);
        model = str(p.model) ?? model;
        const current = currentRun(event);
        current.name = `invoke_agent ${agent}`;
        current.attributes["gen_ai.agent.name"] = agent;
        if (provider) current.attributes["gen_ai.provider.name"] = provider;
        if (model) current.attributes["gen_ai.request.model"] = model;
        break;
      }
      case "turn_started":
        closeRun(ms(event));
        run = openRun(event, `invoke_agent/${String(p.turn_id)}`, {
          "outpost.turn.id": String(p.turn_id),
          "outpost.turn.index": Number(p.index),
          ...(model ? { "gen_ai.request.model": model } : {}),
        });
        run.turnId = String(p.turn_id);
        break;
      case "llm_request_sent": {
        const key = callKey(p);
        const earlier = chats.get(key);
        if (earlier && earlier.endMs === null) {
          earlier.endMs = ms(event);
          earlier.attributes["outpost.incomplete"] = true;
        }
        const requested = str(p.model) ?? model ?? "";
        const draft: Draft = {
          taskId,
          key: `chat/${event.seq}`,
          parent: currentRun(event),
          name: `chat ${requested}`,
          kind: SPAN_KIND.client,
          startMs: ms(event),
          endMs: null,
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": requested,
            ...base(),
            "gen_ai.provider.name": PROVIDER_NAMES[str(p.provider) ?? ""] ?? str(p.provider) ?? "",
            "outpost.llm.call_site": String(p.call_site),
            "outpost.llm.turn_index": Number(p.turn_index),
          },
          error: null,
        };
        chats.set(key, draft);
        out.push(draft);
        break;
      }
      case "llm_response_received": {
        const draft = chats.get(callKey(p));
        if (!draft || draft.endMs !== null) break;
        draft.endMs = ms(event);
        const meta = (p.meta ?? {}) as Payload;
        const usage = (meta.usage ?? {}) as Payload;
        const a = draft.attributes;
        if (typeof usage.model === "string") a["gen_ai.response.model"] = usage.model;
        Object.assign(a, usageAttributes(usage));
        if (typeof usage.cost_usd === "number") a["outpost.usage.cost_usd"] = usage.cost_usd;
        if (typeof meta.stop_reason === "string") a["gen_ai.response.finish_reasons"] = [meta.stop_reason];
        if (typeof meta.request_id === "string") a["outpost.llm.request_id"] = meta.request_id;
        break;
      }
      case "llm_request_failed": {
        const draft = chats.get(callKey(p));
        if (!draft || draft.endMs !== null) break;
        draft.endMs = ms(event);
        fail(draft, str((p.error as Payload | undefined)?.code) ?? "_OTHER");
        break;
      }
      case "tool_call_started":
        tool(event, String(p.tool_use_id), String(p.tool_name), "function");
        break;
      case "subagent_started": {
        const draft = tool(event, String(p.tool_use_id), "Task", "function");
        draft.attributes["outpost.subagent.task_id"] = String(p.child_task_id);
        draft.attributes["outpost.subagent.agent"] = String(p.agent);
        children.push({ childId: String(p.child_task_id), agent: String(p.agent), tool: draft });
        break;
      }
      case "tool_call_completed": {
        const draft = tool(event, String(p.tool_use_id), String(p.tool_name), "function");
        if (draft.endMs !== null) break;
        draft.endMs = ms(event);
        // A call recovered after an eviction has its first start; one seen only at its end starts duration_ms before.
        if (draft.startMs === ms(event) && typeof p.duration_ms === "number") draft.startMs -= p.duration_ms;
        if (p.is_error === true) fail(draft, "tool_error");
        break;
      }
      case "tool_denied": {
        const draft = tool(event, String(p.tool_use_id), String(p.tool_name), "function");
        draft.endMs = ms(event);
        fail(draft, String(p.reason));
        break;
      }
      case "mcp_tool_call_started": {
        const draft = tool(event, mcpKey(p), String(p.tool_name), "extension");
        draft.attributes["outpost.mcp.server"] = String(p.server);
        break;
      }
      case "mcp_tool_call_completed": {
        const draft = tool(event, mcpKey(p), String(p.tool_name), "extension");
        if (draft.endMs !== null) break;
        draft.endMs = ms(event);
        if (p.is_error === true) fail(draft, "tool_error");
        break;
      }
      case "mcp_tool_call_failed": {
        const draft = tool(event, mcpKey(p), String(p.tool_name), "extension");
        if (draft.endMs !== null) break;
        draft.endMs = ms(event);
        fail(draft, str((p.error as Payload | undefined)?.code) ?? "_OTHER");
        break;
      }
      case "run_finished":
      case "run_failed":
      case "run_canceled": {
        const current = currentRun(event);
        const usage = (p.usage ?? null) as Payload | null;
        if (usage && kind === "task") {
          Object.assign(current.attributes, usageAttributes(usage));
          if (typeof usage.total_cost_usd === "number")
            current.attributes["outpost.usage.cost_usd"] = usage.total_cost_usd;
        }
        if (kind === "task") current.attributes["outpost.task.status"] = STATUS[event.event_type] ?? event.event_type;
        if (event.event_type === "run_failed") fail(current, str((p.error as Payload | undefined)?.code) ?? "_OTHER");
        if (kind === "task") closeRun(ms(event));
        break;
      }
      case "turn_finished":
        if (run) {
          run.attributes["outpost.turn.status"] = String(p.status);
          if (p.status === "failed") fail(run, "turn_failed");
        }
        closeRun(ms(event));
        run = null;
        break;
      case "session_closed":
        closeRun(ms(event));
        run = null;
        break;
    }
  }
  // A log without its end (a sub-agent its parent stopped hearing from): what is open ends at its last event.
  const last = events.at(-1);
  if (last) closeRun(ms(last));
  return children;
}
