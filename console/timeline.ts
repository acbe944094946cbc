// The live timeline of a task's or a session's events: model text as it streams, thinking, tool calls with their
// inputs and results, requests for a person and their answers, checkpoints (each with a fork button), usage and
// cost, and the sub-agent tree (a parent's stream carries its children's events marked task_id and depth; each child
// gets a nested branch under the call that started it). Events are queued and rendered in batches, at most one batch
// per animation frame and about 12 ms of work each, so a replay of thousands of events never blocks the page; long
// inputs and outputs are cut behind a "Show all" button and a generic event's payload is only turned into text when
// it is opened. Every string from an event reaches the page as a text node (dom.ts).
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

interface ToolCard {
  row: HTMLElement;
  state: HTMLElement;
  output: HTMLElement;
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

type Payload = Record<string, unknown>;

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
  private readonly tools = new Map<string, ToolCard>();
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

  private row(
    list: HTMLElement,
    event: OutpostEvent,
    kind: string,
    ...children: (Node | string | null)[]
  ): HTMLElement {
    const li = h("li", { class: `ev ${kind}`, "data-seq": event.seq, "data-type": event.event_type }, ...children);
    list.appendChild(li);
    return li;
  }

  private meta(list: HTMLElement, event: OutpostEvent, ...text: (Node | string | null)[]): HTMLElement {
    return this.row(list, event, "meta", ...text);
  }

  private render(event: OutpostEvent): void {
    const list = this.listFor(event);
    const p = event.payload as Payload;
    const taskKey = event.task_id ?? "";
    switch (event.event_type) {
      case "task_created":
        this.row(list, event, "message user", h("div", { class: "who" }, "Input"), collapsible(str(p.input), "text"));
        return;
      case "run_started":
        this.meta(list, event, `Run started · ${str(p.agent)} · ${str(p.model)}`);
        return;
      case "run_resumed":
        this.meta(list, event, "Run resumed in a new instance");
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
        this.meta(list, event, `Model call failed (${str(p.status ?? "connection")}); retrying`);
        return;
      case "llm_request_failed":
        this.row(list, event, "meta warn", `Model call failed: ${pretty(p.error)}`);
        return;
      case "tool_call_started":
        this.toolStarted(list, event, str(p.tool_use_id), str(p.tool_name), p.input);
        return;
      case "mcp_tool_call_started":
        this.toolStarted(list, event, str(p.step_id), `${str(p.server)} · ${str(p.tool_name)}`, p.arguments);
        return;
      case "tool_call_completed":
      case "mcp_tool_call_completed":
        this.toolEnded(
          list,
          event,
          str(p.tool_use_id ?? p.step_id),
          p.is_error === true ? "error" : "ok",
          p.output_preview,
          p.duration_ms,
        );
        return;
      case "mcp_tool_call_failed":
        this.toolEnded(list, event, str(p.step_id), "error", pretty(p.error), p.duration_ms);
        return;
      case "tool_denied": {
        const card = this.tools.get(`${taskKey}|${str(p.tool_use_id)}`);
        if (card) this.setToolState(card, "denied", `denied: ${str(p.reason)}`);
        else this.row(list, event, "meta warn", `${str(p.tool_name)} was not run: ${str(p.reason)}`);
        return;
      }
      case "todo_list_updated":
        this.todos(list, event, p);
        return;
      case "input_requested":
        this.row(
          list,
          event,
          "attention",
          p.kind === "question"
            ? `Question for a person: ${str(p.question)}`
            : `Waiting for a person to approve ${str(p.tool_name)}`,
        );
        return;
      case "human_decision":
        this.row(
          list,
          event,
          "meta decision",
          `${decisionVerb(str(p.action))} by ${str(p.decided_by)}`,
          p.message ? h("span", { class: "muted" }, ` — ${str(p.message)}`) : null,
        );
        return;
      case "checkpoint_saved":
        this.checkpoint(list, event, p);
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
        this.row(list, event, "attention", `Sub-agent ${str(p.agent)} waits for a person (${str(p.tool_name)})`);
        return;
      case "subagent_input_answered":
        this.meta(list, event, `Sub-agent ${str(p.agent)}'s request was answered`);
        return;
      case "run_finished":
        this.row(
          list,
          event,
          "end ok",
          h("div", { class: "who" }, "Finished"),
          p.final_summary ? collapsible(str(p.final_summary), "text") : null,
          usageLine(p.usage),
        );
        return;
      case "run_failed":
        this.row(
          list,
          event,
          "end error",
          h("div", { class: "who" }, "Failed"),
          collapsible(str(p.reason), "text"),
          usageLine(p.usage),
        );
        return;
      case "run_canceled":
        this.row(list, event, "end canceled", h("div", { class: "who" }, "Canceled"), str(p.reason));
        return;
      case "session_created":
        this.meta(list, event, `Session started with ${str(p.agent)}`);
        return;
      case "turn_queued":
        this.row(list, event, "message user", h("div", { class: "who" }, "You"), collapsible(str(p.message), "text"));
        return;
      case "turn_started":
        return;
      case "turn_finished": {
        const result = (p.result ?? {}) as Payload;
        if (result.is_error === true)
          this.row(list, event, "meta warn", `Turn ${str(p.status)}: ${str(result.error_reason)}`);
        else this.meta(list, event, `Turn ${str(p.status)}`);
        return;
      }
      case "session_closed":
        this.row(list, event, "end canceled", h("div", { class: "who" }, "Session closed"), str(p.reason));
        return;
      case "workflow_node_started":
        this.meta(list, event, `Node ${str(p.node)} (${str(p.type)}) started`);
        return;
      case "workflow_edge_taken":
        this.meta(list, event, `${str(p.from)} → ${str(p.to)}`);
        return;
      default:
        this.generic(list, event);
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
      this.row(list, event, "thinking", h("details", null, h("summary", null, "Thinking"), pre));
    } else {
      this.row(list, event, "message assistant", h("div", { class: "who" }, "Agent"), pre);
    }
  }

