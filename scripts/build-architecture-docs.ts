// Writes the table of allowed imports (test/project/layers.ts, the layering test's own) into docs/architecture.md,
// between its two marker lines; `--check` fails if the page is out of date instead of writing it
// (test/project/docs.unit.test.ts checks it too). The page cannot drift from the table the test enforces.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LAYERS_END, LAYERS_START, renderLayers } from "../test/project/layers.ts";
import { writeGenerated } from "./generated-file.ts";

const page = join(import.meta.dirname, "..", "docs", "architecture.md");
const text = readFileSync(page, "utf8");
const start = text.indexOf(LAYERS_START);
const end = text.indexOf(LAYERS_END);
if (start === -1 || end < start) throw new Error(`${page}: the generated table's marker lines are missing`);
const updated = `${text.slice(0, start + LAYERS_START.length)}\n\n${renderLayers()}\n\n${text.slice(end)}`;

writeGenerated(page, updated, {
  outOfDate: "docs/architecture.md is out of date: run npm run docs:architecture",
  written: "docs/architecture.md: table of allowed imports written",
});
