// The Anthropic Messages API wire format: Message bodies, the SSE event sequence of a streamed reply,
// and error bodies. Everything here is pure so that a re-issued request produces byte-identical output.

export type ReplyBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "thinking"; thinking: string; signature: string };

export interface ReplyUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** What the model "says": everything needed to render either a Message body or its SSE stream. */
export interface Reply {
  id: string;
  model: string;
  blocks: ReplyBlock[];
  stopReason: string;
  stopSequence: string | null;
  /** Partial usage; unset counts are computed from the request and the emitted chunks. */
  usage: Partial<ReplyUsage>;
  inputTokensEstimate: number;
}

export interface SseEvent {
  event: string;
  data: unknown;
  /** Deltas are where token latency is paid and where mid-stream faults are injected. */
  isDelta: boolean;
}

export interface RenderedReply {
  message: Record<string, unknown>;
  events: SseEvent[];
  /** Text, thinking and JSON chunks: the emulator's notion of generated tokens. */
  chunkCount: number;
}

/** Splits text into word-sized tokens (each word with its surrounding whitespace); concatenation is lossless. */
export function chunkText(text: string): string[] {
  if (text.length === 0) return [];
  const pieces = text.match(/\s*\S+\s*/g);
  return pieces ?? [text];
}

/** Splits serialized tool input into a few pieces, as the real API streams partial JSON (never inside a code point). */
export function chunkJson(json: string): string[] {
  const codePoints = Array.from(json);
  const size = Math.max(8, Math.ceil(codePoints.length / 4));
  const pieces: string[] = [];
  for (let start = 0; start < codePoints.length; start += size) {
    pieces.push(codePoints.slice(start, start + size).join(""));
  }
  return pieces;
}

interface BlockRendering {
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  chunks: number;
}

function renderBlock(block: ReplyBlock): BlockRendering {
  switch (block.type) {
    case "text": {
      const chunks = chunkText(block.text);
      return {
        start: { type: "text", text: "" },
        deltas: chunks.map((text) => ({ type: "text_delta", text })),
        chunks: chunks.length,
      };
    }
    case "tool_use": {
      const chunks = chunkJson(JSON.stringify(block.input));
      return {
        start: { type: "tool_use", id: block.id, name: block.name, input: {} },
        deltas: chunks.map((partial_json) => ({ type: "input_json_delta", partial_json })),
        chunks: chunks.length,
      };
    }
    case "thinking": {
      const chunks = chunkText(block.thinking);
      return {
        start: { type: "thinking", thinking: "", signature: "" },
        deltas: [
          ...chunks.map((thinking) => ({ type: "thinking_delta", thinking })),
          { type: "signature_delta", signature: block.signature },
        ],
        chunks: chunks.length,
      };
    }
  }
}

/** Renders a reply both ways at once so the two shapes can never disagree on content or usage. */
export function renderReply(reply: Reply): RenderedReply {
  const renderings = reply.blocks.map(renderBlock);
  const chunkCount = renderings.reduce((sum, rendering) => sum + rendering.chunks, 0);
  const usage: ReplyUsage = {
    input_tokens: reply.usage.input_tokens ?? reply.inputTokensEstimate,
    output_tokens: reply.usage.output_tokens ?? chunkCount,
    cache_creation_input_tokens: reply.usage.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: reply.usage.cache_read_input_tokens ?? 0,
  };
  const envelope = { id: reply.id, type: "message", role: "assistant", model: reply.model };
  const message = {
    ...envelope,
    content: reply.blocks.map((block) => ({ ...block })),
    stop_reason: reply.stopReason,
    stop_sequence: reply.stopSequence,
    usage,
  };

  const events: SseEvent[] = [];
  const push = (event: string, data: unknown, isDelta = false): void => {
    events.push({ event, data, isDelta });
  };
  push("message_start", {
    type: "message_start",
    message: {
      ...envelope,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  push("ping", { type: "ping" });
  renderings.forEach((rendering, index) => {
    push("content_block_start", { type: "content_block_start", index, content_block: rendering.start });
    for (const delta of rendering.deltas) {
      push("content_block_delta", { type: "content_block_delta", index, delta }, true);
    }
    push("content_block_stop", { type: "content_block_stop", index });
  });
  push("message_delta", {
    type: "message_delta",
    delta: { stop_reason: reply.stopReason, stop_sequence: reply.stopSequence },
    usage: { output_tokens: usage.output_tokens },
  });
  push("message_stop", { type: "message_stop" });
  return { message, events, chunkCount };
}

export function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A frame whose data line is cut mid-object: what a proxy truncating the stream would deliver. */
export const MALFORMED_SSE_FRAME = 'event: content_block_delta\ndata: {"type":"content_block_delta",\n\n';

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  402: "billing_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};

const ERROR_MESSAGES: Record<string, string> = {
  rate_limit_error: "Number of request tokens has exceeded your per-minute rate limit",
  overloaded_error: "Overloaded",
  api_error: "Internal server error",
  authentication_error: "invalid x-api-key",
  permission_error: "Your API key does not have permission to use the specified resource.",
  not_found_error: "Not found",
  request_too_large: "Request exceeds the maximum allowed number of bytes.",
  timeout_error: "Request timeout",
};

export function errorTypeForStatus(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

/** The status the real API uses for an error type, for faults that name a type rather than a status. */
export function statusForErrorType(type: string): number {
  for (const [status, candidate] of Object.entries(ERROR_TYPES)) {
    if (candidate === type) return Number(status);
  }
  return 500;
}

export function errorBody(type: string, message?: string): Record<string, unknown> {
  return { type: "error", error: { type, message: message ?? ERROR_MESSAGES[type] ?? type } };
}
