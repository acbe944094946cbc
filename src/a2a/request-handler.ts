// The A2A request handler of one agent (the SDK's A2ARequestHandler), backed by Outpost's own machinery rather than
// the SDK's in-memory task store: an A2A task is an Outpost task (the same id, its state in the task's Durable
// Object), a message starts one through the same creation path as POST /v1/agents/:name/invoke, a reply to an
// input-required task goes to the same resume as POST /v1/tasks/:id/resume, and streams are the task's event log.
// Both bindings (JSON-RPC through the SDK's JsonRpcTransportHandler in src/http/routes/a2a.ts, HTTP+JSON through
// src/http/routes/a2a-rest.ts) call this one handler. What it needs from the HTTP layer comes in as an OutpostPort
// (outpost-port.ts), built per request.

import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { TaskNotFoundError } from "@a2a-js/sdk/errors";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { ApiError } from "../errors.ts";
import { isTerminal, type TaskView } from "../tasks/task.ts";
import { waitOnTask } from "../tasks/task-ids.ts";
import { agentCard } from "./agent-card.ts";
import { invalidParams, taskNotCancelable, taskNotFound, toA2AError, unsupported } from "./errors.ts";
import { continuation, partsOf } from "./message-input.ts";
import type { OutpostPort, TaskStub } from "./outpost-port.ts";
import { checkedPushConfig, configView, storePushConfig } from "./push-notification-configs.ts";
import { type ReplyOutcome, replyToTask } from "./replies.ts";
import { a2aTask, contextIdOf, contextTag, statusesFor } from "./task-mapping.ts";
import { eventRecords, taskStream } from "./task-stream.ts";

/** How long one wait on the object lasts; a blocking SendMessage waits again until the task settles. */
const WAIT_SLICE_MS = 55_000;
/** ListTasks' page size unless the request names one (A2A: at most 50 by default, 100 at most). */
const DEFAULT_PAGE_SIZE = 50;

function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

/** Whether a task is where a blocking SendMessage returns: ended, or waiting for input. */
function settled(task: TaskView): boolean {
  return isTerminal(task.status) || task.status === "input_required";
}

export class OutpostRequestHandler implements A2ARequestHandler {
  private readonly port: OutpostPort;

  constructor(port: OutpostPort) {
    this.port = port;
  }

  async getAgentCard(): Promise<AgentCard> {
    return agentCard(this.port.agent, this.port.url);
  }

  /** The card with what only a key holder sees: the model and the limits the agent runs with. */
  async getAuthenticatedExtendedAgentCard(_params: GetExtendedAgentCardRequest): Promise<AgentCard> {
    const { agent } = this.port;
    const card = agentCard(agent, this.port.url);
    const details = [
      agent.model ? `Model: ${agent.model}.` : "",
      `At most ${agent.maxTurns} model turns a task.`,
      `Tool permission mode: ${agent.permissions.mode}.`,
    ].filter(Boolean);
    return { ...card, description: `${card.description} ${details.join(" ")}`.trim() };
  }

