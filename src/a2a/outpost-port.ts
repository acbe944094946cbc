// What the A2A request handler (request-handler.ts) takes from the HTTP layer, built per request by
// src/http/routes/a2a-request.ts: the agent of the route, what the request's key may do, and Outpost's own machinery
// (starting a task, deciding, canceling, checking a push URL: the commands of src/commands/, acting as the request's
// key through the a2a adapter; finding and listing the tenant's tasks). The handler reaches the
// Worker only through it, so src/a2a/ imports nothing of src/http/.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { TaskObject } from "../../durable-objects/task-object.ts";
import type { Agent } from "../agents/agent.ts";
import type { DecisionInput } from "../approvals/requests.ts";
import type { resumeTask } from "../commands/task-control.ts";
import type { TaskStatus, TaskView } from "../tasks/task.ts";

export type TaskStub = DurableObjectStub<TaskObject>;

/** A page of the tenant's tasks from its directory (src/http/listing.ts), newest first. */
export interface TaskPage {
  ids: string[];
  nextCursor: string | null;
}

/** What the handler takes from the request's HTTP context (src/http/routes/a2a-request.ts builds it). */
export interface OutpostPort {
  /** The agent of the route (/a2a/<agent>), as the tenant sees it. */
  agent: Agent;
  /** Whether it runs the default tool loop, so that a message can continue a context's conversation. */
  conversational: boolean;
  /** Whether the request's key may read tasks (scope `read`): else a task is answered with its id and state only. */
  readable: boolean;
  /** This agent's A2A interface URL, https://<host>/a2a/<agent>. */
  url: string;
  /** The task's URL in the HTTP API (/v1/tasks/:id), for links to its files. */
  taskUrl: (id: string) => string;
  /** Starts a task on the agent: `input` after `context` (the conversation so far), in the A2A context `contextId`. */
  start: (run: { input: string; context: MessageParam[]; contextId: string }) => Promise<TaskView>;
  /** The object of a task of the tenant, or null for an id that cannot be one. */
  stub: (id: string) => TaskStub | null;
  /** A page of the tenant's tasks of this agent, by the directory's filters. */
  list: (query: { tag?: string; statuses: TaskStatus[]; limit: number; cursor?: string }) => Promise<TaskPage>;
  /** A person's answer (a ResumeBody, checked as POST /v1/tasks/:id/resume checks it) as the decision. */
  decision: (body: unknown, field: string) => DecisionInput;
  /** Decides what the task waits for (src/commands/task-control.ts resumeTask); null: no such task. */
  resume: (id: string, decision: DecisionInput) => ReturnType<typeof resumeTask>;
  /** Cancels the task (src/commands/task-control.ts cancelTask); null: no such task. */
  cancel: (id: string) => Promise<TaskView | null>;
  /**
   * A push config's URL, after the key's scopes (a push carries the task's result: run and read), checked as a task's
   * webhook URL is (the callback policy, a deployment that signs).
   */
  pushUrl: (raw: string) => string;
  /** Ends a subscription in the task's object once the stream is over (its client gone or the stream ended). */
  unsubscribe: (stub: TaskStub, subscriptionId: string) => void;
  /** Aborted when the client goes: a stream waiting on the task's events ends then, not at the task's next event. */
  signal: AbortSignal;
}
