// The checks of a workflow definition (src/workflows/definition.ts, graph.ts) through defineWorkflow: the schema
// (unknown keys and node types refused with their path), then each rule relating one part to another, each asserted
// with its exact message, which names the node or the edge.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.ts";
import { WorkflowDefinitionError, type WorkflowInput } from "../../src/workflows/definition.ts";
import { defineWorkflow } from "../../src/workflows/workflow.ts";

/** A valid three-node workflow: draft → route (condition) → publish | review. */
function base(): WorkflowInput {
  return {
    name: "flow",
    patterns: ["react"],
    nodes: {
      draft: { type: "agent", agent: "assistant" },
      route: { type: "condition" },
      publish: { type: "tool", tool: "Glob", arguments: { pattern: "**/*" } },
      review: { type: "human", prompt: "Check it." },
    },
    edges: [
      { from: "draft", to: "route" },
      { from: "route", to: "review", condition: 'metadata.risk == "high"' },
      { from: "route", to: "publish" },
    ],
    entry_point: "draft",
  };
}

/** The message defineWorkflow throws for `input`, after checking it is a WorkflowDefinitionError (a ConfigError). */
function refusal(input: unknown): string {
  try {
    defineWorkflow(input as WorkflowInput);
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowDefinitionError);
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the workflow was accepted");
}

describe("a valid workflow", () => {
  it("is accepted with seed 003's defaults applied", () => {
    const workflow = defineWorkflow(base());
    expect(workflow.name).toBe("flow");
    expect(workflow.definition.max_iterations).toBe(50);
    expect(workflow.definition.checkpoints).toEqual([]);
    expect(workflow.definition.nodes.draft).toEqual({ type: "agent", agent: "assistant", pattern: "react" });
    expect(workflow.agents).toEqual(["assistant"]);
    expect(workflow.edgeCondition(1)?.source).toBe('metadata.risk == "high"');
    expect(workflow.edgeCondition(2)).toBeUndefined();
    expect(workflow.source).toEqual({ kind: "typescript" });
  });
});

describe("the schema", () => {
  it("refuses an unknown key with its path", () => {
    const input = base();
    input.nodes.draft = { type: "agent", agent: "assistant", model: "x" } as never;
    expect(refusal(input)).toBe('Workflow "flow": nodes.draft.model: unknown key');
    expect(refusal({ ...base(), entry: "draft" })).toBe('Workflow "flow": entry: unknown key');
  });

  it("refuses an unknown node type, naming the node", () => {
    const input = base();
    input.nodes.route = { type: "router" } as never;
    expect(refusal(input)).toBe(
      'Workflow "flow": nodes.route.type: unknown node type; a node is one of agent, tool, condition, human',
    );
  });

  it("refuses a workflow without an entry point", () => {
    const { entry_point: _, ...input } = base();
    expect(refusal(input)).toBe('Workflow "flow": entry_point: required');
  });

  it("refuses an agent node without an agent, and a node id that is not an identifier", () => {
    const input = base();
    input.nodes.draft = { type: "agent" } as never;
    expect(refusal(input)).toBe('Workflow "flow": nodes.draft.agent: required');
    expect(refusal({ ...base(), nodes: { "1st": { type: "human" } } })).toBe(
      'Workflow "flow": nodes.1st: must match /^[A-Za-z][A-Za-z0-9_-]*$/',
    );
  });

  it("refuses max_iterations below 1", () => {
    expect(refusal({ ...base(), max_iterations: 0 })).toBe(
      'Workflow "flow": max_iterations: Too small: expected number to be >=1',
    );
  });
});

