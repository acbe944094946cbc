// MCP discovery: when a run starts, each of the agent's MCP servers is asked for its tools, in one journaled step,
// so a resumed run offers the model the same tools without asking again. A tool whose full name the model cannot be
// given is left out and the event says why; a server that cannot be reached is recorded with the reason.
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolRuntime } from "../contracts/runtime.ts";
import { parseMcpToolName } from "../contracts/tool-names.ts";
import { toErrorInfo } from "../errors.ts";
import type { McpSession } from "../mcp/session.ts";

/** One discovered MCP tool, as the journal keeps it. */
export interface CatalogTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
  /** The server marks the tool read-only (annotations.readOnlyHint): its calls may run beside other reads. */
  read_only?: true;
}

/** The journaled result of connecting: each server's tools, or why it could not be reached. */
export interface McpCatalog {
  servers: Record<string, { transport: string; tools: CatalogTool[] }>;
  failed: Record<string, { code: string; message: string }>;
}

/** Anthropic's rule for tool names; an MCP tool whose full name breaks it cannot be offered to the model. */
export const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** Lists every session's tools; emits mcp_connection_failed per server that fails and mcp_servers_connected. */
export async function discoverTools(sessions: Iterable<McpSession>, runtime: ToolRuntime): Promise<McpCatalog> {
  const catalog: McpCatalog = { servers: {}, failed: {} };
  const skipped: { server: string; tool: string; reason: string }[] = [];
  await Promise.all(
    [...sessions].map(async (session) => {
      try {
        const tools = await session.listTools(runtime.signal);
        const usable = tools.filter((tool) => unusableReason(session.name, tool.name) === null);
        for (const tool of tools) {
          const reason = unusableReason(session.name, tool.name);
          if (reason) skipped.push({ server: session.name, tool: tool.name, reason });
        }
        catalog.servers[session.name] = {
          transport: session.transportUsed ?? "streamable_http",
          tools: usable.map((tool) => toCatalogTool(tool)),
        };
      } catch (error) {
        if (runtime.signal.aborted) throw error;
        const info = toErrorInfo(error);
        catalog.failed[session.name] = { code: info.code, message: info.message };
        runtime.emit("mcp_connection_failed", { server: session.name, error: info });
      }
    }),
  );
  const connected = Object.entries(catalog.servers);
  if (connected.length > 0) {
    const tools = connected.flatMap(([server, entry]) => entry.tools.map((t) => `mcp__${server}__${t.name}`));
    runtime.emit("mcp_servers_connected", {
      server_count: connected.length,
      tool_count: tools.length,
      tools,
      servers: Object.fromEntries(connected.map(([server, entry]) => [server, { transport: entry.transport }])),
      // Tools whose full name the model cannot be given (they are not offered).
      skipped_tools: skipped,
    });
  }
  return catalog;
}

/** Why mcp__<server>__<tool> cannot be offered to the model, or null when it can. */
function unusableReason(server: string, tool: string): string | null {
  const name = `mcp__${server}__${tool}`;
  if (!parseMcpToolName(name))
    return "the tool name contains characters or a double underscore that mcp__<server>__<tool> cannot carry";
  if (!MODEL_TOOL_NAME.test(name)) return "the full tool name is longer than the model's 128-character limit";
  return null;
}

function toCatalogTool(tool: McpTool): CatalogTool {
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? tool.name,
    input_schema: tool.inputSchema as Record<string, unknown>,
    ...(tool.outputSchema ? { output_schema: tool.outputSchema as Record<string, unknown> } : {}),
    ...(tool.annotations?.readOnlyHint === true ? { read_only: true as const } : {}),
  };
}
