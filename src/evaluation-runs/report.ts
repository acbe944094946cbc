// What an evaluation's runs add up to: the summary (pass rates per case and per metric, score distributions, cost,
// tokens and time), the report written to the blob store when the evaluation completes (JSON, and Markdown for a
// person or a CI job's log), and the comparison of two evaluations of one agent, case by case and metric by metric
// (GET /v1/agents/:name/evaluations?compare=a,b). Pure functions of the runs as the object stores them.
import type {
  EvaluationComparison,
  EvaluationRun,
  EvaluationSummary,
  EvaluationView,
  FaultReport,
} from "./evaluation.ts";
import type { RunRecord } from "./evaluation-store.ts";

/** A run as the view shows it; a faulted run with its comparison to its baseline. */
export function runView(run: RunRecord, fault: FaultReport | null = null): EvaluationRun {
  return {
    case: run.caseName,
    repetition: run.repetition,
    baseline: run.baseline,
    task_id: run.taskId,
    // A run being stopped is still running until its task has been canceled.
    status: run.status === "stopping" ? "running" : run.status,
    passed: run.grade?.passed ?? null,
    reason: run.grade?.reason ?? null,
    metrics: run.grade?.metrics ?? [],
    num_turns: run.result?.num_turns ?? null,
    duration_ms: run.durationMs,
    cost_usd: run.usage?.total_cost_usd ?? null,
    fault,
  };
}

const rate = (passed: number, runs: number): number | null => (runs === 0 ? null : passed / runs);

/**
 * The summary over the graded runs; `wallMs` is the evaluation's time so far (or in all). A faulted case's baseline
 * runs count in the cost, tokens and time, not in the pass rates.
 */
export function summarize(runs: readonly RunRecord[], wallMs: number): EvaluationSummary {
  const graded = runs.filter((r) => r.status === "graded" && r.grade !== null && !r.baseline);
  const passed = graded.filter((r) => r.grade?.passed).length;
  const cases = new Map<string, { runs: number; passed: number }>();
  for (const run of runs) {
    if (run.baseline) continue;
    const entry = cases.get(run.caseName) ?? { runs: 0, passed: 0 };
    if (run.grade) {
      entry.runs++;
      if (run.grade.passed) entry.passed++;
    }
    cases.set(run.caseName, entry);
  }
  const metrics = new Map<string, { type: string; threshold: number; scores: number[]; passed: number }>();
  for (const run of graded) {
    for (const m of run.grade?.metrics ?? []) {
      const entry = metrics.get(m.metric) ?? { type: m.type, threshold: m.threshold, scores: [], passed: 0 };
      entry.scores.push(m.score);
      if (m.passed) entry.passed++;
      metrics.set(m.metric, entry);
    }
  }
  const costs = runs.flatMap((r) => (r.usage?.total_cost_usd == null ? [] : [r.usage.total_cost_usd]));
  const durations = runs.flatMap((r) => (r.durationMs === null ? [] : [r.durationMs]));
  return {
    runs: graded.length,
    passed,
    failed: graded.length - passed,
    pass_rate: rate(passed, graded.length),
    cases: [...cases].map(([name, c]) => ({
      case: name,
      runs: c.runs,
      passed: c.passed,
      pass_rate: rate(c.passed, c.runs),
    })),
    metrics: [...metrics].map(([name, m]) => ({
      metric: name,
      type: m.type,
      threshold: m.threshold,
      runs: m.scores.length,
      passed: m.passed,
      pass_rate: rate(m.passed, m.scores.length),
      scores: distribution(m.scores),
    })),
    cost_usd:
      costs.length === 0
        ? null
        : round(
            costs.reduce((a, b) => a + b, 0),
            6,
          ),
    tokens: {
      runs: runs.reduce((sum, r) => sum + (r.usage?.total_tokens ?? 0), 0),
      grader_input: graded.reduce((sum, r) => sum + (r.grade?.grader_usage.input_tokens ?? 0), 0),
      grader_output: graded.reduce((sum, r) => sum + (r.grade?.grader_usage.output_tokens ?? 0), 0),
    },
    duration_ms: {
      mean_run: durations.length === 0 ? null : Math.round(durations.reduce((a, b) => a + b, 0) / durations.length),
      max_run: durations.length === 0 ? null : Math.max(...durations),
      wall: Math.max(0, Math.round(wallMs)),
    },
  };
}

function distribution(scores: readonly number[]): EvaluationSummary["metrics"][number]["scores"] {
  const sorted = [...scores].sort((a, b) => a - b);
  const n = sorted.length;
  const at = (i: number) => sorted[i] ?? 0;
  const histogram = [0, 0, 0, 0, 0];
  for (const s of sorted) {
    const bucket = Math.min(4, Math.floor(s * 5));
    histogram[bucket] = (histogram[bucket] ?? 0) + 1;
  }
  return {
    min: round(at(0)),
    mean: round(n === 0 ? 0 : sorted.reduce((a, b) => a + b, 0) / n),
    median: round(n === 0 ? 0 : n % 2 === 1 ? at((n - 1) / 2) : (at(n / 2 - 1) + at(n / 2)) / 2),
    max: round(at(n - 1)),
    histogram,
  };
}

