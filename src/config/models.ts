// The one place that chooses the default model, and what Outpost knows of each model: its context window (how many
// tokens a prompt and its answer may hold, which compaction keeps the conversation inside: src/runtime/compaction.ts)
// and the shortest prompt prefix its provider caches. An agent may say its model's window itself (contextWindow).
import type { Model } from "@anthropic-ai/sdk/resources/messages";

export const DEFAULT_MODEL: Model = "claude-sonnet-5-5";

/** Default output budget per model call; agents may override it. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Model precedence: the agent's own pin, then the OUTPOST_DEFAULT_MODEL var, then DEFAULT_MODEL. */
export function resolveModel(agentModel: string | undefined, configuredDefault: string | undefined): string {
  if (agentModel) return agentModel;
  if (configuredDefault?.trim()) return configuredDefault.trim();
  return DEFAULT_MODEL;
}

export interface ModelFacts {
  /** Tokens a request's prompt and its output may hold together. */
  contextWindow: number;
  /** The shortest prefix the provider caches (a shorter one is sent whole every time). */
  minCacheableTokens: number;
}

const MILLION = 1_000_000;
const CLAUDE_DOCS = "Anthropic's models overview and context-windows pages, read 2026-12-07";

/**
 * Claude's models (CLAUDE_DOCS; minimum cacheable lengths from its prompt caching page, as the emulator's table):
 * the 1M-token window from the 4.6 generation on, 200k for the others.
 */
const CLAUDE: Readonly<Record<string, ModelFacts>> = {
  "claude-fable-5-1": { contextWindow: MILLION, minCacheableTokens: 512 },
  "claude-fable-5": { contextWindow: MILLION, minCacheableTokens: 512 },
  "claude-mythos-5-1": { contextWindow: MILLION, minCacheableTokens: 512 },
  "claude-mythos-5": { contextWindow: MILLION, minCacheableTokens: 512 },
  "claude-opus-5-5": { contextWindow: MILLION, minCacheableTokens: 512 },
  "claude-sonnet-5-5": { contextWindow: MILLION, minCacheableTokens: 512 },
  "claude-opus-5": { contextWindow: MILLION, minCacheableTokens: 512 },
  "claude-sonnet-5": { contextWindow: MILLION, minCacheableTokens: 1024 },
  "claude-opus-4-8": { contextWindow: MILLION, minCacheableTokens: 1024 },
  "claude-opus-4-7": { contextWindow: MILLION, minCacheableTokens: 2048 },
  "claude-opus-4-6": { contextWindow: MILLION, minCacheableTokens: 4096 },
  "claude-sonnet-4-6": { contextWindow: MILLION, minCacheableTokens: 1024 },
  "claude-sonnet-4-5": { contextWindow: 200_000, minCacheableTokens: 1024 },
  "claude-opus-4-5": { contextWindow: 200_000, minCacheableTokens: 4096 },
  "claude-haiku-4-5": { contextWindow: 200_000, minCacheableTokens: 4096 },
  "claude-opus-4-1": { contextWindow: 200_000, minCacheableTokens: 1024 },
  "claude-opus-4": { contextWindow: 200_000, minCacheableTokens: 1024 },
  "claude-sonnet-4": { contextWindow: 200_000, minCacheableTokens: 1024 },
};

/** A model Outpost does not know: the smallest window of the current models of the three providers. */
export const UNKNOWN_MODEL: ModelFacts = { contextWindow: 128_000, minCacheableTokens: 1024 };

/** Where the table's figures come from. */
export const MODEL_FACTS_SOURCE = CLAUDE_DOCS;

/** A Claude model id as the table names it: Bedrock's `us.anthropic.…-v1:0`, Vertex's `…@date` and dates dropped. */
function tableName(model: string): string {
  return model
    .toLowerCase()
    .replace(/^(?:[a-z]+\.)?anthropic\./, "")
    .replace(/@.*$/, "")
    .replace(/-v\d+(?::\d+)?$/, "")
    .replace(/-\d{8}$/, "");
}

/** What Outpost knows of `model`; UNKNOWN_MODEL's figures for one it does not. */
export function modelFacts(model: string): ModelFacts {
  return CLAUDE[tableName(model)] ?? UNKNOWN_MODEL;
}
