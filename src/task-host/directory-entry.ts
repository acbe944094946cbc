// The object's task or session as its tenant's directory lists it (GET /v1/tasks, GET /v1/sessions): what the
// directory report (directory-report.ts) sends. The outbox asks for it after every step, to see whether a report is
// due, and building it reads the task's view; what it shows changes only with the task's row or a new event (a
// provider wait starts and ends with one, in the transaction that changes the state `waiting_for` reads), so the last
// one is kept until then.
import type { EventLog } from "../events/event-log.ts";
import { type TaskState, WORKFLOW_STATE_KEY } from "../tasks/task-state.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { waitingFor } from "../tasks/waiting-for.ts";
import type { DirectoryEntry } from "../tenants/directory.ts";

export interface DirectoryEntriesDeps {
  record: () => TaskRecord | null;
  events: Pick<EventLog, "lastSeq" | "lastOwnTimestamp">;
  state: Pick<TaskState, "get">;
  /** The status the task's view or the session shows (a waiting sub-agent shows as the parent's input_required). */
  status: (record: TaskRecord) => DirectoryEntry["status"];
}

export class DirectoryEntries {
  private readonly deps: DirectoryEntriesDeps;
  /** The last entry, and what it depended on. */
  private memo: { key: string; entry: DirectoryEntry } | null = null;

  constructor(deps: DirectoryEntriesDeps) {
    this.deps = deps;
  }

  /** The entry; null when the object holds neither a task nor a session. */
  entry(): DirectoryEntry | null {
    const record = this.deps.record();
    if (!record) return null;
    const key = `${this.deps.events.lastSeq()}\u0000${record.status}\u0000${record.completed_at}\u0000${record.usage.total_cost_usd}\u0000${record.tags.join("\u0000")}`;
    if (this.memo?.key === key) return this.memo.entry;
    const entry = this.build(record);
    this.memo = { key, entry };
    return entry;
  }

  private build(record: TaskRecord): DirectoryEntry {
    const lastAt = this.deps.events.lastOwnTimestamp();
    const status = this.deps.status(record);
    return {
      id: record.id,
      kind: record.kind,
      agent: record.assigned_agent,
      workflow: this.deps.state.get(WORKFLOW_STATE_KEY)?.name ?? null,
      status,
      waiting_for: waitingFor(runStatus(record.kind, status), this.deps.state),
      parent_task_id: record.parent_task_id,
      tags: record.tags,
      created_at: record.created_at,
      updated_at: lastAt ?? record.created_at,
      ended_at: record.completed_at,
      total_cost_usd: record.usage.total_cost_usd,
    };
  }
}

/**
 * The task status `waitingFor` reads for a shown status: a task's own; a session's turn runs (`running`) while the
 * session is processing or streaming.
 */
function runStatus(kind: TaskRecord["kind"], shown: string): string {
  return kind === "session" && (shown === "processing" || shown === "streaming") ? "running" : shown;
}
