// The checks of a workflow that relate one part of its definition to another, made when it is loaded (a file at
// build, a TypeScript workflow when it is defined): the patterns against the nodes, the entry point, the edges and
// how a node branches, the conditions (parsed and type-checked), cycles (seed 003 rule 5: the graph is a DAG),
// unreachable nodes, the checkpoints, and the built-in tools a tool node calls with its arguments. The first problem
// is thrown as a WorkflowDefinitionError naming the node or the edge, at the key it is about.
//
// How a run will walk the graph follows from these rules: a node other than a condition has at most one edge out,
// without a condition; a condition node's edges are tried in order and the first whose condition holds is taken, the
// last may have none (the default); a node with no edge out ends the run.
import { Validator } from "@cfworker/json-schema";
import { parseMcpToolName } from "../contracts/tool-names.ts";
import { BUILTIN_TOOL_IMPLEMENTATIONS } from "../tools/builtin.ts";
import { type Condition, ConditionSyntaxError, parseCondition } from "./condition.ts";
import {
  type AgentNode,
  DEFAULT_REFLECTION_ROUNDS,
  type Pattern,
  type WorkflowDefinition,
  WorkflowDefinitionError,
  type WorkflowEdge,
} from "./definition.ts";

/**
 * Built-in tools a tool node may not call: AskUser waits for a person, which is what a human node is for; Task
 * delegates to an agent, which is what an agent node is.
 */
const NOT_FOR_TOOL_NODES: Readonly<Record<string, string>> = {
  AskUser: "use a human node to ask a person",
  Task: "use an agent node to run an agent",
};

/** A definition that passed every check, with its conditions parsed. */
export interface CheckedGraph {
  /** Each edge's condition by the edge's index, and each reflection node's `until` by node id. */
  edgeConditions: ReadonlyMap<number, Condition>;
  untilConditions: ReadonlyMap<string, Condition>;
}

/** Checks `workflow` as a whole; throws the first problem. */
export function checkGraph(workflow: WorkflowDefinition): CheckedGraph {
  const fail = (keys: readonly PropertyKey[], detail: string): never => {
    throw new WorkflowDefinitionError(workflow.name, keys, detail);
  };
  const nodes = workflow.nodes;
  const isNode = (id: string) => Object.hasOwn(nodes, id);
  const edgeName = (i: number, edge: WorkflowEdge) => `edge ${i} (${edge.from} → ${edge.to})`;

  checkPatterns(workflow, fail);
  const untilConditions = new Map<string, Condition>();
  for (const [id, node] of Object.entries(nodes)) {
    if (node.type === "agent" && node.until !== undefined) {
      untilConditions.set(id, condition(node.until, ["nodes", id, "until"], `node "${id}": until`, fail));
    }
    if (node.type === "tool") checkBuiltinTool(id, node.tool, node.arguments, fail);
  }

  if (!isNode(workflow.entry_point)) {
    fail(["entry_point"], `"${workflow.entry_point}" is not a node (nodes: ${Object.keys(nodes).join(", ")})`);
  }

  const out = new Map<string, number[]>(Object.keys(nodes).map((id) => [id, []]));
  const edgeConditions = new Map<number, Condition>();
  const seen = new Set<string>();
  workflow.edges.forEach((edge, i) => {
    if (!isNode(edge.from)) fail(["edges", i, "from"], `${edgeName(i, edge)}: "${edge.from}" is not a node`);
    if (!isNode(edge.to)) fail(["edges", i, "to"], `${edgeName(i, edge)}: "${edge.to}" is not a node`);
    const pair = `${edge.from}\n${edge.to}`;
    if (seen.has(pair)) fail(["edges", i], `${edgeName(i, edge)}: the same two nodes are joined by an earlier edge`);
    seen.add(pair);
    out.get(edge.from)?.push(i);
    if (edge.condition !== undefined) {
      if (nodes[edge.from]?.type !== "condition") {
        fail(
          ["edges", i, "condition"],
          `${edgeName(i, edge)}: only the edges leaving a condition node carry a condition, and "${edge.from}" is ${article(nodes[edge.from]?.type ?? "")} node`,
        );
      }
      edgeConditions.set(i, condition(edge.condition, ["edges", i, "condition"], edgeName(i, edge), fail));
    }
  });

  for (const [id, edges] of out) {
    if (nodes[id]?.type === "condition") {
      if (edges.length === 0) fail(["nodes", id], `node "${id}": a condition node needs edges out of it`);
      // Every edge but the last needs a condition: an edge without one after it could never be taken.
      const open = edges.slice(0, -1).find((i) => workflow.edges[i]?.condition === undefined);
      if (open !== undefined) {
        const edge = workflow.edges[open] as WorkflowEdge;
        fail(
          ["edges", open],
          `${edgeName(open, edge)}: leaves condition node "${id}" without a condition, but is not its last edge (only the last may be the default)`,
        );
      }
    } else if (edges.length > 1) {
      const second = edges[1] as number;
      fail(
        ["edges", second],
        `${edgeName(second, workflow.edges[second] as WorkflowEdge)}: node "${id}" already has an edge out; to branch, lead it to a condition node`,
      );
    }
  }

  const cycle = findCycle(Object.keys(nodes), (id) => (out.get(id) ?? []).map((i) => workflow.edges[i]?.to ?? ""));
  if (cycle) {
    const last = workflow.edges.findIndex((e) => e.from === cycle.at(-2) && e.to === cycle.at(-1));
    fail(
      ["edges", last],
      `the edges make a cycle: ${cycle.join(" → ")}; a workflow is a DAG (seed 003 rule 5): repeat work inside a pattern (reflection, supervisor), bounded by max_iterations`,
    );
  }

  const reached = reachable(workflow.entry_point, (id) => (out.get(id) ?? []).map((i) => workflow.edges[i]?.to ?? ""));
  const unreachable = Object.keys(nodes).filter((id) => !reached.has(id));
  if (unreachable[0] !== undefined) {
    fail(
      ["nodes", unreachable[0]],
      `node "${unreachable[0]}" cannot be reached from the entry point "${workflow.entry_point}"${unreachable.length > 1 ? ` (nor can ${unreachable.slice(1).join(", ")})` : ""}`,
    );
  }

  const listed = new Set<string>();
  workflow.checkpoints.forEach((id, i) => {
    if (!isNode(id)) fail(["checkpoints", i], `checkpoint "${id}" is not a node`);
    if (listed.has(id)) fail(["checkpoints", i], `checkpoint "${id}" is listed twice`);
    listed.add(id);
  });

  return { edgeConditions, untilConditions };
}

