// The Google Gemini API wire format (generateContent and streamGenerateContent with alt=sse): reading `contents`,
// `systemInstruction` and `functionDeclarations` into the common view, GenerateContentResponse bodies and chunks, and
// Google's error shape, and what its implicit caching sees of a request. Pure like wire.ts, so a re-issued request
// gets byte-identical output.

import { type CacheView, cutUnits, type RawUnit } from "./prompt-units.ts";
import {
  chunkJson,
  chunkText,
  type Dialect,
  dataFrame,
  type ErrorSpec,
  fullUsage,
  type RenderedReply,
  type Reply,
  type RequestContext,
  type StreamFrame,
} from "./reply.ts";
import { fail, isRecord, type MessagesRequest, type Parsed, type RequestMessage } from "./request.ts";
import { isAnthropicErrorType } from "./wire.ts";

/** `/v1beta/models/{model}:generateContent` and `:streamGenerateContent` (v1 and v1alpha too). */
const PATH = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/** Reads a generateContent body; the model and whether to stream come from the path. */
export function parseGenerateRequest(body: unknown, { url }: RequestContext): Parsed<MessagesRequest> {
  const [, encodedModel = "", method] = PATH.exec(url.pathname.replace(/\/+$/, "")) ?? [];
  const model = decodeURIComponent(encodedModel);
  const stream = method === "streamGenerateContent";
  if (stream && url.searchParams.get("alt") !== "sse") {
    return fail("The emulator streams only as server-sent events: add ?alt=sse to streamGenerateContent.");
  }
  if (!isRecord(body)) return fail("Invalid JSON payload received: expected an object.");
  const { contents, systemInstruction, tools } = body;
  if (!Array.isArray(contents) || contents.length === 0) {
    return fail("* GenerateContentRequest.contents: contents is not specified");
  }
  const messages: RequestMessage[] = [];
  for (const [index, content] of contents.entries()) {
    if (!isRecord(content)) return fail(`* GenerateContentRequest.contents[${index}]: must be a Content object`);
    const { role = "user", parts } = content;
    if (role !== "user" && role !== "model") return fail("Please use a valid role: user, model.");
    if (!Array.isArray(parts) || parts.length === 0 || !parts.every(isRecord)) {
      return fail(`* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`);
    }
    messages.push({ role: role === "model" ? "assistant" : "user", content: parts.flatMap(partBlocks) });
  }
  const system = systemBlocks(systemInstruction);
  if (system === null) return fail("* GenerateContentRequest.system_instruction: must be a Content object");
  if (tools !== undefined && (!Array.isArray(tools) || !tools.every(isRecord))) {
    return fail("* GenerateContentRequest.tools: must be a list of Tool objects");
  }
  const declarations: Record<string, unknown>[] = [];
  for (const tool of tools ?? []) {
    const list = Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : [];
    for (const declaration of list) {
      if (!isRecord(declaration) || typeof declaration.name !== "string" || declaration.name === "") {
        return fail("* GenerateContentRequest.tools[0].function_declarations[0].name: Name cannot be empty.");
      }
      declarations.push({
        name: declaration.name,
        description: declaration.description,
        input_schema: declaration.parametersJsonSchema ?? jsonSchema(declaration.parameters ?? { type: "object" }),
      });
    }
  }
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  return {
    ok: true,
    value: {
      model,
      maxTokens: typeof config.maxOutputTokens === "number" ? config.maxOutputTokens : null,
      messages,
      system,
      tools: declarations,
      stream,
      streamUsage: true,
      prompt: { system: systemInstruction, messages: contents, tools },
    },
  };
}

/**
 * The request as Gemini's implicit caching sees it: each tool, each part of the system instruction, then each part of
 * each content, as sent.
 */
export function generateCacheView(body: Record<string, unknown>): CacheView {
  const units: RawUnit[] = [];
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const [index, value] of tools.entries()) {
    units.push({ section: "tools", path: `tools[${index}]`, message: null, value });
  }
  const system = body.systemInstruction;
  const systemParts = typeof system === "string" ? [{ text: system }] : isRecord(system) ? system.parts : [];
  (Array.isArray(systemParts) ? systemParts : []).forEach((value, index) => {
    units.push({ section: "system", path: `systemInstruction.parts[${index}]`, message: null, value });
  });
  const contents = Array.isArray(body.contents) ? body.contents : [];
  contents.forEach((content, message) => {
    if (!isRecord(content) || !Array.isArray(content.parts)) return;
    const role = typeof content.role === "string" ? content.role : "user";
    content.parts.forEach((value, index) => {
      const path = `contents[${message}].parts[${index}]`;
      units.push({ section: "messages", path, message, role, opens: index === 0, value });
    });
  });
  return { units: cutUnits(units), breakpoints: [], key: null, retentionMs: null, diagnostics: null, settingsHash: "" };
}

