// Tool calls that run something: an agent tool starts an Outpost task through the same functions as
// POST /v1/agents/:name/tasks (agentTaskInit, launch) and answers with its ExecutionResult once it has ended; the
// session tools open a session and send it messages as /v1 does (openSession, sendMessage). While a call waits it
// follows the run's event stream (the task object's subscription) and, when the client sent a progressToken, sends
// one notifications/progress per event, the event's sequence number being the progress.
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type ServerNotification,
  type ServerRequest,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import type { Subscription, TaskObject } from "../../durable-objects/task-object.ts";
import type { Agent } from "../agents/agent.ts";
import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { EventRecord } from "../events/event-record.ts";
import { agentFor } from "../http/agent-lookup.ts";
import type { AppEnv } from "../http/app-env.ts";
import { agentTaskInit, openSession } from "../http/routes/agents.ts";
import { sessionStub } from "../http/routes/session-stub.ts";
import { sendMessage } from "../http/routes/sessions.ts";
import { CreateTaskBody } from "../http/schemas.ts";
import { launch } from "../http/task-creation.ts";
import { parseJson } from "../http/validation.ts";
import type { TaskView } from "../tasks/task.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import { eventRecords } from "./event-frames.ts";
import { SendMessageArguments, StartSessionArguments } from "./tools.ts";

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type TaskStub = DurableObjectStub<TaskObject>;

/** How often a client polling a task handle (tasks/get, tasks/result) is asked to look again, ms. */
export const TASK_POLL_INTERVAL_MS = 1_000;

/** Streams in a row that may break before any event is read, before a call gives up following its run. */
const MAX_BROKEN_STREAMS = 3;

/** Events too frequent to be progress: a streamed token each. */
const NOT_PROGRESS: ReadonlySet<string> = new Set(["llm_text_delta", "llm_thinking_delta"]);

/** Starts the agent's task from the call's arguments (the task creation body), as POST /v1/agents/:name/tasks does. */
export async function startAgentTask(c: Context<AppEnv>, agent: Agent, args: unknown): Promise<TaskView> {
  const init = await agentTaskInit(c, agent, parseJson(CreateTaskBody, args ?? {}, "arguments"), "mcp");
  const { task } = await launch(c, init, "mcp");
  return task;
}

/** An agent tool call held open: the task is started, followed to its end, and its ExecutionResult answered. */
export async function runAgentTool(
  c: Context<AppEnv>,
  agent: Agent,
  args: unknown,
  extra: ToolExtra,
): Promise<CallToolResult> {
  const task = await startAgentTask(c, agent, args);
  const stub = taskStubFor(c.env, c.get("tenant"), task.id);
  await follow(stub, (after) => stub.subscribe(after, 0), extra, `task ${task.id}`);
  const result = await stub.executionResult();
  if (!result) throw stillRunning(`task ${task.id}`);
  return executionResultContent(result);
}

/** start-session: a session on the agent, and its first message's turn followed to its end. */
export async function runStartSession(c: Context<AppEnv>, args: unknown, extra: ToolExtra): Promise<CallToolResult> {
  const { agent: name, message, ...settings } = parseJson(StartSessionArguments, args ?? {}, "arguments");
  const agent = await agentFor(c, name);
  // One command, one creation token: opening the session took it, so its first message takes none (a refusal for
  // the rate then leaves no session behind that the client was never told of).
  const { session } = await openSession(c, agent, settings, "mcp");
  return runTurn(c, session.id, message, extra, true);
}

/** send-message: a message to the session, its turn followed to its end. */
export async function runSendMessage(c: Context<AppEnv>, args: unknown, extra: ToolExtra): Promise<CallToolResult> {
  const { session_id, message } = parseJson(SendMessageArguments, args ?? {}, "arguments");
  return runTurn(c, session_id, message, extra);
}