  private toolStarted(list: HTMLElement, event: OutpostEvent, id: string, name: string, input: unknown): void {
    const state = h("span", { class: "tool-state" }, "running…");
    const output = h("div", { class: "tool-output" });
    const row = this.row(
      list,
      event,
      "tool",
      h("div", { class: "tool-head" }, h("span", { class: "tool-name" }, name), state),
      collapsible(pretty(input), "block input"),
      output,
    );
    row.dataset.state = "running";
    this.tools.set(`${event.task_id ?? ""}|${id}`, { row, state, output });
  }

  private toolEnded(
    list: HTMLElement,
    event: OutpostEvent,
    id: string,
    outcome: "ok" | "error",
    output: unknown,
    durationMs: unknown,
  ): void {
    let card = this.tools.get(`${event.task_id ?? ""}|${id}`);
    if (!card) {
      // Its start is before the replayed range: a card for the result alone.
      this.toolStarted(list, event, id, str((event.payload as Payload).tool_name), "(input not shown)");
      card = this.tools.get(`${event.task_id ?? ""}|${id}`) as ToolCard;
    }
    const took = typeof durationMs === "number" ? ` · ${durationMs} ms` : "";
    this.setToolState(card, outcome, `${outcome === "ok" ? "done" : "error"}${took}`);
    card.output.replaceChildren(collapsible(pretty(output ?? ""), "block output"));
  }

  private setToolState(card: ToolCard, state: string, label: string): void {
    card.row.dataset.state = state;
    card.state.textContent = label;
  }

  private todos(list: HTMLElement, event: OutpostEvent, p: Payload): void {
    const todos = Array.isArray(p.todos) ? (p.todos as Payload[]) : [];
    this.row(
      list,
      event,
      "todos",
      h("div", { class: "who" }, `Task list · ${num(p.completed)}/${num(p.total)} done`),
      h(
        "ul",
        null,
        todos.map((todo) =>
          h("li", { "data-status": str(todo.status) }, `${todoMark(str(todo.status))} ${str(todo.content)}`),
        ),
      ),
    );
  }

  private checkpoint(list: HTMLElement, event: OutpostEvent, p: Payload): void {
    const checkpointId = str(p.checkpoint_id);
    const onFork = this.options.onFork;
    const fork = onFork
      ? h("button", { type: "button", class: "small", title: `Fork a new task from ${checkpointId}` }, "Fork from here")
      : null;
    fork?.addEventListener("click", () => onFork?.(event.task_id ?? null, checkpointId));
    this.row(list, event, "meta checkpoint", `Checkpoint ${str(p.position)}`, " ", fork);
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
    this.row(
      list,
      event,
      "meta usage",
      `Model call · ${totalInput(input)} in / ${output} out · `,
      cache,
      cache ? " · " : null,
      `${formatCost(usage.cost_usd)}${typeof meta.latency_ms === "number" ? ` · ${meta.latency_ms} ms` : ""}`,
    );
  }

  private generic(list: HTMLElement, event: OutpostEvent): void {
    const details = h("details", null, h("summary", null, event.event_type.replace(/_/g, " ")));
    // The payload is turned into text only when someone opens it.
    details.addEventListener(
      "toggle",
      () => {
        if (details.open && details.childElementCount === 1)
          details.appendChild(collapsible(pretty(event.payload), "block"));
      },
      { passive: true },
    );
    this.row(list, event, "meta generic", details);
  }
}

/** The next animation frame, or a timer in a hidden tab (where frames do not come). */
function schedule(fn: () => void): void {
  if (document.hidden) setTimeout(fn, 16);
  else requestAnimationFrame(fn);
}

function str(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : pretty(value);
}

function num(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

function decisionVerb(action: string): string {
  return { approve: "Approved", reject: "Rejected", modify: "Modified", fail: "Failed" }[action] ?? action;
}

function todoMark(status: string): string {
  return status === "completed" ? "☑" : status === "in_progress" ? "◐" : "☐";
}

function usageLine(usage: unknown): HTMLElement | null {
  if (!usage || typeof usage !== "object") return null;
  const u = usage as Payload;
  const input = inputTokens(u);
  const cache = cacheShare(input);
  return h(
    "p",
    { class: "muted small" },
    `${totalInput(input)} tokens in · ${num(u.output_tokens)} out · ${num(u.model_calls)} model calls · `,
    cache,
    cache ? " · " : null,
    formatCost(u.total_cost_usd),
  );
}
