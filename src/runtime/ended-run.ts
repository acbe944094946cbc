// An ended run's two duties, each a timer of the task's ledger (src/runtime/timers.ts): its bundle's upload, from the
// alarm after the run (awaited in the run it would hold back the terminal event's delivery; a failed one is tried
// again), and, once its retention has run out, the deletion of everything the task has.
import { isTerminal } from "../tasks/task.ts";
import type { TaskRecord, TaskStore } from "../tasks/task-store.ts";
import type { BundleUpload } from "./bundle-upload.ts";
import type { TaskTimers } from "./timers.ts";

/** While a run is in flight its heartbeat comes this often (src/runtime/run-supervisor.ts); an upload waits as long. */
export const HEARTBEAT_MS = 30_000;

export interface EndedRunDeps {
  timers: TaskTimers;
  upload: BundleUpload;
  store: Pick<TaskStore, "get">;
  /** The run's spans go to the collector with the upload (src/telemetry/); absent when telemetry is off. */
  telemetry?: { runEnded(task: TaskRecord): Promise<void> } | null | undefined;
  /** Deletes everything the task has (storage and R2), leaving a tombstone. */
  expire: () => Promise<void>;
  /** Whether a run still unwinds in this instance (a canceled one): the upload waits until it has. */
  unwinding: () => boolean;
}

export class EndedRun {
  private readonly deps: EndedRunDeps;

  constructor(deps: EndedRunDeps) {
    this.deps = deps;
  }

  /** The run has ended: no more heartbeat, and its bundle goes up from the next alarm. */
  schedule(): void {
    this.deps.timers.clear("heartbeat");
    this.deps.timers.set("bundle_upload", Date.now());
  }

  /** The bundle_upload timer: uploads the bundle, then sets the expiry; a failed upload sets its own retry. */
  async upload(): Promise<void> {
    const { timers, store } = this.deps;
    const task = store.get();
    if (!task || !isTerminal(task.status)) return;
    if (this.deps.unwinding()) {
      timers.set("bundle_upload", Date.now() + HEARTBEAT_MS);
      return;
    }
    if (!task.bundleFlushed) {
      const [retryAt] = await Promise.all([this.deps.upload.attempt(task), this.deps.telemetry?.runEnded(task)]);
      if (retryAt !== null) {
        timers.set("bundle_upload", retryAt);
        return;
      }
    }
    const expiresAt = store.get()?.expires_at;
    if (expiresAt) timers.set("expiry", Date.parse(expiresAt));
  }

  /** Uploads the bundle now (a reader of an ended run's bundle gets all of it); throws when the blob store does. */
  flush(task: TaskRecord): Promise<void> {
    return this.deps.upload.flush(task);
  }

  /** The expiry timer: deletes the task once its retention has run out (src/tasks/expiry.ts). */
  async expiry(): Promise<void> {
    const expiresAt = this.deps.store.get()?.expires_at;
    if (!expiresAt) return;
    const due = Date.parse(expiresAt);
    if (Date.now() >= due) await this.deps.expire();
    else this.deps.timers.set("expiry", due);
  }
}
