// The emulator's prompt cache, billed as the providers bill theirs: Anthropic's breakpoints with their lookback, TTLs
// refreshed on read and a minimum cacheable length per model; OpenAI's and Gemini's automatic prefix caching. Entries
// are prefixes (a unit's prefix_hash, emulator/prompt-units.ts) in partitions: the credential, the model and more (the
// OpenAI request's prompt_cache_key, the script that asked for billing), so tests that run in parallel never share or
// age each other's entries. Time is the wall clock, and POST /_emulator/cache/advance ages entries without sleeping.
import type { Breakpoint, PromptUnit, Ttl } from "./prompt-units.ts";

const MINUTE_MS = 60_000;

/** Anthropic's TTLs: "5m" (the default) or "1h" from the write, refreshed by each read (its prompt caching docs). */
export const TTL_MS: Record<Ttl, number> = { "5m": 5 * MINUTE_MS, "1h": 60 * MINUTE_MS };

/**
 * How many block boundaries a breakpoint looks at for a hit, its own first: Anthropic's docs ("20-block lookback
 * window"), whose example with a breakpoint on block 30 checks blocks 30, 29, … 11 ("check #20") and stops.
 */
export const LOOKBACK_BLOCKS = 20;

/**
 * OpenAI: "Caching is enabled automatically for prompts that are 1024 tokens or longer", with "cache hits occurring
 * in increments of 128 tokens" (its prompt caching guide, and the Prompt Caching 201 cookbook); "Cached prefixes
 * generally remain active for 5 to 10 minutes of inactivity" (the emulator keeps the shorter), and a request's
 * `prompt_cache_retention: "24h"` keeps them a day.
 */
export const OPENAI_CACHE = {
  minTokens: 1024,
  increment: 128,
  retentionMs: 5 * MINUTE_MS,
  extendedMs: 24 * 60 * MINUTE_MS,
};

/** Gemini's implicit caching keeps entries for a time Google does not document: the emulator keeps them 5 minutes. */
export const GEMINI_RETENTION_MS = 5 * MINUTE_MS;

/**
 * The minimum cacheable prompt length of each Claude model, from Anthropic's prompt caching docs ("Cache
 * limitations", the list as of October 2026); "These minimums apply on every platform where each model is available".
 * A model it does not list gets DEFAULT_MIN_TOKENS.
 */
const CLAUDE_MIN_TOKENS: Record<string, number> = {
  "claude-opus-5-5": 512,
  "claude-sonnet-5-5": 512,
  "claude-opus-5": 512,
  "claude-fable-5": 512,
  "claude-fable-5-1": 512,
  "claude-mythos-5": 512,
  "claude-mythos-5-1": 512,
  "claude-opus-4-8": 1024,
  "claude-sonnet-5": 1024,
  "claude-sonnet-4-6": 1024,
  "claude-sonnet-4-5": 1024,
  "claude-opus-4-1": 1024,
  "claude-opus-4": 1024,
  "claude-sonnet-4": 1024,
  "claude-opus-4-7": 2048,
  "claude-mythos-preview": 2048,
  "claude-3-5-haiku": 2048,
  "claude-opus-4-6": 4096,
  "claude-opus-4-5": 4096,
  "claude-haiku-4-5": 4096,
};
export const DEFAULT_MIN_TOKENS = 1024;

/**
 * Gemini's minimum input for implicit caching, from its context caching docs (2026-10): 2,048 for 2.5 Flash and Pro,
 * 4,096 for every later model it lists (3.5 to 3.8 Flash, 3.1 Pro Preview), which unlisted models get too.
 */
const GEMINI_MIN_TOKENS: Record<string, number> = { "gemini-2.5-flash": 2048, "gemini-2.5-pro": 2048 };
const GEMINI_DEFAULT_MIN_TOKENS = 4096;

/** A Claude model id as the table names it: Bedrock's `us.anthropic.…-v1:0`, Vertex's `…@date` and dates dropped. */
export function claudeModelName(model: string): string {
  return model
    .toLowerCase()
    .replace(/^(?:[a-z]+\.)?anthropic\./, "")
    .replace(/@.*$/, "")
    .replace(/-v\d+(?::\d+)?$/, "")
    .replace(/-\d{8}$/, "");
}

