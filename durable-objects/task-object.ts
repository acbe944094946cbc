// One Durable Object per task (seed 003 Task): its RPC surface. The object owns the task's storage (its row, event
// log, step journal, conversation, state, workspace and run bundle); what it is made of is src/task-host/task-host.ts,
// the run's lifecycle (start, heartbeat, cancel, crashes, bundle upload) src/runtime/run-supervisor.ts, and creating
// and expiring the task src/tasks/. The RPC methods must be the class's own, so each is a thin call into one of the
// surfaces of src/task-host/ (the run, sub-agents, checkpoints, replies, files, callbacks and a session's, each
// *-surface.ts). Each method answers for an unknown task without writing anything.
import { DurableObject } from "cloudflare:workers";
import type { ReplyBinding, ReplyCall } from "../src/approvals/replies.ts";
import type { DecisionInput } from "../src/approvals/requests.ts";
import type { DecisionFailure } from "../src/approvals/resume.ts";
import type { Delivery } from "../src/callbacks/delivery.ts";
import type { PushConfig } from "../src/callbacks/push-configs.ts";
import type { ExecutionResult } from "../src/contracts/execution-result.ts";
import type { RpcResult } from "../src/contracts/rpc.ts";
import type { SubagentRecord, SubagentReport, SubagentWaitReport, TreeAdmission } from "../src/contracts/subagents.ts";
import type { TraceLog } from "../src/contracts/trace.ts";
import type { Env } from "../src/env.ts";
import type { RunReport } from "../src/evaluation-runs/evaluation.ts";
import type { ForwardedBatch } from "../src/events/event-tree.ts";
import type { ArtifactEntry, ArtifactLocation } from "../src/run-bundle/run-bundle.ts";
import type { Checkpoint, CheckpointSummary } from "../src/runtime/checkpoints.ts";
import type { StoredMessage } from "../src/runtime/conversation.ts";
import type { SessionView, TurnView } from "../src/sessions/session.ts";
import { CallbackSurface } from "../src/task-host/callback-surface.ts";
import { CheckpointSurface } from "../src/task-host/checkpoint-surface.ts";
import { ClientStreams, type Subscription } from "../src/task-host/client-streams.ts";
import { FileSurface } from "../src/task-host/file-surface.ts";
import { ReplySurface } from "../src/task-host/reply-surface.ts";
import { RunSurface } from "../src/task-host/run-surface.ts";
import { SessionSurface } from "../src/task-host/session-surface.ts";
import { SubagentSurface } from "../src/task-host/subagent-surface.ts";
import { TaskHost } from "../src/task-host/task-host.ts";
import type { Tombstone } from "../src/tasks/expiry.ts";
import type { RecordKind, ResumeOutcome, StartOutcome, TaskInit, TaskView, ToolCallLedger } from "../src/tasks/task.ts";
import type { WorkspaceEntry } from "../src/workspace/workspace.ts";

export type { Subscription };

