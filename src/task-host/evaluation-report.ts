// In a task that runs a case of an evaluation (its trigger {kind: "evaluation"}): the report of its end, with its
// ExecutionResult, to the evaluation's object, sent from the task's alarm until the evaluation takes it, as a child
// task reports its end to its parent (subagents.ts ParentReporter): the evaluation never polls its runs.
import { z } from "zod";
import type { Env } from "../env.ts";
import { evaluationStubFor, type RunReport } from "../evaluation-runs/evaluation.ts";
import { ReportBackoff } from "../lib/report-backoff.ts";
import { stateKey } from "../lib/state-key.ts";
import { isTerminal } from "../tasks/task.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";

/** Set once the evaluation has taken the report of this task's end. */
export const EVALUATION_REPORTED_KEY = stateKey("evaluation_reported", z.boolean());

export interface EvaluationReportDeps {
  env: Pick<Env, "EVALUATIONS">;
  state: Pick<TaskState, "get" | "put">;
  /** The object's task, or null when it holds none. */
  task: () => TaskRecord | null;
  /** The run's report once its task has ended (TaskHost.runReport, which the evaluation also reads back). */
  report: () => RunReport | null;
}

export class EvaluationReporter {
  private readonly deps: EvaluationReportDeps;
  private readonly backoff = new ReportBackoff();

  constructor(deps: EvaluationReportDeps) {
    this.deps = deps;
  }

  nextDueAt(): number | null {
    const task = this.deps.task();
    if (task?.trigger && "kind" in task.trigger && task.trigger.kind === "evaluation" && isTerminal(task.status)) {
      return this.deps.state.get(EVALUATION_REPORTED_KEY) ? null : this.backoff.dueAt();
    }
    return null;
  }

  async deliverDue(): Promise<void> {
    const due = this.nextDueAt();
    const task = this.deps.task();
    const report = this.deps.report();
    if (due === null || due > Date.now() || !task || !report) return;
    const trigger = task.trigger;
    if (!trigger || !("kind" in trigger) || trigger.kind !== "evaluation") return;
    try {
      await evaluationStubFor(this.deps.env, task.tenant, trigger.evaluation_id).runEnded(report);
    } catch (error) {
      this.backoff.failed();
      console.error("evaluation report failed; retrying", task.id, error instanceof Error ? error.message : error);
      return;
    }
    this.backoff.succeeded();
    this.deps.state.put(EVALUATION_REPORTED_KEY, true);
  }
}
