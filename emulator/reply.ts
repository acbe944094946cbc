// What the emulator's model says, apart from any wire format: the reply blocks and usage a script or the default
// policy produces, how text and JSON are cut into stream deltas, and the contract each wire format (dialect) fills:
// parse a request into the common view, render a reply as a JSON body and as SSE frames, render errors.
import type { IncomingHttpHeaders } from "node:http";
import type { AuthOutcome } from "./auth.ts";
import type { Diagnostics } from "./cache-diagnostics.ts";
import type { CacheView } from "./prompt-units.ts";
import type { MessagesRequest, Parsed } from "./request.ts";

export type Provider = "anthropic" | "openai" | "gemini" | "vertex" | "bedrock";

export type ReplyBlock =
  | { type: "text"; text: string; citations?: Record<string, unknown>[] }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "thinking"; thinking: string; signature: string }
  /** Anthropic's web search (emulator/web-search.ts): the model's query, then what the API found. */
  | { type: "server_tool_use"; id: string; name: "web_search"; input: { query: string }; caller: { type: "direct" } }
  | {
      type: "web_search_tool_result";
      tool_use_id: string;
      content: Record<string, unknown>[] | { type: "web_search_tool_result_error"; error_code: string };
      caller: { type: "direct" };
    }
  /** The Messages API's compaction (emulator/compaction.ts): the summary, signed; null content when it failed. */
  | { type: "compaction"; content: string | null; encrypted_content: string | null; signature: string | null };

/** Usage in the Anthropic vocabulary scripts are written in; each dialect maps it onto its own fields. */
export interface ReplyUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** Anthropic's usage.cache_creation: the cache writes split by TTL. */
export interface CacheCreation {
  ephemeral_5m_input_tokens: number;
  ephemeral_1h_input_tokens: number;
}

/** What the model "says": everything needed to render either a JSON body or its SSE stream. */
export interface Reply {
  id: string;
  model: string;
  blocks: ReplyBlock[];
  /** In the Anthropic vocabulary (end_turn, tool_use, max_tokens, ...); dialects translate it. */
  stopReason: string;
  stopSequence: string | null;
  /** Partial usage; unset counts are computed from the request and the emitted chunks. */
  usage: Partial<ReplyUsage>;
  inputTokensEstimate: number;
  /** usage.server_tool_use, when the request offered a server tool (web search); absent otherwise. */
  serverToolUse?: { web_search_requests: number; web_fetch_requests: number };
  /**
   * Set when prompt caching is billed (emulator/billing.ts): the Messages API's usage then carries `cache_creation`,
   * and its message_delta the running totals of every count.
   */
  cacheCreation?: CacheCreation;
  /** The Message's `diagnostics` (emulator/cache-diagnostics.ts); absent is null. */
  diagnostics?: Diagnostics;
  /** A compaction request's reply: its usage is reported as a compaction iteration (emulator/compaction.ts). */
  compaction?: boolean;
}

export interface StreamFrame {
  /** The exact bytes of the SSE frame, blank line included (or of a binary frame, for Bedrock's event stream). */
  text: string | Uint8Array;
  /** Deltas are where token latency is paid and where mid-stream faults are injected. */
  isDelta: boolean;
  /** The frame carrying the stop reason: a fault due after the last delta fires right before it. */
  isFinish: boolean;
}

export interface RenderedReply {
  /** The non-streaming response body. */
  body: Record<string, unknown>;
  /** The streaming response; the stats record is stamped right before the last frame. */
  frames: StreamFrame[];
  /** Text, thinking and JSON chunks rendered: the emulator's notion of generated tokens, and of generation time. */
  chunkCount: number;
  /** The usage reported, in the Anthropic vocabulary whatever the wire. */
  usage: ReplyUsage;
}

/**
 * An error to render in a dialect's shape. `type` is a fault's `error_type`: an Anthropic error type (what scripts are
 * written in) is translated through `status` by the other dialects; any other value is used as the provider's own.
 */
export interface ErrorSpec {
  status: number;
  type?: string | undefined;
  message?: string | undefined;
  /** Seconds to wait: a retry-after header (and, on Gemini, a RetryInfo detail too, as faults have always had it). */
  retryAfter?: number | undefined;
  /** Seconds to wait in Gemini's RetryInfo detail alone, with no header: how Google itself says it. */
  retryDelay?: number | undefined;
  /** OpenAI's `param` and `code` (e.g. "messages", "context_length_exceeded"); the other wires have no such fields. */
  param?: string | undefined;
  code?: string | undefined;
}

export interface RequestContext {
  url: URL;
  headers: IncomingHttpHeaders;
  /** The body as sent: what a signature covers. */
  rawBody: Buffer;
}

/** One wire format the emulator speaks; the script, fault, latency and stats machinery is shared by all of them. */
export interface Dialect {
  provider: Provider;
  /** Whether `path` (no trailing slash, no query) is this dialect's model endpoint, for a POST. */
  matches(path: string): boolean;
  /** Null when the request carries a key of any value; otherwise the provider's message for a missing key. */
  missingKey(context: RequestContext): string | null;
  /** The endpoint's check of the credentials, where it has one (src: emulator/auth.ts); absent: none. */
  authenticate?(context: RequestContext): AuthOutcome;
  parse(body: unknown, context: RequestContext): Parsed<MessagesRequest>;
  /** The request as prompt caching sees it (emulator/prompt-units.ts), or the API's refusal of its cache fields. */
  cacheView(body: Record<string, unknown>, request: MessagesRequest, context: RequestContext): Parsed<CacheView>;
  /** Prefixes of the ids the emulator makes up, so they look like the provider's. */
  ids: { message: string; tool: string };
  /** Headers on every response of this dialect besides `request-id`. */
  headers(requestId: string): Record<string, string>;
  render(reply: Reply, request: MessagesRequest): RenderedReply;
  /** The status actually sent (a provider without 529 answers 503) and the JSON body. */
  error(spec: ErrorSpec): { status: number; body: unknown };
  /** An error frame sent after HTTP 200, where the stream breaks off. */
  streamError(spec: ErrorSpec): string | Uint8Array;
  /** A frame whose data line is cut mid-object: what a proxy truncating the stream would deliver. */
  malformedFrame: string | Uint8Array;
  /** The content type of a streamed reply; absent: text/event-stream. */
  streamContentType?: string;
}

/** Splits text into word-sized tokens (each word with its surrounding whitespace); concatenation is lossless. */
export function chunkText(text: string): string[] {
  if (text.length === 0) return [];
  const pieces = text.match(/\s*\S+\s*/g);
  return pieces ?? [text];
}

/** Splits serialized tool input into a few pieces, as the real APIs stream partial JSON (never inside a code point). */
export function chunkJson(json: string): string[] {
  const codePoints = Array.from(json);
  const size = Math.max(8, Math.ceil(codePoints.length / 4));
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) {
    pieces.push(codePoints.slice(start, start + size).join(""));
  }
  return pieces;
}

/** A data-only SSE frame, as OpenAI and Gemini send them. */
export function dataFrame(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

/** Full usage from a script's partial usage: unset input is the request estimate, unset output the chunk count. */
export function fullUsage(reply: Reply, chunkCount: number): ReplyUsage {
  return {
    input_tokens: reply.usage.input_tokens ?? reply.inputTokensEstimate,
    output_tokens: reply.usage.output_tokens ?? chunkCount,
    cache_creation_input_tokens: reply.usage.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: reply.usage.cache_read_input_tokens ?? 0,
  };
}