async function runTurn(
  c: Context<AppEnv>,
  id: string,
  message: string,
  extra: ToolExtra,
  opened = false,
): Promise<CallToolResult> {
  const session = sessionStub(c, id);
  const { turn, subscription } = await sendMessage(c, session, message, true, "mcp", opened);
  const { stub } = session;
  let first: Subscription | undefined = subscription;
  await follow(
    stub,
    async (after) => {
      // The turn's stream send() opened, then (after a dropped stream) the turn's own from the cursor.
      const opened = first ?? (await stub.subscribeSession(after, turn.id));
      first = undefined;
      return opened === "turn_not_found" ? null : opened;
    },
    extra,
    `session ${id}, turn ${turn.id}`,
  );
  const ended = await stub.turn(turn.id);
  if (!ended?.result) throw stillRunning(`session ${id}`);
  return executionResultContent({ ...ended.result, session_id: id, turn_id: turn.id });
}

/**
 * Reads the run's events until its stream ends at the run's end, sending progress for each when the client asked
 * for it. A stream that breaks (the object was reset) is opened again from the last event read; `subscribe` answers
 * `finished` once the run has ended and everything has been read.
 */
async function follow(
  stub: TaskStub,
  subscribe: (after: number) => Promise<Subscription | null>,
  extra: ToolExtra,
  what: string,
): Promise<void> {
  const token = extra._meta?.progressToken;
  let after = 0;
  let broken = 0;
  while (!extra.signal.aborted) {
    const subscription = await subscribe(after);
    if (!subscription || "finished" in subscription) return;
    try {
      for await (const record of eventRecords(subscription.stream, extra.signal)) {
        after = record.seq;
        broken = 0;
        if (token === undefined || NOT_PROGRESS.has(record.event_type)) continue;
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: record.seq, message: progressMessage(record, what) },
        });
      }
    } catch (error) {
      // The object went away mid-stream (a reset, a deploy): open it again from the cursor, unless the client has
      // gone or streams keep breaking with nothing read.
      if (extra.signal.aborted || ++broken > MAX_BROKEN_STREAMS) throw error;
    } finally {
      await stub.unsubscribe(subscription.id);
    }
  }
}

function progressMessage(record: EventRecord, what: string): string {
  const own = record.task_id ? `sub-agent task ${record.task_id}` : what;
  return `${record.event_type} (${own})`;
}

/** A call whose client went before the run ended (nobody reads the answer): the run goes on, tasks/get finds it. */
function stillRunning(what: string): McpError {
  return new McpError(ErrorCode.ConnectionClosed, `The client went before the run of ${what} ended; it goes on.`);
}

/** An ExecutionResult (or a turn's) as a tool result: the answer as text, the result as structuredContent. */
export function executionResultContent(
  result: ExecutionResult | (ExecutionResult & { session_id: string; turn_id: string }),
): CallToolResult {
  const text = result.is_error ? `The run failed: ${result.error_reason ?? "no reason given"}` : result.response;
  return { content: [{ type: "text", text }], structuredContent: result, isError: result.is_error };
}

/** The Outpost task as an MCP task handle (tasks/get): its id, its status in MCP's words, its times. */
export function mcpTask(task: TaskView): Task {
  return {
    taskId: task.id,
    status: MCP_STATUS[task.status],
    ...(task.status === "input_required"
      ? { statusMessage: `The task waits for a person: answer it with POST /v1/tasks/${task.id}/resume.` }
      : task.error
        ? { statusMessage: task.error.message }
        : {}),
    // Kept retention_days after it ends (then deleted with its storage).
    ttl: task.retention_days * 86_400_000,
    createdAt: task.created_at,
    lastUpdatedAt: task.completed_at ?? task.started_at ?? task.created_at,
    pollInterval: TASK_POLL_INTERVAL_MS,
  };
}

const MCP_STATUS: Readonly<Record<TaskView["status"], Task["status"]>> = {
  pending: "working",
  running: "working",
  input_required: "input_required",
  completed: "completed",
  failed: "failed",
  canceled: "cancelled",
};