export class TaskObject extends DurableObject<Env> {
  private readonly host: TaskHost;
  /** Open SSE subscriptions by id, so the Worker can end one when its client disconnects. */
  private readonly streams = new ClientStreams();
  // The RPCs' logic, one surface per concern (src/task-host/*-surface.ts): the task's run, its sub-agents, its
  // checkpoints, a chat session's RPCs, the files (run bundle, workspace) and the callbacks (deliveries, push configs).
  private readonly run: RunSurface;
  private readonly subagents: SubagentSurface;
  private readonly checkpoints: CheckpointSurface;
  private readonly sessions: SessionSurface;
  private readonly files: FileSurface;
  private readonly callbacks: CallbackSurface;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.host = new TaskHost(ctx, env, this.streams);
    this.run = new RunSurface(this.host, this.streams, env);
    this.subagents = new SubagentSurface(this.host);
    this.checkpoints = new CheckpointSurface(this.host);
    this.sessions = new SessionSurface(this.host, this.streams);
    this.files = new FileSurface(this.host);
    this.callbacks = new CallbackSurface(this.host);
  }

  /**
   * Creates the task, once, and starts its run: a repeat of the creating request (the same idempotency key or webhook
   * delivery, hence the same id) gets the original response back, and a different request under that id a mismatch.
   */
  async start(init: TaskInit): Promise<StartOutcome> {
    const outcome = await this.create(init);
    if (outcome.outcome === "created") {
      this.host.supervisor.launch();
      // Into the tenant's directory (GET /v1/tasks): now when asked, else from the next alarm.
      if (init.listAtOnce) await this.host.directory.deliverNow();
      await this.host.supervisor.armOutbox();
    }
    return outcome;
  }

  /**
   * The durable half of start(): the task, its seeded files, its first event and its heartbeat alarm. The run is
   * launched by start(), or, when the object is reset before that, by the heartbeat.
   */
  private create(init: TaskInit): Promise<StartOutcome> {
    return this.host.create(init);
  }

  async get(): Promise<TaskView | null> {
    return this.run.get();
  }

  /** Resolves when the task has ended, waits for a person or for its model provider, or after `timeoutMs`. */
  async wait(timeoutMs: number): Promise<TaskView | null> {
    return this.run.wait(timeoutMs);
  }

  /** The conversation as a client may see it: redacted (src/task-host/run-surface.ts). */
  async messages(kind: RecordKind = "task"): Promise<StoredMessage[] | null> {
    return this.run.messages(kind);
  }

  /** The task's delegations to sub-agents, oldest first; null when there is no task. */
  async subagentList(): Promise<SubagentRecord[] | null> {
    return this.subagents.subagentList();
  }

  /** A sub-agent's child task ended (its report, sent until acknowledged; the same one again changes nothing). */
  async subagentEnded(report: SubagentReport): Promise<void> {
    return this.subagents.subagentEnded(report);
  }

  /** A place in this root's tree for a child about to start, or why not (src/subagents/tree-limits.ts). */
  async admitToTree(childId: string, limit: number): Promise<TreeAdmission> {
    return this.subagents.admitToTree(childId, limit);
  }

  /** Gives back the place of a child that did not start after all (its key had no token left). */
  async leaveTree(childId: string): Promise<void> {
    return this.subagents.leaveTree(childId);
  }

  /** A sub-agent's child task forwards its log here, stored before the call returns; how many events were new. */
  async forwardEvents(batch: ForwardedBatch): Promise<number> {
    return this.subagents.forwardEvents(batch);
  }

  /** What a sub-agent's child task waits for from a person: the task shows it and answers it through its resume. */
  async subagentWaiting(report: SubagentWaitReport): Promise<void> {
    return this.subagents.subagentWaiting(report);
  }

  /** Seed 003's TraceLog, or null (src/task-host/run-surface.ts). Not named `trace`: workerd's RPC hides that name. */
  async runTrace(kind: RecordKind = "task"): Promise<TraceLog | null> {
    return this.run.runTrace(kind);
  }

  /** SSE bytes after `after`, then live ones, to the terminal event (src/task-host/run-surface.ts); see unsubscribe. */
  async subscribe(after: number, maxDepth?: number): Promise<Subscription | null> {
    return this.run.subscribe(after, maxDepth);
  }

  async unsubscribe(id: string): Promise<void> {
    this.streams.end(id);
  }

  /**
   * The task's ExecutionResult (seed 004) once it has ended (src/task-host/run-results.ts); null for an unknown task or
   * one that has not ended. POST /v1/agents/:name/invoke answers with it, and the MCP server's agent tools.
   */
  async executionResult(): Promise<ExecutionResult | null> {
    return this.host.executionResult();
  }

  /** The report of an evaluation's run once the task has ended (what its alarm sends the evaluation); else null. */
  async runReport(): Promise<RunReport | null> {
    return this.host.runReport();
  }

  /** Live readers attached to the task (SSE subscribers and ?wait= callers). */
  async subscriberCount(): Promise<number> {
    return this.host.events.listenerCount();
  }

  /** Cancels the run at its next safe point (the model stream is aborted at once). */
  async cancel(): Promise<RpcResult<TaskView, "task_not_found" | "task_already_finished">> {
    return this.run.cancel();
  }

  /** A request an A2A answer showed, or a reply to bind to one (src/task-host/reply-surface.ts); null: no task. */
  async reply(call: ReplyCall): Promise<ReplyBinding | null> {
    return new ReplySurface(this.host).call(call);
  }

  /** A person's answer to a request by its request_id (POST /v1/tasks/:id/resume); a sub-agent's goes to its child. */
  async resume(decision: DecisionInput): Promise<RpcResult<ResumeOutcome, "task_not_found" | DecisionFailure>> {
    return this.run.resume(decision);
  }

  /** The run bundle's files (a session's: `kind` "session"), or null for an unknown task or session. */
  async artifacts(kind: RecordKind = "task"): Promise<ArtifactEntry[] | null> {
    return this.files.artifacts(kind);
  }

  /** The whole bundle as one tar file; `ended: false` while the run goes on; null for an unknown task or session. */
  async bundleDownload(kind: RecordKind = "task") {
    return this.files.bundleDownload(kind);
  }

  /** A staged artifact's content, or where it is in the blob store (R2, or a directory self-hosted). */
  async artifact(path: string, kind: RecordKind = "task"): Promise<ArtifactLocation | null> {
    return this.files.artifact(path, kind);
  }

  /** What this task knows of these tool calls, for a fork of one of its checkpoints; null for an unknown task. */
  async toolCallLedger(toolUseIds: string[]): Promise<ToolCallLedger | null> {
    return this.checkpoints.toolCallLedger(toolUseIds);
  }

  /** The task's checkpoints, oldest first, or null for an unknown task. */
  async checkpointList(): Promise<CheckpointSummary[] | null> {
    return this.checkpoints.checkpointList();
  }

  /** One checkpoint with its state, its conversation redacted; null if the task or the checkpoint is unknown. */
  async checkpoint(checkpointId: string): Promise<Checkpoint | null> {
    return this.checkpoints.checkpoint(checkpointId);
  }

  /** A checkpoint as a fork continues from it: the conversation unredacted, as the model had it. Null as above. */
  async forkPoint(checkpointId: string): Promise<Checkpoint | null> {
    return this.checkpoints.forkPoint(checkpointId);
  }

  /** The workspace's files and folders, or null for an unknown task (or session: `kind` "session"). */
  async workspaceList(kind: RecordKind = "task"): Promise<WorkspaceEntry[] | null> {
    return this.files.workspaceList(kind);
  }

  /** One workspace file: its bytes as a stream, or its R2 key; "directory" for a folder; null when there is none. */
  async workspaceFile(path: string, kind: RecordKind = "task") {
    return this.files.workspaceFile(path, kind);
  }

  /** The task's callback deliveries with every attempt; null for an unknown task. */
  async deliveries(): Promise<Delivery[] | null> {
    return this.callbacks.deliveries();
  }

  /** Sends a delivery again now. */
  async redeliver(deliveryId: string): Promise<RpcResult<Delivery, "task_not_found" | "delivery_not_found">> {
    return this.callbacks.redeliver(deliveryId);
  }

  /** The task's A2A push configs; null for an unknown task. */
  async pushConfigList(): Promise<PushConfig[] | null> {
    return this.callbacks.pushConfigList();
  }

  /** Sets a push config (src/task-host/callback-surface.ts); "full" when the task has too many; null: no task. */
  async putPushConfig(config: Omit<PushConfig, "after_seq" | "created_at">, fromStart: boolean) {
    return this.callbacks.putPushConfig(config, fromStart);
  }

  /** Removes a push config; what it was not sent yet is not sent. Returns whether there was one (null: no task). */
  async deletePushConfig(id: string): Promise<boolean | null> {
    return this.callbacks.deletePushConfig(id);
  }

  /** When the task expired (seed 003 retention), or null if it did not (unknown or still kept). */
  async expired(): Promise<Tombstone | null> {
    return this.host.expired();
  }

  override async alarm(): Promise<void> {
    if (this.host.record()) await this.host.supervisor.alarm();
  }

  // ---- A chat session (src/sessions/): the same object, run and storage, one turn per message ----------------------

  /** Creates the session, once (a repeat of the creating request gets the original answer, as for a task). */
  async startSession(init: TaskInit): Promise<StartOutcome<SessionView>> {
    return this.sessions.startSession(init);
  }

  async session(): Promise<SessionView | null> {
    return this.sessions.session();
  }

  /** One turn, or null when the session or the turn is unknown. */
  async turn(turnId: string): Promise<TurnView | null> {
    return this.sessions.turn(turnId);
  }

  /** A message (seed 004 send): a new turn by the session's busy policy; with `streaming`, its event stream too. */
  async send(message: string, options: { streaming: boolean }) {
    return this.sessions.send(message, options);
  }

  /** Resolves when the turn has ended or waits for a person, or after `timeoutMs`: the turn as it is then. */
  async waitTurn(turnId: string, timeoutMs: number): Promise<TurnView | null> {
    return this.sessions.waitTurn(turnId, timeoutMs);
  }

  /** The session's events after `after` (one turn's with `turnId`), as for subscribe(). */
  async subscribeSession(
    after: number,
    turnId?: string,
    maxDepth?: number,
  ): Promise<Subscription | null | "turn_not_found"> {
    return this.sessions.subscribeSession(after, turnId, maxDepth);
  }

  /** A person's answer to what the session's current turn waits for (the same rules as a task's). */
  async resumeSession(decision: DecisionInput) {
    return this.sessions.resumeSession(decision);
  }

  /** Closes the session (seed 004 close); closing a closed session changes nothing. */
  async closeSession(): Promise<SessionView | null> {
    return this.sessions.closeSession();
  }
}
