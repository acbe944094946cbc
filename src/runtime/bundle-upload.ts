// An ended run's bundle, uploaded to R2 from the alarm after the run (awaited in the run it would hold back the
// terminal event's delivery): the event log, final_summary.md with the tree's usage, the transcript, and seed 003's
// task.json, trace.json and checkpoints.json. A failed upload is tried again, backing off to an hour, for as long as
// R2 needs: the platform's own alarm retries end sooner.

import type { UsageRollup } from "../contracts/usage.ts";
import type { Redactor } from "../events/redaction.ts";
import { finalSummary } from "../run-bundle/final-summary.ts";
import { seedTask, traceTree } from "../run-bundle/trace.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import type { Checkpoint } from "./checkpoints.ts";
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
    const files = [
      { path: "task.json", content: json(seedTask(task)) },
      { path: "trace.json", content: json(traceTree(task, events.all(), events.forwarded())) },
      { path: "checkpoints.json", content: () => checkpointsJson(checkpoints.each(), (m) => redactor.value(m)) },
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
  yield* jsonArrayOf(items, (item) => JSON.stringify(item, null, 2));
}

/** jsonArray's layout around elements already written as JSON.stringify(element, null, 2) writes them. */
function* jsonArrayOf<T>(items: Iterable<T>, text: (item: T) => string): Iterable<string> {
  let first = true;
  for (const item of items) {
    // An element's own lines, indented one level as JSON.stringify indents an array's elements (a string value's
    // line breaks are escaped, so every raw line break here is the layout's).
    yield `${first ? "[\n" : ",\n"}  ${text(item).replaceAll("\n", "\n  ")}`;
    first = false;
  }
  yield first ? "[]\n" : "\n]\n";
}

/** Stands for a checkpoint's messages while the rest of it is written (checkpointsJson). */
const MESSAGES_PLACEHOLDER = "\u0000outpost:messages\u0000";
const MESSAGES_FIELD = `"messages": ${JSON.stringify(MESSAGES_PLACEHOLDER)}`;
/** A message of a checkpoint's state.messages, as JSON.stringify(checkpoint, null, 2) indents it, and the list's end. */
const MESSAGE_INDENT = "      ";
const MESSAGES_END = "\n    ]";

/**
 * checkpoints.json: jsonArray of the checkpoints, each with its conversation redacted (`redact`, given the list as
 * the API redacts it), the same text, but each message redacted and written once. Every checkpoint holds the
 * conversation up to it, so a run of n steps holds each message about n times: redacting and serializing them
 * anew for each checkpoint cost the square of a run's length in both (7 % of a bench task's instructions went to
 * this file). The checkpoints must share one conversation (CheckpointLog.each reads it once for all of them), so a
 * message is known by its place in it.
 */
export function checkpointsJson(
  checkpoints: Iterable<Checkpoint>,
  redact: (messages: Checkpoint["state"]["messages"]) => Checkpoint["state"]["messages"],
): Iterable<string> {
  const written: string[] = [];
  const messageText = (message: Checkpoint["state"]["messages"][number], at: number): string => {
    let text = written[at];
    if (text === undefined) {
      // A list of one, so that the walk sees each message at the depth it has in the list (its depth limit).
      text = `${MESSAGE_INDENT}${JSON.stringify(redact([message])[0], null, 2).replaceAll("\n", `\n${MESSAGE_INDENT}`)}`;
      written[at] = text;
    }
    return text;
  };
  return jsonArrayOf(checkpoints, (checkpoint) => {
    const { messages } = checkpoint.state;
    const rest = JSON.stringify(
      { ...checkpoint, state: { ...checkpoint.state, messages: MESSAGES_PLACEHOLDER } },
      null,
      2,
    );
    const at = rest.indexOf(MESSAGES_FIELD);
    // The placeholder is where the messages go, and only there: otherwise (a field that holds its text) it is written whole.
    if (at === -1 || rest.indexOf(MESSAGES_FIELD, at + 1) !== -1) {
      return JSON.stringify({ ...checkpoint, state: { ...checkpoint.state, messages: redact(messages) } }, null, 2);
    }
    const list = messages.length === 0 ? "[]" : `[\n${messages.map(messageText).join(",\n")}${MESSAGES_END}`;
    return `${rest.slice(0, at)}"messages": ${list}${rest.slice(at + MESSAGES_FIELD.length)}`;
  });
}
