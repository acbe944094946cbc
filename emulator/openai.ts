// The OpenAI-compatible Chat Completions wire format: reading a request into the common view (system/developer text
// as the system prompt, tool messages as tool results), the chat.completion body, its chunk stream ending in
// `data: [DONE]`, OpenAI's error shape, and what its automatic prompt caching sees of a request. Pure like wire.ts,
// so a re-issued request gets byte-identical output.

import { OPENAI_CACHE } from "./prompt-cache.ts";
import { type CacheView, cutUnits } from "./prompt-units.ts";
import {
  chunkJson,
  chunkText,
  type Dialect,
  dataFrame,
  type ErrorSpec,
  fullUsage,
  type RenderedReply,
  type Reply,
  type StreamFrame,
} from "./reply.ts";
import { fail, isRecord, type MessagesRequest, type Parsed, type RequestMessage } from "./request.ts";
import { isAnthropicErrorType } from "./wire.ts";

const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);

/** Reads a /v1/chat/completions body, rejecting what the real API would, with its wording. */
export function parseChatRequest(body: unknown): Parsed<MessagesRequest> {
  if (!isRecord(body)) return fail("We could not parse the JSON body of your request: expected an object.");
  const { model, messages, tools, stream, stream_options: streamOptions } = body;
  if (typeof model !== "string" || model === "") return fail("you must provide a model parameter");
  if (!Array.isArray(messages)) return fail("Missing required parameter: 'messages'.");
  if (messages.length === 0) {
    return fail("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array.");
  }
  const system: Record<string, unknown>[] = [];
  const converted: RequestMessage[] = [];
  for (const [index, message] of messages.entries()) {
    const where = `messages[${index}]`;
    if (!isRecord(message)) return fail(`Invalid type for '${where}': expected an object.`);
    const { role, content } = message;
    if (typeof role !== "string" || !ROLES.has(role)) {
      return fail(
        `Invalid value for '${where}.role': supported values are 'system', 'developer', 'user', 'assistant', 'tool' and 'function'.`,
      );
    }
    const parts = contentParts(content);
    const toolCalls = message.tool_calls;
    if (parts === null && !(role === "assistant" && (content === null || content === undefined))) {
      return fail(`Invalid type for '${where}.content': expected a string or an array of content parts.`);
    }
    if (toolCalls !== undefined && (!Array.isArray(toolCalls) || !toolCalls.every(isRecord))) {
      return fail(`Invalid type for '${where}.tool_calls': expected an array of tool calls.`);
    }
    switch (role) {
      case "system":
      case "developer":
        system.push(...(parts ?? []));
        break;
      case "user":
        converted.push({ role: "user", content: typeof content === "string" ? content : (parts ?? []) });
        break;
      case "assistant":
        converted.push({ role: "assistant", content: [...(parts ?? []), ...(toolCalls ?? []).map(toolUseBlock)] });
        break;
      default: {
        // Tool results: consecutive ones form one user turn, as Anthropic's tool_result blocks do.
        const id = role === "tool" ? message.tool_call_id : message.name;
        const result = { type: "tool_result", tool_use_id: typeof id === "string" ? id : "", content: parts ?? [] };
        const previous = converted.at(-1);
        if (previous?.role === "user" && Array.isArray(previous.content) && isToolResults(previous.content)) {
          previous.content.push(result);
        } else {
          converted.push({ role: "user", content: [result] });
        }
      }
    }
  }
  if (tools !== undefined && (!Array.isArray(tools) || !tools.every(isRecord))) {
    return fail("Invalid type for 'tools': expected an array of tool definitions.");
  }
  const functions: Record<string, unknown>[] = [];
  for (const [index, tool] of (tools ?? []).entries()) {
    const fn = tool.function;
    if (tool.type !== "function") continue;
    if (!isRecord(fn) || typeof fn.name !== "string" || fn.name === "") {
      return fail(`Missing required parameter: 'tools[${index}].function.name'.`);
    }
    functions.push({ name: fn.name, description: fn.description, input_schema: fn.parameters ?? { type: "object" } });
  }
  if (stream !== undefined && stream !== null && typeof stream !== "boolean") {
    return fail("Invalid type for 'stream': expected a boolean.");
  }
  const cap = body.max_completion_tokens ?? body.max_tokens;
  return {
    ok: true,
    value: {
      model,
      maxTokens: typeof cap === "number" ? cap : null,
      messages: converted,
      system,
      tools: functions,
      stream: stream === true,
      streamUsage: isRecord(streamOptions) && streamOptions.include_usage === true,
      prompt: { system: undefined, messages, tools },
    },
  };
}

