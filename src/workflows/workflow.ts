// A workflow as the Worker holds it: its definition, checked (schema, then the graph), with its conditions parsed,
// and where it came from. defineWorkflow() makes one from TypeScript; a workflows/ file becomes one at build
// (workflow-file.ts). What it names outside itself (agents, MCP servers) is checked by resolveWorkflow() against the
// agents the Worker serves, when the workflow registry is assembled (registry.ts).
import { parseMcpToolName } from "../contracts/tool-names.ts";
import type { Condition, ConditionState } from "./condition.ts";
import { parseDefinition, type WorkflowDefinition, WorkflowDefinitionError, type WorkflowInput } from "./definition.ts";
import { checkGraph } from "./graph.ts";

export type WorkflowSource = { kind: "file"; path: string } | { kind: "typescript" };

export interface Workflow {
  readonly name: string;
  readonly definition: WorkflowDefinition;
  readonly source: WorkflowSource;
  /** The condition of edge `index`, parsed; undefined for an edge without one. */
  edgeCondition(index: number): Condition | undefined;
  /** A reflection node's `until`, parsed. */
  untilCondition(node: string): Condition | undefined;
  /** Every agent the workflow names (agent nodes, critics, workers), sorted. */
  readonly agents: readonly string[];
}

/** A workflow defined in TypeScript: checked at once, so a broken one fails where it is defined. */
export function defineWorkflow(input: WorkflowInput): Workflow {
  return checkedWorkflow(input, { kind: "typescript" });
}

/** Parses and checks a definition (the schema, then the graph); throws a WorkflowDefinitionError. */
export function checkedWorkflow(input: unknown, source: WorkflowSource): Workflow {
  const definition = parseDefinition(input);
  const graph = checkGraph(definition);
  const agents = new Set<string>();
  for (const node of Object.values(definition.nodes)) {
    if (node.type !== "agent") continue;
    agents.add(node.agent);
    if (node.critic) agents.add(node.critic);
    for (const worker of node.workers ?? []) agents.add(worker);
  }
  return Object.freeze({
    name: definition.name,
    definition,
    source,
    agents: Object.freeze([...agents].sort()),
    edgeCondition: (index: number) => graph.edgeConditions.get(index),
    untilCondition: (node: string) => graph.untilConditions.get(node),
  });
}

/** What resolveWorkflow needs of the agents the Worker serves (AgentRegistry has it). */
export interface AgentCatalog {
  list(): string[];
  create(name: string): { readonly mcpServers: readonly { readonly name: string }[] };
}

/**
 * Checks what the workflow names outside itself: every agent exists, and every MCP tool node's server is declared
 * by one of the workflow's agents (a workflow declares no servers of its own: the agent's declaration says where
 * the server is and with which headers). Throws a WorkflowDefinitionError naming the node.
 */
export function resolveWorkflow(workflow: Workflow, agents: AgentCatalog): void {
  const known = new Set(agents.list());
  const fail = (keys: readonly PropertyKey[], detail: string): never => {
    throw new WorkflowDefinitionError(workflow.name, keys, detail);
  };
  const nodes = Object.entries(workflow.definition.nodes);
  for (const [id, node] of nodes) {
    if (node.type !== "agent") continue;
    const named: [PropertyKey[], string][] = [
      [["agent"], node.agent],
      ...(node.critic ? [[["critic"], node.critic] as [PropertyKey[], string]] : []),
      ...(node.workers ?? []).map((w, i): [PropertyKey[], string] => [["workers", i], w]),
    ];
    for (const [keys, agent] of named) {
      if (!known.has(agent)) {
        fail(
          ["nodes", id, ...keys],
          `node "${id}": no agent named "${agent}" (agents: ${[...known].sort().join(", ")})`,
        );
      }
    }
  }
  const servers = new Set(workflow.agents.flatMap((name) => agents.create(name).mcpServers.map((s) => s.name)));
  for (const [id, node] of nodes) {
    if (node.type !== "tool") continue;
    const mcp = parseMcpToolName(node.tool);
    if (mcp && !servers.has(mcp.server)) {
      fail(
        ["nodes", id, "tool"],
        `node "${id}": no agent of this workflow declares the MCP server "${mcp.server}" (declared: ${[...servers].sort().join(", ") || "none"})`,
      );
    }
  }
}

/** Whether the condition of edge `index` holds for `state` (true for an edge without a condition). */
export function edgeHolds(workflow: Workflow, index: number, state: ConditionState): boolean {
  return workflow.edgeCondition(index)?.evaluate(state) ?? true;
}
