// Tool-name rules, checked when an agent is built: every name it lists must be a tool this deployment runs or a tool
// of a server it declares. The grammar of the names is src/contracts/tool-names.ts.
import { BUILTIN_TOOLS, MCP_WILDCARD_PATTERN, parseMcpToolName } from "../contracts/tool-names.ts";
import { InvalidToolError } from "../errors.ts";

/** Longest tool name a refusal repeats: a 100 KiB name is cut, not sent back whole. */
const SHOWN_NAME_CHARS = 200;

/** A name of a definition's list that is not allowed, and the key of its entry ("allowedTools.2"). */
export class ToolNameError extends InvalidToolError {
  readonly key: string;
  constructor(key: string, toolName: string, availableTools: readonly string[], problem?: string) {
    const shown = toolName.length > SHOWN_NAME_CHARS ? `${toolName.slice(0, SHOWN_NAME_CHARS)}…` : toolName;
    super(shown, availableTools, problem);
    // A failed task names its error's type: still an InvalidToolError, as before keys were given.
    this.name = "InvalidToolError";
    this.key = key;
  }
}

/**
 * Throws an InvalidToolError (a ToolNameError naming `key.<index>`) for the first name that is not allowed.
 * `runnable` lists the built-in tools this deployment implements: a seed tool name that Outpost cannot run on
 * Workers yet is rejected up front rather than failing in the middle of a run. MCP names must name a server in
 * `servers`; whether the tool exists is checked against the server's real list when a run connects.
 */
export function validateToolNames(
  names: readonly string[],
  runnable: ReadonlySet<string>,
  servers: ReadonlySet<string> = new Set(),
  key = "allowedTools",
): void {
  const available = [...runnable, ...[...servers].map((s) => `mcp__${s}__*`)].sort();
  const seen = new Set<string>();
  for (const [index, name] of names.entries()) {
    const refuse = (problem?: string) => new ToolNameError(`${key}.${index}`, name, available, problem);
    if (seen.has(name)) throw refuse("is listed twice");
    seen.add(name);
    const server = parseMcpToolName(name)?.server ?? MCP_WILDCARD_PATTERN.exec(name)?.[1];
    if (server !== undefined) {
      if (servers.has(server)) continue;
      throw refuse(`names the MCP server "${server}", which this agent does not declare in mcpServers`);
    }
    if (runnable.has(name)) continue;
    if (BUILTIN_TOOLS.has(name)) throw refuse("is not available in this deployment yet");
    throw refuse();
  }
}
