// The Anthropic Messages API wire format: Message bodies (with prompt caching's usage and diagnostics when billed),
// the SSE event sequence of a streamed reply, and error bodies. Everything here is pure so that a re-issued request
// produces byte-identical output.

import { FOUNDRY_PREFIX, messagesAuth } from "./auth.ts";
import { compactionRendering, compactionUsage, withCompaction } from "./compaction.ts";
import { messagesCacheView } from "./prompt-units.ts";
import {
  chunkJson,
  chunkText,
  type Dialect,
  type ErrorSpec,
  fullUsage,
  type RenderedReply,
  type Reply,
  type ReplyBlock,
  type StreamFrame,
} from "./reply.ts";
import { parseMessagesRequest } from "./request.ts";

// Re-exported for the modules that have long imported them from here (test/events/sse.test.ts).
export { chunkJson, chunkText };

interface BlockRendering {
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  chunks: number;
}

function renderBlock(block: ReplyBlock): BlockRendering {
  switch (block.type) {
    case "text": {
      const chunks = chunkText(block.text);
      // A cited passage: its block starts with an empty citations list, and its citations come before its text.
      const citations = (block.citations ?? []).map((citation) => ({ type: "citations_delta", citation }));
      return {
        start: block.citations ? { type: "text", text: "", citations: [] } : { type: "text", text: "" },
        deltas: [...citations, ...chunks.map((text) => ({ type: "text_delta", text }))],
        chunks: chunks.length,
      };
    }
    case "server_tool_use": {
      // Streamed like a tool call: an empty input at the start, then its JSON.
      const chunks = chunkJson(JSON.stringify(block.input));
      return {
        start: { type: "server_tool_use", id: block.id, name: block.name, input: {}, caller: block.caller },
        deltas: chunks.map((partial_json) => ({ type: "input_json_delta", partial_json })),
        chunks: chunks.length,
      };
    }
    case "web_search_tool_result":
      // The API ran the search: its result comes whole in the block's start, with no deltas.
      return { start: { ...block }, deltas: [], chunks: 0 };
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
    case "compaction":
      return compactionRendering(block);
  }
}

/** Renders a reply both ways at once so the two shapes can never disagree on content or usage. */
export function renderReply(reply: Reply): RenderedReply {
  const renderings = reply.blocks.map(renderBlock);
  const chunkCount = renderings.reduce((sum, rendering) => sum + rendering.chunks, 0);
  const tokens = fullUsage(reply, chunkCount);
  // A compaction request's tokens are its iteration's, none the top level's (emulator/compaction.ts).
  const compaction = reply.compaction ? compactionUsage(tokens, reply.cacheCreation) : null;
  const reported = compaction?.reported ?? tokens;
  const creation = compaction ? compaction.creation : reply.cacheCreation;
  const iterations = compaction ? { iterations: compaction.iterations } : {};
  // Billed prompt caching splits the writes by TTL, as the API does.
  const inputSide = { ...reported, ...(creation ? { cache_creation: creation } : {}) };
  // The searches are counted once the reply is done: in the body, and in message_delta's usage when streamed.
  const usage = {
    ...inputSide,
    ...(reply.serverToolUse ? { server_tool_use: reply.serverToolUse } : {}),
    ...iterations,
  };
  const envelope = { id: reply.id, type: "message", role: "assistant", model: reply.model };
  const diagnostics = reply.diagnostics ?? null;
  const body = {
    ...envelope,
    content: reply.blocks.map((block) => ({ ...block })),
    stop_reason: reply.stopReason,
    stop_sequence: reply.stopSequence,
    diagnostics,
    usage,
  };

  const frames: StreamFrame[] = [];
  const push = (event: string, data: unknown, isDelta = false): void => {
    frames.push({ text: sseFrame(event, data), isDelta, isFinish: event === "message_delta" });
  };
  push("message_start", {
    type: "message_start",
    message: {
      ...envelope,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      diagnostics,
      usage: { ...inputSide, output_tokens: compaction ? 0 : 1 },
    },
  });
  // A compaction's stream goes from message_start straight to its block, with no ping.
  if (!compaction) push("ping", { type: "ping" });
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
    // With billed caching, the running totals of every count, as the API sends them; else the output alone.
    usage: {
      ...(reply.cacheCreation || compaction
        ? {
            input_tokens: reported.input_tokens,
            cache_creation_input_tokens: reported.cache_creation_input_tokens,
            cache_read_input_tokens: reported.cache_read_input_tokens,
          }
        : {}),
      output_tokens: usage.output_tokens,
      ...(reply.serverToolUse ? { server_tool_use: reply.serverToolUse } : {}),
      ...iterations,
    },
  });
  push("message_stop", { type: "message_stop" });
  return { body, frames, chunkCount, usage: tokens };
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

/** Whether a fault's error_type is in Anthropic's vocabulary (which the other dialects translate by status). */
export function isAnthropicErrorType(type: string): boolean {
  return Object.values(ERROR_TYPES).includes(type);
}

export function errorBody(type: string, message?: string): Record<string, unknown> {
  return { type: "error", error: { type, message: message ?? ERROR_MESSAGES[type] ?? type } };
}

function specBody(spec: ErrorSpec): Record<string, unknown> {
  return errorBody(spec.type ?? errorTypeForStatus(spec.status), spec.message);
}

/**
 * The Messages API: `POST /v1/messages`, and Azure AI Foundry's `/anthropic/v1/messages`. API keys are not checked, as
 * the emulator always did; an OAuth bearer token and a Foundry key are (emulator/auth.ts).
 */
export const anthropic: Dialect = {
  provider: "anthropic",
  matches: (path) => path === "/v1/messages" || path === `${FOUNDRY_PREFIX}/v1/messages`,
  missingKey: () => null,
  authenticate: (context) => messagesAuth(context.url.pathname, context.headers),
  // Compaction (beta compact-2026-09-04) is the first-party API's and Foundry's here, not Bedrock's nor Vertex's.
  parse: (body, { headers }) => withCompaction(parseMessagesRequest(body), body, headers),
  // Anthropic's own API also takes the request-level cache_control (automatic caching); Foundry, like every other
  // host, takes block-level breakpoints only.
  cacheView: (body, request, { url }) =>
    messagesCacheView(body, request.prompt, { automatic: !url.pathname.startsWith(`${FOUNDRY_PREFIX}/`) }),
  ids: { message: "msg_emu_", tool: "toolu_emu_" },
  headers: () => ({}),
  render: (reply) => renderReply(reply),
  error: (spec) => ({ status: spec.status, body: specBody(spec) }),
  streamError: (spec) => sseFrame("error", specBody(spec)),
  malformedFrame: MALFORMED_SSE_FRAME,
};
