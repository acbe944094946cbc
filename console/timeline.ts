// The live timeline of a task's or a session's events: model text as it streams, thinking, tool calls with their
// inputs and results, requests for a person and their answers, waits for the model provider, checkpoints (each with
// a fork button), usage and cost, and the sub-agent tree (a parent's stream carries its children's events marked
// task_id and depth; each child gets a nested branch under the call that started it). Events are queued and rendered
// in batches, at most one batch per animation frame and about 30 ms of work each, so a replay of thousands of events
// never blocks the page; long inputs and outputs are cut behind a "Show all" button and a generic event's payload is
// only turned into text when it is opened. Every string from an event reaches the page as a text node (dom.ts). The
// rows that need only their event are in timeline-rows.ts, the tool calls' cards in tool-cards.ts.
import type { OutpostEvent } from "@outpost/client";
import {
  badge,
  cacheShare,
  collapsible,
  formatCost,
  h,
  type InputTokens,
  inputTokens,
  pretty,
  totalInput,
} from "./dom.ts";
import {
  checkpointRow,
  decisionVerb,
  genericRow,
  metaRow,
  num,
  type Payload,
  row,
  str,
  todosRow,
  usageLine,
} from "./timeline-rows.ts";
import { ToolCards } from "./tool-cards.ts";
import { clockTime } from "./waiting.ts";

/** How the timeline names a compaction's strategy (the context_compacted event). */
const COMPACTION_STRATEGIES: Record<string, string> = {
  clear_tool_results: "old tool results cleared",
  summarize: "earlier turns summarized",
  anthropic_compaction: "earlier turns summarized by the Messages API",
};

export interface TimelineOptions {
  /** Shows a fork button on each checkpoint: the sub-agent that recorded it (null: the stream's own task), its id. */
  onFork?: (taskId: string | null, checkpointId: string) => void;
  /** After each rendered batch. */
  onRendered?: (timeline: Timeline) => void;
  /** The conversation style of the session page (messages as bubbles). */
  chat?: boolean;
}

/** Token and cost totals of the model calls seen so far (the stream's own task and its sub-agents). */
export interface Totals {
  /** The input as Outpost counts it (InputTokens): uncached, cache writes (and their 1-hour part), cache reads. */
  input: InputTokens;
  outputTokens: number;
  costUsd: number;
  modelCalls: number;
}

interface Branch {
  list: HTMLElement;
  status: HTMLElement | null;
}

/**
 * How long one batch may work before it yields to the browser until the next frame: under 50 ms, the longest a click
 * may wait unnoticed, and long enough that a replay of thousands of events needs few frames.
 */
const FRAME_BUDGET_MS = 30;

export class Timeline {
  readonly root: HTMLOListElement;
  /** The highest seq rendered. */
  lastSeq = 0;
  readonly totals: Totals = {
    input: { plain: 0, written: 0, written1h: 0, read: 0 },
    outputTokens: 0,
    costUsd: 0,
    modelCalls: 0,
  };
  private readonly options: TimelineOptions;
  private readonly queue: OutpostEvent[] = [];
  private scheduled = false;
  private readonly texts = new Map<string, Text>();
  private readonly tools = new ToolCards();
  private readonly branches = new Map<string, Branch>();
  /** Whether new rows scroll the page to the bottom: the reader is there (kept by a scroll listener, so a batch never reads layout). */
  private following: boolean;

  constructor(options: TimelineOptions = {}) {
    this.options = options;
    this.following = options.chat === true;
    this.root = h("ol", { class: options.chat ? "timeline chat" : "timeline", "aria-label": "Events" });
    addEventListener(
      "scroll",
      () => {
        const scroller = document.scrollingElement ?? document.documentElement;
        this.following = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
      },
      { passive: true },
    );
  }

