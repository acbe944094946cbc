// The unscripted reply policy: lets demo agents run end to end offline (call the first tool once with a
// schema-valid input, then summarise its result, or answer with a value valid against the agent's response_format)
// while staying a pure function of the request.

import type { ReplyBlock } from "./reply.ts";
import {
  contentText,
  firstUserText,
  hasAnyToolResult,
  isRecord,
  lastUserText,
  type MessagesRequest,
  systemText,
  toolResultBlocks,
} from "./request.ts";

/**
 * The opening of an evaluation grader's system prompt (src/evaluations/model-grader.ts gEvalSystemPrompt): such a
 * request gets a fixed verdict, so that a model-graded metric runs end to end under `npm run dev`.
 */
const GRADER_PROMPT = "You grade an AI agent's response for the metric";
const GRADER_VERDICT = '{"score": 8, "reasoning": "(emulator) A fixed grade: the emulator does not judge answers."}';

/**
 * What an agent with a response_format adds to its system prompt before the schema (src/agents/structured-output.ts
 * formatInstructions): such a request's final answer is a JSON value valid against the schema on the rest of that
 * line, as a model that follows the instruction answers, so that structured output runs end to end offline.
 */
const FORMAT_PROMPT =
  "Answer with a single JSON value that conforms to this JSON Schema, and nothing else: no prose before or after it, no code fence.\n";

/** Blocks of the default reply; tool_use ids are left empty for the caller to derive from its seed. */
export function defaultReplyBlocks(request: MessagesRequest): ReplyBlock[] {
  const { messages, tools } = request;
  if (systemText(request.system).startsWith(GRADER_PROMPT)) return [{ type: "text", text: GRADER_VERDICT }];
  // A server tool (web search, `type` web_search_…) is run by the API, not called with tool_use.
  const firstTool = tools.find((tool) => tool.type === undefined || tool.type === "custom");
  if (firstTool && !hasAnyToolResult(messages)) {
    const name = typeof firstTool.name === "string" ? firstTool.name : "tool";
    const input = valueForSchema(firstTool.input_schema, truncate(lastUserText(messages), 80), 0);
    return [
      { type: "text", text: `I'll use the ${name} tool.` },
      { type: "tool_use", id: "", name, input: isRecord(input) ? input : {} },
    ];
  }
  const schema = responseSchema(systemText(request.system));
  if (schema !== undefined) {
    return [{ type: "text", text: JSON.stringify(valueForSchema(schema, truncate(firstUserText(messages), 80), 0)) }];
  }
  const results = toolResultBlocks(messages.at(-1));
  const firstResult = results[0];
  if (firstResult) {
    return [{ type: "text", text: `Done. The tool returned: ${truncate(contentText(firstResult.content), 200)}` }];
  }
  return [{ type: "text", text: `(emulator) You said: ${truncate(lastUserText(messages), 500)}` }];
}

/** The JSON Schema a response_format's instruction in the system prompt gives, or undefined. */
function responseSchema(system: string): unknown {
  const start = system.indexOf(FORMAT_PROMPT);
  if (start < 0) return undefined;
  const line = system.slice(start + FORMAT_PROMPT.length).split("\n", 1)[0] ?? "";
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

function truncate(text: string, max: number): string {
  return Array.from(text).slice(0, max).join("");
}

const MAX_DEPTH = 8;

/**
 * A minimal value that validates against a JSON schema: required properties only, first enum member,
 * the lower bound of numbers, one array item. Unsupported keywords ($ref, patterns) fall back to a string.
 */
export function valueForSchema(schema: unknown, text: string, depth: number): unknown {
  if (!isRecord(schema) || depth > MAX_DEPTH) return text;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) return valueForSchema(options[0], text, depth + 1);
  }
  switch (schemaType(schema)) {
    case "object": {
      const properties = isRecord(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? schema.required : [];
      const value: Record<string, unknown> = {};
      for (const key of required) {
        if (typeof key === "string") value[key] = valueForSchema(properties[key], text, depth + 1);
      }
      return value;
    }
    case "array": {
      const minItems = typeof schema.minItems === "number" ? Math.max(1, schema.minItems) : 1;
      const items = Array.isArray(schema.items) ? schema.items[0] : schema.items;
      return Array.from({ length: minItems }, () => valueForSchema(items, text, depth + 1));
    }
    case "integer":
    case "number":
      return numberForSchema(schema);
    case "boolean":
      return true;
    case "null":
      return null;
    default:
      return stringForSchema(schema, text);
  }
}

function schemaType(schema: Record<string, unknown>): string {
  const declared = Array.isArray(schema.type) ? schema.type.find((type) => type !== "null") : schema.type;
  if (typeof declared === "string") return declared;
  if (isRecord(schema.properties)) return "object";
  if (schema.items !== undefined) return "array";
  return "string";
}

function numberForSchema(schema: Record<string, unknown>): number {
  const integer = schemaType(schema) === "integer";
  let value = 1;
  if (typeof schema.minimum === "number") value = schema.minimum;
  else if (typeof schema.exclusiveMinimum === "number") value = schema.exclusiveMinimum + (integer ? 1 : 0.5);
  if (typeof schema.maximum === "number" && value > schema.maximum) value = schema.maximum;
  return integer ? Math.ceil(value) : value;
}

// Formats a tool's validator is likely to check; free text would fail them.
const FORMAT_EXAMPLES: Record<string, string> = {
  uri: "https://example.com/",
  url: "https://example.com/",
  email: "user@example.com",
  "date-time": "2026-01-01T00:00:00Z",
  date: "2026-01-01",
  time: "00:00:00Z",
  uuid: "00000000-0000-4000-8000-000000000000",
};

function stringForSchema(schema: Record<string, unknown>, text: string): string {
  const example = typeof schema.format === "string" ? FORMAT_EXAMPLES[schema.format] : undefined;
  if (example !== undefined) return example;
  let value = text.length > 0 ? text : "emulator";
  if (typeof schema.maxLength === "number") value = truncate(value, schema.maxLength);
  if (typeof schema.minLength === "number" && value.length < schema.minLength) {
    value = value.padEnd(schema.minLength, "x");
  }
  return value;
}
