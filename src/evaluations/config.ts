// Seed 004's test_cases and evaluations as one zod schema each: what an agent's author writes (agents/*.yaml keys,
// PUT /v1/agents/:name bodies, and the testCases/evaluations keys of a TypeScript agent's definition, which
// src/agents/definition.ts composes) and what the grader (grade.ts) reads. A test case is one message on a fresh
// conversation (seed 004 invoke_once) with what its answer should be; `evaluations` says which metrics judge every
// case, each with the threshold its score must reach, and which model grades the model-graded ones.
import { z } from "zod";
import { FaultsSchema } from "../faults/faults.ts";
import { type JsonObject, JsonObjectSchema } from "../lib/json.ts";
import { type LlmConfig, LlmConfigSchema, PROVIDER_NAMES } from "../llm/provider.ts";

/** Longest input, context message or expected text of a case (the same bound as a task's input). */
const MAX_TEXT_CHARS = 100_000;
/** Most cases an agent carries: a regression suite, not a data set. */
export const MAX_TEST_CASES = 500;
/** A case's name: its id in POST /v1/agents/:name/evaluations and in the reports. */
export const TEST_CASE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
/** A case's tag, spelled as a task's tag. */
const TAG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;

const text = (what: string) =>
  z
    .string(`must be ${what}`)
    .refine((s) => s.trim() !== "", "must not be empty")
    .refine((s) => s.length <= MAX_TEXT_CHARS, `must be at most ${MAX_TEXT_CHARS} characters`);

/** One earlier message of the conversation a case continues (seed 004 section 3b: plain text). */
const ContextTurnSchema = z.strictObject({
  role: z.enum(["user", "assistant"], 'must be "user" or "assistant"'),
  content: text("text"),
});

/**
 * A tool call the agent's turn must make: a tool's name, or {name, arguments}. The arguments are a subset match:
 * every key given must be among the call's arguments with an equal value (JSON equality, so key order does not
 * matter and 1 equals 1.0); keys the call has beyond them are not looked at.
 */
const ExpectedToolSchema = z
  .union(
    [
      z.string().min(1, "must not be empty"),
      z.strictObject({ name: z.string().min(1, "must not be empty"), arguments: JsonObjectSchema.optional() }),
    ],
    "must be a tool's name or {name, arguments}",
  )
  .transform((tool): ExpectedToolCall => (typeof tool === "string" ? { name: tool } : tool));

export interface ExpectedToolCall {
  name: string;
  arguments?: JsonObject | undefined;
}

/** Seed 004 TestCase. */
export const TestCaseSchema = z.strictObject({
  /** Unique among the agent's cases; selects it (with tags) when a run names cases. */
  name: z.string("must be a name").regex(TEST_CASE_NAME_PATTERN, `must match ${TEST_CASE_NAME_PATTERN}`),
  /** The message the agent gets. */
  input: text("text"),
  /** The conversation before it, oldest first (seed 004 invoke_once's context). */
  context: z.array(ContextTurnSchema).max(200, "at most 200 messages").optional(),
  /** The answer expected, for exact_match, contains, and as the reference of bleu, rouge_l and g_eval. */
  expected_output: text("text").optional(),
  /** The reference answer for bleu, rouge_l and g_eval when it differs from the expected output. */
  ground_truth: text("text").optional(),
  /** Tool calls the turn must make, in order (see the tool_calls metric); [] means none at all. */
  expected_tools: z.array(ExpectedToolSchema).max(50, "at most 50 calls").optional(),
  /** Files the case's workspace starts with: path → UTF-8 text (as a task's files). */
  files: z
    .record(z.string().min(1).max(1024), z.string())
    .refine((files) => Object.keys(files).length <= 50, "at most 50 files")
    .optional(),
  /** Labels a run can select cases by. */
  tags: z
    .array(z.string().regex(TAG_PATTERN, "must be lowercase letters, digits, '-' or '_'"))
    .max(16, "at most 16 tags")
    .optional(),
  /**
   * Faults to inject into the case's run (src/faults/; where the operator allows them). Each repetition also runs
   * without them, and the report compares the two.
   */
  faults: FaultsSchema.optional(),
});
export type TestCase = z.output<typeof TestCaseSchema>;

/** The cases of an agent: names unique. */
export const TestCasesSchema = z
  .array(TestCaseSchema)
  .max(MAX_TEST_CASES, `at most ${MAX_TEST_CASES} cases`)
  .superRefine((cases, ctx) => {
    const seen = new Set<string>();
    cases.forEach((c, index) => {
      if (seen.has(c.name)) {
        ctx.addIssue({ code: "custom", path: [index, "name"], message: `"${c.name}" names another case too` });
      }
      seen.add(c.name);
    });
  });

const threshold = z.number("must be a number from 0 to 1").min(0, "must be at least 0").max(1, "must be at most 1");
/** A metric's name in the results (unique): the type unless given. */
const metricName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/, "must be a short name");