function round(value: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

const percent = (value: number | null) => (value === null ? "–" : `${Math.round(value * 1000) / 10}%`);

/** The Markdown report: the verdict, the pass rates, the metrics' distributions, cost and time, the failed runs. */
export function markdownReport(view: EvaluationView): string {
  const s = view.summary;
  const lines = [
    `# Evaluation ${view.id}`,
    "",
    `Agent **${view.agent}**${view.agent_version === null ? "" : ` (version ${view.agent_version})`}, ` +
      `${view.progress.total} runs (${s.cases.length} cases × ${view.repeat}), ${view.status}: ` +
      `**${view.passed ? "passed" : "failed"}**, ${s.passed} of ${s.runs} runs passed (${percent(s.pass_rate)}).`,
    "",
    "## Cases",
    "",
    "| case | runs | passed | pass rate |",
    "| --- | --- | --- | --- |",
    ...s.cases.map((c) => `| ${cell(c.case)} | ${c.runs} | ${c.passed} | ${percent(c.pass_rate)} |`),
    "",
    "## Metrics",
    "",
    "| metric | type | threshold | pass rate | min | mean | median | max |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...s.metrics.map(
      (m) =>
        `| ${cell(m.metric)} | ${m.type} | ${m.threshold} | ${percent(m.pass_rate)} | ${m.scores.min} | ${m.scores.mean} | ${m.scores.median} | ${m.scores.max} |`,
    ),
    "",
    "## Cost and time",
    "",
    `- cost: ${s.cost_usd === null ? "not priced" : `$${s.cost_usd}`}; tokens: ${s.tokens.runs} (runs), ` +
      `${s.tokens.grader_input + s.tokens.grader_output} (grader)`,
    `- run time: mean ${s.duration_ms.mean_run ?? "–"} ms, longest ${s.duration_ms.max_run ?? "–"} ms; wall ${s.duration_ms.wall} ms`,
  ];
  const faulted = view.runs.filter((r) => r.fault !== null);
  if (faulted.length > 0) {
    lines.push(
      "",
      "## Faults",
      "",
      "| case | run | injected | same status | same answer | same tool effects | extra model calls | extra tokens | extra time |",
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
      ...faulted.map((run) => {
        const f = run.fault as FaultReport;
        const yes = (v: boolean | null) => (v === null ? "–" : v ? "yes" : "**no**");
        const injected = f.injected.map((i) => `${i.fault} ${i.kind}`).join(", ") || "none";
        return (
          `| ${cell(run.case)} | #${run.repetition} | ${cell(injected)} | ${yes(f.same_status)} | ${yes(f.same_answer)} | ` +
          `${yes(f.same_tool_effects)} | ${f.recovery?.model_calls ?? "–"} | ${f.recovery?.tokens ?? "–"} | ` +
          `${f.recovery?.duration_ms ?? "–"} ms |`
        );
      }),
    );
    for (const run of faulted) {
      for (const d of run.fault?.differences ?? []) lines.push(`- ${cell(run.case)} #${run.repetition}: ${cell(d)}`);
    }
  }
  const failed = view.runs.filter((r) => r.passed === false && !r.baseline);
  if (failed.length > 0) {
    lines.push("", "## Failed runs", "");
    for (const run of failed)
      lines.push(`- ${cell(run.case)} #${run.repetition} (task ${run.task_id}): ${cell(run.reason ?? "")}`);
  }
  return `${lines.join("\n")}\n`;
}

/** Text inside a table cell or a list item: on one line, no column breaks. */
function cell(text: string): string {
  return text.replace(/\s+/g, " ").replaceAll("|", "\\|");
}

type CaseDifference = EvaluationComparison["cases"][number];

/** Evaluation b against evaluation a: per case, its pass rate and each metric's mean score, and the differences. */
export function compare(a: EvaluationView, b: EvaluationView): EvaluationComparison {
  const names = [...new Set([...a.summary.cases.map((c) => c.case), ...b.summary.cases.map((c) => c.case)])];
  const diff = (x: number | null, y: number | null) => (x === null || y === null ? null : round(y - x));
  return {
    a: a.id,
    b: b.id,
    pass_rate: {
      a: a.summary.pass_rate,
      b: b.summary.pass_rate,
      delta: diff(a.summary.pass_rate, b.summary.pass_rate),
    },
    cases: names.map((name): CaseDifference => {
      const ca = a.summary.cases.find((c) => c.case === name);
      const cb = b.summary.cases.find((c) => c.case === name);
      const ra = ca?.pass_rate ?? null;
      const rb = cb?.pass_rate ?? null;
      const delta = diff(ra, rb);
      const ma = meanScores(a, name);
      const mb = meanScores(b, name);
      const metricNames = [...new Set([...ma.keys(), ...mb.keys()])];
      return {
        case: name,
        a: ra,
        b: rb,
        delta,
        change: !ca
          ? "added"
          : !cb
            ? "removed"
            : delta === null || delta === 0
              ? "same"
              : delta > 0
                ? "improved"
                : "regressed",
        metrics: metricNames.map((metric) => {
          const sa = ma.get(metric) ?? null;
          const sb = mb.get(metric) ?? null;
          return { metric, a: sa, b: sb, delta: diff(sa, sb) };
        }),
      };
    }),
  };
}

/** Each metric's mean score over a case's graded runs. */
function meanScores(view: EvaluationView, caseName: string): Map<string, number> {
  const scores = new Map<string, number[]>();
  for (const run of view.runs) {
    if (run.case !== caseName || run.baseline) continue;
    for (const m of run.metrics) scores.set(m.metric, [...(scores.get(m.metric) ?? []), m.score]);
  }
  return new Map([...scores].map(([metric, list]) => [metric, round(list.reduce((x, y) => x + y, 0) / list.length)]));
}
