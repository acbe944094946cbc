// A run's events as people read them in a terminal (docs/reference/events.md has the types): the answer's text as it
// streams, each tool call with a short input and its result, sub-agents indented under the call that started them
// (their events carry `depth` on the parent's stream), a spinner while the model thinks (or while its provider is
// waited out, after a line saying until when), and the outcome with its tokens, prompt-cache share and cost at the
// end. It only writes; following the stream and answering requests is follow.ts's.
import type { OutpostEvent, WaitingFor } from "../index.ts";
import {
  type CacheFigures,
  formatCacheShare,
  formatCost,
  formatCount,
  formatWaitingFor,
  type Output,
  short,
} from "./output.ts";
import type { Spinner } from "./spinner.ts";

type Payload = Record<string, unknown>;
type ErrorInfo = WaitingFor["last_error"];

/** The usage figures the summary line reads (the task's `usage`, or a rollup's `total`). */
export interface UsageFigures extends CacheFigures {
  total_tokens?: number;
  total_cost_usd?: number | null;
  model_calls?: number;
  unpriced_models?: string[];
}

export class RunRenderer {
  /** Whether the cursor is at the start of a line (nothing written on the current line). */
  private atLineStart = true;
  /** Which task's text the current line holds, so another task's text starts a line of its own. */
  private lineOwner: string | undefined;
  /** Whether the stream's own task wrote any answer text (else its final summary is printed at the end). */
  private rootText = false;

  private readonly out: Output;
  private readonly spinner: Spinner;

  constructor(out: Output, spinner: Spinner) {
    this.out = out;
    this.spinner = spinner;
  }

  event(event: OutpostEvent): void {
    const depth = event.depth ?? 0;
    const owner = event.task_id ?? "";
    const p = event.payload as Payload;
    const s = (style: Parameters<Output["style"]>[0], text: string) => this.out.style(style, text);
    switch (event.event_type) {
      case "llm_request_sent":
        this.endLine();
        this.think("thinking");
        return;
      case "llm_thinking_delta":
        this.think("thinking");
        return;
      case "final_answer_synthesis_started":
        this.think("writing the answer");
        return;
      case "llm_text_delta":
        this.spinner.stop();
        if (depth === 0) this.rootText = true;
        this.text(depth, owner, String(p.text ?? ""));
        return;
      case "llm_response_received":
        this.spinner.stop();
        this.endLine();
        return;
      case "tool_call_started":
      case "mcp_tool_call_started": {
        const name = p.server === undefined ? String(p.tool_name) : `${String(p.server)}/${String(p.tool_name)}`;
        this.lineAt(depth, `${s("cyan", "→")} ${s("bold", name)} ${s("dim", toolInput(p.input ?? p.arguments))}`);
        this.think(`running ${String(p.tool_name)}`);
        return;
      }
      case "tool_call_completed":
      case "mcp_tool_call_completed":
        this.lineAt(depth, result(this.out, String(p.tool_name), p.is_error === true, p.output_preview, p.duration_ms));
        return;
      case "tool_denied":
        this.lineAt(depth, `${s("red", "✗")} ${String(p.tool_name)} not run (${String(p.reason)})`);
        return;
      case "mcp_tool_call_failed":
        this.lineAt(depth, `${s("red", "✗")} ${String(p.tool_name)}: ${short((p.error as Payload)?.message)}`);
        return;
      case "web_search_started":
        this.lineAt(depth, `${s("cyan", "→")} ${s("bold", "web search")} ${s("dim", short(p.query))}`);
        return;
      case "web_search_completed":
        this.lineAt(
          depth,
          p.error_code
            ? `${s("red", "✗")} web search: ${String(p.error_code)}`
            : `${s("green", "←")} ${Array.isArray(p.results) ? p.results.length : 0} results`,
        );
        return;
      case "todo_list_updated":
        for (const todo of Array.isArray(p.todos) ? (p.todos as Payload[]) : []) {
          const mark = todo.status === "completed" ? "☑" : todo.status === "in_progress" ? "◐" : "☐";
          this.lineAt(depth, `  ${mark} ${short(todo.content, 120)}`);
        }
        return;
      case "skill_step_executed":
        if (p.type === "run_command" || p.type === "mcp_call") {
          const what = p.type === "run_command" ? String(p.command) : String(p.tool_name);
          const ok = p.status === "success";
          this.lineAt(
            depth,
            `${s(ok ? "green" : "red", ok ? "←" : "✗")} ${what}: ${s("dim", short(p.output_preview))}`,
          );
        }
        return;
      case "subagent_started":
        this.lineAt(depth, `${s("magenta", "↳")} ${s("bold", String(p.agent))} ${s("dim", short(p.description))}`);
        return;
      case "subagent_finished":
        this.lineAt(depth, `${s("magenta", "↲")} ${String(p.agent)} ${String(p.status)}`);
        return;
      case "input_requested":
        this.lineAt(
          depth,
          `${s("yellow", "?")} ${
            p.kind === "question"
              ? `asks: ${short(p.question, 200)}`
              : `${String(p.tool_name)} waits for approval ${s("dim", toolInput(p.input))}`
          }`,
        );
        return;
      case "human_decision": {
        const verb = { approve: "approved", reject: "rejected", modify: "modified", fail: "failed" }[String(p.action)];
        const by = p.decided_by === "timeout" ? "by the timeout" : `by ${String(p.decided_by)}`;
        const message = typeof p.message === "string" && p.message !== "" ? `: ${short(p.message)}` : "";
        this.lineAt(
          depth,
          `${s(p.action === "reject" ? "red" : "green", "✓")} ${verb ?? String(p.action)} ${by}${message}`,
        );
        return;
      }
      case "llm_retry_scheduled":
        this.lineAt(depth, s("dim", `model call failed (${String(p.status ?? "connection")}), retrying`));
        return;
      case "provider_wait_started": {
        const waiting = { until: String(p.until), attempts: Number(p.failures), last_error: p.last_error as ErrorInfo };
        this.lineAt(depth, `${s("yellow", "…")} ${formatWaitingFor(waiting)}`);
        this.think("waiting for the model provider");
        return;
      }
      case "provider_wait_ended":
        this.lineAt(depth, s("dim", "trying the model provider again"));
        return;
      case "step_resumed":
        if (p.reason === "stream_broken") this.lineAt(depth, s("dim", "the model's answer broke off; asking again"));
        return;
      case "llm_request_failed":
        this.spinner.stop();
        this.lineAt(depth, s("red", `model call failed: ${short((p.error as Payload)?.message ?? p.error)}`));
        return;
      case "workflow_node_started":
        this.lineAt(depth, `${s("magenta", "▸")} ${String(p.node)} ${s("dim", `(${String(p.type)})`)}`);
        return;
      case "run_finished":
        if (depth > 0) return;
        this.spinner.stop();
        this.endLine();
        if (!this.rootText && typeof p.final_summary === "string" && p.final_summary !== "") {
          this.out.line(p.final_summary);
        }
        return;
      case "run_failed":
        if (depth > 0) return;
        this.spinner.stop();
        this.lineAt(0, s("red", `✗ ${String(p.reason ?? "failed")}`));
        return;
      case "turn_finished": {
        if (depth > 0) return;
        this.spinner.stop();
        this.endLine();
        const turn = (p.result ?? {}) as Payload;
        if (!this.rootText && typeof turn.response === "string" && turn.response !== "") this.out.line(turn.response);
        if (turn.is_error === true) this.lineAt(0, s("red", `✗ ${String(turn.error_reason ?? p.status)}`));
        return;
      }
      case "run_canceled":
        if (depth > 0) return;
        this.spinner.stop();
        this.lineAt(0, s("yellow", "canceled"));
        return;
      default:
        if (event.event_type.startsWith("custom_")) this.lineAt(depth, s("dim", `• ${event.event_type} ${short(p)}`));
    }
  }

