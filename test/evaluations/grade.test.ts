// Grading a test case (src/evaluations/grade.ts): every metric kind on an ExecutionResult that passes it and one that
// fails it, seed 004's "max_turns limit reached", structured output read as its JSON string, and G-Eval graded by a
// real provider client talking to the model emulator over HTTP (Anthropic's and an OpenAI-compatible one).
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ExecutionResult } from "../../src/contracts/execution-result.ts";
import {
  type EvaluationConfig,
  EvaluationsSchema,
  type TestCase,
  TestCaseSchema,
} from "../../src/evaluations/config.ts";
import {
  type CaseGrade,
  type GradeOptions,
  gradeCase,
  MAX_TURNS_REASON,
  NOTHING_GRADED_REASON,
} from "../../src/evaluations/grade.ts";
import { type Grader, parseVerdict, providerGrader } from "../../src/evaluations/model-grader.ts";
import { secretLookup } from "../../src/lib/secrets.ts";
import type { LlmConfig } from "../../src/llm/provider.ts";
import { createProvider } from "../../src/llm/providers.ts";
import { outboundPolicy } from "../../src/net/outbound.ts";
import { script, uniqueMarker } from "../support/helpers.ts";

function result(over: Partial<ExecutionResult> = {}): ExecutionResult {
  return {
    response: "",
    tool_calls: [],
    tool_results: [],
    token_usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    structured_output: null,
    num_turns: 1,
    is_error: false,
    error_reason: null,
    ...over,
  };
}

const testCase = (c: Record<string, unknown>): TestCase => TestCaseSchema.parse({ name: "case_1", input: "Hi", ...c });
const config = (...metrics: Record<string, unknown>[]): EvaluationConfig => EvaluationsSchema.parse({ metrics });
const OPTIONS: GradeOptions = { maxTurns: 10, responseFormat: null, grader: null };

async function grade(
  c: Record<string, unknown>,
  metric: Record<string, unknown>,
  over: Partial<ExecutionResult>,
  options: Partial<GradeOptions> = {},
): Promise<CaseGrade> {
  return gradeCase(testCase(c), config(metric), result(over), { ...OPTIONS, ...options });
}

describe("exact_match and contains", () => {
  it("exact_match passes on the expected output, surrounding whitespace aside, and fails on anything else", async () => {
    const pass = await grade({ expected_output: "Paris" }, { type: "exact_match" }, { response: " Paris\n" });
    expect(pass).toEqual({
      case: "case_1",
      passed: true,
      reason: null,
      metrics: [
        {
          metric: "exact_match",
          type: "exact_match",
          score: 1,
          threshold: 1,
          passed: true,
          reason: "the response equals the expected output",
        },
      ],
      grader_usage: { input_tokens: 0, output_tokens: 0 },
    });
    const fail = await grade({ expected_output: "Paris" }, { type: "exact_match" }, { response: "paris" });
    expect(fail.passed).toBe(false);
    expect(fail.reason).toBe("below threshold: exact_match 0 < 1");
    expect(fail.metrics[0]).toMatchObject({ score: 0, passed: false });
    const folded = await grade(
      { expected_output: "Paris" },
      { type: "exact_match", case_sensitive: false },
      { response: "paris" },
    );
    expect(folded.passed).toBe(true);
  });

  it("contains passes when the response holds the expected output, in any case by default", async () => {
    const pass = await grade({ expected_output: "Paris" }, { type: "contains" }, { response: "It is PARIS." });
    expect(pass.metrics[0]).toMatchObject({ score: 1, passed: true });
    const fail = await grade({ expected_output: "Paris" }, { type: "contains" }, { response: "It is Lyon." });
    expect(fail.metrics[0]).toEqual({
      metric: "contains",
      type: "contains",
      score: 0,
      threshold: 1,
      passed: false,
      reason: 'the response does not contain "Paris"',
    });
  });

  it("is not computed for a case without an expected output, and a case nothing grades fails", async () => {
    const graded = await grade({}, { type: "exact_match" }, { response: "anything" });
    expect(graded).toMatchObject({ passed: false, reason: NOTHING_GRADED_REASON, metrics: [] });
  });
});