/** "an agent", "a tool". */
function article(word: string): string {
  return `${/^[aeiou]/.test(word) ? "an" : "a"} ${word}`;
}

type Fail = (keys: readonly PropertyKey[], detail: string) => never;

/** The patterns list names exactly the patterns the agent nodes run; each node has its pattern's settings only. */
function checkPatterns(workflow: WorkflowDefinition, fail: Fail): void {
  const declared = new Set<Pattern>();
  workflow.patterns.forEach((pattern, i) => {
    if (declared.has(pattern)) fail(["patterns", i], `"${pattern}" is listed twice`);
    declared.add(pattern);
  });
  const used = new Set<Pattern>();
  for (const [id, node] of Object.entries(workflow.nodes)) {
    if (node.type !== "agent") continue;
    used.add(node.pattern);
    if (!declared.has(node.pattern)) {
      fail(
        ["nodes", id, "pattern"],
        `node "${id}" runs the ${node.pattern} pattern, which the workflow's patterns do not list`,
      );
    }
    checkPatternSettings(id, node, workflow.max_iterations, fail);
  }
  workflow.patterns.forEach((pattern, i) => {
    if (!used.has(pattern)) fail(["patterns", i], `"${pattern}" is listed, but no agent node runs it`);
  });
}

/** Which settings each pattern takes; another pattern's setting is refused rather than ignored. */
const PATTERN_SETTINGS: Readonly<Record<Pattern, readonly ("critic" | "until" | "workers" | "max_rounds")[]>> = {
  react: [],
  reflection: ["critic", "until", "max_rounds"],
  supervisor: ["workers", "max_rounds"],
};