/** Gemini parts as Anthropic-shaped blocks; parts the emulator does not read (inline data, files) are dropped. */
function partBlocks(part: Record<string, unknown>): Record<string, unknown>[] {
  if (typeof part.text === "string") {
    return [
      part.thought === true
        ? { type: "thinking", thinking: part.text, signature: part.thoughtSignature ?? "" }
        : { type: "text", text: part.text },
    ];
  }
  const call = part.functionCall;
  if (isRecord(call)) return [{ type: "tool_use", id: call.id ?? call.name, name: call.name, input: call.args ?? {} }];
  const response = part.functionResponse;
  if (isRecord(response)) {
    const text = JSON.stringify(response.response ?? {});
    return [{ type: "tool_result", tool_use_id: response.id ?? response.name, content: [{ type: "text", text }] }];
  }
  return [];
}

function systemBlocks(instruction: unknown): Record<string, unknown>[] | null {
  if (instruction === undefined) return [];
  if (typeof instruction === "string") return [{ type: "text", text: instruction }];
  if (!isRecord(instruction) || !Array.isArray(instruction.parts) || !instruction.parts.every(isRecord)) return null;
  return instruction.parts.flatMap(partBlocks);
}

/** Gemini's OpenAPI-style `parameters` use upper-case type names (OBJECT, STRING); JSON Schema spells them lower. */
function jsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchema);
  if (!isRecord(schema)) return schema;
  const converted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "type" && typeof value === "string") converted.type = value.toLowerCase();
    else if (key === "properties" && isRecord(value)) {
      converted.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, jsonSchema(sub)]));
    } else converted[key] = isRecord(value) || Array.isArray(value) ? jsonSchema(value) : value;
  }
  return converted;
}

const FINISH_REASONS: Record<string, string> = {
  end_turn: "STOP",
  stop_sequence: "STOP",
  pause_turn: "STOP",
  tool_use: "STOP",
  max_tokens: "MAX_TOKENS",
  refusal: "SAFETY",
};

/** Scripts speak Anthropic stop reasons; Gemini's own (upper-case) values pass through. */
export function finishReason(stopReason: string): string {
  if (/^[A-Z_]+$/.test(stopReason)) return stopReason;
  return FINISH_REASONS[stopReason] ?? "STOP";
}

/**
 * Renders a reply both ways at once. Text streams word by word, thinking as `thought` parts with the signature on the
 * last of them, and a function call whole in one chunk (Gemini does not stream arguments); the last chunk carries
 * the finish reason and usage.
 */
function renderGenerate(reply: Reply): RenderedReply {
  const parts: Record<string, unknown>[] = [];
  const streamed: { part: Record<string, unknown>; isDelta: boolean }[] = [];
  let answerChunks = 0;
  let thoughtChunks = 0;
  for (const block of reply.blocks) {
    switch (block.type) {
      case "text": {
        parts.push({ text: block.text });
        const pieces = chunkText(block.text);
        answerChunks += pieces.length;
        for (const text of pieces) streamed.push({ part: { text }, isDelta: true });
        break;
      }
      case "thinking": {
        parts.push({ text: block.thinking, thought: true, thoughtSignature: block.signature });
        const pieces = chunkText(block.thinking);
        thoughtChunks += pieces.length;
        pieces.forEach((text, index) => {
          const part = index === pieces.length - 1 ? { text, thought: true, thoughtSignature: block.signature } : null;
          streamed.push({ part: part ?? { text, thought: true }, isDelta: true });
        });
        if (pieces.length === 0) streamed.push({ part: parts.at(-1) ?? {}, isDelta: false });
        break;
      }
      case "tool_use": {
        const part = { functionCall: { id: block.id, name: block.name, args: block.input } };
        parts.push(part);
        answerChunks += chunkJson(JSON.stringify(block.input)).length;
        streamed.push({ part, isDelta: true });
        break;
      }
    }
  }
  const usage = fullUsage(reply, answerChunks);
  const promptTokens = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  const usageMetadata: Record<string, unknown> = {
    promptTokenCount: promptTokens,
    candidatesTokenCount: usage.output_tokens,
    totalTokenCount: promptTokens + usage.output_tokens + thoughtChunks,
  };
  if (usage.cache_read_input_tokens > 0) usageMetadata.cachedContentTokenCount = usage.cache_read_input_tokens;
  if (thoughtChunks > 0) usageMetadata.thoughtsTokenCount = thoughtChunks;
  const finish = finishReason(reply.stopReason);
  const tail = { modelVersion: reply.model, responseId: reply.id };
  const candidate = (partsOf: Record<string, unknown>[], extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { parts: partsOf, role: "model" }, ...extra, index: 0 }],
  });
  const body = { ...candidate(parts, { finishReason: finish }), usageMetadata, ...tail };

  const frames: StreamFrame[] = streamed.map(({ part, isDelta }) => ({
    text: dataFrame({ ...candidate([part]), ...tail }),
    isDelta,
    isFinish: false,
  }));
  frames.push({
    text: dataFrame({ ...candidate([{ text: "" }], { finishReason: finish }), usageMetadata, ...tail }),
    isDelta: false,
    isFinish: true,
  });
  return { body, frames, chunkCount: answerChunks + thoughtChunks, usage };
}

