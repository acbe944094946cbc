// The tools the MCP server lists for a key's tenant: one per agent the tenant may run (its input the task creation
// body, its output the ExecutionResult), and two for chat sessions (start one on an agent, send it a message).
// Session tools are named with a hyphen, which no agent name can hold (AGENT_NAME_PATTERN), so they never collide.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Agent } from "../agents/agent.ts";
import { ExecutionResultSchema } from "../contracts/execution-result.ts";
import { CreateSessionBody, CreateTaskBody, SendMessageBody, TaskIdParam } from "../http/schemas.ts";

export const START_SESSION_TOOL = "start-session";
export const SEND_MESSAGE_TOOL = "send-message";

/** start-session's arguments: the session's settings (POST /v1/agents/:name/sessions) and its first message. */
export const StartSessionArguments = CreateSessionBody.extend({
  agent: z.string().min(1).max(64).describe("The agent to hold the conversation with (one of the agent tools)."),
  message: SendMessageBody.shape.message,
});

/** send-message's arguments: the session (start-session's session_id) and the message (POST /v1/sessions/:id/messages). */
export const SendMessageArguments = SendMessageBody.extend({
  session_id: TaskIdParam.describe("The session_id start-session answered with."),
});

/** What a session tool answers: the turn's ExecutionResult, with the session and turn it belongs to. */
export const TurnResultSchema = z.lazy(() =>
  ExecutionResultSchema.unwrap().extend({ session_id: z.uuid(), turn_id: z.uuid() }),
);

/**
 * A zod schema as a tool's JSON Schema. Draft 7, as the SDK's own McpServer emits: clients validate with Ajv's
 * default (draft-07) validator.
 */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): Tool["inputSchema"] {
  return z.toJSONSchema(schema, { io, target: "draft-7" }) as Tool["inputSchema"];
}

let schemas: { task: Tool["inputSchema"]; result: Tool["inputSchema"]; turn: Tool["inputSchema"] } | undefined;

/** Built on first use, like every wire schema, and kept for the isolate's life (they never change). */
function toolSchemas() {
  schemas ??= {
    task: jsonSchema(CreateTaskBody, "input"),
    result: jsonSchema(ExecutionResultSchema, "output"),
    turn: jsonSchema(TurnResultSchema, "output"),
  };
  return schemas;
}

/** The tools for the tenant's agents (agentsFor's list), then the session tools. */
export function toolList(agents: readonly Agent[]): Tool[] {
  const { task, result, turn } = toolSchemas();
  const names = agents.map((a) => a.name);
  const agentTools = agents.map(
    (agent): Tool => ({
      name: agent.name,
      description: `${agent.description ?? `The ${agent.name} agent.`} Runs it as an Outpost task on \`input\` and answers with the run's ExecutionResult.`,
      inputSchema: task,
      outputSchema: result,
      // A long run can answer with a task handle (tasks/get, tasks/result) instead of holding the request open.
      execution: { taskSupport: "optional" },
    }),
  );
  const startSession = StartSessionArguments.extend({
    agent: names.length > 0 ? z.enum(names as [string, ...string[]]) : StartSessionArguments.shape.agent,
  });
  return [
    ...agentTools,
    {
      name: START_SESSION_TOOL,
      description:
        "Starts a chat session on an agent with a first message and answers with the turn's ExecutionResult and the session_id; continue it with send-message.",
      inputSchema: jsonSchema(startSession, "input"),
      outputSchema: turn,
    },
    {
      name: SEND_MESSAGE_TOOL,
      description:
        "Sends a message to a chat session (start-session's session_id) and answers with the turn's ExecutionResult.",
      inputSchema: jsonSchema(SendMessageArguments, "input"),
      outputSchema: turn,
    },
  ];
}
