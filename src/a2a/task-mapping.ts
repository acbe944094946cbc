// An Outpost task as an A2A Task (A2A v1.0 §4.1): its status as a TaskState, its conversation as the task's history,
// its result and workspace files as artifacts, and the A2A context it belongs to. docs/a2a.md lists the mapping.
import { type Artifact, type Message, type Part, Role, type Task, TaskState } from "@a2a-js/sdk";
import type { PendingInput } from "../approvals/requests.ts";
import { A2A_CONTEXT_METADATA_KEY } from "../callbacks/push-configs.ts";
import type { StoredMessage } from "../runtime/conversation.ts";
import { history } from "../sessions/session-view.ts";
import type { TaskStatus, TaskView } from "../tasks/task.ts";
import type { WorkspaceEntry } from "../workspace/workspace.ts";

/** The artifact holding the task's answer: streamed as chunks while the model writes, whole at the end. */
export const RESPONSE_ARTIFACT_ID = "response";
/** The artifact listing the task's workspace files as links (each a url part). */
export const WORKSPACE_ARTIFACT_ID = "workspace";

const STATES: Readonly<Record<TaskStatus, TaskState>> = {
  pending: TaskState.TASK_STATE_SUBMITTED,
  running: TaskState.TASK_STATE_WORKING,
  input_required: TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
};

export function taskState(status: TaskStatus): TaskState {
  return STATES[status];
}

/** The Outpost statuses an A2A state filter (ListTasks `status`) means; empty for a state Outpost never has. */
export function statusesFor(state: TaskState): TaskStatus[] {
  return (Object.keys(STATES) as TaskStatus[]).filter((status) => STATES[status] === state);
}

/**
 * The A2A context of a task: the one it was started in (task metadata a2a_context_id), else the task itself. The
 * push notifications' body names it too (src/callbacks/push-configs.ts).
 */
export function contextIdOf(task: Pick<TaskView, "id" | "metadata">): string {
  const named = task.metadata[A2A_CONTEXT_METADATA_KEY];
  return typeof named === "string" ? named : task.id;
}

/**
 * The directory tag that groups a context's tasks (GET /v1/tasks?tag=, ListTasks contextId): the context id's 32 hex
 * digits, since a tag is at most 32 characters of [a-z0-9_-].
 */
export function contextTag(contextId: string): string {
  return contextId.replaceAll("-", "").toLowerCase();
}

