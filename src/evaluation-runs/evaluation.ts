// An evaluation run (POST /v1/agents/:name/evaluations) as its object keeps it and as the API shows it: the agent's
// test cases chosen, each run once per repetition as a child task (seed 004 invoke_once: a fresh conversation, the
// case's context before its input), each run's ExecutionResult graded by the agent's metrics (src/evaluations/), and
// the summary over them. A wire type like the schedule's view: zod schemas built on first use, types inferred.
import { z } from "zod";
import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { AgentUsage } from "../contracts/usage.ts";
import type { Env } from "../env.ts";
import type { EvaluationConfig, TestCase } from "../evaluations/config.ts";
import { type FaultInjected, FaultsSchema } from "../faults/faults.ts";
import type { JsonObject } from "../lib/json.ts";
import type { LlmConfig } from "../llm/provider.ts";
import type { TaskInit } from "../tasks/task.ts";
import { derivedTaskId } from "../tasks/task-ids.ts";

/** `running` until every run has been graded and the report written; then `completed`. */
export const EVALUATION_STATUSES = ["running", "completed"] as const;
export type EvaluationStatus = (typeof EVALUATION_STATUSES)[number];

/**
 * A run's progress: `pending` (not started: the parallel limit), `starting` (recorded, its task being started; an
 * eviction starts it again under the same id), `running`, `ended` (its result reported, not graded yet), `graded`.
 */