  async sendMessage(params: SendMessageRequest): Promise<Message | Task> {
    try {
      const sent = await this.send(params);
      // A reply that decided nothing is answered with what the task waits for.
      if ("answer" in sent) return sent.answer;
      const { stub, task } = sent;
      let now = task;
      if (!params.configuration?.returnImmediately) {
        while (!settled(now)) now = (await waitOnTask(() => this.port.stub(now.id) ?? stub, WAIT_SLICE_MS)) ?? now;
      }
      return await this.task(stub, now, params.configuration?.historyLength);
    } catch (error) {
      throw toA2AError(error);
    }
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      const sent = await this.send(params);
      if ("answer" in sent) {
        yield { payload: { $case: "message", value: sent.answer } };
        return;
      }
      yield* this.follow(sent.stub, sent.task, sent.cursor, params.configuration?.historyLength);
    } catch (error) {
      throw toA2AError(error);
    }
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    try {
      const { stub, task } = await this.find(params.id);
      if (params.historyLength !== undefined && params.historyLength < 0) {
        throw invalidParams("historyLength must not be negative.", "historyLength");
      }
      return await this.task(stub, task, params.historyLength);
    } catch (error) {
      throw toA2AError(error);
    }
  }

  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    try {
      const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100) {
        throw invalidParams("pageSize must be from 1 to 100.", "pageSize");
      }
      const statuses = params.status ? statusesFor(params.status) : [];
      if (params.status && statuses.length === 0) {
        return { tasks: [], nextPageToken: "", pageSize, totalSize: 0 };
      }
      if (params.contextId && !isUuid(params.contextId)) {
        throw invalidParams("contextId must be a context id this server gave.", "contextId");
      }
      const page = await this.port.list({
        ...(params.contextId ? { tag: contextTag(params.contextId) } : {}),
        statuses,
        limit: pageSize,
        ...(params.pageToken ? { cursor: params.pageToken } : {}),
      });
      const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : null;
      if (after !== null && Number.isNaN(after)) {
        throw invalidParams("statusTimestampAfter must be an ISO 8601 time.", "statusTimestampAfter");
      }
      const found = await Promise.all(
        page.ids.map(async (id) => {
          const stub = this.port.stub(id);
          const task = stub ? await stub.get() : null;
          return stub && task ? { stub, task } : null;
        }),
      );
      const tasks: Task[] = [];
      for (const entry of found) {
        if (!entry || entry.task.assigned_agent !== this.port.agent.name) continue;
        const at = Date.parse(entry.task.completed_at ?? entry.task.started_at ?? entry.task.created_at);
        if (after !== null && at < after) continue;
        tasks.push(
          await this.task(entry.stub, entry.task, params.historyLength ?? 0, params.includeArtifacts === true),
        );
      }
      return { tasks, nextPageToken: page.nextCursor ?? "", pageSize, totalSize: tasks.length };
    } catch (error) {
      throw toA2AError(error);
    }
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    try {
      const { stub } = await this.find(params.id);
      let canceled: TaskView | null;
      try {
        canceled = await this.port.cancel(params.id);
      } catch (error) {
        if (error instanceof ApiError && error.code === "task_already_finished") {
          throw taskNotCancelable(params.id, error.message);
        }
        throw error;
      }
      if (!canceled) throw taskNotFound(params.id);
      return await this.task(stub, canceled, undefined);
    } catch (error) {
      throw toA2AError(error);
    }
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      const { stub, task } = await this.find(params.id);
      if (isTerminal(task.status)) {
        throw unsupported(
          `Task ${task.id} has ended (${task.status}): there is nothing to subscribe to; GetTask reads it.`,
        );
      }
      yield* this.follow(stub, task, task.last_event_seq, undefined);
    } catch (error) {
      throw toA2AError(error);
    }
  }

  async createTaskPushNotificationConfig(params: TaskPushNotificationConfig): Promise<TaskPushNotificationConfig> {
    try {
      const { stub, task } = await this.find(params.taskId);
      return await storePushConfig(stub, task.id, checkedPushConfig(this.port, params), false);
    } catch (error) {
      throw toA2AError(error);
    }
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
  ): Promise<TaskPushNotificationConfig> {
    try {
      const { stub, task } = await this.find(params.taskId);
      const config = ((await stub.pushConfigList()) ?? []).find((c) => c.id === params.id);
      if (!config) {
        throw new TaskNotFoundError({
          message: `Task ${task.id} has no push notification config "${params.id}".`,
          metadata: { task_id: task.id, config_id: params.id },
        });
      }
      return configView(task.id, config);
    } catch (error) {
      throw toA2AError(error);
    }
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    try {
      const { stub, task } = await this.find(params.taskId);
      const configs = ((await stub.pushConfigList()) ?? []).map((config) => configView(task.id, config));
      return { configs, nextPageToken: "" };
    } catch (error) {
      throw toA2AError(error);
    }
  }

  /** Deleting a config the task does not have changes nothing (and is no error): the outcome is the one asked for. */
  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    try {
      const { stub, task } = await this.find(params.taskId);
      if ((await stub.deletePushConfig(params.id)) === null) throw taskNotFound(task.id);
    } catch (error) {
      throw toA2AError(error);
    }
  }

  // ---- the machinery ----------------------------------------------------------------------------------------------

  /** The task `id` names for this agent's tenant; another tenant's, another agent's and an unknown one alike: not found. */
  private async find(id: string): Promise<{ stub: TaskStub; task: TaskView }> {
    const stub = this.port.stub(id);
    const task = stub ? await stub.get() : null;
    if (!stub || !task || task.assigned_agent !== this.port.agent.name) throw taskNotFound(id);
    return { stub, task };
  }

  /**
   * A message: a reply to the input-required task it names, or a new task (in its context, continuing that
   * context's conversation). Returns the task and the event cursor its stream follows from.
   */
  private async send(params: SendMessageRequest): Promise<ReplyOutcome> {
    const message = params.message;
    if (!message) throw invalidParams("message is required.", "message");
    const push = params.configuration?.taskPushNotificationConfig;
    // The routes refuse this first (Outpost's 403): pushes carry the task's result, which only `read` may see.
    if (push && !this.port.readable) {
      throw new ApiError(
        "insufficient_scope",
        "A push config's notifications carry the task's result; asking for one needs the read scope.",
        "configuration.taskPushNotificationConfig",
      );
    }
    const { text, data } = partsOf(message);
    // Checked before anything is decided or started: a refused config leaves nothing behind.
    const config = push ? checkedPushConfig(this.port, push) : null;
    if (message.taskId) {
      const { stub, task } = await this.find(message.taskId);
      if (message.contextId && message.contextId !== contextIdOf(task)) {
        throw invalidParams(`Task ${task.id} is not in context ${message.contextId}.`, "message.contextId");
      }
      const replied = await replyToTask(this.port, stub, task, message, text, data);
      if (config && !("answer" in replied)) await storePushConfig(stub, task.id, config, false);
      return replied;
    }
    if (!text) throw invalidParams("A new task needs a text part: what the agent should do.", "message.parts");
    const contextId = message.contextId || crypto.randomUUID();
    if (!isUuid(contextId))
      throw invalidParams("contextId must be a context id this server gave.", "message.contextId");
    const context = message.contextId ? await this.contextSoFar(message.contextId) : [];
    const task = await this.port.start({ input: text, context, contextId });
    const stub = this.port.stub(task.id);
    if (!stub) throw taskNotFound(task.id);
    // A config sent with the message that starts the task hears of every moment of it.
    if (config) await storePushConfig(stub, task.id, config, true);
    return { stub, task, cursor: 0 };
  }

  /** The conversation of a context's newest task, which a follow-up continues; [] for a context with none yet. */
  private async contextSoFar(contextId: string): Promise<MessageParam[]> {
    const newest = (await this.port.list({ tag: contextTag(contextId), statuses: [], limit: 1 })).ids[0];
    const stub = newest ? this.port.stub(newest) : null;
    const task = stub ? await stub.get() : null;
    if (!stub || !task) return [];
    if (!isTerminal(task.status)) {
      throw unsupported(
        `Task ${task.id} of this context has not ended (${task.status}): reply to it with its taskId, or wait for it to end.`,
      );
    }
    if (!this.port.conversational) {
      throw unsupported(`Agent "${this.port.agent.name}" does not continue conversations: send without a contextId.`);
    }
    return continuation((await stub.messages()) ?? []);
  }

  /** The task as an A2A Task, with what the key may read. */
  private async task(
    stub: TaskStub,
    task: TaskView,
    historyLength: number | undefined,
    withArtifacts = true,
  ): Promise<Task> {
    if (!this.port.readable) return a2aTask(task, null);
    // The answer shows the request the task waits for: a bare reply may answer it now (replies.ts).
    if (task.status === "input_required" && task.pending_input) {
      await stub.reply({ shown: task.pending_input.request_id });
    }
    const wantsHistory = historyLength === undefined || historyLength > 0;
    const [messages, workspace] = await Promise.all([
      wantsHistory ? stub.messages() : Promise.resolve(null),
      withArtifacts && isTerminal(task.status) ? stub.workspaceList() : Promise.resolve(null),
    ]);
    const mapped = a2aTask(task, { messages, workspace, historyLength, taskUrl: this.port.taskUrl(task.id) });
    return withArtifacts ? mapped : { ...mapped, artifacts: [] };
  }

  /** The task's A2A stream from `cursor` on: the task first, then its events mapped, until it ends or waits. */
  private async *follow(
    stub: TaskStub,
    task: TaskView,
    cursor: number,
    historyLength: number | undefined,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const first = await this.task(stub, task, historyLength);
    const subscription = await stub.subscribe(cursor, 0);
    if (!subscription) throw taskNotFound(task.id);
    const source = {
      taskId: task.id,
      contextId: contextIdOf(task),
      current: async () => (await stub.get()) ?? task,
      shown: async (requestId: string) => {
        await stub.reply({ shown: requestId });
      },
    };
    if ("finished" in subscription) {
      yield { payload: { $case: "task", value: first } };
      return;
    }
    const end = () => this.port.unsubscribe(stub, subscription.id);
    this.port.signal.addEventListener("abort", end, { once: true });
    try {
      yield* taskStream(source, first, eventRecords(subscription.stream));
    } finally {
      this.port.signal.removeEventListener("abort", end);
      end();
    }
  }
}
