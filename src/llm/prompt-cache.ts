// Prompt caching (issue 33): what an agent says about it (`prompt_cache`, one schema for files, classes and runtime
// agents), where a Messages API request gets its cache breakpoints, and the key an OpenAI request is cached under.
// Breakpoints are block-level `cache_control`, the form every Claude host takes (Anthropic, Bedrock, Vertex, Foundry);
// the request-level `cache_control` is Anthropic's alone. The other providers' translators drop the markers
// (src/llm/openai-compatible.ts, src/llm/gemini-request.ts): OpenAI and Gemini cache prefixes by themselves.
import type {
  CacheControlEphemeral,
  ContentBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";

export const PROMPT_CACHE_TTLS = ["5m", "1h"] as const;
export type PromptCacheTtl = (typeof PROMPT_CACHE_TTLS)[number];

/**
 * An agent's `prompt_cache`: `false` turns caching off; otherwise the TTL of its cache writes (`5m`, the default, or
 * `1h` for sessions whose users pause: a 1h write costs 2× input against 1.25×, and a read refreshes either) and,
 * for an openai_compatible agent, whether to send `prompt_cache_key` (default: only to OpenAI itself, api.openai.com;
 * other compatible servers may refuse a field they do not know).
 */
export const PromptCacheSchema = z.union(
  [
    z.literal(false),
    z.strictObject({
      ttl: z.enum(PROMPT_CACHE_TTLS, 'must be "5m" or "1h"').default("5m"),
      cache_key: z.boolean("must be true or false").optional(),
    }),
  ],
  'must be false (caching off) or an object such as {ttl: "5m"}',
);
export type PromptCacheSetting = z.input<typeof PromptCacheSchema>;

/** A checked setting: null when caching is off. */
export type PromptCachePolicy = { ttl: PromptCacheTtl; cacheKey: boolean | undefined } | null;

/** The policy of a definition's `prompt_cache` (absent: on, 5 minutes). */
export function promptCachePolicy(setting: z.output<typeof PromptCacheSchema> | undefined): PromptCachePolicy {
  if (setting === false) return null;
  return { ttl: setting?.ttl ?? "5m", cacheKey: setting?.cache_key };
}

/**
 * The request with its cache breakpoints, at most three of the API's four:
 * 1. the last system block: the tools and the system prompt, the same bytes for every task of an agent version, so
 *    a task that follows within the TTL reads them;
 * 2. the end of the previous call's prompt (the last block of the user message before the last assistant turn):
 *    the API looks back only 20 blocks from a breakpoint for an earlier write, and a turn of parallel tool calls
 *    adds more than that, so this breakpoint reads the previous call's write exactly;
 * 3. the end of this call's prompt (its last user message), written for the next call. A paused turn's reply
 *    (pause_turn), sent back last, goes back exactly as it came, so its breakpoint is the user message before it.
 * All carry the agent's one TTL, so no 5m breakpoint comes before a 1h one (the API refuses that order). The
 * markers change no byte of the prompt the cache hashes, so a request after an eviction or a fork hits the same
 * entries. A message whose content is a string is written as one text block, as the API reads it, whether or not
 * it carries a breakpoint.
 */
export function withCacheBreakpoints(params: MessageCreateParamsBase, ttl: PromptCacheTtl): MessageCreateParamsBase {
  // An agent that places breakpoints of its own keeps them, and gets none of these: the API takes four at most.
  if (placesItsOwn(params)) return params;
  const control: CacheControlEphemeral = ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
  // Every message's content as blocks, as the breakpoints need it: a message keeps the same bytes whether or not
  // it carries one (a string would become a block only while marked, and the prefix would change under it).
  const messages = params.messages.map((message) =>
    typeof message.content === "string"
      ? ({ ...message, content: [{ type: "text", text: message.content }] } as MessageParam)
      : message,
  );
  const current = lastIndex(messages, "user", messages.length);
  const previous = lastIndex(messages, "user", lastIndex(messages, "assistant", current));
  for (const index of new Set([current, previous])) {
    const message = messages[index];
    if (message) messages[index] = markLastBlock(message, control);
  }
  const system = markSystem(params.system, control);
  return { ...params, ...(system ? { system } : {}), messages };
}

/** Whether a request already carries cache_control: on itself, a tool, a system block or a message's block. */
function placesItsOwn(params: MessageCreateParamsBase): boolean {
  const marked = (item: unknown) => (item as { cache_control?: unknown }).cache_control != null;
  if (marked(params) || (params.tools ?? []).some(marked)) return true;
  if (Array.isArray(params.system) && params.system.some(marked)) return true;
  return params.messages.some((message) => typeof message.content !== "string" && message.content.some(marked));
}

/** The index of the last message of `role` before `end`, or -1. */
function lastIndex(messages: readonly MessageParam[], role: MessageParam["role"], end: number): number {
  for (let i = Math.min(end, messages.length) - 1; i >= 0; i--) if (messages[i]?.role === role) return i;
  return -1;
}

function markSystem(
  system: MessageCreateParamsBase["system"],
  control: CacheControlEphemeral,
): TextBlockParam[] | undefined {
  if (system === undefined) return undefined;
  const blocks: TextBlockParam[] =
    typeof system === "string" ? (system ? [{ type: "text", text: system }] : []) : [...system];
  const last = blocks.findLastIndex((block) => block.text !== "");
  const block = blocks[last];
  // An empty system prompt has nothing to mark, and is sent as it came.
  if (!block) return undefined;
  blocks[last] = { ...block, cache_control: control };
  return blocks;
}

/**
 * The message with `cache_control` on its last block that may carry one: thinking blocks may not (the API caches
 * them only as part of a prefix), nor may an empty text block.
 */
function markLastBlock(message: MessageParam, control: CacheControlEphemeral): MessageParam {
  const blocks: ContentBlockParam[] =
    typeof message.content === "string" ? [{ type: "text", text: message.content }] : [...message.content];
  const last = blocks.findLastIndex(
    (block) =>
      block.type !== "thinking" && block.type !== "redacted_thinking" && !(block.type === "text" && block.text === ""),
  );
  const block = blocks[last];
  if (!block) return message;
  blocks[last] = { ...block, cache_control: control } as ContentBlockParam;
  return { ...message, content: blocks } as MessageParam;
}

/** The request field an OpenAI-compatible call carries its cache key in, beside the Messages API's fields. */
const CACHE_KEY_FIELD = "prompt_cache_key";

/** The request with the cache key an OpenAI-compatible provider sends as `prompt_cache_key`. */
export function withPromptCacheKey(params: MessageCreateParamsBase, key: string): MessageCreateParamsBase {
  return { ...params, [CACHE_KEY_FIELD]: key } as MessageCreateParamsBase;
}

/** The cache key a request carries for an OpenAI-compatible provider, if any. */
export function promptCacheKeyOf(params: MessageCreateParamsBase): string | undefined {
  const value = (params as { [CACHE_KEY_FIELD]?: unknown })[CACHE_KEY_FIELD];
  return typeof value === "string" ? value : undefined;
}

/**
 * The `prompt_cache_key` of an agent version's calls: one per tenant, agent and version, so tasks of one agent
 * version share OpenAI's cache routing and two tenants never do. A hash, so the tenant's and agent's names do not
 * leave the deployment; OpenAI takes keys of up to 64 characters.
 */
export async function promptCacheKey(tenant: string, agent: string, version: number | null): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([tenant, agent, version]));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = [...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `outpost-${hex}`;
}

/** Whether an openai_compatible agent sends prompt_cache_key: to OpenAI itself unless turned off, elsewhere if asked. */
export function sendsCacheKey(policy: PromptCachePolicy, endpoint: string | undefined): boolean {
  if (policy === null) return false;
  if (policy.cacheKey !== undefined) return policy.cacheKey;
  return endpoint !== undefined && new URL(endpoint).hostname === "api.openai.com";
}