export function textPart(text: string): Part {
  return { content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

export function dataPart(value: unknown): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" };
}

export function agentMessage(
  task: Pick<TaskView, "id">,
  contextId: string,
  id: string,
  parts: Part[],
  metadata?: Record<string, string>,
): Message {
  return {
    messageId: id,
    contextId,
    taskId: task.id,
    role: Role.ROLE_AGENT,
    parts,
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** How a reply names the request it answers (docs/a2a.md): the status message says it in these words. */
export const NAMING_HINT = 'metadata request_id, or a data part {"request_id": …, "action": …}';

/**
 * The message of an input-required status: the question, or the call to approve, with the request as data. The
 * request's id is in the message's metadata (`request_id`) and its data part: a reply that names it decides it.
 */
export function inputMessage(taskId: string, contextId: string, pending: PendingInput): Message {
  const text =
    pending.kind === "question" && pending.question
      ? pending.question
      : `Approve the call to ${pending.tool_name}? Reply "approve" or "reject", naming request ${pending.request_id} (${NAMING_HINT}).`;
  return agentMessage(
    { id: taskId },
    contextId,
    `${taskId}-input-${pending.request_id}`,
    [textPart(text), dataPart(pending)],
    { request_id: pending.request_id },
  );
}

/** Why a failed task failed, as its status message. */
export function errorMessage(task: TaskView, contextId: string): Message | undefined {
  if (task.status !== "failed" || !task.error) return undefined;
  return agentMessage(task, contextId, `${task.id}-error`, [textPart(task.error.message), dataPart(task.error)]);
}

/**
 * What an interrupted or ended task says with its status: the question or the call it waits for (its request as a
 * data part, whose request_id a reply may name), or why it failed.
 */
export function statusMessage(task: TaskView, contextId: string): Message | undefined {
  if (task.status === "input_required" && task.pending_input) {
    return inputMessage(task.id, contextId, task.pending_input);
  }
  return errorMessage(task, contextId);
}

/** The response artifact (the task's answer), once it has one. */
export function responseArtifact(text: string): Artifact {
  return {
    artifactId: RESPONSE_ARTIFACT_ID,
    name: "response",
    description: "The agent's answer.",
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
  };
}

/** The workspace's files as links to GET /v1/tasks/:id/workspace/<path> (read with the same API key). */
export function workspaceArtifact(taskUrl: string, entries: readonly WorkspaceEntry[]): Artifact | undefined {
  const files = entries.filter((e) => e.type === "file");
  if (files.length === 0) return undefined;
  return {
    artifactId: WORKSPACE_ARTIFACT_ID,
    name: "workspace",
    description: "The files the task's workspace holds, as links (Authorization: Bearer <the same API key>).",
    parts: files.map((file) => {
      // A workspace entry's path, relative to the workspace (as GET /v1/tasks/:id/workspace lists it).
      const path = file.path.replace(/^\/+/, "");
      return {
        content: { $case: "url", value: `${taskUrl}/workspace/${path.split("/").map(encodeURIComponent).join("/")}` },
        metadata: { size: file.size, modified_at: file.modified_at },
        filename: path,
        mediaType: "application/octet-stream",
      };
    }),
    metadata: undefined,
    extensions: [],
  };
}

/**
 * The conversation as A2A messages: each message's text (tool calls and their results are the events' business),
 * numbered by its place so that a message keeps its id across reads. At most the last `historyLength` (all when
 * undefined, none for 0).
 */
export function historyOf(
  task: Pick<TaskView, "id">,
  contextId: string,
  messages: readonly StoredMessage[],
  historyLength: number | undefined,
): Message[] {
  const all = messages.flatMap((message) => {
    const text = history([message])[0]?.content;
    if (!text) return [];
    return [
      {
        messageId: `${task.id}-m${message.index}`,
        contextId,
        taskId: task.id,
        role: message.role === "user" ? Role.ROLE_USER : Role.ROLE_AGENT,
        parts: [textPart(text)],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      } satisfies Message,
    ];
  });
  if (historyLength === undefined) return all;
  return historyLength <= 0 ? [] : all.slice(-historyLength);
}

export interface TaskContent {
  /** The conversation (null: the key may not read it, or the caller does not want it). */
  messages: readonly StoredMessage[] | null;
  /** The workspace's entries (for an ended task's artifacts), or null. */
  workspace: readonly WorkspaceEntry[] | null;
  historyLength: number | undefined;
  /** Where the task is in the HTTP API (/v1/tasks/:id), for the workspace's links. */
  taskUrl: string;
}

/**
 * The A2A Task. `content` null is what a key without the read scope gets: the task's id, context and state, never
 * its messages, answer or files (as a POST answered to such a key never shows them, src/http/task-resource.ts).
 */
export function a2aTask(task: TaskView, content: TaskContent | null): Task {
  const contextId = contextIdOf(task);
  const timestamp = task.completed_at ?? task.started_at ?? task.created_at;
  if (!content) {
    return {
      id: task.id,
      contextId,
      status: { state: taskState(task.status), message: undefined, timestamp },
      artifacts: [],
      history: [],
      metadata: undefined,
    };
  }
  const artifacts: Artifact[] = [];
  if (task.status === "completed" && task.result !== null) artifacts.push(responseArtifact(task.result));
  const files = content.workspace ? workspaceArtifact(content.taskUrl, content.workspace) : undefined;
  if (files) artifacts.push(files);
  return {
    id: task.id,
    contextId,
    status: { state: taskState(task.status), message: statusMessage(task, contextId), timestamp },
    artifacts,
    history: content.messages ? historyOf(task, contextId, content.messages, content.historyLength) : [],
    metadata: { agent: task.assigned_agent, outpost_status: task.status },
  };
}
