// The values of a run's GenAI spans (src/telemetry/genai-spans.ts builds the spans): provider names and run statuses
// as the conventions spell them, the token attributes of a usage, the keys that pair a call's opening and closing
// events, and typed reads of event payloads.
import type { EventRecord } from "../events/event-record.ts";

/** An OTLP attribute's value, as the spans carry them. */
export type AttributeValue = string | number | boolean | string[];

type Payload = Record<string, unknown>;

/** gen_ai.provider.name (semconv 1.40 well-known values) for Outpost's providers. */
export const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  anthropic: "anthropic",
  gemini: "gcp.gemini",
  openai_compatible: "openai",
};

export const STATUS: Readonly<Record<string, string>> = {
  run_finished: "completed",
  run_failed: "failed",
  run_canceled: "canceled",
};

/**
 * The token attributes of a usage (a call's, or a run's own calls'). Outpost's usage counts input as Anthropic does:
 * input_tokens is the uncached part only, beside the cache writes and reads; the conventions' input_tokens is all of
 * it, so the three are added (semconv 1.40 anthropic.md gives this sum). The part of the writes at the 1-hour TTL,
 * billed at twice the input price where 5-minute writes are 1.25 times, has no attribute of the conventions: it is
 * outpost.usage.cache_creation_1h_input_tokens, set when there is any.
 */
export function usageAttributes(usage: Payload): Record<string, AttributeValue> {
  const written = num(usage.cache_creation_input_tokens);
  const read = num(usage.cache_read_input_tokens);
  const written1h = num(usage.cache_creation_1h_input_tokens);
  return {
    "gen_ai.usage.input_tokens": num(usage.input_tokens) + written + read,
    "gen_ai.usage.output_tokens": num(usage.output_tokens),
    "gen_ai.usage.cache_creation.input_tokens": written,
    "gen_ai.usage.cache_read.input_tokens": read,
    ...(written1h > 0 ? { "outpost.usage.cache_creation_1h_input_tokens": written1h } : {}),
  };
}

/** A model call as its llm_* events name it: the model turn, the part of the run that made it, and the attempt. */
export function callKey(p: Payload): string {
  return `${String(p.turn_index)}/${String(p.call_site)}/${String(p.attempt)}`;
}

/** An MCP call: its tool_use id, and the tool it stands in for when it is a fallback. */
export function mcpKey(p: Payload): string {
  return p.fallback_for === undefined ? String(p.step_id) : `${String(p.step_id)}:${String(p.tool_name)}`;
}

export function ms(event: EventRecord): number {
  return Date.parse(event.timestamp);
}

export function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

export function num(value: unknown): number {
  return typeof value === "number" ? value : 0;
}
