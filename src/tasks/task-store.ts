// The task's own row in its Durable Object, and its status transitions. Every transition is a check-and-set in
// SQLite (UPDATE … WHERE status IN …), so interleaved requests cannot move a task backwards.

import { DAY_MS, DEFAULT_RETENTION, type RetentionPolicy, retentionDays } from "../config/retention.ts";
import { type AgentUsage, addCallUsage, addRecovery, type CallUsage, emptyUsage } from "../contracts/usage.ts";
import type { ErrorInfo } from "../errors.ts";
import { randomHex } from "../events/event-record.ts";
import type { Redactor } from "../events/redaction.ts";
import type { Json } from "../lib/json.ts";
import type {
  BusyPolicy,
  RecordKind,
  RecordStatus,
  TaskInit,
  TaskLimits,
  TaskMetadata,
  TaskTrigger,
  TaskView,
  TaskWebhook,
} from "./task.ts";

interface TaskRow extends Record<string, SqlStorageValue> {
  id: string;
  agent: string;
  input: string;
  metadata: string;
  status: string;
  model: string;
  result: string | null;
  error: string | null;
  usage: string;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  retention_days: number;
  parent_task_id: string | null;
  trace_id: string;
  root_span_id: string;
  bundle_flushed: number;
  crashes: number;
  limits: string;
  tags: string;
  retention_explicit: number;
  tenant: string;
  webhook: string | null;
  trigger: string | null;
  redaction_mode: string;
  dry_run: number;
  kind: string;
  busy: string | null;
  structured_output: string | null;
}

export interface TaskRecord
  extends Omit<TaskView, "last_event_seq" | "pending_input" | "waiting_for" | "status" | "agent_version" | "workflow"> {
  status: RecordStatus;
  /** A task, or a chat session (src/sessions/). */
  kind: RecordKind;
  /** A session's busy policy; null for a task. */
  busy: BusyPolicy | null;
  tenant: string;
  retentionExplicit: boolean;
  traceId: string;
  rootSpanId: string;
  bundleFlushed: boolean;
}

export class TaskStore {
  private cache: TaskRecord | null | undefined;

  private readonly sql: SqlStorage;

  private readonly retention: () => RetentionPolicy;

  /**
   * Removes secrets from what models and tools wrote before it is stored: the outcome (the result and error texts) and
   * a sub-agent's input (its parent's model wrote it).
   */
  private readonly redactor: Pick<Redactor, "text" | "value">;

  /**
   * `retention` decides retention_days when the task ends (seed 003 by_status), unless the caller chose it;
   * `redactor` scrubs what the outcome holds (a provider's error may echo a key).
   */
  constructor(
    sql: SqlStorage,
    retention: () => RetentionPolicy = () => DEFAULT_RETENTION,
    redactor: Pick<Redactor, "text" | "value"> = { text: (t) => t, value: (v) => v },
  ) {
    this.sql = sql;
    this.retention = retention;
    this.redactor = redactor;
  }

  /** The task, or null if this object holds none. Cached: the row changes only through this class. */
  get(): TaskRecord | null {
    if (this.cache === undefined) {
      const row = this.sql.exec<TaskRow>("SELECT * FROM task LIMIT 1").toArray()[0];
      this.cache = row ? fromRow(row) : null;
    }
    return this.cache;
  }

  /** Forgets the cached row (after a rolled-back transaction). */
  invalidate(): void {
    this.cache = undefined;
  }

