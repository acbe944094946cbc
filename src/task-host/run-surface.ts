// A task's run as the RPCs see it: its view (an idle run resumed on the way), a wait for the moment its client has
// something to do, its event stream, its conversation and trace, a cancel, and a person's answer (passed on to the
// sub-agent whose request it is). A session's counterparts are src/task-host/session-surface.ts. The object's class
// (durable-objects/task-object.ts) delegates to this.
import type { DecisionInput } from "../approvals/requests.ts";
import type { DecisionFailure } from "../approvals/resume.ts";
import type { RpcResult } from "../contracts/rpc.ts";
import type { TraceLog } from "../contracts/trace.ts";
import type { Env } from "../env.ts";
import { TERMINAL_EVENT_TYPES } from "../events/event-record.ts";
import { untilEvent } from "../events/wait.ts";
import { copiedResult } from "../lib/rpc-result.ts";
import { traceTree } from "../run-bundle/trace.ts";
import type { StoredMessage } from "../runtime/conversation.ts";
import { isTerminal, type RecordKind, type ResumeOutcome, type TaskView } from "../tasks/task.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import { type ClientStreams, eventStreamOf, type Subscription } from "./client-streams.ts";
import type { TaskHost } from "./task-host.ts";

export class RunSurface {
  private readonly host: TaskHost;
  private readonly streams: ClientStreams;
  /** To reach a sub-agent's child task, which answers its own requests. */
  private readonly env: Pick<Env, "TASKS">;

  constructor(host: TaskHost, streams: ClientStreams, env: Pick<Env, "TASKS">) {
    this.host = host;
    this.streams = streams;
    this.env = env;
  }

  async get(): Promise<TaskView | null> {
    const task = this.host.task();
    if (!task) return null;
    this.host.supervisor.resumeIfIdle(task);
    return this.host.view(task);
  }

  /**
   * Resolves when the task has ended, waits for a person, or starts waiting out its model provider (the client sees
   * `waiting_for` and how long), or after `timeoutMs`, whichever comes first.
   */
  async wait(timeoutMs: number): Promise<TaskView | null> {
    const { host } = this;
    const task = host.task();
    if (!task) return null;
    // A task that waits for a person (or whose sub-agent does) is answered at once too: the client has something to do.
    const now = host.view(task);
    if (isTerminal(task.status) || now.status === "input_required" || timeoutMs <= 0) return now;
    host.supervisor.resumeIfIdle(task);
    await untilEvent(
      host.events,
      (record) =>
        TERMINAL_EVENT_TYPES.has(record.event_type) ||
        record.event_type === "input_requested" ||
        record.event_type === "subagent_input_requested" ||
        record.event_type === "provider_wait_started",
      timeoutMs,
    );
    return host.view(host.requireTask());
  }

  /**
   * SSE bytes: every event after `after`, then live events, ending after the terminal event; its sub-agents' events
   * too, down to `maxDepth` levels below it (all when undefined; 0: its own only), in the same sequence. The caller
   * passes the id to `unsubscribe` when its client goes: cancelling an RPC stream reaches the object only at its next
   * write. `finished` means the run has ended and the cursor is at or past its last event: nothing is left to send.
   */
  async subscribe(after: number, maxDepth?: number): Promise<Subscription | null> {
    const { host } = this;
    const task = host.task();
    if (!task) return null;
    if (isTerminal(task.status) && after >= host.events.lastSeq()) return { finished: true };
    host.supervisor.resumeIfIdle(task);
    return this.streams.subscribe(
      eventStreamOf(host, after, { isFinished: () => isTerminal(host.requireTask().status) }, { maxDepth }),
    );
  }

  /**
   * The conversation as a client may see it (a session's: `kind` "session"): redacted, since tool results hold what
   * tools read (the model's own context keeps them as they were).
   */
  async messages(kind: RecordKind = "task"): Promise<StoredMessage[] | null> {
    return this.host.recordOf(kind) ? this.host.redactor.value(this.host.conversation.list()) : null;
  }

  /** Seed 003's TraceLog, built from the event log (src/run-bundle/trace.ts); null when there is no such record. */
  async runTrace(kind: RecordKind = "task"): Promise<TraceLog | null> {
    const task = this.host.recordOf(kind);
    return task ? traceTree(task, this.host.events.all(), this.host.events.forwarded()) : null;
  }

  /** Cancels the run at its next safe point (the model stream is aborted at once). */
  async cancel(): Promise<RpcResult<TaskView, "task_not_found" | "task_already_finished">> {
    const task = this.host.task();
    if (!task) return { ok: false, error: { code: "task_not_found", message: "No such task." } };
    const refused = await this.host.supervisor.cancel(task);
    if (refused) return { ok: false, error: refused };
    // A canceled parent's children are canceled too (each reports its end, which the ended parent only acknowledges).
    await this.host.subagents.cancelRunning();
    return { ok: true, value: this.host.view(this.host.requireTask()) };
  }

  /** A person's answer to the request named by its request_id (POST /v1/tasks/:id/resume). */
  async resume(decision: DecisionInput): Promise<RpcResult<ResumeOutcome, "task_not_found" | DecisionFailure>> {
    const task = this.host.task();
    if (!task) return { ok: false, error: { code: "task_not_found", message: "No such task." } };
    // A sub-agent's request this task showed: the child answers it (a repeat gets the child's original answer, a
    // stale one its 409), and the answer names the child task.
    const child = this.host.subagents.childFor(decision.request_id);
    if (child) {
      const result = await taskStubFor(this.env, task.tenant, child).resume(decision);
      return copiedResult(result) as RpcResult<ResumeOutcome, "task_not_found" | DecisionFailure>;
    }
    const outcome = await this.host.supervisor.resume(decision);
    if (!outcome.ok) return { ok: false, error: outcome.error };
    return {
      ok: true,
      value: { task: this.host.view(this.host.requireTask()), decision: outcome.decision, replayed: outcome.replayed },
    };
  }
}
