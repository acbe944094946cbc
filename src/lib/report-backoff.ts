// When a report a task's object sends from its alarm (a child's end to its parent, a run's end to its evaluation) is
// due again after it failed: 2 s after the first failure, doubling, at most five minutes. Kept in memory: after an
// eviction the report is simply due at once.

const MAX_RETRY_MS = 5 * 60_000;

export class ReportBackoff {
  private failures = 0;
  private retryAt = 0;

  /** Now, or later after a failure. */
  dueAt(): number {
    return Math.max(this.retryAt, Date.now());
  }

  failed(): void {
    this.failures++;
    this.retryAt = Date.now() + Math.min(1000 * 2 ** this.failures, MAX_RETRY_MS);
  }

  succeeded(): void {
    this.failures = 0;
    this.retryAt = 0;
  }
}
