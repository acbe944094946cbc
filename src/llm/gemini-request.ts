// The Messages API request as Gemini's generateContent call: messages become `contents` (a tool result names its
// function, looked up from the tool_use it answers), the system prompt a system instruction, tools function
// declarations with their JSON Schema as it is, tool_choice a function-calling mode, and thinking a thinking config.
import type { ContentBlockParam, MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages";
import {
  type Content,
  FunctionCallingConfigMode,
  type FunctionDeclaration,
  type GenerateContentConfig,
  type GenerateContentParameters,
  type Part,
  type ToolConfig,
} from "@google/genai";
import { contentText } from "./message-builder.ts";
import { type StreamOptions, temperatureOf } from "./provider.ts";

/**
 * Google's documented stand-in for a thought signature (ai.google.dev/gemini-api/docs/thought-signatures). Gemini 3
 * rejects a replayed functionCall without one, and a Messages API tool_use block has no field to carry the real one.
 */
const SKIP_SIGNATURE = "skip_thought_signature_validator";

/** The Messages API request as a streamed generateContent call. */
export function toGeminiRequest(
  params: MessageCreateParamsBase,
  options: Pick<StreamOptions, "signal" | "headers">,
): GenerateContentParameters {
  const config: GenerateContentConfig = { maxOutputTokens: params.max_tokens, abortSignal: options.signal };
  const temperature = temperatureOf(params);
  if (temperature !== undefined) config.temperature = temperature;
  if (options.headers) config.httpOptions = { headers: options.headers };
  const system = contentText(params.system);
  if (system) config.systemInstruction = { parts: [{ text: system }] };
  if (params.stop_sequences?.length) config.stopSequences = params.stop_sequences;
  if (params.thinking?.type === "enabled") {
    config.thinkingConfig = { includeThoughts: true, thinkingBudget: params.thinking.budget_tokens };
  } else if (params.thinking?.type === "adaptive") {
    config.thinkingConfig = { includeThoughts: true };
  }
  const declarations: FunctionDeclaration[] = (params.tools ?? []).flatMap((tool) =>
    "input_schema" in tool
      ? [
          {
            name: tool.name,
            ...(tool.description ? { description: tool.description } : {}),
            // JSON Schema as it is; `parameters` would want Google's OpenAPI subset (upper-case type names).
            parametersJsonSchema: tool.input_schema,
          },
        ]
      : [],
  );
  if (declarations.length > 0) {
    config.tools = [{ functionDeclarations: declarations }];
    const toolConfig = toToolConfig(params.tool_choice);
    if (toolConfig) config.toolConfig = toolConfig;
  }
  return { model: params.model, contents: toContents(params.messages), config };
}

function toToolConfig(choice: MessageCreateParamsBase["tool_choice"]): ToolConfig | null {
  switch (choice?.type) {
    case "any":
      return { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } };
    case "tool":
      return { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: [choice.name] } };
    case "none":
      return { functionCallingConfig: { mode: FunctionCallingConfigMode.NONE } };
    default:
      return null;
  }
}

/** Messages as Gemini contents; a tool result names its function, looked up from the tool_use it answers. */
function toContents(messages: MessageCreateParamsBase["messages"]): Content[] {
  const toolNames = new Map<string, string>();
  const contents: Content[] = [];
  for (const message of messages) {
    const blocks: ContentBlockParam[] =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    const parts: Part[] = [];
    const results: Part[] = [];
    for (const block of blocks) {
      switch (block.type) {
        case "text":
          if (block.text) parts.push({ text: block.text });
          break;
        case "tool_use": {
          toolNames.set(block.id, block.name);
          const args = (block.input ?? {}) as Record<string, unknown>;
          parts.push({ functionCall: { id: block.id, name: block.name, args } });
          break;
        }
        case "tool_result": {
          const text = typeof block.content === "string" ? block.content : contentText(block.content ?? []);
          results.push({
            functionResponse: {
              id: block.tool_use_id,
              name: toolNames.get(block.tool_use_id) ?? "",
              response: block.is_error ? { error: text } : { output: text },
            },
          });
          break;
        }
        case "image":
          if (block.source.type === "base64") {
            parts.push({ inlineData: { mimeType: block.source.media_type, data: block.source.data } });
          }
          break;
        default:
          // Thinking blocks (Gemini reads no thought text back) and block types Gemini has no part for.
          break;
      }
    }
    const role = message.role === "assistant" ? "model" : "user";
    // Gemini 3 wants the signature on the first function call of each model turn; the real one is not kept.
    const firstCall = parts.find((part) => part.functionCall);
    if (firstCall) firstCall.thoughtSignature = SKIP_SIGNATURE;
    // Function responses first: they answer the calls of the model turn just before.
    const all = [...results, ...parts];
    if (all.length > 0) contents.push({ role, parts: all });
  }
  return contents;
}