  /** Creates the task; returns false if this object already holds one. */
  create(init: TaskInit): boolean {
    if (this.get()) return false;
    const cursor = this.sql.exec<TaskRow>(
      `INSERT INTO task (id, agent, input, metadata, status, model, usage, created_at, retention_days, parent_task_id,
        trace_id, root_span_id, limits, tags, retention_explicit, tenant, webhook, trigger, redaction_mode,
        dry_run, kind, busy) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      init.id,
      init.agent,
      // A sub-agent's input is what its parent's model wrote, stored redacted as a result is (its parent redacts the
      // prompt it delegates, so this catches a delegation recorded before that).
      init.subagent ? this.redactor.text(init.input) : init.input,
      JSON.stringify(init.metadata),
      // A session is ready for its first message; a task's run is about to start.
      init.session ? "ready" : "pending",
      init.model,
      JSON.stringify(emptyUsage()),
      new Date().toISOString(),
      init.retentionDays,
      init.parentTaskId,
      randomHex(16),
      randomHex(8),
      JSON.stringify(init.limits ?? {}),
      JSON.stringify(init.tags),
      init.retentionExplicit ? 1 : 0,
      init.tenant,
      init.webhook ? JSON.stringify(init.webhook) : null,
      init.trigger ? JSON.stringify(init.trigger) : null,
      init.redactionMode ?? "full",
      init.dryRun ? 1 : 0,
      init.session ? "session" : "task",
      init.session?.busy ?? null,
    );
    this.keep(cursor);
    return true;
  }

  markRunning(): boolean {
    return this.transition(["pending"], "running", { started_at: new Date().toISOString() });
  }

  /** running → input_required: the run waits for a person. */
  awaitInput(): boolean {
    return this.transition(["running"], "input_required", {});
  }

  /** input_required → running: a person answered. */
  resumeInput(): boolean {
    return this.transition(["input_required"], "running", {});
  }

  /** ready → pending: a session's next turn starts (the supervisor launches its run). */
  startTurn(): boolean {
    // Crashes count per turn: one turn's do not use up the next one's allowance.
    return this.transition(["ready"], "pending", { crashes: "0" });
  }

  /** A session's turn has ended: the session is ready for the next message. */
  endTurn(): boolean {
    return this.transition(["pending", "running", "input_required"], "ready", {});
  }

  /**
   * Closes a session whatever it is doing (its run, if any, is stopped by the caller). Its retention counts from now,
   * as a task's counts from its end. Returns whether this call closed it.
   */
  close(): boolean {
    const task = this.get();
    if (!task) return false;
    const days = retentionDays(this.retention(), {
      explicit: task.retentionExplicit ? task.retention_days : null,
      tags: task.tags,
    });
    return this.transition(["ready", "pending", "running", "input_required"], "closed", {
      completed_at: new Date().toISOString(),
      retention_days: String(days),
    });
  }

  /** Replaces the task's metadata (seed 003 state_updates at a resume). */
  setMetadata(metadata: Record<string, unknown>): void {
    this.keep(this.sql.exec<TaskRow>("UPDATE task SET metadata = ? RETURNING *", JSON.stringify(metadata)));
  }

  /** Ends the task unless it has already ended. Returns whether this call ended it. */
  finish(
    status: "completed" | "failed" | "canceled",
    outcome: { result?: string; error?: ErrorInfo; structuredOutput?: Json },
  ): boolean {
    const task = this.get();
    if (!task) return false;
    const now = new Date();
    const startedMs = task.started_at ? Date.parse(task.started_at) : now.getTime();
    const usage: AgentUsage = { ...task.usage, duration_ms: Math.max(0, now.getTime() - startedMs) };
    const days = retentionDays(this.retention(), {
      explicit: task.retentionExplicit ? task.retention_days : null,
      tags: task.tags,
      status,
    });
    return this.transition(["pending", "running", "input_required"], status, {
      completed_at: now.toISOString(),
      retention_days: String(days),
      // Text that the runtime did not write (an answer, a provider's or a tool's message) may hold a secret: it is
      // stored, shown and sent in callbacks only redacted.
      result: outcome.result === undefined ? null : this.redactor.text(outcome.result),
      error: outcome.error ? JSON.stringify(this.redactor.value(outcome.error)) : null,
      structured_output:
        outcome.structuredOutput === undefined ? null : JSON.stringify(this.redactor.value(outcome.structuredOutput)),
      usage: JSON.stringify(usage),
    });
  }

  addUsage(call: CallUsage): AgentUsage {
    const task = this.get();
    const usage = addCallUsage(task?.usage ?? emptyUsage(), call);
    this.keep(this.sql.exec<TaskRow>("UPDATE task SET usage = ? RETURNING *", JSON.stringify(usage)));
    return usage;
  }

  addRecoveredCall(call: { input_tokens: number; output_tokens: number; cost_usd: number | null }): AgentUsage {
    const usage = addRecovery(this.get()?.usage ?? emptyUsage(), call);
    this.keep(this.sql.exec<TaskRow>("UPDATE task SET usage = ? RETURNING *", JSON.stringify(usage)));
    return usage;
  }

  /** Counts a run that crashed outside the agent's error handling; returns the count so far. */
  recordCrash(): number {
    const row = this.keep(this.sql.exec<TaskRow>("UPDATE task SET crashes = crashes + 1 RETURNING *"));
    if (!row) throw new Error("There is no task in this object to count a crash for.");
    return row.crashes;
  }

  markBundleFlushed(): void {
    this.keep(this.sql.exec<TaskRow>("UPDATE task SET bundle_flushed = 1 RETURNING *"));
  }

  private transition(from: RecordStatus[], to: RecordStatus, fields: Record<string, string | null>): boolean {
    const names = Object.keys(fields);
    const sets = names.map((n) => `${n} = ?`).join(", ");
    const cursor = this.sql.exec<TaskRow>(
      `UPDATE task SET status = ?${sets ? `, ${sets}` : ""} WHERE status IN (${from.map(() => "?").join(", ")})
       RETURNING *`,
      to,
      ...names.map((n) => fields[n] ?? null),
      ...from,
    );
    // No row came back: the task was not in a `from` status, and nothing changed.
    return this.keep(cursor) !== undefined;
  }

  /**
   * Takes a write's returned row (RETURNING *) as the cached task: the row as the write left it, with no second read.
   * A write that changed nothing returns no row and leaves the cache as it was.
   */
  private keep(cursor: SqlStorageCursor<TaskRow>): TaskRow | undefined {
    const row = cursor.toArray()[0];
    if (row) this.cache = fromRow(row);
    return row;
  }
}

function fromRow(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    assigned_agent: row.agent,
    input: row.input,
    metadata: JSON.parse(row.metadata) as TaskMetadata,
    status: row.status as RecordStatus,
    kind: row.kind === "session" ? "session" : "task",
    busy: row.busy === "enqueue" || row.busy === "interrupt" || row.busy === "reject" ? row.busy : null,
    model: row.model,
    result: row.result,
    error: row.error ? (JSON.parse(row.error) as ErrorInfo) : null,
    structured_output: row.structured_output === null ? null : (JSON.parse(row.structured_output) as Json),
    // Usage stored before a field existed gets that field's zero.
    usage: { ...emptyUsage(), ...(JSON.parse(row.usage) as Partial<AgentUsage>) },
    created_at: row.created_at,
    started_at: row.started_at,
    completed_at: row.completed_at,
    retention_days: row.retention_days,
    parent_task_id: row.parent_task_id,
    limits: JSON.parse(row.limits) as TaskLimits,
    tags: JSON.parse(row.tags) as string[],
    expires_at: row.completed_at
      ? new Date(Date.parse(row.completed_at) + row.retention_days * DAY_MS).toISOString()
      : null,
    retentionExplicit: row.retention_explicit === 1,
    tenant: row.tenant,
    webhook: row.webhook ? (JSON.parse(row.webhook) as TaskWebhook) : null,
    trigger: row.trigger ? (JSON.parse(row.trigger) as TaskTrigger) : null,
    redaction_mode: row.redaction_mode === "redacted" ? "redacted" : "full",
    dry_run: row.dry_run === 1,
    traceId: row.trace_id,
    rootSpanId: row.root_span_id,
    bundleFlushed: row.bundle_flushed === 1,
  };
}
