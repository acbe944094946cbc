// When a task's object reports its entry to its tenant's directory (src/task-host/directory-report.ts): reports at
// least REPORT_INTERVAL_MS apart while the task runs, the first that long after its creation (so a run shorter than
// that costs one report), the end of the run at once (so a short task's last report goes in the alarm that uploads
// its bundle), none when nothing that changes over the task's life has changed, a wait on the model provider starting
// or ending although the status stays the same, and a failed report tried again later. The reporter is driven with a
// plain state map and a recording send.
import { describe, expect, it } from "vitest";
import type { StateKey } from "../../src/lib/state-key.ts";
import { DirectoryReporter, REPORT_INTERVAL_MS } from "../../src/task-host/directory-report.ts";
import type { DirectoryEntry, DirectoryReport, DirectoryWaitingFor } from "../../src/tenants/directory.ts";

function reporter(initial: Partial<DirectoryEntry>, fail = false) {
  const stored = new Map<string, unknown>();
  const sent: DirectoryReport[] = [];
  let entry: DirectoryEntry = {
    id: crypto.randomUUID(),
    kind: "task",
    agent: "assistant",
    workflow: null,
    status: "running",
    waiting_for: null,
    parent_task_id: null,
    tags: [],
    created_at: new Date().toISOString(),
    updated_at: new Date().toISOString(),
    ended_at: null,
    total_cost_usd: 0,
    ...initial,
  };
  const directory = new DirectoryReporter({
    state: {
      get: <T>(key: StateKey<T>) => stored.get(key.name) as T | undefined,
      put: (key, value) => void stored.set(key.name, value),
    },
    entry: () => entry,
    version: () => 7,
    send: async (report) => {
      if (fail) throw new Error("the tenant's object is unreachable");
      sent.push(report);
    },
  });
  const change = (next: Partial<DirectoryEntry>) => {
    entry = { ...entry, ...next };
  };
  return { directory, sent, change, stored };
}

/** When the last report was sent, as the reporter keeps it. */
function lastReportAt(stored: Map<string, unknown>): number {
  return (stored.get("directory_reported") as { at: number }).at;
}

/** Moves the last report back by the interval, as if the interval had passed since. */
function intervalPassed(stored: Map<string, unknown>): void {
  stored.set("directory_reported", {
    ...(stored.get("directory_reported") as object),
    at: lastReportAt(stored) - REPORT_INTERVAL_MS,
  });
}

/** Created long enough ago that its first report is due. */
const earlier = () => new Date(Date.now() - 2 * REPORT_INTERVAL_MS).toISOString();

describe("a task's directory reports", () => {
  it("reports a new task the interval after its creation; a run that ends before then, once, at its end", async () => {
    const createdAt = Date.now();
    const { directory, sent, change } = reporter({ created_at: new Date(createdAt).toISOString() });
    expect(directory.nextDueAt()).toBe(createdAt + REPORT_INTERVAL_MS);
    await directory.deliverDue();
    expect(sent).toEqual([]);
    const endedAt = Date.now();
    change({ status: "completed", ended_at: new Date(endedAt).toISOString() });
    expect(directory.nextDueAt()).toBe(endedAt);
    await directory.deliverDue();
    expect(sent.map((r) => r.entry.status)).toEqual(["completed"]);
    expect(directory.nextDueAt()).toBeNull();
  });

  it("reports a task still running after the interval, then its next status no sooner than the interval after", async () => {
    const createdAt = Date.parse(earlier());
    const { directory, sent, change } = reporter({ created_at: new Date(createdAt).toISOString() });
    expect(directory.nextDueAt()).toBe(createdAt + REPORT_INTERVAL_MS);
    const before = Date.now();
    await directory.deliverDue();
    expect(sent.map((r) => [r.entry.status, r.version])).toEqual([["running", 7]]);
    change({ status: "input_required" });
    const due = directory.nextDueAt() ?? 0;
    expect(due).toBeGreaterThanOrEqual(before + REPORT_INTERVAL_MS);
    expect(due).toBeLessThanOrEqual(Date.now() + REPORT_INTERVAL_MS);
    await directory.deliverDue();
    expect(sent).toHaveLength(1);
  });

  it("reports the end of a run at once, even right after the report before it, and once only", async () => {
    const { directory, sent, change } = reporter({ created_at: earlier() });
    await directory.deliverDue();
    const endedAt = Date.now();
    change({ status: "completed", ended_at: new Date(endedAt).toISOString() });
    expect(directory.nextDueAt()).toBe(endedAt);
    await directory.deliverDue();
    await directory.deliverDue();
    expect(sent.map((r) => r.entry.status)).toEqual(["running", "completed"]);
    expect(directory.nextDueAt()).toBeNull();
  });

  it("sends nothing when only what the listing does not filter on has changed", async () => {
    const { directory, sent, change } = reporter({ created_at: earlier() });
    await directory.deliverDue();
    change({ total_cost_usd: 1.5, updated_at: new Date().toISOString() });
    expect(directory.nextDueAt()).toBeNull();
    await directory.deliverDue();
    expect(sent).toHaveLength(1);
  });

  it("reports a wait on the model provider starting, and its end, while the status stays running", async () => {
    const { directory, sent, change, stored } = reporter({ created_at: earlier() });
    await directory.deliverDue();
    const waiting: DirectoryWaitingFor = {
      kind: "provider",
      until: new Date(Date.now() + 30_000).toISOString(),
      attempts: 1,
      last_error: {
        code: "provider_overloaded",
        message: "The provider is overloaded.",
        type: "ProviderError",
        retryable: true,
        status: 529,
      },
    };
    change({ waiting_for: waiting });
    expect(directory.nextDueAt()).toBe(lastReportAt(stored) + REPORT_INTERVAL_MS);
    intervalPassed(stored);
    await directory.deliverDue();
    change({ waiting_for: null });
    expect(directory.nextDueAt()).toBe(lastReportAt(stored) + REPORT_INTERVAL_MS);
    intervalPassed(stored);
    await directory.deliverDue();
    expect(sent.map((r) => [r.entry.status, r.entry.waiting_for])).toEqual([
      ["running", null],
      ["running", waiting],
      ["running", null],
    ]);
    expect(directory.nextDueAt()).toBeNull();
  });

  it("sends nothing again for a task whose last report came before waiting_for was listed, while it waits for nothing", async () => {
    const endedAt = new Date(Date.now() - 60_000).toISOString();
    const { directory, sent, stored } = reporter({ status: "completed", ended_at: endedAt });
    // What a report made before the field stored: the status and the end only.
    stored.set("directory_reported", { fingerprint: JSON.stringify(["completed", endedAt]), at: Date.parse(endedAt) });
    expect(directory.nextDueAt()).toBeNull();
    await directory.deliverDue();
    expect(sent).toEqual([]);
  });

  it("tries a failed report of the end again later, not at once", async () => {
    const endedAt = Date.now();
    const { directory, sent } = reporter({ status: "failed", ended_at: new Date(endedAt).toISOString() }, true);
    await directory.deliverDue();
    expect(sent).toEqual([]);
    expect(directory.nextDueAt()).toBeGreaterThan(Date.now());
  });
});