describe("the graph", () => {
  it("refuses an entry point that is not a node", () => {
    expect(refusal({ ...base(), entry_point: "start" })).toBe(
      'Workflow "flow": entry_point: "start" is not a node (nodes: draft, route, publish, review)',
    );
  });

  it("refuses an edge to an unknown node, naming the edge", () => {
    const input = base();
    input.edges[2] = { from: "route", to: "publsh" };
    expect(refusal(input)).toBe('Workflow "flow": edges.2.to: edge 2 (route → publsh): "publsh" is not a node');
  });

  it("refuses an edge from an unknown node", () => {
    const input = base();
    input.edges.push({ from: "ghost", to: "publish" });
    expect(refusal(input)).toBe('Workflow "flow": edges.3.from: edge 3 (ghost → publish): "ghost" is not a node');
  });

  it("refuses a cycle, naming its nodes (seed 003 rule 5)", () => {
    const input = base();
    input.edges.push({ from: "review", to: "draft" });
    expect(refusal(input)).toBe(
      'Workflow "flow": edges.3: the edges make a cycle: draft → route → review → draft; a workflow is a DAG (seed 003 rule 5): repeat work inside a pattern (reflection, supervisor), bounded by max_iterations',
    );
  });

  it("refuses an unreachable node, naming it", () => {
    const input = base();
    input.nodes.orphan = { type: "human" };
    input.nodes.stray = { type: "human" };
    expect(refusal(input)).toBe(
      'Workflow "flow": nodes.orphan: node "orphan" cannot be reached from the entry point "draft" (nor can stray)',
    );
  });

  it("refuses a checkpoint that is not a node, and one listed twice", () => {
    expect(refusal({ ...base(), checkpoints: ["publish", "ship"] })).toBe(
      'Workflow "flow": checkpoints.1: checkpoint "ship" is not a node',
    );
    expect(refusal({ ...base(), checkpoints: ["publish", "publish"] })).toBe(
      'Workflow "flow": checkpoints.1: checkpoint "publish" is listed twice',
    );
  });

  it("refuses a condition on an edge that does not leave a condition node", () => {
    const input = base();
    input.edges[0] = { from: "draft", to: "route", condition: "true" };
    expect(refusal(input)).toBe(
      'Workflow "flow": edges.0.condition: edge 0 (draft → route): only the edges leaving a condition node carry a condition, and "draft" is an agent node',
    );
  });

  it("refuses a second edge out of a node that is not a condition", () => {
    const input = base();
    input.edges.push({ from: "draft", to: "publish" });
    expect(refusal(input)).toBe(
      'Workflow "flow": edges.3: edge 3 (draft → publish): node "draft" already has an edge out; to branch, lead it to a condition node',
    );
  });

  it("refuses a default edge of a condition node that is not its last", () => {
    const input = base();
    input.edges = [
      input.edges[0],
      { from: "route", to: "publish" },
      { from: "route", to: "review", condition: "true" },
    ] as WorkflowInput["edges"];
    expect(refusal(input)).toBe(
      'Workflow "flow": edges.1: edge 1 (route → publish): leaves condition node "route" without a condition, but is not its last edge (only the last may be the default)',
    );
  });

  it("refuses a condition node without edges out", () => {
    const input = base();
    input.nodes = { ...input.nodes, end: { type: "condition" } };
    input.edges.push({ from: "review", to: "end" });
    expect(refusal(input)).toBe('Workflow "flow": nodes.end: node "end": a condition node needs edges out of it');
  });

  it("refuses two edges joining the same nodes", () => {
    const input = base();
    input.edges.push({ from: "route", to: "publish" });
    expect(refusal(input)).toBe(
      'Workflow "flow": edges.3: edge 3 (route → publish): the same two nodes are joined by an earlier edge',
    );
  });

  it("refuses a condition that does not parse, with its column", () => {
    const input = base();
    input.edges[1] = { from: "route", to: "review", condition: 'metadata.risk == "high" &&' };
    expect(refusal(input)).toBe(
      'Workflow "flow": edges.1.condition: edge 1 (route → review): invalid condition "metadata.risk == \\"high\\" &&": Unexpected token: EOF at column 27',
    );
  });
});

