// Writes the tables of docs/reference/errors.md from the error-code registry (src/errors/codes.ts): each table sits
// between `<!-- errors:<facet> -->` and `<!-- /errors:<facet> -->` and is replaced whole; the prose around them is
// left alone. test/project/docs.unit.test.ts fails while the page and the registry differ; run `npm run docs:errors`
// after changing a code. `--check` fails if the page is out of date instead of writing it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_CODES, type ErrorCodeSpec } from "../src/errors/codes.ts";

const page = join(import.meta.dirname, "..", "docs", "reference", "errors.md");

const codes = Object.entries(ERROR_CODES) as [string, ErrorCodeSpec][];

/** Each table: its header and its rows, in the order test/project/docs.unit.test.ts expects them. */
const TABLES: Record<string, { header: string[]; rows: string[][] }> = {
  request: {
    header: ["status", "code", "when"],
    // By status; codes of one status in the registry's order.
    rows: codes
      .flatMap(([code, spec]) => (spec.request ? [{ code, ...spec.request }] : []))
      .sort((a, b) => a.status - b.status)
      .map(({ code, status, when }) => [String(status), `\`${code}\``, when]),
  },
  task: {
    header: ["code", "retryable", "when"],
    rows: codes.flatMap(([code, spec]) =>
      spec.task ? [[`\`${code}\``, spec.task.retryable ? "yes" : "no", spec.task.when]] : [],
    ),
  },
  event: {
    header: ["code", "when"],
    rows: codes.flatMap(([code, spec]) => (spec.event ? [[`\`${code}\``, spec.event.when]] : [])),
  },
  internal: {
    header: ["code", "when"],
    rows: codes.flatMap(([code, spec]) => (spec.internal ? [[`\`${code}\``, spec.internal.when]] : [])),
  },
};

/** A Markdown table with its columns padded to their widest cell. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

const before = readFileSync(page, "utf8");
let after = before;
for (const [facet, { header, rows }] of Object.entries(TABLES)) {
  const open = `<!-- errors:${facet} -->`;
  const close = `<!-- /errors:${facet} -->`;
  const start = after.indexOf(open);
  const end = after.indexOf(close);
  if (start < 0 || end < start) throw new Error(`${page}: no ${open} … ${close} block`);
  after = `${after.slice(0, start + open.length)}\n${table(header, rows)}\n${after.slice(end)}`;
}

if (process.argv.includes("--check")) {
  if (after !== before) {
    console.error(`${page} is out of date: run npm run docs:errors`);
    process.exit(1);
  }
} else if (after !== before) {
  writeFileSync(page, after);
  console.log(`wrote ${page}`);
}
