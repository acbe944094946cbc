// Shared by the emulator's prompt caching tests (test/emulator/prompt-cache*.test.ts): the emulator's control plane
// (scripts that opt in to billing, the cache clock, the stats of one script) and token counts worked out
// independently of the emulator's code, the way its docs state them: a unit's JSON, without cache_control, in UTF-8
// bytes over 4, rounded up; a string content is one text block.
import { env } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import { expect } from "vitest";

export const emulatorUrl = env.ANTHROPIC_BASE_URL ?? "";

export function anthropicClient(apiKey = "test-prompt-cache"): Anthropic {
  return new Anthropic({ apiKey, baseURL: emulatorUrl, fetch: (input, init) => fetch(input, init), maxRetries: 0 });
}

export function uniqueMatch(label: string): string {
  return `[pc-${label}-${crypto.randomUUID()}]`;
}

/** Registers a script (one text reply per turn unless `turns` says otherwise) that bills prompt caching. */
export async function billedScript(match: string, extra: Record<string, unknown> = {}, replies = 3): Promise<void> {
  const turns = Array.from({ length: replies }, (_, turn) => ({ content: [{ type: "text", text: `reply ${turn}` }] }));
  const res = await fetch(`${emulatorUrl}/_emulator/scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ match, turns, prompt_cache: true, ...extra }),
  });
  expect(res.status).toBe(201);
}

/** Ages the cache partitions of the script `match` by `ms`. */
export async function advance(ms: number, match: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${emulatorUrl}/_emulator/cache/advance`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ms, match }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

export interface StatsRecord {
  provider: string;
  status: number;
  usage: Record<string, number> | null;
  prompt_units: { tokens: number; prefix_hash: string }[];
  breakpoints: number[];
  min_cacheable_tokens: number | null;
  ttft_ms: number | null;
}

/** The stats records of the requests that matched the script `match`, oldest first. */
export async function statsOf(match: string): Promise<StatsRecord[]> {
  const res = await fetch(`${emulatorUrl}/_emulator/stats?match=${encodeURIComponent(match)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { requests: StatsRecord[] }).requests;
}

const encoder = new TextEncoder();

/** A unit's tokens: its JSON without a top-level cache_control, in UTF-8 bytes over 4, rounded up. */
export function tokens(unit: unknown): number {
  const value = typeof unit === "string" ? { type: "text", text: unit } : unit;
  const { cache_control: _marker, ...rest } = value as Record<string, unknown>;
  return Math.ceil(encoder.encode(JSON.stringify(rest)).length / 4);
}

export function sum(units: readonly unknown[]): number {
  return units.reduce<number>((total, unit) => total + tokens(unit), 0);
}

/** Text of about `approx` tokens (as a text block), starting with `label` so that prompts differ where they should. */
export function filler(label: string, approx: number): string {
  return `${label}: ${"lorem ipsum dolor sit amet ".repeat(Math.ceil((approx * 4) / 27))}`;
}

export type Ttl = "5m" | "1h";

export function textBlock(text: string, ttl?: Ttl): Anthropic.TextBlockParam {
  return ttl ? { type: "text", text, cache_control: { type: "ephemeral", ttl } } : { type: "text", text };
}