/** The metrics, by `type`. A score is from 0 to 1 and passes when it is at least the threshold. */
export const MetricSchema = z.discriminatedUnion(
  "type",
  [
    /** The response equals the case's expected_output (surrounding whitespace ignored). */
    z.strictObject({
      type: z.literal("exact_match"),
      name: metricName.optional(),
      threshold: threshold.default(1),
      case_sensitive: z.boolean().default(true),
    }),
    /** The response contains the case's expected_output. */
    z.strictObject({
      type: z.literal("contains"),
      name: metricName.optional(),
      threshold: threshold.default(1),
      case_sensitive: z.boolean().default(false),
    }),
    /** The response has a match of `pattern` (RE2 syntax: no backreferences or lookaround). */
    z.strictObject({
      type: z.literal("regex"),
      name: metricName.optional(),
      threshold: threshold.default(1),
      pattern: z.string().min(1, "must not be empty").max(2_000, "must be at most 2,000 characters"),
      case_sensitive: z.boolean().default(true),
    }),
    /** structured_output (or the response parsed as JSON) conforms to `schema`, or to the agent's response_format. */
    z.strictObject({
      type: z.literal("json_schema"),
      name: metricName.optional(),
      threshold: threshold.default(1),
      schema: JsonObjectSchema.optional(),
    }),
    /** The share of the case's expected_tools the turn made (names, arguments; in order unless in_order: false). */
    z.strictObject({
      type: z.literal("tool_calls"),
      name: metricName.optional(),
      threshold: threshold.default(1),
      in_order: z.boolean().default(true),
    }),
    /** Sentence BLEU of the response against the reference (text-metrics.ts). */
    z.strictObject({
      type: z.literal("bleu"),
      name: metricName.optional(),
      threshold,
      max_n: z.number().int().min(1).max(4).default(4),
    }),
    /** ROUGE-L F1 of the response against the reference (text-metrics.ts). */
    z.strictObject({ type: z.literal("rouge_l"), name: metricName.optional(), threshold }),
    /** G-Eval: the grader model scores the response against `criteria`, 0 to 10, with its reasoning. */
    z.strictObject({
      type: z.literal("g_eval"),
      name: metricName,
      threshold,
      criteria: text("the criteria"),
      evaluation_steps: z.array(text("a step")).max(20, "at most 20 steps").optional(),
    }),
  ],
  {
    error: (issue) =>
      issue.code === "invalid_union"
        ? "type must be one of exact_match, contains, regex, json_schema, tool_calls, bleu, rouge_l, g_eval"
        : undefined,
  },
);
export type Metric = z.output<typeof MetricSchema>;
export type MetricType = Metric["type"];

/** The model that grades g_eval metrics, spelled as an agent file's `model:`. Absent: the agent's own model. */
const GraderModelSchema = z.strictObject({
  provider: z.enum(PROVIDER_NAMES).default("anthropic"),
  name: z.string().min(1).max(200).optional(),
  endpoint: LlmConfigSchema.in.shape.endpoint,
  /** The NAME of the Worker secret holding the key, never the key. */
  api_key: LlmConfigSchema.in.shape.api_key,
});
export type GraderModel = z.output<typeof GraderModelSchema>;

/**
 * How long a case's run may take, from its task's creation, before its evaluation cancels it and fails it ("timed
 * out after N s"): an evaluation always ends, even when a run hangs. 15 minutes by default: a long agentic case
 * against a real model, with room to spare.
 */
export const DEFAULT_CASE_TIMEOUT_SECONDS = 900;
/** The longest deadline a case may be given: a day. */
export const MAX_CASE_TIMEOUT_SECONDS = 86_400;

/** Seed 004 EvaluationConfig. */
export const EvaluationsSchema = z
  .strictObject({
    model: GraderModelSchema.optional(),
    metrics: z.array(MetricSchema).min(1, "must list at least one metric").max(32, "at most 32 metrics"),
    /** Seconds each case's run may take before it is canceled and failed; DEFAULT_CASE_TIMEOUT_SECONDS when absent. */
    case_timeout_seconds: z
      .number("must be a whole number of seconds")
      .int("must be a whole number of seconds")
      .min(1, "must be at least 1")
      .max(MAX_CASE_TIMEOUT_SECONDS, `must be at most ${MAX_CASE_TIMEOUT_SECONDS}`)
      .optional(),
  })
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.metrics.forEach((metric, index) => {
      const name = metricLabel(metric);
      if (seen.has(name)) {
        ctx.addIssue({
          code: "custom",
          path: ["metrics", index, "name"],
          message: `"${name}" names another metric too (give each a name)`,
        });
      }
      seen.add(name);
    });
  });
export type EvaluationConfig = z.output<typeof EvaluationsSchema>;

/** A metric's name in the results: its own name, or its type. */
export function metricLabel(metric: Metric): string {
  return metric.name ?? metric.type;
}

/**
 * The provider settings of the grader model: null for Anthropic with the deployment's key (as an agent without
 * llmConfig). A problem (an openai_compatible grader without an endpoint…) is returned with the key it is about.
 */
export function graderLlmConfig(
  model: GraderModel,
): { ok: true; llm: LlmConfig | null } | { ok: false; key: string; message: string } {
  if (model.provider === "anthropic" && model.endpoint === undefined && model.api_key === undefined) {
    return { ok: true, llm: null };
  }
  const given = { provider: model.provider, endpoint: model.endpoint, api_key: model.api_key };
  const parsed = LlmConfigSchema.safeParse(
    Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)),
  );
  if (parsed.success) return { ok: true, llm: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    ok: false,
    key: ["evaluations", "model", ...(issue?.path ?? []).map(String)].join("."),
    message: issue?.message ?? "invalid",
  };
}
