// Billing a model request's prompt as its provider would: which cache partition it falls in (the credential it
// authenticated with, the model, OpenAI's prompt_cache_key, the script that asked for billing), what the prompt cache
// (emulator/prompt-cache.ts) says it read and wrote, the cache diagnostics of a Messages API request, and the time to
// first token, which grows with the input the model had to process. Opt-in: billing is on for a script with
// `prompt_cache: true`, or for every request of an emulator started with `promptCache` (a script's `false` wins).
import type { AuthRecord } from "./auth.ts";
import { CacheDiagnostics, type Diagnostics, type Fingerprint, fingerprint } from "./cache-diagnostics.ts";
import {
  GEMINI_RETENTION_MS,
  minCacheableTokens,
  OPENAI_CACHE,
  type PartitionKey,
  PromptCache,
} from "./prompt-cache.ts";
import { type CacheView, shortHash } from "./prompt-units.ts";
import type { CacheCreation, Provider, ReplyUsage, RequestContext } from "./reply.ts";
import type { Script } from "./script.ts";

/**
 * Milliseconds of time to first token per 1,000 uncached input tokens, when billing is on. A real model's prefill takes
 * far longer; this is scaled down as the emulator's other latencies are, so that tests stay fast while the time still
 * grows in proportion to the input a cache hit would have spared.
 */
export const DEFAULT_PREFILL_MS_PER_1K_TOKENS = 2;

/** A request's usage as billed, in the Anthropic vocabulary whatever the wire (the stats' `usage`). */
export interface BilledUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_5m_input_tokens: number;
  cache_creation_1h_input_tokens: number;
}

/** The usage reported, with the writes split by TTL (all 5m when billing is off and a script wrote some). */
export function billedUsage(usage: ReplyUsage, creation: CacheCreation | null): BilledUsage {
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    cache_creation_5m_input_tokens: creation?.ephemeral_5m_input_tokens ?? usage.cache_creation_input_tokens,
    cache_creation_1h_input_tokens: creation?.ephemeral_1h_input_tokens ?? 0,
  };
}

export interface BillingOptions {
  promptCache: boolean;
  prefillMsPer1kTokens: number;
}

export interface Billed {
  /** Whether prompt caching was billed for this request. */
  on: boolean;
  /** The usage to report, fields the script gave winning over computed ones; empty when billing is off. */
  usage: Partial<ReplyUsage>;
  /** The writes split by TTL (Anthropic's usage.cache_creation); null when billing is off. */
  cacheCreation: CacheCreation | null;
  /** The Message's `diagnostics` (Messages API wires). */
  diagnostics: Diagnostics;
  minCacheableTokens: number;
  prefillMsPer1kTokens: number;
  /** What a later request's diagnostics compare against (Messages API wires), null elsewhere. */
  fingerprint: Fingerprint | null;
}

/** The wire's kind of caching: Anthropic's breakpoints (also on Bedrock and Vertex), or automatic. */
function cacheWire(provider: Provider): "anthropic" | "openai" | "gemini" {
  if (provider === "openai" || provider === "gemini") return provider;
  return "anthropic";
}

/**
 * Who the request authenticated as, hashed (no secret is kept): the principal the endpoint verified (Bedrock's
 * access key id, Vertex's service account), else the key or token it carried.
 */
export function credentialOf(context: RequestContext, auth: AuthRecord | null): string {
  if (auth?.principal) return shortHash(`${auth.scheme}:${auth.principal}`);
  const { headers, url } = context;
  const first = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const bearer = /^Bearer\s+(\S+)/i.exec(first("authorization") ?? "")?.[1];
  const key =
    first("x-api-key") ?? first("api-key") ?? first("x-goog-api-key") ?? bearer ?? url.searchParams.get("key");
  return key ? shortHash(`key:${key}`) : "anonymous";
}

export class PromptBilling {
  readonly cache = new PromptCache();
  readonly diagnostics = new CacheDiagnostics();
  readonly #options: BillingOptions;

  constructor(options: BillingOptions) {
    this.#options = options;
  }

  /** Whether a request of `script` (null: no script) is billed for prompt caching. */
  billsCaching(script: Script | null): boolean {
    return script?.prompt_cache ?? this.#options.promptCache;
  }

  bill(input: {
    provider: Provider;
    model: string;
    view: CacheView;
    script: Script | null;
    credential: string;
    scripted: Partial<ReplyUsage>;
  }): Billed {
    const { view, script, credential, model, scripted } = input;
    const wire = cacheWire(input.provider);
    const on = this.billsCaching(script);
    const min = script?.min_cacheable_tokens ?? minCacheableTokens(wire, model);
    const print = wire === "anthropic" ? fingerprint(view, credential, model) : null;
    const billed: Billed = {
      on,
      usage: scripted,
      cacheCreation: null,
      diagnostics:
        print && view.diagnostics ? this.diagnostics.explain(view.diagnostics.previousMessageId, print) : null,
      minCacheableTokens: min,
      prefillMsPer1kTokens: on ? (script?.prefill_ms_per_1k_tokens ?? this.#options.prefillMsPer1kTokens) : 0,
      fingerprint: print,
    };
    if (!on) return billed;
    const key: PartitionKey = {
      wire,
      credential,
      model,
      key: view.key,
      // A script that asked for billing has a partition of its own, so parallel test files never meet.
      script: script?.prompt_cache ? script.match : null,
    };
    const bill =
      wire === "anthropic"
        ? this.cache.billBreakpoints(key, view.units, view.breakpoints, min)
        : wire === "openai"
          ? this.cache.billPrefix(
              key,
              view.units,
              min,
              view.retentionMs ?? OPENAI_CACHE.retentionMs,
              OPENAI_CACHE.increment,
            )
          : this.cache.billPrefix(key, view.units, min, GEMINI_RETENTION_MS);
    const computed: Partial<ReplyUsage> = {
      input_tokens: bill.input,
      cache_read_input_tokens: bill.read,
      cache_creation_input_tokens: bill.write5m + bill.write1h,
    };
    billed.usage = { ...computed, ...scripted };
    // A script's own cache_creation_input_tokens wins; the split keeps the computed 1h part within it.
    const writes = billed.usage.cache_creation_input_tokens ?? 0;
    const long = Math.min(bill.write1h, writes);
    billed.cacheCreation = { ephemeral_5m_input_tokens: writes - long, ephemeral_1h_input_tokens: long };
    return billed;
  }

  /** Keeps what a later request's diagnostics compare against, once `messageId` has answered. */
  remember(messageId: string, billed: Billed): void {
    if (billed.fingerprint) this.diagnostics.remember(messageId, billed.fingerprint);
  }

  /** The time to first token: the configured one plus the prefill of what was neither read from the cache nor free. */
  ttftMs(configured: number, billed: Billed, usage: ReplyUsage): number {
    const uncached = usage.input_tokens + usage.cache_creation_input_tokens;
    return Math.round((configured + (uncached / 1000) * billed.prefillMsPer1kTokens) * 100) / 100;
  }

  reset(): void {
    this.cache.clear();
    this.diagnostics.clear();
  }
}
