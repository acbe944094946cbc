// The names tools go by (seed 000 BUILTIN_TOOLS and the mcp__<server>__<tool> pattern): the grammar agent
// definitions, the Toolbox and the approval rules all parse with. A leaf: it imports nothing from the rest of src/.

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
