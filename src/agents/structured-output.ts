// Seed 004 structured output: an agent with a response_format (a JSON Schema, or a zod schema in a TypeScript agent)
// answers with one JSON value that conforms to it. The schema is given to the model in the system prompt, which
// works the same for every provider; the final answer is then parsed and validated (src/lib/json-schema.ts, shared
// with the json_schema metric of evaluations), the model is asked once more with the validation errors when it does not
// conform, and a second miss fails the run (invalid_structured_output) keeping the answer. The validated value is the
// run's structured_output (the task, the ExecutionResult).
import { Validator } from "@cfworker/json-schema";
import { z } from "zod";
import { ConfigError } from "../errors.ts";
import type { Json, JsonObject } from "../lib/json.ts";
import { readJsonAnswer, regExpPatternProblem, validateJson } from "../lib/json-schema.ts";

/** The most validation errors quoted to the model or in the failure. */
const MAX_ERRORS = 10;

/** A response_format as a definition gives it: a JSON Schema object, or a zod schema (converted here). */
export type ResponseFormatInput = JsonObject | z.ZodType;

/** The JSON Schema of a response_format, checked: a ConfigError names what is wrong with it. */
export function responseSchema(agent: string, format: ResponseFormatInput): JsonObject {
  let schema: JsonObject;
  if (format instanceof z.ZodType) {
    try {
      schema = z.toJSONSchema(format) as JsonObject;
    } catch (error) {
      throw new ConfigError(
        `Agent "${agent}": responseFormat cannot be written as a JSON Schema (${error instanceof Error ? error.message : error}).`,
      );
    }
  } else schema = format;
  const problem = schemaProblem(schema, "responseFormat");
  if (problem) throw new ConfigError(`Agent "${agent}": ${problem}.`);
  // The validator compiles each pattern when it validates: one RegExp refuses would throw on every answer. (RE2
  // syntax is checked where re2js can load: an agent file's build and PUT, see src/agents/agent-file.ts.)
  const badPattern = regExpPatternProblem(schema, "responseFormat");
  if (badPattern) throw new ConfigError(`Agent "${agent}": ${badPattern.field}: ${badPattern.message}.`);
  try {
    new Validator(schema as never, "2020-12", false).validate(null);
  } catch (error) {
    throw new ConfigError(
      `Agent "${agent}": responseFormat is not a usable JSON Schema (${error instanceof Error ? error.message : error}).`,
    );
  }
  return schema;
}

const JSON_TYPES: ReadonlySet<string> = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The first misuse of a JSON Schema keyword the validator would silently accept (it does not check a schema against
 * the meta-schema): a type that is no JSON type, properties or items that are not schemas, required or enum that are
 * not lists. Null when none is found.
 */
function schemaProblem(schema: unknown, at: string): string | null {
  if (typeof schema === "boolean") return null;
  if (!isObject(schema)) return `${at} must be a JSON Schema (an object)`;
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  const badType = types.find((t) => typeof t !== "string" || !JSON_TYPES.has(t));
  if (badType !== undefined) return `${at}.type ${JSON.stringify(badType)} is not a JSON type`;
  if (
    schema.required !== undefined &&
    !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === "string"))
  ) {
    return `${at}.required must be a list of property names`;
  }
  if (schema.enum !== undefined && !Array.isArray(schema.enum)) return `${at}.enum must be a list`;
  for (const keyword of ["properties", "patternProperties", "$defs", "definitions"]) {
    const members = schema[keyword];
    if (members === undefined) continue;
    if (!isObject(members)) return `${at}.${keyword} must be an object of schemas`;
    for (const [name, member] of Object.entries(members)) {
      const problem = schemaProblem(member, `${at}.${keyword}.${name}`);
      if (problem) return problem;
    }
  }
  for (const keyword of ["items", "additionalProperties", "not"]) {
    if (schema[keyword] === undefined) continue;
    const problem = schemaProblem(schema[keyword], `${at}.${keyword}`);
    if (problem) return problem;
  }
  for (const keyword of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    const list = schema[keyword];
    if (list === undefined) continue;
    if (!Array.isArray(list)) return `${at}.${keyword} must be a list of schemas`;
    for (const [index, member] of list.entries()) {
      const problem = schemaProblem(member, `${at}.${keyword}.${index}`);
      if (problem) return problem;
    }
  }
  return null;
}

/** What the system prompt gains: the schema the answer must conform to. */
export function formatInstructions(schema: JsonObject): string {
  return (
    "\n\nAnswer with a single JSON value that conforms to this JSON Schema, and nothing else: no prose before or " +
    `after it, no code fence.\n${JSON.stringify(schema)}`
  );
}

export type AnswerCheck = { ok: true; value: Json } | { ok: false; errors: string[] };

/** Parses and validates a final answer. A code fence around the JSON is tolerated; anything else around it is not. */
export function checkAnswer(schema: JsonObject, text: string): AnswerCheck {
  const read = readJsonAnswer(text);
  if (!read.ok) return { ok: false, errors: [read.error] };
  const check = validateJson(schema, read.value, MAX_ERRORS);
  return check.valid ? { ok: true, value: read.value } : { ok: false, errors: check.errors };
}

/** The message that asks the model again, with what was wrong. */
export function reaskMessage(errors: readonly string[]): string {
  return (
    "Your answer does not conform to the required JSON Schema:\n" +
    errors.map((e) => `- ${e}`).join("\n") +
    "\nAnswer again with only the JSON value."
  );
}