/** The minimum cacheable length in force for `model` on a wire. */
export function minCacheableTokens(wire: "anthropic" | "openai" | "gemini", model: string): number {
  if (wire === "openai") return OPENAI_CACHE.minTokens;
  if (wire === "gemini") return GEMINI_MIN_TOKENS[model.replace(/^models\//, "")] ?? GEMINI_DEFAULT_MIN_TOKENS;
  return CLAUDE_MIN_TOKENS[claudeModelName(model)] ?? DEFAULT_MIN_TOKENS;
}

/** What one request's prompt was billed, in Anthropic's vocabulary (input is what was neither read nor written). */
export interface CacheBill {
  input: number;
  read: number;
  write5m: number;
  write1h: number;
}

interface Entry {
  ttlMs: number;
  expiresAt: number;
}

interface Partition {
  /** The script whose partition it is (POST /_emulator/cache/advance ages one script's alone), or null. */
  script: string | null;
  entries: Map<string, Entry>;
}

export interface PartitionKey {
  wire: string;
  credential: string;
  model: string;
  key: string | null;
  script: string | null;
}

/** Token counts at the end of each unit. */
function ends(units: readonly PromptUnit[]): number[] {
  let sum = 0;
  return units.map((unit) => (sum += unit.tokens));
}

export class PromptCache {
  #partitions = new Map<string, Partition>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** The live entries of a partition (expired ones dropped). */
  #partition(key: PartitionKey): Map<string, Entry> {
    const id = JSON.stringify([key.wire, key.credential, key.model, key.key, key.script]);
    let partition = this.#partitions.get(id);
    if (!partition) {
      partition = { script: key.script, entries: new Map() };
      this.#partitions.set(id, partition);
    }
    const now = this.#now();
    for (const [hash, entry] of partition.entries) if (entry.expiresAt <= now) partition.entries.delete(hash);
    return partition.entries;
  }

  /** Writes an entry, or refreshes a live one (keeping the longer of its TTL and this write's). */
  #put(entries: Map<string, Entry>, hash: string, ttlMs: number): void {
    const entry = entries.get(hash);
    const keep = Math.max(entry?.ttlMs ?? 0, ttlMs);
    entries.set(hash, { ttlMs: keep, expiresAt: this.#now() + keep });
  }

  /**
   * Anthropic's breakpoints (its prompt caching docs): each looks for a hit at its own boundary, then at earlier ones
   * (LOOKBACK_BLOCKS in all), and the longest hit across them is read (position A). Each breakpoint whose prefix is
   * at least `min` tokens writes it; a shorter prefix is neither written nor read. Billed as the docs' "Mixing
   * different TTLs" says: reads up to A, 1h writes from A to the last 1h breakpoint after it (B), 5m writes from B to
   * the last breakpoint (C), plain input after C.
   */
  billBreakpoints(key: PartitionKey, units: readonly PromptUnit[], breakpoints: readonly Breakpoint[], min: number) {
    const entries = this.#partition(key);
    const end = ends(units);
    const total = end.at(-1) ?? 0;
    let hit = -1;
    for (const breakpoint of breakpoints) {
      for (let back = 0; back < LOOKBACK_BLOCKS; back++) {
        const at = breakpoint.index - back;
        if (at < 0 || (end[at] ?? 0) < min) break;
        if (entries.has(units[at]?.prefix_hash ?? "")) {
          hit = Math.max(hit, at);
          break;
        }
      }
    }
    const hitEntry = entries.get(units[hit]?.prefix_hash ?? "");
    if (hitEntry) hitEntry.expiresAt = this.#now() + hitEntry.ttlMs;
    const read = hit >= 0 ? (end[hit] ?? 0) : 0;
    let longUntil = read;
    let until = read;
    for (const breakpoint of breakpoints) {
      const tokens = end[breakpoint.index] ?? 0;
      if (tokens < min) continue;
      this.#put(entries, units[breakpoint.index]?.prefix_hash ?? "", TTL_MS[breakpoint.ttl]);
      if (breakpoint.index <= hit) continue;
      if (breakpoint.ttl === "1h") longUntil = Math.max(longUntil, tokens);
      until = Math.max(until, tokens);
    }
    return { input: total - until, read, write1h: longUntil - read, write5m: until - longUntil } satisfies CacheBill;
  }

  /**
   * Automatic prefix caching (OpenAI, Gemini): the longest prefix an earlier request left is read, rounded down to
   * `increment` tokens where the provider counts in steps; then every prefix of at least `min` tokens is kept for
   * `retentionMs` from now. Nothing is billed as a write.
   */
  billPrefix(key: PartitionKey, units: readonly PromptUnit[], min: number, retentionMs: number, increment = 1) {
    const entries = this.#partition(key);
    const end = ends(units);
    const total = end.at(-1) ?? 0;
    let read = 0;
    for (let at = units.length - 1; at >= 0 && (end[at] ?? 0) >= min; at--) {
      if (!entries.has(units[at]?.prefix_hash ?? "")) continue;
      read = Math.floor((end[at] ?? 0) / increment) * increment;
      break;
    }
    if (read < min) read = 0;
    units.forEach((unit, at) => {
      if ((end[at] ?? 0) >= min) this.#put(entries, unit.prefix_hash, retentionMs);
    });
    return { input: total - read, read, write5m: 0, write1h: 0 } satisfies CacheBill;
  }

  /** Ages entries by `ms` (those of `script`'s partitions only, when given), dropping the ones it expires. */
  advance(ms: number, script: string | null): { ms: number; partitions: number; entries: number; expired: number } {
    const now = this.#now();
    const aged = { ms, partitions: 0, entries: 0, expired: 0 };
    for (const partition of this.#partitions.values()) {
      if (script !== null && partition.script !== script) continue;
      aged.partitions++;
      for (const [hash, entry] of partition.entries) {
        entry.expiresAt -= ms;
        aged.entries++;
        if (entry.expiresAt > now) continue;
        partition.entries.delete(hash);
        aged.expired++;
      }
    }
    return aged;
  }

  clear(): void {
    this.#partitions.clear();
  }
}
