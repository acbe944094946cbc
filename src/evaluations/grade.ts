// Grading one test case: from the case, the agent's evaluation config and the ExecutionResult its run produced (seed
// 004 section 4) to one result per metric {metric, score, threshold, passed, reason} and the case's verdict. Every
// metric reads the result only, so a case is graded the same whoever ran it. A metric whose input the case lacks (no
// expected_output for exact_match, no expected_tools for tool_calls…) is not computed for that case. Structured
// output reaches the text metrics as its JSON string, as seed 004 passes it. A case fails with "max_turns limit
// reached" when num_turns >= max_turns (seed 004), whatever its metrics say, and with the run's error_reason when the
// run failed. A case no metric applies to fails too: nothing graded is not a pass.
import type { ExecutionResult } from "../contracts/execution-result.ts";
import { OutpostError } from "../errors.ts";
import type { Json, JsonObject } from "../lib/json.ts";
import { re2PatternProblem, readJsonAnswer, validateJson } from "../lib/json-schema.ts";
import { lazyModule } from "../lib/lazy-module.ts";
import { type EvaluationConfig, type Metric, type MetricType, metricLabel, type TestCase } from "./config.ts";
import { type Grader, gEvalSystemPrompt, gEvalUserMessage, parseVerdict } from "./model-grader.ts";
import { bleu, rougeL } from "./text-metrics.ts";
import { describeCall, matchToolCalls } from "./tool-calls.ts";

/** RE2 (linear-time, no catastrophic backtracking on an author's pattern), loaded by the first regex metric. */
const loadRe2 = lazyModule(() => import("re2js"));

/** The reason a case fails when its run used every turn it had (seed 004's wording). */
export const MAX_TURNS_REASON = "max_turns limit reached";

/**
 * The reason a case fails when none of the metrics applies to it (a contains metric and a case without an expected
 * output…): a case with nothing graded must not pass.
 */
export const NOTHING_GRADED_REASON =
  "nothing graded: no metric of the agent's evaluations applies to this case (give it what a metric reads, e.g. expected_output or expected_tools)";

export interface MetricResult {
  /** The metric's name (its type unless named). */
  metric: string;
  type: MetricType;
  /** From 0 to 1. */
  score: number;
  threshold: number;
  passed: boolean;
  /** Why the score is what it is, in a sentence (a model-graded metric: the grader's reasoning). */
  reason: string;
}

export interface CaseGrade {
  case: string;
  passed: boolean;
  /** Why the case failed: "max_turns limit reached", the run's error, or the metrics below their threshold; null if it passed. */
  reason: string | null;
  metrics: MetricResult[];
  /** Tokens the grader model used for this case. */
  grader_usage: { input_tokens: number; output_tokens: number };
}

export interface GradeOptions {
  /** The turns the run had: the case fails when it used them all. */
  maxTurns: number;
  /** The agent's response_format, the schema of a json_schema metric that names none. */
  responseFormat: JsonObject | null;
  /** The grader of g_eval metrics; null when none can be built (each g_eval then fails, saying so). */
  grader: Grader | null;
}

export async function gradeCase(
  testCase: TestCase,
  config: EvaluationConfig | null,
  result: ExecutionResult,
  options: GradeOptions,
): Promise<CaseGrade> {
  const usage = { input_tokens: 0, output_tokens: 0 };
  const metrics: MetricResult[] = [];
  for (const [index, metric] of (config?.metrics ?? []).entries()) {
    const outcome = await scoreMetric(metric, index, testCase, result, options, usage);
    if (outcome === null) continue;
    const score = clamp(outcome.score);
    metrics.push({
      metric: metricLabel(metric),
      type: metric.type,
      score,
      threshold: metric.threshold,
      passed: score >= metric.threshold,
      reason: outcome.reason,
    });
  }
  const failed = metrics.filter((m) => !m.passed);
  const reason =
    result.num_turns >= options.maxTurns
      ? MAX_TURNS_REASON
      : result.is_error
        ? (result.error_reason ?? "the run failed")
        : metrics.length === 0
          ? NOTHING_GRADED_REASON
          : failed.length > 0
            ? `below threshold: ${failed.map((m) => `${m.metric} ${round(m.score)} < ${m.threshold}`).join(", ")}`
            : null;
  return { case: testCase.name, passed: reason === null, reason, metrics, grader_usage: usage };
}

interface Outcome {
  score: number;
  reason: string;
}

/** The text the text metrics read: structured output as its JSON string (seed 004), else the response. */
export function responseText(result: ExecutionResult): string {
  return result.structured_output === null ? result.response : JSON.stringify(result.structured_output);
}

