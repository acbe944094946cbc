// The conditions of a workflow (on the edges leaving a condition node, and a reflection's `until`): expressions over
// the run's State in Google's Common Expression Language (CEL, cel.dev), parsed and type-checked when the workflow
// is loaded, and evaluated as a tree walk, never by generating code (workerd forbids eval and new Function anyway).
// The implementation is @marcbachmann/cel-js: no dependencies, no code generation, positions on every error.
//
// An expression sees four variables, the parts of seed 003's State a route is decided by:
//   routing_key    the State's routing_key (a string, or null before anything set it)
//   current_agent  the agent that ran last (a string, or null)
//   last_message   the text of the last message ("" when there is none)
//   metadata       the State's metadata (a map; `metadata.score`, `"x" in metadata`)
// CEL gives ==, !=, <, <=, >, >=, &&, ||, !, parentheses, string, number, boolean and null literals, lists,
// `x in list` and `"key" in map`, `s.contains("…")`, `startsWith`, `endsWith`, `matches` and `size()`; nothing can
// loop or call out. Any other name is refused at load.
import { type TypeError as CelTypeError, Environment, type ParseError, type ParseResult } from "@marcbachmann/cel-js";
import { MAX_CONDITION_LENGTH } from "./definition.ts";

/** The State as a condition sees it (seed 003 State; the messages reduced to the last one's text). */
export interface ConditionState {
  routing_key: string | null;
  current_agent: string | null;
  last_message: string;
  metadata: Readonly<Record<string, unknown>>;
}

/** The names an expression may use, with their CEL types (dyn: a string or null). */
const VARIABLES = {
  routing_key: "dyn",
  current_agent: "dyn",
  last_message: "string",
  metadata: "map",
} as const;

/** Structural limits checked when an expression is parsed: far above any real condition, far below a stack. */
const LIMITS = { maxAstNodes: 500, maxDepth: 32, maxListElements: 100, maxMapEntries: 100, maxCallArguments: 8 };

const environment = Object.entries(VARIABLES).reduce(
  (env, [name, type]) => env.registerVariable(name, type),
  new Environment({ unlistedVariablesAreDyn: false, limits: LIMITS }),
);

/** An expression that does not parse, does not type-check, or is not a condition; `column` is 1-based. */
export class ConditionSyntaxError extends Error {
  readonly column: number;
  constructor(summary: string, column: number) {
    super(`${summary} at column ${column}`);
    this.name = "ConditionSyntaxError";
    this.column = column;
  }
}

/** A condition that could not be evaluated against a State (a comparison of a string with a number, say). */
export class ConditionEvaluationError extends Error {
  constructor(source: string, reason: string) {
    super(`The condition ${JSON.stringify(source)} could not be evaluated: ${reason}`);
    this.name = "ConditionEvaluationError";
  }
}

/** A parsed, type-checked condition. */
export interface Condition {
  readonly source: string;
  /** True or false for `state`; a ConditionEvaluationError when the expression fails or is not a boolean. */
  evaluate(state: ConditionState): boolean;
}

type Program = ParseResult;

/** Parses and type-checks `source`; a ConditionSyntaxError names the column of the problem. */
export function parseCondition(source: string): Condition {
  if (source.length > MAX_CONDITION_LENGTH) {
    throw new ConditionSyntaxError(`longer than ${MAX_CONDITION_LENGTH} characters`, MAX_CONDITION_LENGTH + 1);
  }
  let program: Program;
  try {
    program = environment.parse(source);
  } catch (error) {
    throw syntaxError(error);
  }
  const checked = program.check();
  if (!checked.valid) throw syntaxError(checked.error);
  const type = String(checked.type);
  // dyn: a value of the State (metadata.approved) whose type only the run knows; evaluate() checks it then.
  if (type !== "bool" && type !== "dyn") throw new ConditionSyntaxError(`must be true or false, not ${type}`, 1);
  return {
    source,
    evaluate(state) {
      let value: unknown;
      try {
        value = program({ ...state, metadata: { ...state.metadata } });
      } catch (error) {
        throw new ConditionEvaluationError(source, celSummary(error));
      }
      if (typeof value !== "boolean") {
        throw new ConditionEvaluationError(source, `it gave ${typeof value}, not true or false`);
      }
      return value;
    },
  };
}

function syntaxError(error: unknown): ConditionSyntaxError {
  const cel = error as Partial<ParseError | CelTypeError> | undefined;
  const start = cel?.range?.start ?? 0;
  return new ConditionSyntaxError(celSummary(error), start + 1);
}

/** The library's one-line reason (its `message` adds a drawing of the expression with a caret). */
function celSummary(error: unknown): string {
  const cel = error as Partial<ParseError> | undefined;
  if (typeof cel?.summary === "string") return cel.summary;
  return error instanceof Error ? (error.message.split("\n")[0] ?? "invalid") : String(error);
}
