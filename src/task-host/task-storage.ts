// A task object's one storage, built from its SQLite, its blobs and its task's id: the task's row and state, its
// event log, conversation, step journal and checkpoints, run bundle and transcript, workspace, the model calls in
// flight, a session's turns, and the ledger of timers. Each part is the only writer of its tables and remembers what
// it read; forget() makes them all read again.
import type { BlobStore } from "../blob-store/blob-store.ts";
import type { RetentionPolicy } from "../config/retention.ts";
import { EventLog } from "../events/event-log.ts";
import type { Redactor } from "../events/redaction.ts";
import { RunBundle, runPrefix } from "../run-bundle/run-bundle.ts";
import { Transcript } from "../run-bundle/transcript.ts";
import { CheckpointLog } from "../runtime/checkpoints.ts";
import { MessageLog } from "../runtime/conversation.ts";
import { PendingCalls } from "../runtime/pending-calls.ts";
import type { TaskStorage } from "../runtime/run-runtime.ts";
import { StepJournal } from "../runtime/step-journal.ts";
import type { TaskTimerKind, TaskTimers } from "../runtime/timers.ts";
import { TurnLog } from "../sessions/turns.ts";
import { hasSchema, MIGRATIONS, migrate, TIMERS_VERSION } from "../storage/migrations.ts";
import { TimerLedger } from "../storage/timer-ledger.ts";
import { expireTask, hasTombstone, readTombstone, type Tombstone } from "../tasks/expiry.ts";
import { TaskState } from "../tasks/task-state.ts";
import { type TaskRecord, TaskStore } from "../tasks/task-store.ts";
import { Workspace, workspacePrefix } from "../workspace/workspace.ts";

export interface ObjectStorage extends TaskStorage {
  /** Whether the object holds a task or a session: its storage has a schema (an unknown id's object writes nothing). */
  holds(): boolean;
  /** Storage from an older deploy kept one alarm for the duty its status implied (src/runtime/timers.ts). */
  readonly fromBeforeTimers: boolean;
  /** Makes the storage ready for a new task: false when the object's task has expired (its tombstone holds the id). */
  open(): boolean;
  /** When the task expired (seed 003 retention), or null if it did not (unknown or still kept). */
  tombstone(): Tombstone | null;
  /**
   * Retention has run out: the task's blobs, then everything it stored but a tombstone (src/tasks/expiry.ts). `unlist`
   * takes it out of the tenant's listings first: a failure there fails the duty, which tries the whole expiry again.
   */
  expire(task: TaskRecord, unlist: () => Promise<void>): Promise<void>;
  /** What the object does on its own schedule, one timer per duty (src/runtime/timers.ts); its alarm is the earliest. */
  timers: TaskTimers;
  /** A session's turns (src/sessions/): unused by a task. */
  turns: TurnLog;
  /** Storage may differ from what the parts remember (a rolled-back transaction, an expiry): they read it again. */
  forget(): void;
}

export interface StorageDeps {
  storage: DurableObjectStorage;
  blobs: BlobStore;
  redactor: Redactor;
  retention: () => RetentionPolicy;
  /** What the object holds, or null (before its task is created, after it has expired). */
  record: () => TaskRecord | null;
}

export function openTaskStorage(deps: StorageDeps): ObjectStorage {
  const { storage, blobs, redactor, record } = deps;
  const sql = storage.sql;
  // An object that holds a task brings its storage up to the code's schema before anything reads it.
  let ready = hasSchema(sql);
  let fromBeforeTimers = false;
  if (ready)
    migrate(storage, MIGRATIONS, undefined, (version) => {
      fromBeforeTimers ||= version === TIMERS_VERSION;
    });
  const requireRecord = () => {
    const task = record();
    if (!task) throw new Error("This object holds no task.");
    return task;
  };
  const taskId = () => requireRecord().id;
  const transaction = <T>(fn: () => T): T => storage.transactionSync(fn);
  const store = new TaskStore(sql, deps.retention, redactor);
  const events = new EventLog(
    sql,
    () => {
      const task = requireRecord();
      return { runId: task.id, traceId: task.traceId, rootSpanId: task.rootSpanId };
    },
    () => ({ redactor, mode: record()?.redaction_mode ?? "full" }),
  );
  const conversation = new MessageLog(sql);
  const state = new TaskState(sql);
  const pendingCalls = new PendingCalls(sql);
  const timers = new TimerLedger<TaskTimerKind>(sql, storage);
  const turns = new TurnLog(sql);
  const knownEmpty = () => {
    events.knownEmpty();
    state.knownEmpty();
    conversation.knownEmpty();
    pendingCalls.knownEmpty();
    timers.knownEmpty();
  };
  const forget = () => {
    store.invalidate();
    events.invalidate();
    conversation.invalidate();
    state.invalidate();
    turns.invalidate();
    timers.invalidate();
  };
  return {
    holds: () => ready,
    fromBeforeTimers,
    open: () => {
      if (ready) return true;
      if (hasTombstone(sql)) return false;
      // New tables hold nothing: what reads them back for the run (the log's last number, the state's keys, the
      // conversation's count, calls an earlier instance left) knows so without a statement each.
      migrate(storage, MIGRATIONS, knownEmpty);
      ready = true;
      return true;
    },
    tombstone: () => (ready ? null : readTombstone(sql)),
    expire: async (task, unlist) => {
      await unlist();
      await expireTask({
        taskId: task.id,
        bucket: blobs,
        prefixes: [runPrefix(task.id), workspacePrefix(task.id)],
        storage,
        forget: () => {
          ready = false;
          forget();
        },
      });
    },
    store,
    events,
    conversation,
    state,
    pendingCalls,
    timers,
    turns,
    journal: new StepJournal(sql, blobs, () => `${runPrefix(taskId())}.journal/`),
    checkpoints: new CheckpointLog(sql, conversation, taskId),
    bundle: new RunBundle(sql, blobs, taskId, (text) => redactor.text(text), transaction),
    transcript: new Transcript(sql),
    workspace: new Workspace(sql, blobs, () => workspacePrefix(taskId()), transaction),
    forget,
  };
}