function checkPatternSettings(id: string, node: AgentNode, maxIterations: number, fail: Fail): void {
  const allowed = PATTERN_SETTINGS[node.pattern];
  for (const key of ["critic", "until", "workers", "max_rounds"] as const) {
    if (node[key] !== undefined && !allowed.includes(key)) {
      fail(["nodes", id, key], `node "${id}": ${key} is not a setting of the ${node.pattern} pattern`);
    }
  }
  if (node.pattern === "reflection" && node.critic === undefined) {
    fail(["nodes", id], `node "${id}": the reflection pattern needs a critic (the agent that critiques each draft)`);
  }
  if (node.pattern === "supervisor") {
    if (node.workers === undefined) {
      fail(["nodes", id], `node "${id}": the supervisor pattern needs workers (the agents its router chooses from)`);
    }
    const twice = node.workers.find((w, i) => node.workers?.indexOf(w) !== i);
    if (twice !== undefined) fail(["nodes", id, "workers"], `node "${id}": worker "${twice}" is listed twice`);
    if (node.workers.includes(node.agent)) {
      fail(["nodes", id, "workers"], `node "${id}": the router "${node.agent}" cannot be one of its own workers`);
    }
  }
  const rounds = node.max_rounds ?? (node.pattern === "reflection" ? DEFAULT_REFLECTION_ROUNDS : undefined);
  if (rounds !== undefined && rounds > maxIterations) {
    fail(
      ["nodes", id, "max_rounds"],
      `node "${id}": ${rounds} rounds exceed the workflow's max_iterations (${maxIterations})`,
    );
  }
}

function condition(source: string, keys: readonly PropertyKey[], what: string, fail: Fail): Condition {
  try {
    return parseCondition(source);
  } catch (error) {
    if (!(error instanceof ConditionSyntaxError)) throw error;
    return fail(keys, `${what}: invalid condition ${JSON.stringify(source)}: ${error.message}`);
  }
}

/**
 * A tool node calls a built-in tool this deployment runs (its arguments valid for the tool's input schema), or an
 * MCP tool by its mcp__<server>__<tool> name (its server is checked against the workflow's agents by
 * resolveWorkflow; the server's own tools are known only when a run connects to it).
 */
function checkBuiltinTool(id: string, tool: string, args: Record<string, unknown>, fail: Fail): void {
  if (parseMcpToolName(tool)) return;
  const reason = NOT_FOR_TOOL_NODES[tool];
  if (reason) fail(["nodes", id, "tool"], `node "${id}": ${tool} cannot be a tool node; ${reason}`);
  const builtin = BUILTIN_TOOL_IMPLEMENTATIONS.get(tool);
  if (!builtin) {
    const names = [...BUILTIN_TOOL_IMPLEMENTATIONS.keys()].filter((n) => !NOT_FOR_TOOL_NODES[n]).sort();
    fail(
      ["nodes", id, "tool"],
      `node "${id}": no tool named "${tool}" (built-in tools: ${names.join(", ")}; an MCP tool is mcp__<server>__<tool>)`,
    );
  }
  const result = new Validator(builtin?.inputSchema as never, "2020-12", false).validate(args);
  if (!result.valid) {
    const error = result.errors.at(-1);
    const where = error?.instanceLocation.replace(/^#\/?/, "") ?? "";
    fail(
      ["nodes", id, "arguments", ...(where ? where.split("/") : [])],
      `node "${id}": the arguments are not valid for ${tool}: ${error?.error ?? "invalid"}`,
    );
  }
}

/** A cycle as the node ids along it (first = last), or null. Iterative DFS: a workflow may hold 100 nodes. */
function findCycle(ids: readonly string[], next: (id: string) => string[]): string[] | null {
  const state = new Map<string, "open" | "done">();
  for (const start of ids) {
    if (state.has(start)) continue;
    const path: string[] = [start];
    const stack: { id: string; rest: string[] }[] = [{ id: start, rest: next(start) }];
    state.set(start, "open");
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { id: string; rest: string[] };
      const child = top.rest.shift();
      if (child === undefined) {
        state.set(top.id, "done");
        stack.pop();
        path.pop();
      } else if (state.get(child) === "open") {
        return [...path.slice(path.indexOf(child)), child];
      } else if (!state.has(child)) {
        state.set(child, "open");
        path.push(child);
        stack.push({ id: child, rest: next(child) });
      }
    }
  }
  return null;
}

function reachable(entry: string, next: (id: string) => string[]): Set<string> {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    for (const child of next(id)) {
      if (!seen.has(child)) {
        seen.add(child);
        queue.push(child);
      }
    }
  }
  return seen;
}
