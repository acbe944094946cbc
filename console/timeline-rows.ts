// The rows of the timeline that need nothing but their event: the row element itself (its seq and type as data
// attributes, which the end-to-end tests and the console bench read), a task list, a checkpoint with its fork button,
// a generic event whose payload is turned into text only when it is opened, and a finished run's usage line; and the
// readers of a payload's fields as text and numbers. Every string from an event reaches the page as a text node
// (dom.ts).
import type { OutpostEvent } from "@outpost/client";
import { cacheShare, collapsible, formatCost, h, inputTokens, pretty, totalInput } from "./dom.ts";

export type Payload = Record<string, unknown>;

type RowChild = Node | string | null;

/** Appends a row for `event` to `list`: `kind` is its classes after "ev". */
export function row(list: HTMLElement, event: OutpostEvent, kind: string, ...children: RowChild[]): HTMLElement {
  const li = h("li", { class: `ev ${kind}`, "data-seq": event.seq, "data-type": event.event_type }, ...children);
  list.appendChild(li);
  return li;
}

/** A one-line row of what the run did (started, resumed, a node of a workflow, a turn). */
export function metaRow(list: HTMLElement, event: OutpostEvent, ...text: RowChild[]): HTMLElement {
  return row(list, event, "meta", ...text);
}

/** todo_list_updated: the whole list with each item's state. */
export function todosRow(list: HTMLElement, event: OutpostEvent, p: Payload): void {
  const todos = Array.isArray(p.todos) ? (p.todos as Payload[]) : [];
  row(
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

/** checkpoint_saved, with a fork button when the page can fork (`onFork`). */
export function checkpointRow(
  list: HTMLElement,
  event: OutpostEvent,
  p: Payload,
  onFork: ((taskId: string | null, checkpointId: string) => void) | undefined,
): void {
  const checkpointId = str(p.checkpoint_id);
  const fork = onFork
    ? h("button", { type: "button", class: "small", title: `Fork a new task from ${checkpointId}` }, "Fork from here")
    : null;
  fork?.addEventListener("click", () => onFork?.(event.task_id ?? null, checkpointId));
  row(list, event, "meta checkpoint", `Checkpoint ${str(p.position)}`, " ", fork);
}

/** An event the timeline has no row of its own for: its type, and its payload when opened. */
export function genericRow(list: HTMLElement, event: OutpostEvent): void {
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
  row(list, event, "meta generic", details);
}

/** The totals of a finished or failed run: tokens in and out, model calls, the cache's share, the cost. */
export function usageLine(usage: unknown): HTMLElement | null {
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

export function str(value: unknown): string {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : pretty(value);
}

export function num(value: unknown): number {
  return typeof value === "number" ? value : 0;
}

export function decisionVerb(action: string): string {
  return { approve: "Approved", reject: "Rejected", modify: "Modified", fail: "Failed" }[action] ?? action;
}

function todoMark(status: string): string {
  return status === "completed" ? "☑" : status === "in_progress" ? "◐" : "☐";
}