  push(event: OutpostEvent): void {
    this.queue.push(event);
    if (!this.scheduled) {
      this.scheduled = true;
      schedule(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    const started = performance.now();
    let done = 0;
    while (done < this.queue.length && performance.now() - started < FRAME_BUDGET_MS) {
      const event = this.queue[done++] as OutpostEvent;
      if (event.seq <= this.lastSeq) continue;
      this.lastSeq = event.seq;
      this.render(event);
    }
    this.queue.splice(0, done);
    if (this.queue.length > 0) {
      this.scheduled = true;
      schedule(() => this.flush());
    }
    if (this.following) {
      const scroller = document.scrollingElement ?? document.documentElement;
      scroller.scrollTop = scroller.scrollHeight;
    }
    this.root.dataset.seq = String(this.lastSeq);
    this.options.onRendered?.(this);
  }

  /** The list a task's events go to: the root for the stream's own task, else its branch of the tree. */
  private listFor(event: OutpostEvent): HTMLElement {
    if (event.task_id === undefined || event.depth === undefined) return this.root;
    const known = this.branches.get(event.task_id);
    if (known) return known.list;
    // A sub-agent whose subagent_started this stream did not carry (a ?depth= cut, say): a branch of its own at the top.
    return this.branch(this.root, event.task_id, "sub-agent", event.task_id).list;
  }

  private branch(parent: HTMLElement, taskId: string, agent: string, description: string): Branch {
    const status = badge("running");
    const list = h("ol", { class: "branch-events" });
    const details = h(
      "details",
      { open: true },
      h(
        "summary",
        null,
        h("span", { class: "agent" }, agent),
        " ",
        status,
        " ",
        h("span", { class: "muted" }, description),
      ),
      h(
        "p",
        { class: "muted small" },
        "Task ",
        h("a", { href: `/console/tasks/${encodeURIComponent(taskId)}` }, taskId),
      ),
      list,
    );
    parent.appendChild(h("li", { class: "ev subagent" }, details));
    const branch = { list, status };
    this.branches.set(taskId, branch);
    return branch;
  }

  private render(event: OutpostEvent): void {
    const list = this.listFor(event);
    const p = event.payload as Payload;
    const taskKey = event.task_id ?? "";
    switch (event.event_type) {
      case "task_created":
        row(list, event, "message user", h("div", { class: "who" }, "Input"), collapsible(str(p.input), "text"));
        return;
      case "run_started":
        metaRow(list, event, `Run started · ${str(p.agent)} · ${str(p.model)}`);
        return;
      case "run_resumed":
        metaRow(list, event, "Run resumed in a new instance");
        return;
      case "llm_request_sent":
        // A new call: its text goes to new blocks (a call re-sent after an eviction streams its text again).
        for (const key of [...this.texts.keys()]) if (key.startsWith(`${taskKey}|`)) this.texts.delete(key);
        return;
      case "llm_text_delta":
        this.appendText(list, event, `${taskKey}|t|${num(p.turn_index)}|${num(p.index)}`, str(p.text), false);
        return;
      case "llm_thinking_delta":
        this.appendText(list, event, `${taskKey}|k|${num(p.turn_index)}|${num(p.index)}`, str(p.thinking), true);
        return;
      case "llm_response_received":
        this.usage(list, event, p);
        return;
      case "llm_retry_scheduled":
        metaRow(list, event, `Model call failed (${str(p.status ?? "connection")}); retrying`);
        return;
      case "provider_wait_started":
        row(
          list,
          event,
          "meta warn",
          `Waiting for the model provider until ${clockTime(p.until)}: ${str((p.last_error as Payload | undefined)?.message)}`,
        );
        return;
      case "provider_wait_ended":
        metaRow(list, event, "Trying the model provider again");
        return;
      case "context_compacted":
        metaRow(
          list,
          event,
          `Conversation compacted (${COMPACTION_STRATEGIES[str(p.strategy)] ?? str(p.strategy)}): ` +
            `about ${str(p.tokens_before)} → ${str(p.tokens_after)} tokens`,
        );
        return;
      case "llm_request_failed":
        row(list, event, "meta warn", `Model call failed: ${pretty(p.error)}`);
        return;
      case "tool_call_started":
        this.tools.started(list, event, str(p.tool_use_id), str(p.tool_name), p.input);
        return;
      case "mcp_tool_call_started":
        this.tools.started(list, event, str(p.step_id), `${str(p.server)} · ${str(p.tool_name)}`, p.arguments);
        return;
      case "tool_call_completed":
      case "mcp_tool_call_completed":
        this.tools.ended(
          list,
          event,
          str(p.tool_use_id ?? p.step_id),
          p.is_error === true ? "error" : "ok",
          p.output_preview,
          p.duration_ms,
        );
        return;
      case "mcp_tool_call_failed":
        this.tools.ended(list, event, str(p.step_id), "error", pretty(p.error), p.duration_ms);
        return;
      case "tool_denied":
        this.tools.denied(list, event, str(p.tool_use_id), str(p.tool_name), str(p.reason));
        return;
      case "todo_list_updated":
        todosRow(list, event, p);
        return;
      case "input_requested":
        row(
          list,
          event,
          "attention",
          p.kind === "question"
            ? `Question for a person: ${str(p.question)}`
            : `Waiting for a person to approve ${str(p.tool_name)}`,
        );
        return;
      case "human_decision":
        row(
          list,
          event,
          "meta decision",
          `${decisionVerb(str(p.action))} by ${str(p.decided_by)}`,
          p.message ? h("span", { class: "muted" }, ` — ${str(p.message)}`) : null,
        );
        return;
      case "checkpoint_saved":
        checkpointRow(list, event, p, this.options.onFork);
        return;
      case "subagent_started":
        this.branch(list, str(p.child_task_id), str(p.agent), str(p.description));
        return;
      case "subagent_finished": {
        const branch = this.branches.get(str(p.child_task_id));
        if (branch?.status) {
          const next = badge(str(p.status));
          branch.status.replaceWith(next);
          branch.status = next;
        }
        return;
      }
      case "subagent_input_requested":
        row(list, event, "attention", `Sub-agent ${str(p.agent)} waits for a person (${str(p.tool_name)})`);
        return;
      case "subagent_input_answered":
        metaRow(list, event, `Sub-agent ${str(p.agent)}'s request was answered`);
        return;
      case "run_finished":
        row(
          list,
          event,
          "end ok",
          h("div", { class: "who" }, "Finished"),
          p.final_summary ? collapsible(str(p.final_summary), "text") : null,
          usageLine(p.usage),
        );
        return;
      case "run_failed":
        row(
          list,
          event,
          "end error",
          h("div", { class: "who" }, "Failed"),
          collapsible(str(p.reason), "text"),
          usageLine(p.usage),
        );
        return;
      case "run_canceled":
        row(list, event, "end canceled", h("div", { class: "who" }, "Canceled"), str(p.reason));
        return;
      case "session_created":
        metaRow(list, event, `Session started with ${str(p.agent)}`);
        return;
      case "turn_queued":
        row(list, event, "message user", h("div", { class: "who" }, "You"), collapsible(str(p.message), "text"));
        return;
      case "turn_started":
        return;
      case "turn_finished": {
        const result = (p.result ?? {}) as Payload;
        if (result.is_error === true)
          row(list, event, "meta warn", `Turn ${str(p.status)}: ${str(result.error_reason)}`);
        else metaRow(list, event, `Turn ${str(p.status)}`);
        return;
      }
      case "session_closed":
        row(list, event, "end canceled", h("div", { class: "who" }, "Session closed"), str(p.reason));
        return;
      case "workflow_node_started":
        metaRow(list, event, `Node ${str(p.node)} (${str(p.type)}) started`);
        return;
      case "workflow_edge_taken":
        metaRow(list, event, `${str(p.from)} → ${str(p.to)}`);
        return;
      default:
        genericRow(list, event);
    }
  }

  private appendText(list: HTMLElement, event: OutpostEvent, key: string, text: string, thinking: boolean): void {
    const node = this.texts.get(key);
    if (node) {
      node.appendData(text);
      return;
    }
    const textNode = document.createTextNode(text);
    this.texts.set(key, textNode);
    const pre = h("pre", { class: "text" }, textNode);
    if (thinking) {
      row(list, event, "thinking", h("details", null, h("summary", null, "Thinking"), pre));
    } else {
      row(list, event, "message assistant", h("div", { class: "who" }, "Agent"), pre);
    }
  }

  private usage(list: HTMLElement, event: OutpostEvent, p: Payload): void {
    const meta = (p.meta ?? {}) as Payload;
    const usage = (meta.usage ?? {}) as Payload;
    const input = inputTokens(usage);
    const output = num(usage.output_tokens);
    const sum = this.totals.input;
    sum.plain += input.plain;
    sum.written += input.written;
    sum.written1h += input.written1h;
    sum.read += input.read;
    this.totals.outputTokens += output;
    if (typeof usage.cost_usd === "number") this.totals.costUsd += usage.cost_usd;
    this.totals.modelCalls += 1;
    const cache = cacheShare(input);
    row(
      list,
      event,
      "meta usage",
      `Model call · ${totalInput(input)} in / ${output} out · `,
      cache,
      cache ? " · " : null,
      `${formatCost(usage.cost_usd)}${typeof meta.latency_ms === "number" ? ` · ${meta.latency_ms} ms` : ""}`,
    );
  }
}

/** The next animation frame, or a timer in a hidden tab (where frames do not come). */
function schedule(fn: () => void): void {
  if (document.hidden) setTimeout(fn, 16);
  else requestAnimationFrame(fn);
}
