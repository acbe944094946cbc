// The events reference's table, rendered from the event catalog (src/contracts/events.ts): one row per event type,
// in the catalog's order, with its flags, its description and its payload's fields. scripts/build-event-docs.ts
// writes it into docs/reference/events.md; test/project/docs.unit.test.ts fails when the page holds anything else. Pure
// (no node:fs).
import { z } from "zod";
import { EVENT_CATALOG, EVENT_TYPES, type EventSpec } from "../src/contracts/events.ts";

/** The lines that enclose the generated table in the page. */
export const TABLE_START =
  "<!-- The table below is generated from src/contracts/events.ts by `npm run docs:events`: edit the catalog, not the table. -->";
export const TABLE_END = "<!-- End of the generated table. -->";

/** The markdown table, padded like the other tables of docs/ (a column as wide as its widest cell). */
export function renderEventTable(): string {
  const rows = EVENT_TYPES.map((type) => {
    const spec: EventSpec = EVENT_CATALOG[type];
    return [`\`${type}\`${spec.terminal ? " (terminal)" : ""}`, spec.description, fieldList(spec)];
  });
  const header = ["event", "when", "payload"];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...rows.map(line)].join("\n");
}

/**
 * A payload's fields in order: `?` after one that is sometimes absent, content fields in bold, a field's description
 * (or else the values of an enum) in parentheses. A union's fields are those of all its objects; one missing from
 * some of them gets `?`.
 */
function fieldList(spec: EventSpec): string {
  const objects = "shape" in spec.payload ? [spec.payload] : spec.payload.options;
  const names = [...new Set(objects.flatMap((object) => Object.keys(object.shape)))];
  return names
    .map((name) => {
      const fields = objects.map((object) => object.shape[name] as z.ZodType | undefined);
      const field = fields.find((f) => f !== undefined);
      const optional = fields.some((f) => f === undefined || f.def.type === "optional");
      const label = (spec.content as readonly string[]).includes(name) ? `**${name}**` : name;
      const note = field?.description ? ` (${field.description})` : enumNote(field);
      return `${label}${optional ? "?" : ""}${note}`;
    })
    .join(", ");
}

/** The values of an enum field (or of an optional, nullable or array one), as ` (`a` / `b`)`; else nothing. */
function enumNote(field: z.ZodType | undefined): string {
  let inner = field;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable || inner instanceof z.ZodArray) {
    inner = inner.unwrap() as z.ZodType;
  }
  return inner instanceof z.ZodEnum ? ` (${inner.options.map((value) => `\`${String(value)}\``).join(" / ")})` : "";
}
