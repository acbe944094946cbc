// The condition language (src/workflows/condition.ts, CEL): what fails at load and where, and what an expression
// gives for a State, as truth tables. Evaluated where code generation is refused, as workerd refuses it in production
// (project "unit" runs Node with --disallow-code-generation-from-strings; the vitest pool's workerd allows it): these
// tests fail if the evaluator ever used eval or new Function.
import { describe, expect, it } from "vitest";
import {
  ConditionEvaluationError,
  type ConditionState,
  ConditionSyntaxError,
  parseCondition,
} from "../../src/workflows/condition.ts";

const STATE: ConditionState = {
  routing_key: "coder",
  current_agent: "planner",
  last_message: "Looks good. LGTM",
  metadata: { score: 7, risk: "high", approved: true, tags: ["ui", "bug"], reviewer: null },
};

function holds(source: string, state: ConditionState = STATE): boolean {
  return parseCondition(source).evaluate(state);
}

function syntaxError(source: string): string {
  try {
    parseCondition(source);
  } catch (error) {
    expect(error).toBeInstanceOf(ConditionSyntaxError);
    return (error as Error).message;
  }
  throw new Error("the condition was accepted");
}

describe("where the conditions are evaluated", () => {
  it("refuses code generation, as workerd does in production", () => {
    expect(() => new Function("return 1")).toThrow(EvalError);
  });
});

describe("parsing at load", () => {
  it("names the column of a syntax error", () => {
    expect(syntaxError('routing_key == "a" &&')).toBe("Unexpected token: EOF at column 22");
    expect(syntaxError("metadata.score >> 3")).toMatch(/ at column 17$/);
  });

  it("refuses a name that is not part of the State, at its column", () => {
    expect(syntaxError('status == "done"')).toBe("Unknown variable: status at column 1");
    expect(syntaxError('routing_key == "a" || user.admin')).toBe("Unknown variable: user at column 23");
  });

  it("refuses an expression that is not true or false", () => {
    expect(syntaxError("1 + 2")).toBe("must be true or false, not int at column 1");
    expect(syntaxError("last_message")).toBe("must be true or false, not string at column 1");
  });

  it("refuses a comparison its types cannot make", () => {
    expect(syntaxError("last_message > 3")).toBe("no such overload: string > int at column 1");
  });

  it("refuses an expression longer than 1000 characters", () => {
    expect(syntaxError(`routing_key == "${"a".repeat(1_000)}"`)).toBe("longer than 1000 characters at column 1001");
  });
});

describe("evaluation", () => {
  it.each([
    ['routing_key == "coder"', true],
    ['routing_key != "coder"', false],
    ['current_agent == "planner"', true],
    ["metadata.score > 5", true],
    ["metadata.score >= 7", true],
    ["metadata.score < 7", false],
    ["metadata.score <= 6.5", false],
    ["metadata.score == 7", true],
    ['metadata.risk == "high" && metadata.approved', true],
    ['metadata.risk == "low" || metadata.approved', true],
    ['!(metadata.risk == "high")', false],
    ['metadata.risk == "low" || !metadata.approved', false],
    ['(routing_key == "a" || routing_key == "coder") && metadata.score > 1', true],
    ['last_message.contains("LGTM")', true],
    ['last_message.contains("lgtm")', false],
    ['"bug" in metadata.tags', true],
    ['"docs" in metadata.tags', false],
    ['routing_key in ["planner", "coder"]', true],
    ['"risk" in metadata', true],
    ['"owner" in metadata', false],
    ["metadata.reviewer == null", true],
    ["routing_key == null", false],
    ["true", true],
    ["false", false],
  ])("%s is %s", (source, expected) => {
    expect(holds(source)).toBe(expected);
  });

  it("sees a State before any agent ran: null routing key and agent, no last message", () => {
    const empty: ConditionState = { routing_key: null, current_agent: null, last_message: "", metadata: {} };
    expect(holds("routing_key == null && current_agent == null", empty)).toBe(true);
    expect(holds('last_message == ""', empty)).toBe(true);
  });

  it("fails with ConditionEvaluationError on a missing metadata key", () => {
    expect(() => holds('metadata.owner == "me"')).toThrow(ConditionEvaluationError);
    expect(() => holds('metadata.owner == "me"')).toThrow(
      'The condition "metadata.owner == \\"me\\"" could not be evaluated: No such key: owner',
    );
  });

  it("fails with ConditionEvaluationError when a State value is not a boolean", () => {
    expect(() => holds("metadata.risk")).toThrow(
      'The condition "metadata.risk" could not be evaluated: it gave string, not true or false',
    );
  });
});
