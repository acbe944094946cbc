// The MCP server at /mcp (Streamable HTTP, the official SDK's Server and its Web-standard transport): every agent
// the key's tenant may run is a tool, and so are chat sessions (tools.ts, runs.ts). Stateless: a Worker isolate
// keeps nothing between requests, and the next request may reach another isolate, so each request gets its own
// Server and transport and no Mcp-Session-Id is issued. Whatever must outlive a request lives in Outpost's Durable
// Objects: a task-augmented call's handle is the Outpost task (task-store.ts).
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  type CreateTaskResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { Context } from "hono";
import { agentsFor, visibleAgent } from "../http/agent-lookup.ts";
import type { AppEnv } from "../http/app-env.ts";
import { requireScope } from "../http/auth.ts";
import { MAX_BODY_BYTES } from "../http/validation.ts";
import { protocolError, toolError } from "./errors.ts";
import { mcpTask, runAgentTool, runSendMessage, runStartSession, startAgentTask, type ToolExtra } from "./runs.ts";
import { OutpostTaskStore } from "./task-store.ts";
import { SEND_MESSAGE_TOOL, START_SESSION_TOOL, toolList } from "./tools.ts";

const SERVER_INFO = { name: "outpost", version: "0.1.0" };
/** Room for the JSON-RPC envelope around arguments as large as a /v1 body may be. */
const MAX_MESSAGE_BYTES = MAX_BODY_BYTES + 16 * 1024;

/** Answers one HTTP request to /mcp (POST: JSON-RPC messages; the answer JSON or an event stream). */
export async function mcpResponse(c: Context<AppEnv>): Promise<Response> {
  const server = mcpServer(c);
  // No sessionIdGenerator: the transport's stateless mode.
  const transport = new WebStandardStreamableHTTPServerTransport({ maxRequestBodySize: MAX_MESSAGE_BYTES });
  await server.connect(transport);
  return transport.handleRequest(c.req.raw);
}

function mcpServer(c: Context<AppEnv>): Server {
  const requestId = c.get("requestId");
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new OutpostTaskStore(c),
    // Not the default (Ajv): it generates code from strings, which production workerd refuses, and building it on
    // every request would cost CPU for nothing (the server validates no schema it does not send itself).
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    instructions:
      "Each agent is a tool: call it with `input` to run it as an Outpost task and get its ExecutionResult. " +
      "start-session and send-message hold a conversation with an agent.",
  });
  const scopes = c.get("apiKey").scopes;

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      requireScope(scopes, "read");
      return { tools: toolList(await agentsFor(c)) };
    } catch (error) {
      throw protocolError(requestId, error);
    }
  });

  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
      const { name, arguments: args, task } = request.params;
      try {
        // A call starts a run (run) and answers with what the run produced (read).
        requireScope(scopes, "run");
        requireScope(scopes, "read");
      } catch (error) {
        throw protocolError(requestId, error);
      }
      const ended = { ...extra, signal: AbortSignal.any([extra.signal, c.req.raw.signal]) } satisfies ToolExtra;
      if (name === START_SESSION_TOOL || name === SEND_MESSAGE_TOOL) {
        if (task) throw new McpError(ErrorCode.InvalidParams, `${name} is not run as a task; call it without one.`);
        return toolCall(requestId, () =>
          name === START_SESSION_TOOL ? runStartSession(c, args, ended) : runSendMessage(c, args, ended),
        );
      }
      let agent: Awaited<ReturnType<typeof visibleAgent>>;
      try {
        // A version that no longer passes the checks is refused here as the API refuses it (agent_version_invalid).
        agent = await visibleAgent(c, name);
      } catch (error) {
        throw protocolError(requestId, error);
      }
      // As the SDK's own McpServer answers a call of a tool it does not list.
      if (!agent) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
      if (task) {
        // A task-augmented call answers with the handle at once; a failure to start is the request's JSON-RPC error.
        try {
          return { task: mcpTask(await startAgentTask(c, agent, args)) };
        } catch (error) {
          throw protocolError(requestId, error);
        }
      }
      return toolCall(requestId, () => runAgentTool(c, agent, args, ended));
    },
  );
  return server;
}

/** A tool's work, its failure as an isError result; a client that went is told nothing (McpError passes through). */
async function toolCall(requestId: string, work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof McpError) throw error;
    return toolError(requestId, error);
  }
}
