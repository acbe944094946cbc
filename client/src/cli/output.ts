// Where the CLI writes: people get text (coloured only on a terminal, never with NO_COLOR), scripts get JSON with
// --json (one JSON document, or JSON lines for a stream, on stdout; errors as one JSON line on stderr). Every command
// writes through an Output, so no command decides on colours, terminals or JSON by itself.
import { styleText } from "node:util";
import type { WaitingFor } from "../index.ts";

export type Style = "bold" | "dim" | "red" | "green" | "yellow" | "cyan" | "magenta" | "gray";

export interface Output {
  /** --json: machine-readable output only, no colours, no spinner, no questions. */
  readonly json: boolean;
  /** Whether stdout is a terminal (and not --json): a spinner may be shown. */
  readonly live: boolean;
  /** Whether a person can be asked here: stdin and stdout are terminals and not --json. */
  readonly canAsk: boolean;
  /** Writes text to stdout as is (streamed text). */
  write(text: string): void;
  /** Writes a line to stdout. */
  line(text?: string): void;
  /** Writes a line to stderr (notes, hints, errors). */
  note(text: string): void;
  /** Writes one JSON document (or one JSON line of a stream) to stdout. */
  jsonLine(value: unknown): void;
  /** Colours text for stdout (plain when stdout is not a terminal or NO_COLOR is set). */
  style(style: Style, text: string): string;
  /** Colours text for stderr. */
  styleErr(style: Style, text: string): string;
}

export function createOutput(options: { json: boolean }): Output {
  const stdoutTty = process.stdout.isTTY === true;
  const stdinTty = process.stdin.isTTY === true;
  return {
    json: options.json,
    live: stdoutTty && !options.json,
    canAsk: stdoutTty && stdinTty && !options.json,
    write: (text) => {
      process.stdout.write(text);
    },
    line: (text = "") => {
      process.stdout.write(`${text}\n`);
    },
    note: (text) => {
      process.stderr.write(`${text}\n`);
    },
    jsonLine: (value) => {
      process.stdout.write(`${JSON.stringify(value)}\n`);
    },
    // styleText checks the stream (a terminal, NO_COLOR, FORCE_COLOR) before colouring.
    style: (style, text) => (options.json ? text : styleText(style, text, { stream: process.stdout })),
    styleErr: (style, text) => (options.json ? text : styleText(style, text, { stream: process.stderr })),
  };
}

/** Text cut to `max` characters on one line, for tool inputs and results. */
export function short(value: unknown, max = 100): string {
  const text = (typeof value === "string" ? value : (JSON.stringify(value) ?? "")).replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Rows as aligned columns (the last column is not padded). */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

/** A cost in dollars as people read it: null (a model without a price) is said so. */
export function formatCost(cost: number | null | undefined): string {
  if (cost === null || cost === undefined) return "cost unknown";
  return cost === 0 ? "$0" : cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** The input figures of a usage (a task's, a rollup's total, a session's): input_tokens is the uncached part only. */
export interface CacheFigures {
  input_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/**
 * How much of a usage's input was read from the prompt cache, as people read it: `cache 86%`, the cache reads over
 * all the input (uncached, written to the cache, read from it), rounded. Null when nothing was written to or read
 * from the cache (a model or an agent without caching): there is no share to speak of, and the line stays as it was.
 */
export function formatCacheShare(usage: CacheFigures | null | undefined): string | null {
  const written = usage?.cache_creation_input_tokens ?? 0;
  const read = usage?.cache_read_input_tokens ?? 0;
  if (written + read === 0) return null;
  return `cache ${Math.round((100 * read) / ((usage?.input_tokens ?? 0) + written + read))}%`;
}

/**
 * What a running task waits for other than a person, as people read it: `waiting for the model provider until
 * 12:03:40 UTC (3 tries; provider_overloaded)`, the time of the next try in UTC like the listing's other times.
 */
export function formatWaitingFor(waiting: Pick<WaitingFor, "until" | "attempts" | "last_error">): string {
  const at = waiting.until.slice(11, 19);
  const tries = `${waiting.attempts} ${waiting.attempts === 1 ? "try" : "tries"}`;
  return `waiting for the model provider until ${at} UTC (${tries}; ${waiting.last_error.code})`;
}

/** A task's status with what it waits for, if anything: `running · waiting for the model provider until …`. */
export function formatStatus(status: string, waiting: WaitingFor | null | undefined): string {
  return waiting ? `${status} · ${formatWaitingFor(waiting)}` : status;
}
