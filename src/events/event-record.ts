// The event record (seed 002 EventRecord) and the event vocabulary. Seed 002's names are kept; Outpost adds task,
// delta, tool and cancel events that a streaming HTTP API needs.
import { z } from "zod";

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
});
export type EventRecord = z.infer<typeof EventRecordSchema>;

/** Event types, grouped by phase. Payload fields are documented in docs/reference/events.md. */
export const EVENT_TYPES = [
  // Task lifecycle (Outpost)
  "task_created",
  "run_resumed",
  "step_resumed",
  // Seed 002
  "run_started",
  "llm_request_sent",
  "llm_response_received",
  "llm_request_failed",
  "llm_retry_scheduled",
  // An interrupted call's billed waste, counted in usage.recovery (Outpost)
  "llm_call_abandoned",
  "run_finished",
  "run_failed",
  "mcp_servers_connected",
  "mcp_connection_failed",
  "mcp_tool_call_started",
  "mcp_tool_call_completed",
  "mcp_tool_call_failed",
  "mcp_servers_disconnected",
  // Token streaming (Outpost)
  "llm_text_delta",
  "llm_thinking_delta",
  // Tools (Outpost; MCP tools use seed 002's mcp_tool_call_* names)
  "tool_call_started",
  "tool_call_completed",
  "tool_denied",
  "todo_list_updated",
  // Cancel (Outpost)
  "run_canceled",
  // Checkpoints and human feedback (seed 003)
  "checkpoint_saved",
  "input_requested",
  "human_decision",
  // The skill agent's decision loop (seed 002)
  "skill_catalog_loaded",
  "skill_prefilter_completed",
  "skill_disclosure_loaded",
  "prompt_budget_computed",
  "prompt_composed",
  "native_tool_fallback",
  "llm_decision_decoded",
  "self_handoff_detected",
  "self_handoff_constraint_applied",
  "self_handoff_recovery_applied",
  "skill_invocation_started",
  "skill_step_executed",
  "step_retry_scheduled",
  "skill_invocation_finished",
  "final_answer_synthesis_started",
  "final_answer_synthesis_completed",
  "final_answer_synthesis_failed",
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** A run's stream ends after one of these. */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set(["run_finished", "run_failed", "run_canceled"]);

/** A record as JSON, never throwing: BigInts become strings, anything else unserialisable becomes a note. */
export function recordJson(record: EventRecord): string {
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
