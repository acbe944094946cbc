// The Messages API's cache diagnostics: a request with `diagnostics: {previous_message_id}` learns why its prompt
// could not reuse the prefix of the request that answered with that message. The emulator keeps a fingerprint of
// each answered request by its message id (model, tools, system, each message, the other prompt-affecting settings)
// and compares, in the order the prompt is cached: model, tools, system, messages (the SDK's CacheMissReason shapes).
import type { CacheView, PromptUnit } from "./prompt-units.ts";
import { shortHash } from "./prompt-units.ts";

export interface Fingerprint {
  credential: string;
  model: string;
  tools: string;
  system: string;
  messages: string[];
  settings: string;
  prefixHashes: string[];
  ends: number[];
  /** Tokens up to the request's last breakpoint: what it asked the cache to keep. */
  cachedEnd: number;
}

export type CacheMissReason =
  | {
      type: "model_changed" | "system_changed" | "tools_changed" | "messages_changed";
      cache_missed_input_tokens: number;
    }
  | { type: "previous_message_not_found" }
  | { type: "unavailable" };

/** The `diagnostics` of a Message: null when the prefix was reused (or nothing was asked to compare). */
export type Diagnostics = { cache_miss_reason: CacheMissReason } | null;

/** Fingerprints kept; the oldest go first (a test run makes a few thousand requests). */
const MAX_REMEMBERED = 20_000;

function sectionHash(units: readonly PromptUnit[]): string {
  return shortHash(units.map((unit) => unit.hash).join("\n"));
}

export function fingerprint(view: CacheView, credential: string, model: string): Fingerprint {
  const messages: string[] = [];
  let message: PromptUnit[] = [];
  let index: number | null = null;
  const flush = () => {
    if (message.length > 0) messages.push(sectionHash(message));
    message = [];
  };
  for (const unit of view.units.filter((unit) => unit.section === "messages")) {
    if (unit.message !== index) flush();
    index = unit.message;
    message.push(unit);
  }
  flush();
  let sum = 0;
  const ends = view.units.map((unit) => (sum += unit.tokens));
  const last = view.breakpoints.at(-1);
  return {
    credential,
    model,
    tools: sectionHash(view.units.filter((unit) => unit.section === "tools")),
    system: sectionHash(view.units.filter((unit) => unit.section === "system")),
    messages,
    settings: view.settingsHash,
    prefixHashes: view.units.map((unit) => unit.prefix_hash),
    ends,
    cachedEnd: last ? (ends[last.index] ?? 0) : 0,
  };
}

export class CacheDiagnostics {
  #byMessage = new Map<string, Fingerprint>();

  remember(messageId: string, print: Fingerprint): void {
    this.#byMessage.delete(messageId);
    this.#byMessage.set(messageId, print);
    if (this.#byMessage.size > MAX_REMEMBERED) {
      const oldest = this.#byMessage.keys().next().value;
      if (oldest !== undefined) this.#byMessage.delete(oldest);
    }
  }

  /**
   * Why `current` could not reuse the prefix of the request that answered `previousId`, or null when it could.
   * `cache_missed_input_tokens`: what that request asked the cache to keep beyond the prefix the two share.
   */
  explain(previousId: string | null, current: Fingerprint): Diagnostics {
    if (previousId === null) return null;
    const previous = this.#byMessage.get(previousId);
    // Another credential's message is not this caller's to compare with.
    if (!previous || previous.credential !== current.credential) {
      return { cache_miss_reason: { type: "previous_message_not_found" } };
    }
    let shared = 0;
    if (previous.model === current.model) {
      for (const [at, hash] of previous.prefixHashes.entries()) {
        if (current.prefixHashes[at] !== hash) break;
        shared = previous.ends[at] ?? 0;
      }
    }
    const missed = Math.max(0, previous.cachedEnd - shared);
    const reason = (type: "model_changed" | "system_changed" | "tools_changed" | "messages_changed") => ({
      cache_miss_reason: { type, cache_missed_input_tokens: missed },
    });
    if (previous.model !== current.model) return reason("model_changed");
    if (previous.tools !== current.tools) return reason("tools_changed");
    if (previous.system !== current.system) return reason("system_changed");
    if (previous.messages.some((hash, at) => current.messages[at] !== hash)) return reason("messages_changed");
    if (previous.settings !== current.settings) return { cache_miss_reason: { type: "unavailable" } };
    return null;
  }

  clear(): void {
    this.#byMessage.clear();
  }
}