async function scoreMetric(
  metric: Metric,
  index: number,
  testCase: TestCase,
  result: ExecutionResult,
  options: GradeOptions,
  usage: CaseGrade["grader_usage"],
): Promise<Outcome | null> {
  const response = responseText(result);
  const expected = testCase.expected_output ?? testCase.ground_truth;
  const reference = testCase.ground_truth ?? testCase.expected_output;
  switch (metric.type) {
    case "exact_match": {
      if (expected === undefined) return null;
      const fold = (s: string) => (metric.case_sensitive ? s.trim() : s.trim().toLowerCase());
      return fold(response) === fold(expected)
        ? { score: 1, reason: "the response equals the expected output" }
        : { score: 0, reason: `the response differs from the expected output: ${quote(response)}` };
    }
    case "contains": {
      if (expected === undefined) return null;
      const fold = (s: string) => (metric.case_sensitive ? s : s.toLowerCase());
      return fold(response).includes(fold(expected.trim()))
        ? { score: 1, reason: "the response contains the expected output" }
        : { score: 0, reason: `the response does not contain ${quote(expected.trim())}` };
    }
    case "regex": {
      const { RE2JS } = await loadRe2();
      let found: boolean;
      try {
        const regex = RE2JS.compile(metric.pattern, metric.case_sensitive ? 0 : RE2JS.CASE_INSENSITIVE);
        found = regex.matcher(response).find();
      } catch (error) {
        return { score: 0, reason: `the pattern is not valid RE2 syntax (${errorText(error)})` };
      }
      return found
        ? { score: 1, reason: `the response matches /${metric.pattern}/` }
        : { score: 0, reason: `the response does not match /${metric.pattern}/` };
    }
    case "json_schema":
      return jsonSchemaOutcome(
        metric.schema ?? options.responseFormat,
        metric.schema === undefined ? "response_format" : `evaluations.metrics.${index}.schema`,
        result,
      );
    case "tool_calls": {
      if (testCase.expected_tools === undefined) return null;
      const match = matchToolCalls(testCase.expected_tools, result.tool_calls, metric.in_order);
      const made = result.tool_calls.map((c) => c.name).join(", ") || "none";
      if (testCase.expected_tools.length === 0) {
        return { score: match.score, reason: match.score === 1 ? "no tool call, as expected" : `calls made: ${made}` };
      }
      const matched = testCase.expected_tools.length - match.missing.length;
      return {
        score: match.score,
        reason:
          `${matched} of ${testCase.expected_tools.length} expected calls made${metric.in_order ? " in order" : ""}` +
          (match.missing.length > 0
            ? `; missing: ${match.missing.map(describeCall).join("; ")} (calls made: ${made})`
            : ""),
      };
    }
    case "bleu": {
      if (reference === undefined) return null;
      const score = bleu(response, reference, metric.max_n);
      return { score, reason: `BLEU-${metric.max_n} ${round(score)} against the reference` };
    }
    case "rouge_l": {
      if (reference === undefined) return null;
      const score = rougeL(response, reference);
      return { score, reason: `ROUGE-L F1 ${round(score)} against the reference` };
    }
    case "g_eval": {
      if (result.is_error) return { score: 0, reason: "not graded: the run failed" };
      if (options.grader === null) return { score: 0, reason: "not graded: no grader model could be used" };
      let answer: Awaited<ReturnType<Grader["ask"]>>;
      try {
        answer = await options.grader.ask(
          gEvalSystemPrompt(metric.name, metric.criteria, metric.evaluation_steps),
          gEvalUserMessage({ input: testCase.input, reference, response }),
        );
      } catch (error) {
        return { score: 0, reason: `not graded: the grader's call failed (${errorText(error)})` };
      }
      usage.input_tokens += answer.usage.input_tokens;
      usage.output_tokens += answer.usage.output_tokens;
      const verdict = parseVerdict(answer.text);
      if (verdict === null) {
        return { score: 0, reason: `not graded: the grader's answer has no {score, reasoning}: ${quote(answer.text)}` };
      }
      return { score: verdict.score / 10, reason: verdict.reasoning };
    }
  }
}

/**
 * The json_schema metric: structured_output, or the response read as JSON, against the schema (the same reading and
 * validation as a run's response_format, src/lib/json-schema.ts). A schema whose patterns RE2 or RegExp refuses (a
 * TypeScript agent's: a file's and a PUT's are refused before) fails the metric, naming the pattern; the validation
 * never throws.
 */
async function jsonSchemaOutcome(schema: JsonObject | null, where: string, result: ExecutionResult): Promise<Outcome> {
  if (schema === null)
    return { score: 0, reason: "no schema: the metric names none and the agent has no response_format" };
  const badPattern = await re2PatternProblem(schema, where);
  if (badPattern) return { score: 0, reason: `not graded: ${badPattern.field}: ${badPattern.message}` };
  let value: Json;
  if (result.structured_output !== null) value = result.structured_output;
  else {
    const read = readJsonAnswer(result.response);
    if (!read.ok) return { score: 0, reason: "the response is not JSON" };
    value = read.value;
  }
  const check = validateJson(schema, value, 3);
  if (check.valid) return { score: 1, reason: "the output conforms to the schema" };
  return { score: 0, reason: `the output does not conform to the schema: ${check.errors.join("; ")}` };
}

/**
 * The first regex metric whose pattern RE2 refuses, or null. Checked when an agent file is built and at PUT (both can
 * wait for re2js to load; a definition's synchronous check cannot); a TypeScript agent's bad pattern fails its metric.
 */
export async function regexProblem(
  config: { metrics: readonly { type: string; pattern?: string }[] } | null | undefined,
): Promise<{ field: string; message: string } | null> {
  const metrics = config?.metrics ?? [];
  if (!metrics.some((m) => m.type === "regex")) return null;
  const { RE2JS } = await loadRe2();
  for (const [index, metric] of metrics.entries()) {
    if (metric.type !== "regex" || metric.pattern === undefined) continue;
    try {
      RE2JS.compile(metric.pattern);
    } catch (error) {
      return { field: `evaluations.metrics.${index}.pattern`, message: `not valid RE2 syntax (${errorText(error)})` };
    }
  }
  return null;
}

function errorText(error: unknown): string {
  if (error instanceof OutpostError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : "unknown error";
}

function clamp(score: number): number {
  return Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0;
}

function round(score: number): number {
  return Math.round(score * 1000) / 1000;
}

/** A response quoted in a reason: at most 200 characters. */
function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