/**
 * The request as OpenAI's automatic prompt caching sees it: each tool, then each message, as sent; partitioned by
 * `prompt_cache_key`, kept as long as `prompt_cache_retention` says (its prompt caching guide).
 */
export function chatCacheView(body: Record<string, unknown>): Parsed<CacheView> {
  const { prompt_cache_key: key, prompt_cache_retention: retention } = body;
  if (key !== undefined && key !== null && typeof key !== "string") {
    return fail("Invalid type for 'prompt_cache_key': expected a string.");
  }
  if (retention !== undefined && retention !== null && retention !== "in_memory" && retention !== "24h") {
    return fail(`Invalid value: '${String(retention)}'. Supported values are: 'in_memory' and '24h'.`);
  }
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const units = cutUnits([
    ...tools.map((value, index) => ({ section: "tools" as const, path: `tools[${index}]`, message: null, value })),
    ...messages.map((value, index) => ({
      section: "messages" as const,
      path: `messages[${index}]`,
      message: index,
      value,
    })),
  ]);
  return {
    ok: true,
    value: {
      units,
      breakpoints: [],
      key: key ?? null,
      retentionMs: retention === "24h" ? OPENAI_CACHE.extendedMs : null,
      diagnostics: null,
      settingsHash: "",
    },
  };
}

/** A message's content as Anthropic-shaped blocks (OpenAI's text parts already are), or null when malformed. */
function contentParts(content: unknown): Record<string, unknown>[] | null {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (Array.isArray(content) && content.every(isRecord)) return content;
  return null;
}

function isToolResults(blocks: Record<string, unknown>[]): boolean {
  return blocks.length > 0 && blocks.every((block) => block.type === "tool_result");
}

function toolUseBlock(call: Record<string, unknown>): Record<string, unknown> {
  const fn = isRecord(call.function) ? call.function : {};
  let input: unknown = fn.arguments;
  if (typeof input === "string") {
    try {
      input = JSON.parse(input);
    } catch {
      // Arguments the model produced need not be valid JSON; the raw string is what was sent.
    }
  }
  return { type: "tool_use", id: call.id, name: fn.name, input };
}

/** Fixed rather than the clock, so a re-issued request gets byte-identical output (2026-01-01T00:00:00Z). */
const CREATED = 1_767_225_600;

const FINISH_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  refusal: "content_filter",
};
const OPENAI_FINISH_REASONS = new Set(["stop", "length", "tool_calls", "content_filter", "function_call"]);

/** Scripts speak Anthropic stop reasons; OpenAI's own values pass through. */
export function finishReason(stopReason: string): string {
  if (OPENAI_FINISH_REASONS.has(stopReason)) return stopReason;
  return FINISH_REASONS[stopReason] ?? "stop";
}

interface ToolCallRendering {
  id: string;
  name: string;
  arguments: string;
  pieces: string[];
}

/**
 * Renders a reply both ways at once. Text blocks become one `content` (Chat Completions has no block boundaries),
 * tool_use blocks become `tool_calls`, and thinking blocks are left out: the API has no field for them.
 */