  /** The last line: how the task ended, its model calls, tokens, the share of its input read from the cache, cost. */
  summary(status: string, usage: UsageFigures | undefined, extra: string[] = []): void {
    this.spinner.stop();
    this.endLine();
    const mark =
      status === "completed"
        ? this.out.style("green", "✓")
        : status === "input_required"
          ? this.out.style("yellow", "?")
          : this.out.style("red", "✗");
    const parts = [status];
    if (usage) {
      if (usage.model_calls !== undefined) {
        parts.push(`${usage.model_calls} model call${usage.model_calls === 1 ? "" : "s"}`);
      }
      if (usage.total_tokens !== undefined) parts.push(`${formatCount(usage.total_tokens)} tokens`);
      const cache = formatCacheShare(usage);
      if (cache) parts.push(cache);
      parts.push(formatCost(usage.total_cost_usd));
    }
    parts.push(...extra);
    this.out.line(this.out.style("dim", `${mark} ${parts.join(" · ")}`));
  }

  /** Shows the spinner before the first event arrives. */
  begin(label: string): void {
    this.think(label);
  }

  /** Ends the line being written, if any (before a prompt or a note). */
  endLine(): void {
    if (!this.atLineStart) {
      this.out.write("\n");
      this.atLineStart = true;
    }
  }

  stop(): void {
    this.spinner.stop();
    this.endLine();
  }

  private think(label: string): void {
    if (this.atLineStart) this.spinner.start(label);
  }

  /** A whole line at a depth, on a line of its own. */
  private lineAt(depth: number, line: string): void {
    this.spinner.stop();
    this.endLine();
    this.out.write(`${indent(depth)}${line}\n`);
    this.lineOwner = undefined;
  }

  /** Streamed text: each new line starts at the task's indentation. */
  private text(depth: number, owner: string, text: string): void {
    if (!this.atLineStart && this.lineOwner !== owner) this.endLine();
    this.lineOwner = owner;
    const pieces = text.split("\n");
    pieces.forEach((piece, i) => {
      if (i > 0) {
        this.out.write("\n");
        this.atLineStart = true;
      }
      if (piece === "") return;
      if (this.atLineStart) this.out.write(indent(depth));
      this.out.write(piece);
      this.atLineStart = false;
    });
  }
}

function indent(depth: number): string {
  return "  ".repeat(depth);
}

/** A tool's input in one short line; a TodoWrite list is counted rather than shown (its items follow). */
function toolInput(input: unknown): string {
  if (typeof input === "object" && input !== null && Array.isArray((input as Payload).todos)) {
    const n = ((input as Payload).todos as unknown[]).length;
    return `(${n} item${n === 1 ? "" : "s"})`;
  }
  return short(input, 100);
}

function result(out: Output, tool: string, isError: boolean, preview: unknown, durationMs: unknown): string {
  const took = typeof durationMs === "number" ? out.style("dim", ` ${durationMs} ms`) : "";
  const mark = isError ? out.style("red", "✗") : out.style("green", "←");
  return `${mark} ${tool}: ${out.style(isError ? "red" : "dim", short(preview))}${took}`;
}
