// Tool-name rules, checked when an agent is built: every name it lists must be a tool this deployment runs or a tool
// of a server it declares. The grammar of the names is src/contracts/tool-names.ts.
import { BUILTIN_TOOLS, MCP_WILDCARD_PATTERN, parseMcpToolName } from "../contracts/tool-names.ts";
import { InvalidToolError } from "../errors.ts";

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
