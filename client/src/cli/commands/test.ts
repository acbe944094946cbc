// `outpost test <agent>`: runs the agent's test cases as an evaluation (POST /v1/agents/:name/evaluations) and shows
// each run as it is graded, then the metrics' pass rates; exits 1 when a run failed (a metric below its threshold,
// max_turns reached, a failed run), so a CI pipeline fails with it. The evaluation is read every half second: it has
// no event stream of its own. A faulted case's run is shown once it can be compared with its run without the faults
// (its baseline, which is not shown on its own): whether the answer and tool effects came out the same, and the cost.
import type { Evaluation, Schemas } from "../../index.ts";
import type { Context } from "../context.ts";
import { EXIT, type ExitCode } from "../exit-codes.ts";
import { formatCost, short, table } from "../output.ts";
import { createSpinner } from "../spinner.ts";

export interface TestOptions {
  /** Case names or tags; all cases when empty. */
  case: string[];
  repeat?: number;
}

/** How often the evaluation is read while it runs. */
const POLL_MS = 500;

type Run = Evaluation["runs"][number];

export async function testCommand(ctx: Context, agent: string, options: TestOptions): Promise<ExitCode> {
  const { client, out } = ctx;
  const body: Schemas["CreateEvaluationBody"] = {
    ...(options.case.length > 0 ? { cases: options.case } : {}),
    ...(options.repeat !== undefined ? { repeat: options.repeat } : {}),
  };
  let evaluation = await client.evaluations.start(agent, body);
  if (!out.json) out.note(out.styleErr("dim", `evaluation ${evaluation.id}: ${evaluation.progress.total} runs`));
  const shown = new Set<string>();
  const spinner = createSpinner(out.live);
  try {
    for (;;) {
      for (const run of evaluation.runs) {
        const key = `${run.case}#${run.repetition}`;
        if (run.baseline || run.status !== "graded" || shown.has(key)) continue;
        if (run.fault?.same_status === null && evaluation.status !== "completed") continue;
        shown.add(key);
        spinner.stop();
        if (out.json) out.jsonLine({ type: "run", evaluation_id: evaluation.id, ...run });
        else for (const line of runLines(ctx, run, evaluation.repeat)) out.line(line);
      }
      if (evaluation.status === "completed") break;
      const { graded, total } = evaluation.progress;
      spinner.start(`${graded} of ${total} runs graded`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      evaluation = await client.evaluations.get(evaluation.id);
    }
  } finally {
    spinner.stop();
  }
  if (out.json) out.jsonLine({ type: "evaluation", ...evaluation });
  else for (const line of summaryLines(ctx, evaluation)) out.line(line);
  return evaluation.passed ? EXIT.ok : EXIT.taskFailed;
}

/** A graded run: ✓ or ✗, the case (and repetition), and for a failure why, then each metric that failed. */
function runLines(ctx: Context, run: Run, repeat: number): string[] {
  const { out } = ctx;
  const name = repeat > 1 ? `${run.case} #${run.repetition}` : run.case;
  const lines = run.passed
    ? [`${out.style("green", "✓")} ${name} ${out.style("dim", `(${run.metrics.length} metrics)`)}`]
    : [`${out.style("red", "✗")} ${name}: ${short(run.reason ?? "failed", 160)}`];
  for (const metric of run.metrics) {
    if (!metric.passed)
      lines.push(
        out.style("dim", `    ${metric.metric} ${metric.score} < ${metric.threshold}: ${short(metric.reason, 140)}`),
      );
  }
  if (run.fault) lines.push(...faultLines(ctx, run.fault));
  return lines;
}

/** A faulted run against its baseline: what was injected, what came out the same, and what the recovery cost. */
function faultLines(ctx: Context, fault: NonNullable<Run["fault"]>): string[] {
  const { out } = ctx;
  const injected = fault.injected.map((f) => `${f.fault} ${f.kind}`).join(", ") || "no fault injected";
  const verdict =
    fault.same_status && fault.same_answer && fault.same_tool_effects
      ? "same answer and tool effects as without it"
      : "not the same as without it";
  const r = fault.recovery;
  const signed = (n: number) => (n > 0 ? `+${n}` : String(n));
  const cost = r
    ? `; ${signed(r.model_calls)} model calls, ${signed(r.tokens)} tokens` +
      (r.duration_ms === null ? "" : `, ${signed(r.duration_ms)} ms`)
    : "";
  return [
    out.style("dim", `    fault: ${injected}: ${verdict}${cost}`),
    ...fault.differences.map((d) => out.style("dim", `    ${short(d, 160)}`)),
  ];
}

/** The metrics' table, then the verdict line: passed runs, cost, the evaluation's id. */
function summaryLines(ctx: Context, evaluation: Evaluation): string[] {
  const { out } = ctx;
  const s = evaluation.summary;
  const percent = (rate: number | null) => (rate === null ? "–" : `${Math.round(rate * 1000) / 10}%`);
  const rows = s.metrics.map((m) => [
    m.metric,
    m.type,
    String(m.threshold),
    percent(m.pass_rate),
    String(m.scores.mean),
  ]);
  const lines: string[] = [];
  if (rows.length > 0) {
    const [head, ...body] = table([["METRIC", "TYPE", "THRESHOLD", "PASSED", "MEAN"], ...rows]);
    lines.push("", out.style("bold", head ?? ""), ...body);
  }
  const verdict = evaluation.passed ? out.style("green", "✓ passed") : out.style("red", "✗ failed");
  lines.push(
    "",
    `${verdict} · ${s.passed} of ${s.runs} runs passed · ${formatCost(s.cost_usd)} · evaluation ${evaluation.id}`,
  );
  return lines;
}
