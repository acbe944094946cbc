// Which tools a run may use (seed 004 allowed_tools): the agent's declaration resolved against what its MCP servers
// really offer. Built-in names, mcp__<server>__<tool> names and mcp__<server>__* wildcards become the definitions
// sent to the model; a name, a tool's settings or a fallback that names a tool its server does not offer is an
// InvalidToolError once that server has answered.
import type { Tool } from "@anthropic-ai/sdk/resources/messages";
import type { ToolPermissions } from "../approvals/permissions.ts";
import { MCP_WILDCARD_PATTERN, parseMcpToolName } from "../contracts/tool-names.ts";
import { InvalidToolError } from "../errors.ts";
import type { EmbeddingProvider } from "../knowledge/embedding.ts";
import type { McpServerSpec } from "../mcp/config.ts";
import { BUILTIN_TOOL_IMPLEMENTATIONS } from "./builtin.ts";
import type { KnowledgeToolSpec } from "./knowledge-tools.ts";
import { type CatalogTool, type McpCatalog, MODEL_TOOL_NAME } from "./mcp-catalog.ts";
import { enabledBuiltins, type ToolSettings } from "./settings.ts";
import { TASK_TOOL, taskInputSchema } from "./task-tool.ts";

/** What an agent declares about its tools (the Agent class holds it). */
export interface ToolDeclaration {
  /** The agent's allowed_tools as written, or undefined for every configured tool. */
  allowedTools: readonly string[] | undefined;
  mcpServers: readonly McpServerSpec[];
  settings: ToolSettings;
  permissions: ToolPermissions;
  /** The agent's knowledge tools (src/tools/knowledge-tools.ts), offered under their own names. */
  knowledgeTools: readonly KnowledgeToolSpec[];
  /** What embeds their queries; null when the agent has none. */
  embeddingProvider: EmbeddingProvider | null;
}

/**
 * The tools a run may use, full name → definition, in the order sent to the model. An MCP tool is included once its
 * server has been discovered (before that, or when the server failed, its names are left out).
 */
export function resolveAllowedTools(declaration: ToolDeclaration, catalog: McpCatalog): Map<string, Tool> {
  const allowed = new Map<string, Tool>();
  const { allowedTools, mcpServers } = declaration;
  const serverTools = (server: string): CatalogTool[] => catalog.servers[server]?.tools ?? [];
  const available = (): string[] => [
    ...[...BUILTIN_TOOL_IMPLEMENTATIONS.keys()].filter((n) => allowedTools?.includes(n)),
    ...Object.entries(catalog.servers).flatMap(([s, e]) => e.tools.map((t) => `mcp__${s}__${t.name}`)),
  ];
  const addMcp = (server: string, tool: CatalogTool) => {
    const name = `mcp__${server}__${tool.name}`;
    if (!MODEL_TOOL_NAME.test(name) || !parseMcpToolName(name)) return;
    allowed.set(name, {
      name,
      description: tool.description,
      input_schema: tool.input_schema as Tool["input_schema"],
    });
  };
  const patterns = allowedTools ?? [
    ...enabledBuiltins(declaration.settings),
    ...mcpServers.map((s) => `mcp__${s.name}__*`),
  ];
  for (const pattern of patterns) {
    const builtin = BUILTIN_TOOL_IMPLEMENTATIONS.get(pattern);
    if (builtin) {
      allowed.set(pattern, {
        name: builtin.name,
        description: builtin.description,
        // The Task tool names the agents this one may delegate to.
        input_schema:
          builtin.name === TASK_TOOL ? taskInputSchema(declaration.settings.subagents.agents) : builtin.inputSchema,
      });
      continue;
    }
    const wildcard = MCP_WILDCARD_PATTERN.exec(pattern)?.[1];
    if (wildcard !== undefined) {
      // By name, not in the order the server listed them: the tools open the prompt the model's cache keys on, so
      // a server that lists its tools in another order next time must not change those bytes (docs/costs.md).
      const byName = [...serverTools(wildcard)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const tool of byName) addMcp(wildcard, tool);
      continue;
    }
    const mcp = parseMcpToolName(pattern);
    if (!mcp || !catalog.servers[mcp.server]) continue; // not discovered yet, or the server failed
    const tool = serverTools(mcp.server).find((t) => t.name === mcp.tool);
    if (!tool) throw new InvalidToolError(pattern, available(), `is not offered by MCP server "${mcp.server}"`);
    addMcp(mcp.server, tool);
  }
  // Settings and fallbacks must name real tools too, once their servers answered.
  for (const spec of mcpServers) {
    if (!catalog.servers[spec.name]) continue;
    for (const [tool, settings] of Object.entries(spec.tools)) {
      if (!serverTools(spec.name).some((t) => t.name === tool)) {
        throw new InvalidToolError(
          `mcp__${spec.name}__${tool}`,
          available(),
          `has settings but is not offered by MCP server "${spec.name}"`,
        );
      }
      for (const fallback of settings.fallbackTools) {
        const target = parseMcpToolName(fallback);
        if (target && catalog.servers[target.server] && !allowed.has(fallback)) {
          throw new InvalidToolError(
            fallback,
            available(),
            `is a fallback of mcp__${spec.name}__${tool} but is not an allowed tool`,
          );
        }
      }
    }
  }
  return allowed;
}
