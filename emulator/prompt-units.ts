// A model request cut into the units prompt caching works on, in the order the provider reads them, each with its
// token count and the hash of the prompt up to and including it, so two requests share a prefix exactly where their
// hashes agree. Anthropic caches at block boundaries in the order tools, system, messages ("Cache prefixes are
// created in the following order: tools, system, then messages", its prompt caching docs), and `cache_control` on a
// block is a breakpoint; the Messages API's views of it (for the first-party, Bedrock and Vertex wires) are here.
// OpenAI and Gemini cache a prompt's prefix by themselves; their dialects cut their requests the same way.
import { createHash } from "node:crypto";
import { isRecord, type Parsed } from "./request.ts";

export type Section = "tools" | "system" | "messages";

export interface PromptUnit {
  tokens: number;
  /** The hash of the prompt up to and including this unit: the same wherever everything before is the same. */
  prefix_hash: string;
  /** Where it is in the request body, for error messages: tools.0, system.1, messages.3.content.0. */
  path: string;
  section: Section;
  /** The index of its message (for units of messages), else null. */
  message: number | null;
  /** The hash of this unit alone (its role and content): what diagnostics compare section by section. */
  hash: string;
}

export type Ttl = "5m" | "1h";

export interface Breakpoint {
  /** The index of the unit whose end it marks. */
  index: number;
  ttl: Ttl;
}

/** What prompt caching needs to know of one request, in any wire format. */
export interface CacheView {
  units: PromptUnit[];
  /** Anthropic's breakpoints, in prompt order (the automatic one included); empty for OpenAI and Gemini. */
  breakpoints: Breakpoint[];
  /** Another part of the cache's partition: OpenAI's `prompt_cache_key`. */
  key: string | null;
  /** How long an unused entry stays, where the request chooses it (OpenAI's `prompt_cache_retention`). */
  retentionMs: number | null;
  /** The request's `diagnostics` (Messages API only): null when it sent none. */
  diagnostics: { previousMessageId: string | null } | null;
  /** Prompt-affecting parameters beside the prompt (thinking, tool_choice): a change of them alone is "unavailable". */
  settingsHash: string;
}

/** One unit before hashing: its place, and the value whose JSON it is. */
export interface RawUnit {
  section: Section;
  path: string;
  message: number | null;
  /** The message's role, for units of messages. */
  role?: string;
  /** Whether it opens its message: [A, B] in one message is another prompt than [A] and [B] in two. */
  opens?: boolean;
  value: unknown;
}

export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** JSON without any `cache_control`: a breakpoint marker is not part of the prompt, so it never changes a prefix. */
export function unmarkedJson(value: unknown): string {
  return JSON.stringify(value, (key, inner: unknown) => (key === "cache_control" ? undefined : inner)) ?? "null";
}

/**
 * A unit's tokens: its JSON's UTF-8 bytes over 4, rounded up, like the emulator's whole-request estimate
 * (estimateInputTokens in emulator/request.ts). Deterministic, and close enough to a tokenizer for billing tests.
 */
export function tokensOf(value: unknown): number {
  return Math.ceil(Buffer.byteLength(unmarkedJson(value), "utf8") / 4);
}

/** Hashes and counts the raw units in order, chaining each unit's hash onto the prefix before it. */
export function cutUnits(raw: readonly RawUnit[]): PromptUnit[] {
  let prefix = "";
  return raw.map((unit) => {
    const json = unmarkedJson(unit.value);
    const hash = shortHash(JSON.stringify([unit.section, unit.role ?? null, unit.opens ?? false, json]));
    prefix = shortHash(`${prefix}\n${hash}`);
    return {
      tokens: Math.ceil(Buffer.byteLength(json, "utf8") / 4),
      prefix_hash: prefix,
      path: unit.path,
      section: unit.section,
      message: unit.message,
      hash,
    };
  });
}

/** A string content (or system prompt) is one text block. */
function asBlocks(content: unknown, path: string): { value: unknown; path: string }[] {
  if (typeof content === "string") return content === "" ? [] : [{ value: { type: "text", text: content }, path }];
  if (!Array.isArray(content)) return [];
  return content.map((value, index) => ({ value, path: `${path}.${index}` }));
}