export const RUN_STATUSES = ["pending", "starting", "running", "ended", "graded"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/**
 * A run's status as its object stores it: one of those shown, or `stopping` (the evaluation has recorded why the run
 * fails, because its task waited for a person or ran past the case's deadline, and is canceling the task; shown as
 * `running` until the cancel is done).
 */
export type StoredRunStatus = RunStatus | "stopping";

/** Child tasks an evaluation runs at once: enough to finish a suite soon, few enough to leave the tenant room. */
export const MAX_PARALLEL_RUNS = 4;
/** Most runs (cases × repetitions) one evaluation may start. */
export const MAX_EVALUATION_RUNS = 1_000;
/** Most repetitions of each case. */
export const MAX_REPEAT = 10;

/** The task every run starts from: a TaskInit as a task creation builds it, less what each run gives it. */
export type RunTemplate = Omit<TaskInit, "id" | "tenant" | "fingerprint" | "trigger" | "input" | "files" | "context">;

/** The model that grades g_eval metrics: its provider settings (null: Anthropic with the deployment's key) and model. */
export interface GraderSpec {
  llm: LlmConfig | null;
  model: string;
}

/** What creating an evaluation gives its object. */
export interface NewEvaluation {
  id: string;
  tenant: string;
  /** For an evaluation created under an Idempotency-Key: the request's fingerprint. */
  fingerprint: string | null;
  /**
   * The id of the key that started it: each run takes a token of its creation rate (src/commands/stored-work.ts). Absent from an
   * evaluation created before evaluations kept their key.
   */
  keyId?: string | null;
  agent: string;
  agentVersion: number | null;
  /** The case names or tags the request chose; null: every case. */
  selection: string[] | null;
  repeat: number;
  /** The cases chosen, their files' paths normalized as a task's are. */
  cases: TestCase[];
  evaluations: EvaluationConfig | null;
  /** The turns each run has: a case fails when its run used them all (seed 004). */
  maxTurns: number;
  responseFormat: JsonObject | null;
  grader: GraderSpec;
  template: RunTemplate;
}

/** A fault a run injected: its fault_injected event's payload, and the event's seq. */
export type InjectedFault = FaultInjected & { seq: number };

/** What a child task reports to its evaluation when it ends (from its alarm, until acknowledged). */
export interface RunReport {
  task_id: string;
  result: ExecutionResult;
  /** The task's usage (tokens and cost); null for a run whose task never ran. */
  usage: AgentUsage | null;
  /** From the run's start to its end; null when it never started (canceled before). */
  duration_ms: number | null;
  /** The faults the run injected (a case with `faults`); absent from a task that asked for none. */
  faults_injected?: InjectedFault[];
}

/**
 * The report of a run from its task as it ended: what the task sends from its alarm (src/task-host/evaluation-report.ts)
 * and what the evaluation reads back from the task when that report was lost (run-watch.ts), both TaskHost.runReport.
 */
export function runReport(
  task: { id: string; usage: AgentUsage; started_at: string | null },
  result: ExecutionResult,
  injected?: InjectedFault[],
): RunReport {
  return {
    task_id: task.id,
    result,
    usage: task.usage,
    duration_ms: task.started_at === null ? null : task.usage.duration_ms,
    ...(injected ? { faults_injected: injected } : {}),
  };
}

/**
 * The report of a run that failed for `reason` without an ExecutionResult of its task's (its task could not start,
 * or was stopped by its evaluation, with `usage` what it had spent): it fails its case.
 */
export function failedRun(taskId: string, reason: string, usage: AgentUsage | null = null): RunReport {
  return {
    task_id: taskId,
    result: {
      response: "",
      tool_calls: [],
      tool_results: [],
      // What the task spent before it was stopped is in `usage` (the summary's tokens and cost read it).
      token_usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      structured_output: null,
      num_turns: 0,
      is_error: true,
      error_reason: reason,
    },
    usage,
    duration_ms: usage?.duration_ms ?? null,
  };
}

/**
 * The id of the task of a case's repetition, derived so that starting it again reaches the same task. A faulted
 * case's repetition has a second run without its faults, its baseline, under an id of its own.
 */
export function runTaskId(
  tenant: string,
  evaluationId: string,
  caseName: string,
  repetition: number,
  baseline = false,
): Promise<string> {
  return baseline
    ? derivedTaskId("evaluation", tenant, evaluationId, caseName, String(repetition), "baseline")
    : derivedTaskId("evaluation", tenant, evaluationId, caseName, String(repetition));
}

/** The object name of an evaluation: its tenant and id, so another tenant's request reaches an empty object (404). */
export function evaluationObjectName(tenant: string, evaluationId: string): string {
  return `${tenant}/${evaluationId}`;
}

/** Where an evaluation's report is written in the blob store when it completes (GET /v1/evaluations/:id/report). */
export function reportKeys(tenant: string, evaluationId: string): { json: string; markdown: string } {
  const base = `evaluations/${tenant}/${evaluationId}`;
  return { json: `${base}/report.json`, markdown: `${base}/report.md` };
}

/** The evaluation's object (durable-objects/evaluation-object.ts). */
export function evaluationStubFor(env: Pick<Env, "EVALUATIONS">, tenant: string, evaluationId: string) {
  return env.EVALUATIONS.get(env.EVALUATIONS.idFromName(evaluationObjectName(tenant, evaluationId)));
}

export const MetricResultSchema = z.lazy(() =>
  z.strictObject({
    /** The metric's name (its type unless named). */
    metric: z.string(),
    type: z.string(),
    /** From 0 to 1. */
    score: z.number().min(0).max(1),
    threshold: z.number().min(0).max(1),
    passed: z.boolean(),
    /** Why the score is what it is (a g_eval metric: the grader's reasoning). */
    reason: z.string(),
  }),
);

/**
 * A faulted run against its baseline (the same case and repetition without the faults): whether the agent's answer
 * and tool effects came out the same, and what the recovery cost. The comparisons are null until both have ended.
 */
export const FaultReportSchema = z.lazy(() =>
  z.strictObject({
    /** The case's faults, as written. */
    faults: FaultsSchema,
    baseline_task_id: z.uuid({ version: "v4" }),
    /** What the run injected, in order (a fault due after the run ended is not among them). */
    injected: z.array(
      z.strictObject({
        fault: z.enum(["model_fault", "mcp_fault", "evict_after_step", "drop_client"]),
        kind: z.string(),
        call: z.number().int().nullable(),
        step: z.number().int().nullable(),
        server: z.string().nullable(),
        tool: z.string().nullable(),
      }),
    ),
    /** Both ended the same way (an error or not). */
    same_status: z.boolean().nullable(),
    /** The same response and structured output. */
    same_answer: z.boolean().nullable(),
    /** The same tool calls (names and arguments, in order) with the same results. */
    same_tool_effects: z.boolean().nullable(),
    /** What differed, one line each. */
    differences: z.array(z.string()),
    /** The faulted run less its baseline (negative where it cost less, e.g. it failed sooner); null until both ended. */
    recovery: z
      .strictObject({
        model_calls: z.number().int(),
        tokens: z.number().int(),
        cost_usd: z.number().nullable(),
        duration_ms: z.number().int().nullable(),
        /** The faulted run's calls cut short and tried again (its usage.recovery). */
        retried_calls: z.number().int().nonnegative(),
        retried_tokens: z.number().int().nonnegative(),
      })
      .nullable(),
    /**
     * drop_client: where the server dropped the run's clients, and what a client reconnecting from there got: every
     * later event, once and in order (gapless), through to the terminal event. Null for another fault.
     */
    client: z
      .strictObject({
        dropped_after_seq: z.number().int().nonnegative(),
        resumed_events: z.number().int().nonnegative(),
        gapless: z.boolean(),
      })
      .nullable(),
  }),
);
export type FaultReport = z.infer<typeof FaultReportSchema>;

/** One run of a case: its task, and once graded, its verdict and each metric's result. */
export const EvaluationRunSchema = z.lazy(() =>
  z.strictObject({
    case: z.string(),
    /** 1 to repeat. */
    repetition: z.number().int().positive(),
    /** A faulted case's run without its faults, which the faulted run is compared with; not in the pass rates. */
    baseline: z.boolean(),
    task_id: z.uuid({ version: "v4" }),
    status: z.enum(RUN_STATUSES),
    /** Null until graded. */
    passed: z.boolean().nullable(),
    /** Why the run failed ("max_turns limit reached", the run's error, the metrics below threshold); else null. */
    reason: z.string().nullable(),
    metrics: z.array(MetricResultSchema),
    num_turns: z.number().int().nonnegative().nullable(),
    duration_ms: z.number().int().nonnegative().nullable(),
    cost_usd: z.number().nonnegative().nullable(),
    /** A faulted run (not its baseline): the comparison with its baseline; else null. */
    fault: FaultReportSchema.nullable(),
  }),
);
export type EvaluationRun = z.infer<typeof EvaluationRunSchema>;

/** Minimum, mean, median and maximum of a metric's scores, and how many fall in each fifth of 0–1. */
export const ScoreDistributionSchema = z.lazy(() =>
  z.strictObject({
    min: z.number(),
    mean: z.number(),
    median: z.number(),
    max: z.number(),
    /** Counts of scores in [0, 0.2), [0.2, 0.4), [0.4, 0.6), [0.6, 0.8), [0.8, 1]. */
    histogram: z.array(z.number().int().nonnegative()).length(5),
  }),
);

/** Over the graded runs: pass rates per case and per metric, score distributions, cost and time. */
export const EvaluationSummarySchema = z.lazy(() =>
  z.strictObject({
    runs: z.number().int().nonnegative(),
    passed: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
    /** passed / runs; null before any run is graded. */
    pass_rate: z.number().min(0).max(1).nullable(),
    cases: z.array(
      z.strictObject({
        case: z.string(),
        runs: z.number().int().nonnegative(),
        passed: z.number().int().nonnegative(),
        pass_rate: z.number().min(0).max(1).nullable(),
      }),
    ),
    metrics: z.array(
      z.strictObject({
        metric: z.string(),
        type: z.string(),
        threshold: z.number(),
        runs: z.number().int().nonnegative(),
        passed: z.number().int().nonnegative(),
        pass_rate: z.number().min(0).max(1).nullable(),
        scores: ScoreDistributionSchema,
      }),
    ),
    /** The runs' model cost (USD, where the price table prices the model); null when none is priced. */
    cost_usd: z.number().nonnegative().nullable(),
    /** Tokens the runs used, and the grader's. */
    tokens: z.strictObject({
      runs: z.number().int().nonnegative(),
      grader_input: z.number().int().nonnegative(),
      grader_output: z.number().int().nonnegative(),
    }),
    /** Run time: the mean and longest run, and the evaluation's wall time so far (or in all, once completed). */
    duration_ms: z.strictObject({
      mean_run: z.number().nonnegative().nullable(),
      max_run: z.number().nonnegative().nullable(),
      wall: z.number().nonnegative(),
    }),
  }),
);
export type EvaluationSummary = z.infer<typeof EvaluationSummarySchema>;

/** The evaluation as its object returns it: what GET /v1/evaluations/:id shows, without its links. */
export const EvaluationViewSchema = z.lazy(() =>
  z.strictObject({
    id: z.uuid({ version: "v4" }),
    agent: z.string(),
    /** The version of a tenant's own agent every run used; null for an agent of the Worker. */
    agent_version: z.number().int().positive().nullable(),
    status: z.enum(EVALUATION_STATUSES),
    /** The case names or tags asked for; null: every case. */
    selection: z.array(z.string()).nullable(),
    repeat: z.number().int().positive(),
    /** Whether every graded run passed (every threshold met, no max_turns or failed run) — so far, while running. */
    passed: z.boolean(),
    progress: z.strictObject({
      total: z.number().int().nonnegative(),
      pending: z.number().int().nonnegative(),
      running: z.number().int().nonnegative(),
      graded: z.number().int().nonnegative(),
    }),
    summary: EvaluationSummarySchema,
    runs: z.array(EvaluationRunSchema),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
  }),
);
export type EvaluationView = z.infer<typeof EvaluationViewSchema>;

const nullableRate = () => z.number().min(0).max(1).nullable();

/** GET /v1/agents/:name/evaluations?compare=a,b: evaluation b against a, case by case and metric by metric. */
export const EvaluationComparisonSchema = z.lazy(() =>
  z.strictObject({
    a: z.uuid({ version: "v4" }),
    b: z.uuid({ version: "v4" }),
    pass_rate: z.strictObject({ a: nullableRate(), b: nullableRate(), delta: z.number().nullable() }),
    cases: z.array(
      z.strictObject({
        case: z.string(),
        /** The case's pass rate in each; null where the evaluation did not run it. */
        a: nullableRate(),
        b: nullableRate(),
        /** b − a, where both ran it. */
        delta: z.number().nullable(),
        /** improved / regressed (pass rate up / down), same, added (only in b), removed (only in a). */
        change: z.enum(["improved", "regressed", "same", "added", "removed"]),
        /** Each metric's mean score over the case's runs in each, and b − a. */
        metrics: z.array(
          z.strictObject({
            metric: z.string(),
            a: z.number().nullable(),
            b: z.number().nullable(),
            delta: z.number().nullable(),
          }),
        ),
      }),
    ),
  }),
);
export type EvaluationComparison = z.infer<typeof EvaluationComparisonSchema>;
