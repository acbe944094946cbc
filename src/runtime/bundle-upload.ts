// An ended run's bundle, uploaded to R2 from the alarm after the run (awaited in the run it would hold back the
// terminal event's delivery): the event log, final_summary.md with the tree's usage, the transcript, and seed 003's
// task.json, trace.json and checkpoints.json. A failed upload is tried again, backing off to an hour, for as long as
// R2 needs: the platform's own alarm retries end sooner.

import type { UsageRollup } from "../contracts/usage.ts";
import type { Redactor } from "../events/redaction.ts";
import { finalSummary } from "../run-bundle/final-summary.ts";
import { seedTask, traceTree } from "../run-bundle/trace.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import type { TaskStorage } from "./run-runtime.ts";

/** A failed upload is retried after this, doubling up to MAX_UPLOAD_RETRY_MS, for as long as it takes. */
const UPLOAD_RETRY_MS = 60_000;
const MAX_UPLOAD_RETRY_MS = 60 * 60_000;

export interface BundleUploadDeps
  extends Pick<TaskStorage, "bundle" | "events" | "transcript" | "store" | "checkpoints"> {
  redactor: Pick<Redactor, "value">;
  /** The task's usage with its sub-agents' (null when it delegated nothing): final_summary.md shows it. */
  usageRollup?: () => UsageRollup | null;
}

export class BundleUpload {
  private readonly deps: BundleUploadDeps;
  /** Consecutive failed uploads in this instance, for the backoff. */
  private failures = 0;

  constructor(deps: BundleUploadDeps) {
    this.deps = deps;
  }

  /** Uploads the bundle; on failure, returns when to try again (null once it is uploaded). */
  async attempt(task: TaskRecord): Promise<number | null> {
    try {
      await this.flush(task);
      this.failures = 0;
      return null;
    } catch (error) {
      this.failures++;
      const delay = Math.min(UPLOAD_RETRY_MS * 2 ** (this.failures - 1), MAX_UPLOAD_RETRY_MS);
      console.error("bundle upload failed; retrying", task.id, error instanceof Error ? error.message : error);
      return Date.now() + delay;
    }
  }

  /** Writes the bundle to the blob store and marks it uploaded; throws when the store does. */
  async flush(task: TaskRecord): Promise<void> {
    const { bundle, events, transcript, store, checkpoints, redactor } = this.deps;
    // The record may be older than the storage: an alarm that awaited its deliveries first can find that a reader
    // has flushed the bundle meanwhile.
    if (store.get()?.bundleFlushed) return;
    // Seed 003's files: the task, its trace, and its checkpoints with their conversations redacted, as the API shows
    // them. The checkpoints are one file, not seed 003's one per checkpoint: an R2 write per checkpoint would more
    // than double what a run's upload costs. Each checkpoint holds the conversation up to it, so the file is made a
    // checkpoint at a time as the archive is written, never whole.
    const saved = function* () {
      for (const checkpoint of checkpoints.each()) {
        yield { ...checkpoint, state: { ...checkpoint.state, messages: redactor.value(checkpoint.state.messages) } };
      }
    };
    const files = [
      { path: "task.json", content: json(seedTask(task)) },
      { path: "trace.json", content: json(traceTree(task, events.all(), events.forwarded())) },
      { path: "checkpoints.json", content: () => jsonArray(saved()) },
    ];
    const summary = finalSummary(task, this.deps.usageRollup?.() ?? null);
    await bundle.flush({ events, summary, transcript: transcript.render(), files }, () => store.markBundleFlushed());
  }
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** json() of an array, an element a piece: the same text, made one element at a time. */
export function* jsonArray(items: Iterable<unknown>): Iterable<string> {
  let first = true;
  for (const item of items) {
    // An element's own lines, indented one level as JSON.stringify indents an array's elements (a string value's
    // line breaks are escaped, so every raw line break here is the layout's).
    yield `${first ? "[\n" : ",\n"}  ${JSON.stringify(item, null, 2).replaceAll("\n", "\n  ")}`;
    first = false;
  }
  yield first ? "[]\n" : "\n]\n";
}
