// A task's (or session's) entry in its tenant's directory (src/tenants/directory.ts), reported from the object's
// alarm like a callback: whenever the status the API shows, or what the task waits for (`waiting_for`: a wait on
// the model provider starting or ending, status unchanged), has changed since the last report, the next alarm sends
// the entry as it is then. Reports are at least the interval apart (REPORT_INTERVAL_MS unless OUTPOST_DIRECTORY_REPORT_MS
// says), the first that long after the creation, so
// a run that changes status quickly costs one report, not one per change (a run shorter than that, only the report of
// its end), and the directory lags the task by at most that much; but the end of a run is reported at once, since
// nothing follows it to wait for (a short task's last report then goes in the alarm that uploads its bundle, not in
// one of its own a second later). A task that must be found through the directory at once (an A2A context's) is
// reported as it is created. A failed report is tried again with a backoff; what was reported last is stored, so an
// evicted object reports what it has not yet.

import { z } from "zod";
import { stateKey } from "../lib/state-key.ts";
import type { TaskState } from "../tasks/task-state.ts";
import type { DirectoryEntry, DirectoryReport } from "../tenants/directory.ts";

/** The most the directory lags a task's status by (when the tenant's object answers), unless the operator says. */
export const REPORT_INTERVAL_MS = 1_000;
const MAX_RETRY_MS = 5 * 60_000;

/** The report interval, ms: OUTPOST_DIRECTORY_REPORT_MS when it is a whole number from 50 to 60000, else the default. */
export function reportIntervalMs(env: { OUTPOST_DIRECTORY_REPORT_MS?: string | undefined }): number {
  const raw = env.OUTPOST_DIRECTORY_REPORT_MS?.trim();
  const value = Number(raw);
  return raw && Number.isInteger(value) && value >= 50 && value <= 60_000 ? value : REPORT_INTERVAL_MS;
}

/** What the last report said that changes over the task's life, and when it was sent (ms since the epoch). */
const REPORTED_KEY = stateKey(
  "directory_reported",
  z.lazy(() => z.object({ fingerprint: z.string(), at: z.number() })),
);

export interface DirectoryReportDeps {
  state: Pick<TaskState, "get" | "put">;
  /** The entry as the object's task or session is now; null when the object holds none. */
  entry: () => DirectoryEntry | null;
  /** The task's newest event number: reports carry it, so the directory never takes an older one over a newer. */
  version: () => number;
  send: (report: DirectoryReport) => Promise<void>;
  /** The least time between two reports, ms (reportIntervalMs); REPORT_INTERVAL_MS unless given. */
  intervalMs?: number;
}

export class DirectoryReporter {
  private readonly deps: DirectoryReportDeps;
  /** Consecutive failed reports in this instance, and when the next may be tried. */
  private failures = 0;
  private retryAt = 0;
  private readonly intervalMs: number;

  constructor(deps: DirectoryReportDeps) {
    this.deps = deps;
    this.intervalMs = deps.intervalMs ?? REPORT_INTERVAL_MS;
  }

  /** When the next report is due (ms since the epoch), or null when the directory is up to date. */
  nextDueAt(): number | null {
    const entry = this.deps.entry();
    if (!entry) return null;
    const reported = this.deps.state.get(REPORTED_KEY);
    if (reported?.fingerprint === fingerprint(entry)) return null;
    const ended = entry.ended_at === null ? Number.NaN : Date.parse(entry.ended_at);
    // The first report waits out the interval from the creation as later ones do from the last report: a run that
    // ends within it is reported once, at its end.
    const since = reported?.at ?? Date.parse(entry.created_at);
    const due = Number.isNaN(ended) ? since + this.intervalMs : ended;
    return Math.max(due, this.retryAt);
  }

  /** Sends the entry if a report is due. Called from the alarm; safe to repeat; never throws. */
  async deliverDue(): Promise<void> {
    const due = this.nextDueAt();
    if (due === null || due > Date.now()) return;
    await this.deliver();
  }

  /**
   * Sends the entry now, whatever the interval: for a task that a later request finds through the directory, so it
   * must be listed before its creation is answered (an A2A context's tasks). Never throws: a failed report is left to
   * the alarm, which tries again as for any other.
   */
  async deliverNow(): Promise<void> {
    if (this.nextDueAt() === null) return;
    await this.deliver();
  }

  private async deliver(): Promise<void> {
    const entry = this.deps.entry();
    if (!entry) return;
    try {
      await this.deps.send({ entry, version: this.deps.version() });
    } catch (error) {
      this.failures++;
      this.retryAt = Date.now() + Math.min(this.intervalMs * 2 ** this.failures, MAX_RETRY_MS);
      console.error("directory report failed; retrying", entry.id, error instanceof Error ? error.message : error);
      return;
    }
    this.failures = 0;
    this.retryAt = 0;
    this.deps.state.put(REPORTED_KEY, { fingerprint: fingerprint(entry), at: Date.now() });
  }
}

/**
 * The fields of an entry that change over its life; cost is reported with them, not on its own. `waiting_for` is
 * left out while null, so that the fingerprints stored before it was listed still match and tasks already reported
 * are not reported again for nothing.
 */
function fingerprint(entry: DirectoryEntry): string {
  const fields: unknown[] = [entry.status, entry.ended_at];
  if (entry.waiting_for) fields.push(entry.waiting_for);
  return JSON.stringify(fields);
}