/** google.rpc.Code names by HTTP status, and the messages the Gemini API sends with them. */
const ERRORS: Record<number, { status: string; message: string }> = {
  400: { status: "INVALID_ARGUMENT", message: "Request contains an invalid argument." },
  401: { status: "UNAUTHENTICATED", message: "Request is missing required authentication credential." },
  403: { status: "PERMISSION_DENIED", message: "The caller does not have permission." },
  404: { status: "NOT_FOUND", message: "Requested entity was not found." },
  409: { status: "ABORTED", message: "The operation was aborted." },
  429: { status: "RESOURCE_EXHAUSTED", message: "Resource has been exhausted (e.g. check quota)." },
  499: { status: "CANCELLED", message: "The operation was cancelled." },
  500: {
    status: "INTERNAL",
    message:
      "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
  },
  501: { status: "UNIMPLEMENTED", message: "Method not implemented." },
  503: { status: "UNAVAILABLE", message: "The model is overloaded. Please try again later." },
  504: { status: "DEADLINE_EXCEEDED", message: "The request timed out. Please try again." },
};

function errorResponse(spec: ErrorSpec): { status: number; body: Record<string, unknown> } {
  // Google has no 529: overload is 503 UNAVAILABLE there.
  const code = spec.status === 529 ? 503 : spec.status;
  const known = ERRORS[code] ?? {
    status: code >= 500 ? "INTERNAL" : "INVALID_ARGUMENT",
    message: `Request failed with status ${code}.`,
  };
  const status = spec.type !== undefined && !isAnthropicErrorType(spec.type) ? spec.type : known.status;
  const error: Record<string, unknown> = { code, message: spec.message ?? known.message, status };
  // Google says when to retry in the body (RetryInfo); for a fault's retry_after the emulator also sends the header.
  const delay = spec.retryAfter ?? spec.retryDelay;
  if (delay !== undefined) {
    error.details = [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${delay}s` }];
  }
  return { status: code, body: { error } };
}

function hasKey({ url, headers }: RequestContext): boolean {
  const header = headers["x-goog-api-key"];
  return (
    (typeof header === "string" && header.trim() !== "") ||
    (url.searchParams.get("key") ?? "").trim() !== "" ||
    /^Bearer\s+\S/i.test(headers.authorization ?? "")
  );
}

/** `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`. */
export const gemini: Dialect = {
  provider: "gemini",
  matches: (path) => PATH.test(path),
  missingKey: (context) =>
    hasKey(context)
      ? null
      : "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or " +
        "other form of API consumer identity to call this API.",
  parse: parseGenerateRequest,
  cacheView: (body) => ({ ok: true, value: generateCacheView(body) }),
  ids: { message: "emu_", tool: "fc_emu_" },
  headers: () => ({}),
  render: (reply) => renderGenerate(reply),
  error: errorResponse,
  // A failure after HTTP 200 arrives as a data line holding an error object, which the official client throws.
  streamError: (spec) => dataFrame(errorResponse(spec).body),
  malformedFrame: 'data: {"candidates": [{"content": {"parts": [{"text": \n\n',
};
