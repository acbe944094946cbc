// Writes the event catalog's table (scripts/event-table.ts) into docs/reference/events.md, between its two marker
// lines; `--check` fails if the page is out of date instead of writing it (test/project/docs.unit.test.ts checks it
// too).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderEventTable, TABLE_END, TABLE_START } from "./event-table.ts";
import { writeGenerated } from "./generated-file.ts";

const page = join(import.meta.dirname, "..", "docs", "reference", "events.md");
const text = readFileSync(page, "utf8");
const start = text.indexOf(TABLE_START);
const end = text.indexOf(TABLE_END);
if (start === -1 || end < start) throw new Error(`${page}: the generated table's marker lines are missing`);
const updated = `${text.slice(0, start + TABLE_START.length)}\n\n${renderEventTable()}\n\n${text.slice(end)}`;

writeGenerated(page, updated, {
  outOfDate: "docs/reference/events.md is out of date: run npm run docs:events",
  written: "docs/reference/events.md: table written",
});