describe("tool nodes", () => {
  it("refuses a tool that does not exist, listing the built-in tools", () => {
    const input = base();
    input.nodes.publish = { type: "tool", tool: "Deploy" };
    expect(refusal(input)).toBe(
      'Workflow "flow": nodes.publish.tool: node "publish": no tool named "Deploy" (built-in tools: Bash, Edit, Glob, Grep, Read, TodoWrite, WebFetch, Write; an MCP tool is mcp__<server>__<tool>)',
    );
  });

  it("refuses AskUser: a human node asks a person", () => {
    const input = base();
    input.nodes.publish = { type: "tool", tool: "AskUser" };
    expect(refusal(input)).toBe(
      'Workflow "flow": nodes.publish.tool: node "publish": AskUser cannot be a tool node; use a human node to ask a person',
    );
  });

  it("refuses arguments the built-in tool's input schema does not accept", () => {
    const input = base();
    input.nodes.publish = { type: "tool", tool: "Glob", arguments: { pattern: 7 } };
    expect(refusal(input)).toMatch(
      /^Workflow "flow": nodes\.publish\.arguments\.pattern: node "publish": the arguments are not valid for Glob: /,
    );
  });

  it("accepts an MCP tool by its mcp__ name (its server is checked against the agents later)", () => {
    const input = base();
    input.nodes.publish = { type: "tool", tool: "mcp__docs__publish", arguments: { draft: true } };
    expect(defineWorkflow(input).definition.nodes.publish).toEqual({
      type: "tool",
      tool: "mcp__docs__publish",
      arguments: { draft: true },
    });
  });
});

describe("patterns", () => {
  function reflection(node: Record<string, unknown>, extra: Partial<WorkflowInput> = {}): WorkflowInput {
    return {
      name: "loop",
      patterns: ["reflection"],
      nodes: { write: { type: "agent", agent: "coder", pattern: "reflection", critic: "assistant", ...node } as never },
      edges: [],
      entry_point: "write",
      ...extra,
    };
  }

  it("accepts a reflection node with its critic, bound and stop condition", () => {
    const workflow = defineWorkflow(reflection({ until: 'last_message.contains("LGTM")', max_rounds: 4 }));
    expect(workflow.agents).toEqual(["assistant", "coder"]);
    expect(workflow.untilCondition("write")?.source).toBe('last_message.contains("LGTM")');
  });

  it("refuses a reflection node without a critic", () => {
    expect(refusal(reflection({ critic: undefined }))).toBe(
      'Workflow "loop": nodes.write: node "write": the reflection pattern needs a critic (the agent that critiques each draft)',
    );
  });

  it("refuses rounds beyond max_iterations, the default 3 rounds included", () => {
    expect(refusal(reflection({ max_rounds: 60 }))).toBe(
      'Workflow "loop": nodes.write.max_rounds: node "write": 60 rounds exceed the workflow\'s max_iterations (50)',
    );
    expect(refusal(reflection({}, { max_iterations: 2 }))).toBe(
      'Workflow "loop": nodes.write.max_rounds: node "write": 3 rounds exceed the workflow\'s max_iterations (2)',
    );
  });

  it("refuses a setting of another pattern", () => {
    expect(refusal(reflection({ workers: ["planner"] }))).toBe(
      'Workflow "loop": nodes.write.workers: node "write": workers is not a setting of the reflection pattern',
    );
  });

  it("refuses a pattern the workflow's patterns do not list, and a listed pattern no node runs", () => {
    expect(refusal(reflection({}, { patterns: ["react"] }))).toBe(
      'Workflow "loop": nodes.write.pattern: node "write" runs the reflection pattern, which the workflow\'s patterns do not list',
    );
    expect(refusal(reflection({}, { patterns: ["reflection", "supervisor"] }))).toBe(
      'Workflow "loop": patterns.1: "supervisor" is listed, but no agent node runs it',
    );
  });

  it("refuses a supervisor without workers, or whose router is one of its workers", () => {
    const supervisor = (node: Record<string, unknown>): WorkflowInput => ({
      name: "desk",
      patterns: ["supervisor"],
      nodes: { desk: { type: "agent", agent: "assistant", pattern: "supervisor", ...node } as never },
      edges: [],
      entry_point: "desk",
    });
    expect(defineWorkflow(supervisor({ workers: ["planner", "coder"] })).agents).toEqual([
      "assistant",
      "coder",
      "planner",
    ]);
    expect(refusal(supervisor({}))).toBe(
      'Workflow "desk": nodes.desk: node "desk": the supervisor pattern needs workers (the agents its router chooses from)',
    );
    expect(refusal(supervisor({ workers: ["planner", "assistant"] }))).toBe(
      'Workflow "desk": nodes.desk.workers: node "desk": the router "assistant" cannot be one of its own workers',
    );
  });
});
