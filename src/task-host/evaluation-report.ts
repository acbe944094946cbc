// In a task that runs a case of an evaluation (its trigger {kind: "evaluation"}): the report of its end, with its
// ExecutionResult, to the evaluation's object, sent from the task's alarm until the evaluation takes it, as a child
// task reports its end to its parent (subagents.ts ParentReporter): the evaluation never polls its runs.
import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { Env } from "../env.ts";
import { evaluationStubFor, type InjectedFault, runReport } from "../evaluation-runs/evaluation.ts";
import { isTerminal } from "../tasks/task.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { ReportBackoff } from "./report-backoff.ts";

const REPORTED_KEY = "evaluation_reported";

export interface EvaluationReportDeps {
  env: Pick<Env, "EVALUATIONS">;
  state: Pick<TaskState, "get" | "put">;
  /** The object's task, or null when it holds none. */
  task: () => TaskRecord | null;
  /** The task's ExecutionResult once it has ended (redacted, as POST /v1/agents/:name/invoke answers it). */
  executionResult: () => ExecutionResult | null;
  /** The faults the run injected, for a task that asked for faults; else undefined. */
  injectedFaults: () => InjectedFault[] | undefined;
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
      return this.deps.state.get<boolean>(REPORTED_KEY) ? null : this.backoff.dueAt();
    }
    return null;
  }

  async deliverDue(): Promise<void> {
    const due = this.nextDueAt();
    const task = this.deps.task();
    const result = this.deps.executionResult();
    if (due === null || due > Date.now() || !task || !result) return;
    const trigger = task.trigger;
    if (!trigger || !("kind" in trigger) || trigger.kind !== "evaluation") return;
    const injected = this.deps.injectedFaults();
    try {
      await evaluationStubFor(this.deps.env, task.tenant, trigger.evaluation_id).runEnded(
        runReport(task, result, injected),
      );
    } catch (error) {
      this.backoff.failed();
      console.error("evaluation report failed; retrying", task.id, error instanceof Error ? error.message : error);
      return;
    }
    this.backoff.succeeded();
    this.deps.state.put(REPORTED_KEY, true);
  }
}
