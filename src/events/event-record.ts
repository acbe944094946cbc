// The event record (seed 002 EventRecord), as stored and sent. The vocabulary (each type, its payload and flags) is
// the event catalog, src/contracts/events.ts.
import { z } from "zod";
import { EVENT_CATALOG, EVENT_TYPES } from "../contracts/events.ts";

export const EventRecordSchema = z.object({
  /** Strictly increasing per task, starting at 1; the SSE `id:`. */
  seq: z.number().int().positive(),
  run_id: z.string(),
  trace_id: z.string(),
  span_id: z.string(),
  timestamp: z.string(),
  event_type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  redaction_mode: z.enum(["full", "redacted"]),
  /**
   * On a parent's stream, an event of a task below it (a sub-agent's, forwarded up the tree; src/events/event-tree.ts):
   * the task that emitted it, that task's parent, and how many levels below the stream's task it is (1 for a child).
   * Absent on the stream's own task's events.
   */
  task_id: z.string().optional(),
  parent_task_id: z.string().optional(),
  depth: z.number().int().positive().optional(),
});
export type EventRecord = z.infer<typeof EventRecordSchema>;

/** A run's stream ends after one of these (the catalog's terminal events). */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set(
  EVENT_TYPES.filter((type) => EVENT_CATALOG[type].terminal),
);

/** The stream's own task's terminal event: a sub-agent's, forwarded to its parent, ends nothing but the sub-agent. */
export function isOwnTerminal(record: EventRecord): boolean {
  return record.depth === undefined && TERMINAL_EVENT_TYPES.has(record.event_type);
}

/** A record as JSON, never throwing: BigInts become strings, anything else unserialisable becomes a note. */
export function recordJson(record: EventRecord): string {
  try {
    // Without a replacer first: a replacer function costs a call per key, and only a BigInt needs one (it throws).
    return JSON.stringify(record);
  } catch {
    // a BigInt, or something no replacer can fix: below
  }
  try {
    return JSON.stringify(record, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
  } catch (error) {
    return JSON.stringify({
      ...record,
      payload: { unserializable_payload: error instanceof Error ? error.message : String(error) },
    });
  }
}

/** Random lowercase hex of `bytes` bytes (W3C trace ids are 16 bytes, span ids 8). */
export function randomHex(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  let out = "";
  for (const b of buf) out += b.toString(16).padStart(2, "0");
  return out;
}
