// What keeps an evaluation from running forever: while its runs are under way, its object's alarm looks at each
// unfinished run's task, through the calls GET /v1/tasks/:id and POST /v1/tasks/:id/cancel make on the task's object.
// A task that has ended without its report reaching the evaluation (lost) is recorded from what it reads back; a task
// that waits for a person (an approval, a question: evaluation runs are unattended) or runs past the case's deadline
// is stopped: the run's failure is recorded first (running → stopping), then the task is canceled, then the run is
// ended and graded as failed with the reason. Each step is a check-and-set on the run's row, so a repeated alarm, an
// eviction between two steps, or the task's own late report records nothing twice.
import type { Env } from "../env.ts";
import { isTerminal, type TaskView } from "../tasks/task.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import { failedRun } from "./evaluation.ts";
import type { EvaluationStore, RunRecord } from "./evaluation-store.ts";

/**
 * How often the evaluation looks at its unfinished runs while none is due sooner: a lost report or a run waiting for
 * a person is noticed within this; each look is one read of each running task (at most MAX_PARALLEL_RUNS).
 */
export const WATCH_INTERVAL_MS = 30_000;

/** Why a run whose task waited for a person failed. */
export const WAITED_FOR_PERSON = "waited for a person; evaluation runs are unattended";

/** Why a run that ran past its case's deadline failed. */
export function timedOut(seconds: number): string {
  return `timed out after ${seconds} s`;
}

/** What the watch needs of the evaluation: its tenant (the tasks' objects are named with it) and the case deadline. */
export interface RunWatch {
  env: Pick<Env, "TASKS">;
  tenant: string;
  evaluationId: string;
  store: EvaluationStore;
  caseTimeoutSeconds: number;
}

/**
 * Looks at every running (or stopping) run's task once. Returns when to look again: the next case deadline or
 * WATCH_INTERVAL_MS from now, whichever is sooner; null when no run is under way.
 */
export async function watchRuns(watch: RunWatch): Promise<number | null> {
  const underWay = watch.store
    .runs()
    .filter((r) => r.status === "starting" || r.status === "running" || r.status === "stopping");
  if (underWay.length === 0) return null;
  let next = Date.now() + WATCH_INTERVAL_MS;
  for (const run of underWay) {
    if (run.status === "starting") continue; // startRuns' to start (or retry)
    try {
      const deadline = await watchRun(watch, run);
      if (deadline !== null) next = Math.min(next, deadline);
    } catch (error) {
      // The task's object could not be reached: looked at again next time. Not the error's text in the record.
      console.error(`evaluation ${watch.evaluationId}: watching task ${run.taskId} failed`, error);
    }
  }
  return next;
}

/** One run: records it, stops it, or returns its deadline (null when it needs no more looking at). */
async function watchRun(watch: RunWatch, run: RunRecord): Promise<number | null> {
  const stub = taskStubFor(watch.env, watch.tenant, run.taskId);
  if (run.status === "stopping") {
    await cancelTask(stub, watch, run);
    return null;
  }
  const task = await stub.get();
  if (!task) {
    // Deleted under the run (it existed when the run was marked running).
    watch.store.recordEnd(failedRun(run.taskId, "the run's task no longer exists"));
    return null;
  }
  if (isTerminal(task.status)) {
    // Ended, and its report never came (or is still on its way: whichever is recorded first, the other is ignored).
    const report = await stub.runReport();
    if (report) watch.store.recordEnd(report);
    return null;
  }
  if (task.status === "input_required") return stop(stub, watch, run, task, WAITED_FOR_PERSON);
  const deadline = Date.parse(task.created_at) + watch.caseTimeoutSeconds * 1000;
  if (Date.now() >= deadline) return stop(stub, watch, run, task, timedOut(watch.caseTimeoutSeconds));
  return deadline;
}

type TaskStub = ReturnType<typeof taskStubFor>;

/** Records the run's failure with what its task spent, then cancels the task: persisted before acting. */
async function stop(stub: TaskStub, watch: RunWatch, run: RunRecord, task: TaskView, reason: string): Promise<null> {
  // False when the task's report was recorded during the read above: the run has its result, nothing to stop.
  if (!watch.store.markStopping(failedRun(run.taskId, reason, task.usage))) return null;
  await cancelTask(stub, watch, run);
  return null;
}

/** POST /v1/tasks/:id/cancel's call; a task that has ended meanwhile (or is gone) needs no cancel. Then graded. */
async function cancelTask(stub: TaskStub, watch: RunWatch, run: RunRecord): Promise<void> {
  // Its refusals are task_not_found and task_already_finished: either way nothing is left to cancel.
  await stub.cancel();
  watch.store.stopped(run.seq);
}
