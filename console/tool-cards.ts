// The tool calls on a timeline, a card each: the tool's name and input, and a state that goes from "running…" to
// done, error or denied, with the output once the call has ended. Cards are keyed by task and call id, since a
// sub-agent's calls share the stream with its parent's; a result whose start is before the replayed range gets a card
// of its own.
import type { OutpostEvent } from "@outpost/client";
import { collapsible, h, pretty } from "./dom.ts";
import { type Payload, row, str } from "./timeline-rows.ts";

interface ToolCard {
  row: HTMLElement;
  state: HTMLElement;
  output: HTMLElement;
}

export class ToolCards {
  private readonly cards = new Map<string, ToolCard>();

  /** tool_call_started and mcp_tool_call_started: a running card. */
  started(list: HTMLElement, event: OutpostEvent, id: string, name: string, input: unknown): void {
    const state = h("span", { class: "tool-state" }, "running…");
    const output = h("div", { class: "tool-output" });
    const card = row(
      list,
      event,
      "tool",
      h("div", { class: "tool-head" }, h("span", { class: "tool-name" }, name), state),
      collapsible(pretty(input), "block input"),
      output,
    );
    card.dataset.state = "running";
    this.cards.set(`${event.task_id ?? ""}|${id}`, { row: card, state, output });
  }

  /** A call's end (completed, or an MCP call failed): its state, how long it took, its output. */
  ended(
    list: HTMLElement,
    event: OutpostEvent,
    id: string,
    outcome: "ok" | "error",
    output: unknown,
    durationMs: unknown,
  ): void {
    let card = this.cards.get(`${event.task_id ?? ""}|${id}`);
    if (!card) {
      // Its start is before the replayed range: a card for the result alone.
      this.started(list, event, id, str((event.payload as Payload).tool_name), "(input not shown)");
      card = this.cards.get(`${event.task_id ?? ""}|${id}`) as ToolCard;
    }
    const took = typeof durationMs === "number" ? ` · ${durationMs} ms` : "";
    setState(card, outcome, `${outcome === "ok" ? "done" : "error"}${took}`);
    card.output.replaceChildren(collapsible(pretty(output ?? ""), "block output"));
  }

  /** tool_denied: the call's card says so, or a row does when the call has no card. */
  denied(list: HTMLElement, event: OutpostEvent, id: string, toolName: string, reason: string): void {
    const card = this.cards.get(`${event.task_id ?? ""}|${id}`);
    if (card) setState(card, "denied", `denied: ${reason}`);
    else row(list, event, "meta warn", `${toolName} was not run: ${reason}`);
  }
}

function setState(card: ToolCard, state: string, label: string): void {
  card.row.dataset.state = state;
  card.state.textContent = label;
}