/** A Messages API prompt's units: each tool definition, each system block, each content block of each message. */
export function messagesUnits(prompt: { tools: unknown; system: unknown; messages: unknown }): RawUnit[] {
  const units: RawUnit[] = [];
  const tools = Array.isArray(prompt.tools) ? prompt.tools : [];
  for (const [index, value] of tools.entries()) {
    units.push({ section: "tools", path: `tools.${index}`, message: null, value });
  }
  for (const block of asBlocks(prompt.system, "system")) units.push({ section: "system", message: null, ...block });
  const messages = Array.isArray(prompt.messages) ? prompt.messages : [];
  messages.forEach((message, index) => {
    if (!isRecord(message)) return;
    const role = String(message.role);
    asBlocks(message.content, `messages.${index}.content`).forEach((block, at) => {
      units.push({ section: "messages", message: index, role, opens: at === 0, ...block });
    });
  });
  return units;
}

/** A `cache_control` as the Messages API checks it: `{type: "ephemeral", ttl?: "5m" | "1h"}`. */
function cacheTtl(value: unknown, path: string): Parsed<Ttl> {
  if (!isRecord(value) || value.type !== "ephemeral") {
    return { ok: false, message: `${path}.type: Input should be 'ephemeral'` };
  }
  if (value.ttl === undefined || value.ttl === "5m" || value.ttl === "1h") {
    return { ok: true, value: value.ttl ?? "5m" };
  }
  return { ok: false, message: `${path}.ttl: Input should be '5m' or '1h'` };
}

/** Anthropic's limit on breakpoints in one request (its prompt caching docs: "up to 4 cache breakpoints"). */
export const MAX_BREAKPOINTS = 4;

/**
 * The Messages API's view of a request: its units and breakpoints, checked as the API checks them (at most 4; a 1h
 * breakpoint never after a 5m one, in the order tools, system, messages), the request-level `cache_control` (automatic
 * caching: a breakpoint on the last cacheable block) where the host takes it, and `diagnostics`.
 */
export function messagesCacheView(
  body: Record<string, unknown>,
  prompt: { tools: unknown; system: unknown; messages: unknown },
  host: { automatic: boolean },
): Parsed<CacheView> {
  const raw = messagesUnits(prompt);
  const breakpoints: Breakpoint[] = [];
  /** Where each breakpoint's marker is in the body, for the API's error messages. */
  const markers: string[] = [];
  for (const [index, unit] of raw.entries()) {
    const marker = isRecord(unit.value) ? unit.value.cache_control : undefined;
    if (marker === undefined || marker === null) continue;
    const ttl = cacheTtl(marker, `${unit.path}.cache_control`);
    if (!ttl.ok) return ttl;
    breakpoints.push({ index, ttl: ttl.value });
    markers.push(`${unit.path}.cache_control`);
  }
  if (body.cache_control !== undefined && body.cache_control !== null) {
    // Bedrock and Vertex take block-level breakpoints only: the request-level form is the first-party API's.
    if (!host.automatic) return { ok: false, message: "cache_control: Extra inputs are not permitted" };
    const ttl = cacheTtl(body.cache_control, "cache_control");
    if (!ttl.ok) return ttl;
    const last = raw.length - 1;
    if (last >= 0 && breakpoints.at(-1)?.index !== last) {
      breakpoints.push({ index: last, ttl: ttl.value });
      markers.push("cache_control");
    }
  }
  if (breakpoints.length > MAX_BREAKPOINTS) {
    return {
      ok: false,
      message: `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints.length}.`,
    };
  }
  // The API's rule and wording: longer TTLs first (its docs, "Mixing different TTLs").
  const firstShort = breakpoints.findIndex((breakpoint) => breakpoint.ttl === "5m");
  const lateLong = breakpoints.findIndex(
    (breakpoint, at) => firstShort >= 0 && at > firstShort && breakpoint.ttl === "1h",
  );
  if (lateLong >= 0) {
    return {
      ok: false,
      message: `${markers[lateLong]}.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: \`tools\`, \`system\`, \`messages\`.`,
    };
  }
  const diagnostics = body.diagnostics;
  let previous: CacheView["diagnostics"] = null;
  if (diagnostics !== undefined && diagnostics !== null) {
    if (!isRecord(diagnostics)) return { ok: false, message: "diagnostics: Input should be an object" };
    const id = diagnostics.previous_message_id;
    if (id !== undefined && id !== null && typeof id !== "string") {
      return { ok: false, message: "diagnostics.previous_message_id: Input should be a valid string" };
    }
    previous = { previousMessageId: id ?? null };
  }
  return {
    ok: true,
    value: {
      units: cutUnits(raw),
      breakpoints,
      key: null,
      retentionMs: null,
      diagnostics: previous,
      settingsHash: shortHash(unmarkedJson([body.thinking ?? null, body.tool_choice ?? null])),
    },
  };
}
