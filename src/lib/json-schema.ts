// JSON Schema validation of an agent's answer, shared by structured output (src/agents/structured-output.ts: the
// response_format of a run) and the json_schema metric (src/evaluations/grade.ts): reading an answer as JSON (a code
// fence around it tolerated), validating it with @cfworker/json-schema (the validator the MCP SDK uses in workerd)
// and saying what is wrong in a few lines; and the check of a schema's regular expressions before any of that runs.
// The validator compiles `pattern` and `patternProperties` with JavaScript's RegExp (flag u) at each validation, so a
// pattern RegExp refuses throws there: every schema an agent gives is walked first and each pattern compiled, with
// RegExp where only synchronous code can run (a TypeScript agent's definition) and with RE2 as well (re2js, the
// syntax of the regex metric) where the check can wait for it to load (an agent file's build, PUT, grading).
// RE2 syntax does not make a pattern linear in RegExp ("^(a+)+$" is valid RE2 and backtracks): a known limit.
import { Validator } from "@cfworker/json-schema";
import type { Json, JsonObject } from "./json.ts";
import { lazyModule } from "./lazy-module.ts";

const loadRe2 = lazyModule(() => import("re2js"));

/** What validation found: the value conforms, or the errors (the innermost first), at most `maxErrors`. */
export type JsonCheck = { valid: true } | { valid: false; errors: string[] };

/** An answer read as JSON: the text alone, or inside one code fence. */
export function readJsonAnswer(text: string): { ok: true; value: Json } | { ok: false; error: string } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  try {
    return { ok: true, value: JSON.parse((fenced?.[1] ?? text).trim()) as Json };
  } catch (error) {
    return { ok: false, error: `the answer is not JSON (${errorText(error)})` };
  }
}

/** `value` against `schema`. Never throws: a schema the validator cannot apply is an error of the check. */
export function validateJson(schema: JsonObject, value: Json, maxErrors: number): JsonCheck {
  let result: ReturnType<Validator["validate"]>;
  try {
    result = new Validator(schema as never, "2020-12", false).validate(value);
  } catch (error) {
    return { valid: false, errors: [`the schema cannot be applied (${errorText(error)})`] };
  }
  if (result.valid) return { valid: true };
  // The innermost errors say what is wrong; the ones that only say "a subschema failed" are left out when others exist.
  const specific = result.errors.filter(
    (e) => !/^(A subschema had errors|Property ".*" does not match schema)/.test(e.error),
  );
  const errors = (specific.length > 0 ? specific : result.errors)
    .slice(0, maxErrors)
    .map((e) => `${e.instanceLocation === "#" ? "the value" : e.instanceLocation}: ${e.error}`);
  return { valid: false, errors };
}

/** A problem with one of a schema's patterns: the key path of the pattern (from `at`) and what is wrong. */
export interface PatternProblem {
  field: string;
  message: string;
}

/** Compiles a pattern, throwing when it is refused. */
type Compile = (pattern: string) => void;

const compileRegExp: Compile = (pattern) => {
  new RegExp(pattern, "u");
};

/** The first pattern of `schema` (a subschema at any depth) that RegExp refuses, or null. Synchronous. */
export function regExpPatternProblem(schema: unknown, at: string): PatternProblem | null {
  return walkPatterns(schema, at, [["JavaScript RegExp syntax", compileRegExp]]);
}

/** The first pattern of `schema` that RE2 or RegExp refuses, or null (loads re2js on first use). */
export async function re2PatternProblem(schema: unknown, at: string): Promise<PatternProblem | null> {
  if (!hasPattern(schema)) return null;
  const { RE2JS } = await loadRe2();
  return walkPatterns(schema, at, [
    ["RE2 syntax", (pattern) => RE2JS.compile(pattern)],
    ["JavaScript RegExp syntax", compileRegExp],
  ]);
}

/** Whether a `pattern` or `patternProperties` key appears anywhere in the JSON (a cheap test before loading RE2). */
function hasPattern(schema: unknown): boolean {
  return /"pattern(Properties)?"\s*:/.test(JSON.stringify(schema) ?? "");
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Keywords whose value is a schema, an object of schemas, or a list of schemas (JSON Schema 2020-12 and draft 7). */
const SCHEMA_KEYWORDS = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedItems",
  "unevaluatedProperties",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
];
const SCHEMA_MAP_KEYWORDS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SCHEMA_LIST_KEYWORDS = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/**
 * Walks the subschemas by keyword (never into enum, const, default or examples, which hold data) and compiles every
 * `pattern` and `patternProperties` key with each compiler; the first refusal is returned with its key path.
 */
function walkPatterns(schema: unknown, at: string, compilers: readonly [string, Compile][]): PatternProblem | null {
  if (!isObject(schema)) return null;
  const refused = (pattern: string, field: string): PatternProblem | null => {
    for (const [syntax, compile] of compilers) {
      try {
        compile(pattern);
      } catch (error) {
        return { field, message: `${JSON.stringify(pattern)} is not valid ${syntax} (${errorText(error)})` };
      }
    }
    return null;
  };
  if (typeof schema.pattern === "string") {
    const problem = refused(schema.pattern, `${at}.pattern`);
    if (problem) return problem;
  }
  if (isObject(schema.patternProperties)) {
    for (const key of Object.keys(schema.patternProperties)) {
      const problem = refused(key, `${at}.patternProperties.${key}`);
      if (problem) return problem;
    }
  }
  for (const keyword of SCHEMA_KEYWORDS) {
    const problem = walkPatterns(schema[keyword], `${at}.${keyword}`, compilers);
    if (problem) return problem;
  }
  for (const keyword of SCHEMA_MAP_KEYWORDS) {
    const members = schema[keyword];
    if (!isObject(members)) continue;
    for (const [name, member] of Object.entries(members)) {
      const problem = walkPatterns(member, `${at}.${keyword}.${name}`, compilers);
      if (problem) return problem;
    }
  }
  for (const keyword of SCHEMA_LIST_KEYWORDS) {
    const list = schema[keyword];
    if (!Array.isArray(list)) continue;
    for (const [index, member] of list.entries()) {
      const problem = walkPatterns(member, `${at}.${keyword}.${index}`, compilers);
      if (problem) return problem;
    }
  }
  return null;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
