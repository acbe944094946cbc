// The agent a workflow's task runs (POST /v1/workflows/:name/tasks): an Agent whose execute() walks the workflow's
// graph (run.ts) instead of a tool loop, so that the ordinary runner runs it and a workflow's run shares everything
// a task has: the supervisor's heartbeat and eviction recovery, cancel, input_required and resume, forks, the bundle,
// callbacks and retention. Its tools are those of its tool nodes, with the capabilities they need and nothing more;
// its sub-agents are the agents the workflow names, each node's agent running as a child task.

import { Agent } from "../agents/agent.ts";
import type { AgentContext } from "../agents/context.ts";
import type { AgentResult } from "../agents/result.ts";
import { parseMcpToolName } from "../contracts/tool-names.ts";
import type { McpServerSpec } from "../mcp/config.ts";
import type { ToolDeclaration } from "../tools/allowed-tools.ts";
import { runWorkflow, type WorkflowStart } from "./run.ts";
import type { Workflow } from "./workflow.ts";

/** How many of a workflow's children may run at once: the sub-agents' upper bound (a node runs one at a time). */
const MAX_PARALLEL = 16;

/** The Worker's agents as the workflow agent needs them: the MCP servers its tool nodes' tools come from. */
export interface WorkflowAgents {
  create(name: string): { readonly mcpServers: readonly McpServerSpec[] };
}

export class WorkflowAgent extends Agent {
  readonly workflow: Workflow;
  private readonly from: WorkflowStart | undefined;
  private readonly mcp: { servers: McpServerSpec[]; tools: string[] };

  constructor(workflow: Workflow, agents: WorkflowAgents, from?: WorkflowStart) {
    const tools = Object.values(workflow.definition.nodes).flatMap((node) => (node.type === "tool" ? [node.tool] : []));
    const builtins = tools.filter((tool) => parseMcpToolName(tool) === null);
    const has = (...names: string[]) => builtins.some((tool) => names.includes(tool));
    super({
      name: workflow.name,
      description: workflow.definition.description ?? `The workflow ${workflow.name}.`,
      systemPrompt: `Runs the workflow ${workflow.name}.`,
      // max_iterations is the run's limit; the task may tighten it (max_iterations or max_turns), never loosen it.
      maxTurns: workflow.definition.max_iterations,
      allowedTools: [...new Set(builtins)],
      fileSystem: { read: has("Read", "Glob", "Grep"), write: has("Write"), edit: has("Edit") },
      bash: { enabled: has("Bash") },
      webFetch: { enabled: has("WebFetch") },
      subagents: { enabled: true, max_parallel: MAX_PARALLEL, agents: [...workflow.agents] },
    });
    this.workflow = workflow;
    this.from = from;
    // An MCP tool node's server is the one an agent of the workflow declares (checked when the workflow was loaded).
    const mcpTools = tools.filter((tool) => parseMcpToolName(tool) !== null);
    const wanted = new Set(mcpTools.map((tool) => parseMcpToolName(tool)?.server));
    const servers = new Map<string, McpServerSpec>();
    for (const name of workflow.agents) {
      for (const server of agents.create(name).mcpServers) {
        if (wanted.has(server.name) && !servers.has(server.name)) servers.set(server.name, server);
      }
    }
    this.mcp = { servers: [...servers.values()], tools: [...new Set(mcpTools)] };
  }

  override execute(context: AgentContext): Promise<AgentResult> {
    return runWorkflow(context, this.workflow, this.from);
  }

  override toolDeclaration(): ToolDeclaration {
    const declared = super.toolDeclaration();
    if (this.mcp.tools.length === 0) return declared;
    return {
      ...declared,
      allowedTools: [...(declared.allowedTools ?? []), ...this.mcp.tools],
      mcpServers: this.mcp.servers,
    };
  }
}