function renderChat(reply: Reply, request: MessagesRequest): RenderedReply {
  const textPieces: string[][] = [];
  const toolCalls: ToolCallRendering[] = [];
  for (const block of reply.blocks) {
    if (block.type === "text") textPieces.push(chunkText(block.text));
    if (block.type === "tool_use") {
      const json = JSON.stringify(block.input);
      toolCalls.push({ id: block.id, name: block.name, arguments: json, pieces: chunkJson(json) });
    }
  }
  const chunkCount =
    textPieces.reduce((sum, pieces) => sum + pieces.length, 0) +
    toolCalls.reduce((sum, call) => sum + call.pieces.length, 0);
  const usage = fullUsage(reply, chunkCount);
  const promptTokens = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  const chatUsage = {
    prompt_tokens: promptTokens,
    completion_tokens: usage.output_tokens,
    total_tokens: promptTokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cache_read_input_tokens },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  const finish = finishReason(reply.stopReason);
  const text = textPieces.flat().join("");
  const envelope = { id: reply.id, object: "chat.completion", created: CREATED, model: reply.model };
  const message: Record<string, unknown> = {
    role: "assistant",
    content: text === "" && toolCalls.length > 0 ? null : text,
    refusal: null,
    annotations: [],
  };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((call) => ({
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  const body = {
    ...envelope,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: chatUsage,
    system_fingerprint: null,
  };

  const frames: StreamFrame[] = [];
  // With include_usage every chunk carries `usage: null` until the usage chunk, as the real API sends it.
  const usageField = request.streamUsage ? { usage: null } : {};
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    dataFrame({
      ...envelope,
      object: "chat.completion.chunk",
      system_fingerprint: null,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...usageField,
    });
  const push = (text: string, isDelta = false, isFinish = false): void => {
    frames.push({ text, isDelta, isFinish });
  };
  push(chunk({ role: "assistant", content: "", refusal: null }));
  for (const piece of textPieces.flat()) push(chunk({ content: piece }), true);
  toolCalls.forEach((call, index) => {
    push(
      chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }),
    );
    for (const piece of call.pieces) push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }), true);
  });
  push(chunk({}, finish), false, true);
  if (request.streamUsage) {
    push(
      dataFrame({
        ...envelope,
        object: "chat.completion.chunk",
        system_fingerprint: null,
        choices: [],
        usage: chatUsage,
      }),
    );
  }
  push(dataFrame("[DONE]"));
  return { body, frames, chunkCount, usage };
}

const ERRORS: Record<number, { type: string; code: string | null; message: string }> = {
  400: { type: "invalid_request_error", code: null, message: "Invalid request." },
  401: { type: "invalid_request_error", code: "invalid_api_key", message: "Incorrect API key provided." },
  404: { type: "invalid_request_error", code: null, message: "Not found." },
  429: {
    type: "requests",
    code: "rate_limit_exceeded",
    message: "Rate limit reached for requests per min (RPM). Please try again later.",
  },
  500: {
    type: "server_error",
    code: null,
    message: "The server had an error while processing your request. Sorry about that!",
  },
  503: { type: "server_error", code: null, message: "The server is overloaded or not ready yet." },
};

function errorResponse(spec: ErrorSpec): { status: number; body: Record<string, unknown> } {
  // OpenAI has no 529: overload is 503 there.
  const status = spec.status === 529 ? 503 : spec.status;
  const known = ERRORS[status] ?? {
    type: status >= 500 ? "server_error" : "invalid_request_error",
    code: null,
    message: `Request failed with status ${status}.`,
  };
  const type = spec.type !== undefined && !isAnthropicErrorType(spec.type) ? spec.type : known.type;
  return {
    status,
    body: {
      error: { message: spec.message ?? known.message, type, param: spec.param ?? null, code: spec.code ?? known.code },
    },
  };
}

/** `POST /v1/chat/completions`, or `/chat/completions` for base URLs that already end in /v1 or have no version. */
export const openai: Dialect = {
  provider: "openai",
  matches: (path) => path === "/v1/chat/completions" || path === "/chat/completions",
  missingKey: ({ headers }) =>
    /^Bearer\s+\S/i.test(headers.authorization ?? "")
      ? null
      : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer " +
        "auth (i.e. Authorization: Bearer YOUR_KEY).",
  parse: (body) => parseChatRequest(body),
  cacheView: (body) => chatCacheView(body),
  ids: { message: "chatcmpl-emu_", tool: "call_emu_" },
  headers: (requestId) => ({ "x-request-id": requestId }),
  render: renderChat,
  error: errorResponse,
  // A failure after HTTP 200 arrives as a data line holding an error object, which the official client throws.
  streamError: (spec) => dataFrame(errorResponse(spec).body),
  malformedFrame: 'data: {"id":"chatcmpl-emu","object":"chat.completion.chunk","choices":[{"index":0,\n\n',
};
