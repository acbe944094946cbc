// Tool-name rules (seed 000 BUILTIN_TOOLS and the mcp__<server>__<tool> pattern), checked when an agent is built.
import { InvalidToolError } from "../errors.ts";

/** Seed 000's built-in tool names. Which of them a deployment can actually run is BUILTIN_TOOL_IMPLEMENTATIONS. */
export const BUILTIN_TOOLS: ReadonlySet<string> = new Set([
  "Read",
  "Write",
  "Edit",
  "Bash",
  "Glob",
  "Grep",
  "NotebookEdit",
  "WebFetch",
  "WebSearch",
  "TodoWrite",
  "BashOutput",
  "KillBash",
  "Task",
  "ExitPlanMode",
  "ListMcpResources",
  "ReadMcpResource",
]);

/** mcp__<server>__<tool>: server and tool names are letters, digits, '_' and '-', and never contain "__". */
export const MCP_TOOL_PATTERN = /^mcp__([A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*)__([A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*)$/;

export function parseMcpToolName(name: string): { server: string; tool: string } | null {
  const match = MCP_TOOL_PATTERN.exec(name);
  return match?.[1] && match[2] ? { server: match[1], tool: match[2] } : null;
}

/** mcp__<server>__*: every tool of a declared server, whatever the server turns out to offer. */
export const MCP_WILDCARD_PATTERN = /^mcp__([A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*)__\*$/;

/**
 * Throws InvalidToolError for the first name that is not allowed. `runnable` lists the built-in tools this
 * deployment implements: a seed tool name that Outpost cannot run on Workers yet is rejected up front rather
 * than failing in the middle of a run. MCP names must name a server in `servers`; whether the tool exists is
 * checked against the server's real list when a run connects.
 */
export function validateToolNames(
  names: readonly string[],
  runnable: ReadonlySet<string>,
  servers: ReadonlySet<string> = new Set(),
): void {
  const available = [...runnable, ...[...servers].map((s) => `mcp__${s}__*`)].sort();
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new InvalidToolError(name, available, "is listed twice");
    seen.add(name);
    const server = parseMcpToolName(name)?.server ?? MCP_WILDCARD_PATTERN.exec(name)?.[1];
    if (server !== undefined) {
      if (servers.has(server)) continue;
      throw new InvalidToolError(
        name,
        available,
        `names the MCP server "${server}", which this agent does not declare in mcpServers`,
      );
    }
    if (runnable.has(name)) continue;
    if (BUILTIN_TOOLS.has(name)) throw new InvalidToolError(name, available, "is not available in this deployment yet");
    throw new InvalidToolError(name, available);
  }
}