describe("regex", () => {
  it("passes when the response has a match and fails otherwise", async () => {
    const metric = { type: "regex", pattern: "\\b\\d{3}-\\d{4}\\b" };
    expect((await grade({}, metric, { response: "Call 555-1234." })).metrics[0]).toMatchObject({
      score: 1,
      passed: true,
    });
    expect((await grade({}, metric, { response: "Call us." })).metrics[0]).toEqual({
      metric: "regex",
      type: "regex",
      score: 0,
      threshold: 1,
      passed: false,
      reason: "the response does not match /\\b\\d{3}-\\d{4}\\b/",
    });
  });

  it("fails, saying why, on a pattern RE2 refuses", async () => {
    const graded = await grade({}, { type: "regex", pattern: "(?<=a)b" }, { response: "ab" });
    expect(graded.metrics[0]?.passed).toBe(false);
    expect(graded.metrics[0]?.reason).toMatch(/^the pattern is not valid RE2 syntax/);
  });
});

describe("json_schema", () => {
  const schema = {
    type: "object",
    properties: { city: { type: "string" }, population: { type: "integer" } },
    required: ["city", "population"],
  };

  it("checks structured_output against the metric's schema", async () => {
    const pass = await grade(
      {},
      { type: "json_schema", schema },
      { structured_output: { city: "Paris", population: 2 } },
    );
    expect(pass.metrics[0]).toMatchObject({ score: 1, passed: true, reason: "the output conforms to the schema" });
    const fail = await grade({}, { type: "json_schema", schema }, { structured_output: { city: "Paris" } });
    expect(fail.metrics[0]?.passed).toBe(false);
    expect(fail.metrics[0]?.reason).toBe(
      'the output does not conform to the schema: the value: Instance does not have required property "population".',
    );
  });

  it("uses the agent's response_format without a schema of its own, and reads a plain response as JSON", async () => {
    const options = { responseFormat: schema };
    const pass = await grade({}, { type: "json_schema" }, { response: '{"city":"Oslo","population":1}' }, options);
    expect(pass.metrics[0]?.passed).toBe(true);
    const notJson = await grade({}, { type: "json_schema" }, { response: "Oslo" }, options);
    expect(notJson.metrics[0]).toMatchObject({ score: 0, reason: "the response is not JSON" });
  });

  it("fails the metric, naming the pattern, when RegExp or RE2 refuses one of the schema's patterns", async () => {
    // A TypeScript agent's schema reaches grading unchecked by RE2; RegExp's "((" used to throw out of gradeCase.
    const nested = { type: "object", properties: { a: { type: "string", pattern: "((" } } };
    const unterminated = await grade({}, { type: "json_schema", schema: nested }, { structured_output: { a: "x" } });
    expect(unterminated.passed).toBe(false);
    expect(unterminated.metrics[0]).toMatchObject({ score: 0, passed: false });
    expect(unterminated.metrics[0]?.reason).toMatch(
      /^not graded: evaluations\.metrics\.0\.schema\.properties\.a\.pattern: "\(\(" is not valid RE2 syntax \(/,
    );
    // (?i) is RE2 syntax that RegExp refuses: the validator would throw on it.
    const flags = { type: "object", patternProperties: { "(?i)^a$": { type: "string" } } };
    const options = { responseFormat: flags };
    const graded = await grade({}, { type: "json_schema" }, { response: '{"a":"x"}' }, options);
    expect(graded.metrics[0]?.reason).toMatch(
      /^not graded: response_format\.patternProperties\.\(\?i\)\^a\$: "\(\?i\)\^a\$" is not valid JavaScript RegExp syntax \(Invalid regular expression/,
    );
  });

  it("fails the metric instead of throwing when the validator cannot apply the schema", async () => {
    const schema = { $ref: "#/$defs/missing" };
    const graded = await grade({}, { type: "json_schema", schema }, { structured_output: { a: 1 } });
    expect(graded.metrics[0]).toMatchObject({ score: 0, passed: false });
    expect(graded.metrics[0]?.reason).toMatch(
      /^the output does not conform to the schema: the schema cannot be applied \(/,
    );
  });
});

describe("tool_calls", () => {
  const calls = [
    { name: "Read", arguments: { path: "a.txt" }, call_id: "1" },
    { name: "Write", arguments: { path: "b.txt", content: "x" }, call_id: "2" },
  ];

  it("passes when the expected calls were made in order with the given arguments", async () => {
    const graded = await grade(
      { expected_tools: ["Read", { name: "Write", arguments: { path: "b.txt" } }] },
      { type: "tool_calls" },
      { tool_calls: calls },
    );
    expect(graded.metrics[0]).toMatchObject({ score: 1, passed: true, reason: "2 of 2 expected calls made in order" });
  });

  it("fails with the share made and the calls missing", async () => {
    const graded = await grade(
      { expected_tools: [{ name: "Write", arguments: { path: "c.txt" } }, "Read"] },
      { type: "tool_calls", threshold: 0.5 },
      { tool_calls: calls },
    );
    // Read came first, so in order only one of the two can match, and Write's path is not c.txt anyway.
    expect(graded.metrics[0]).toEqual({
      metric: "tool_calls",
      type: "tool_calls",
      score: 0.5,
      threshold: 0.5,
      passed: true,
      reason: '1 of 2 expected calls made in order; missing: Write {"path":"c.txt"} (calls made: Read, Write)',
    });
    const strict = await grade({ expected_tools: ["Write", "Read"] }, { type: "tool_calls" }, { tool_calls: calls });
    expect(strict.metrics[0]).toMatchObject({ score: 0.5, passed: false });
  });
});

describe("BLEU and ROUGE-L", () => {
  it("score the response against the ground truth and compare with the threshold", async () => {
    const c = { ground_truth: "the cat sat on a mat" };
    const high = await grade(c, { type: "rouge_l", threshold: 0.8 }, { response: "The cat sat on the mat." });
    expect(high.metrics[0]).toMatchObject({ passed: true, reason: "ROUGE-L F1 0.833 against the reference" });
    expect(high.metrics[0]?.score).toBeCloseTo(5 / 6, 12);
    const low = await grade(c, { type: "bleu", threshold: 0.5 }, { response: "the cat" });
    expect(low.metrics[0]).toMatchObject({ passed: false, reason: "BLEU-4 0.135 against the reference" });
  });

  it("read structured output as its JSON string (seed 004)", async () => {
    const structured = { city: "Paris" };
    const graded = await grade(
      { expected_output: JSON.stringify(structured) },
      { type: "bleu", threshold: 1 },
      { response: "ignored", structured_output: structured },
    );
    expect(graded.metrics[0]).toMatchObject({ score: 1, passed: true });
  });
});

describe("the case's verdict", () => {
  it('fails with "max_turns limit reached" when num_turns reaches max_turns, whatever its metrics say', async () => {
    const graded = await grade(
      { expected_output: "Done" },
      { type: "contains" },
      { response: "Done", num_turns: 3 },
      { maxTurns: 3 },
    );
    expect(graded.passed).toBe(false);
    expect(graded.reason).toBe(MAX_TURNS_REASON);
    expect(graded.reason).toBe("max_turns limit reached");
    expect(graded.metrics[0]?.passed).toBe(true);
    const under = await grade(
      { expected_output: "Done" },
      { type: "contains" },
      { response: "Done", num_turns: 2 },
      { maxTurns: 3 },
    );
    expect(under.passed).toBe(true);
  });

  it("fails with the run's error when the run failed", async () => {
    const graded = await grade(
      {},
      { type: "regex", pattern: "x" },
      { response: "x", is_error: true, error_reason: "boom" },
    );
    expect(graded).toMatchObject({ passed: false, reason: "boom" });
  });

  it("passes only when every metric passes, naming those below threshold", async () => {
    const graded = await gradeCase(
      testCase({ expected_output: "Paris" }),
      config({ type: "contains" }, { type: "regex", name: "digits", pattern: "\\d" }),
      result({ response: "Paris" }),
      OPTIONS,
    );
    expect(graded.passed).toBe(false);
    expect(graded.reason).toBe("below threshold: digits 0 < 1");
    expect(graded.metrics.map((m) => [m.metric, m.passed])).toEqual([
      ["contains", true],
      ["digits", false],
    ]);
  });
});

describe("g_eval through the provider layer", () => {
  const emulator = env.ANTHROPIC_BASE_URL as string;

  async function graderFor(llm: LlmConfig | null, model: string): Promise<Grader> {
    const provider = await createProvider(llm, {
      secret: secretLookup(env),
      anthropic: { apiKey: env.ANTHROPIC_API_KEY || undefined, baseURL: env.ANTHROPIC_BASE_URL || undefined },
      outbound: outboundPolicy(env.OUTPOST_ALLOW_PRIVATE_HOSTS),
      maxRetries: 0,
    });
    return providerGrader(provider, model);
  }

  const graders: [string, LlmConfig | null][] = [
    ["anthropic", null],
    ["openai_compatible", { provider: "openai_compatible", endpoint: `${emulator}/v1`, api_key: "TEST_OPENAI_KEY" }],
  ];

  it.each(graders)("scores with the %s grader's answer and keeps its reasoning and tokens", async (name, llm) => {
    const marker = uniqueMarker(`geval-${name}`);
    await script(marker, [
      {
        content: [{ type: "text", text: 'Thinking it over.\n{"score": 8, "reasoning": "Polite and correct."}' }],
        usage: { input_tokens: 300, output_tokens: 40 },
      },
    ]);
    const metric = { type: "g_eval", name: "Helpfulness", criteria: `Is it helpful? ${marker}`, threshold: 0.7 };
    const graded = await grade(
      { expected_output: "Paris" },
      metric,
      { response: "It is Paris." },
      {
        grader: await graderFor(llm as LlmConfig | null, "claude-haiku-4-5"),
      },
    );
    expect(graded).toEqual({
      case: "case_1",
      passed: true,
      reason: null,
      metrics: [
        {
          metric: "Helpfulness",
          type: "g_eval",
          score: 0.8,
          threshold: 0.7,
          passed: true,
          reason: "Polite and correct.",
        },
      ],
      grader_usage: { input_tokens: 300, output_tokens: 40 },
    });
  });

  it("gets the emulator's fixed verdict when unscripted, so model-graded metrics run under npm run dev", async () => {
    const metric = { type: "g_eval", name: "Unscripted", criteria: "Is it any good?", threshold: 0.5 };
    const graded = await grade({}, metric, { response: "Yes." }, { grader: await graderFor(null, "claude-haiku-4-5") });
    expect(graded.metrics[0]).toMatchObject({
      score: 0.8,
      passed: true,
      reason: "(emulator) A fixed grade: the emulator does not judge answers.",
    });
  });

  it("fails a response the grader scores below the threshold", async () => {
    const marker = uniqueMarker("geval-low");
    await script(marker, [{ content: [{ type: "text", text: '{"score": 3, "reasoning": "Off topic."}' }] }]);
    const metric = { type: "g_eval", name: "Relevance", criteria: `On topic? ${marker}`, threshold: 0.5 };
    const graded = await grade(
      {},
      metric,
      { response: "Bananas." },
      { grader: await graderFor(null, "claude-haiku-4-5") },
    );
    expect(graded.passed).toBe(false);
    expect(graded.reason).toBe("below threshold: Relevance 0.3 < 0.5");
    expect(graded.metrics[0]).toMatchObject({ score: 0.3, reason: "Off topic." });
  });

  it("reads the first object that is a verdict, past braces in the prose and a stray brace after it", () => {
    expect(parseVerdict('The {input} is fine. {"score":8,"reasoning":"ok"}')).toEqual({ score: 8, reasoning: "ok" });
    expect(parseVerdict('{"score":8,"reasoning":"ok"}\n}')).toEqual({ score: 8, reasoning: "ok" });
    expect(
      parseVerdict('Note {"a":1}. Verdict: {"score":3,"reasoning":"uses {x} and }"} {"score":9,"reasoning":"no"}'),
    ).toEqual({
      score: 3,
      reasoning: "uses {x} and }",
    });
    expect(parseVerdict('{"score":11,"reasoning":"too high"} {oops')).toBeNull();
  });

  it("fails, quoting it, an answer that is not a verdict", async () => {
    const marker = uniqueMarker("geval-garbled");
    await script(marker, [{ content: [{ type: "text", text: "I think it is fine." }] }]);
    const metric = { type: "g_eval", name: "Relevance", criteria: `On topic? ${marker}`, threshold: 0.5 };
    const graded = await grade({}, metric, { response: "Yes." }, { grader: await graderFor(null, "claude-haiku-4-5") });
    expect(graded.metrics[0]).toMatchObject({
      score: 0,
      passed: false,
      reason: `not graded: the grader's answer has no {score, reasoning}: "I think it is fine."`,
    });
  });

  it("fails without calling a grader when the run failed or none is configured", async () => {
    const metric = { type: "g_eval", name: "Relevance", criteria: "On topic?", threshold: 0.5 };
    const failed = await grade({}, metric, { is_error: true, error_reason: "boom" }, { grader: null });
    expect(failed.metrics[0]?.reason).toBe("not graded: the run failed");
    const none = await grade({}, metric, { response: "Yes." }, { grader: null });
    expect(none.metrics[0]?.reason).toBe("not graded: no grader model could be used");
  });
});
