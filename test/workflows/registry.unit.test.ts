// The workflow registry (src/workflows/registry.ts): what a workflow names outside itself is resolved against the
// agents when it is assembled (agents, critics, workers, the MCP servers of mcp__ tool nodes), a name is used once,
// and a tenant sees the workflows whose agents it may all see. Built over a real AgentRegistry of real agents.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { AgentRegistry } from "../../src/agents/registry.ts";
import { ConfigError } from "../../src/errors.ts";
import { WorkflowDefinitionError, type WorkflowInput } from "../../src/workflows/definition.ts";
import { WorkflowRegistry } from "../../src/workflows/registry.ts";
import { defineWorkflow } from "../../src/workflows/workflow.ts";

function agentClass(name: string, extra: Record<string, unknown> = {}) {
  return class extends Agent {
    constructor() {
      super({ name, systemPrompt: "You help.", ...extra });
    }
  };
}

const agents = AgentRegistry.from({
  writer: agentClass("writer", { mcpServers: { docs: { url: "https://docs.example.com/mcp" } } }),
  critic: agentClass("critic"),
  beta_only: agentClass("beta_only", { tenants: ["beta"] }),
});

function workflow(name: string, nodes: WorkflowInput["nodes"], patterns: WorkflowInput["patterns"] = ["react"]) {
  const ids = Object.keys(nodes);
  return defineWorkflow({
    name,
    patterns,
    nodes,
    edges: ids.slice(1).map((to, i) => ({ from: ids[i] as string, to })),
    entry_point: ids[0] as string,
  });
}

function refusal(...list: ReturnType<typeof workflow>[]): string {
  try {
    WorkflowRegistry.from(agents, list);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the registry was assembled");
}

describe("resolving a workflow against the agents", () => {
  it("refuses an agent node naming an agent that does not exist", () => {
    const error = refusal(workflow("w", { a: { type: "agent", agent: "writter" } }));
    expect(error).toBe(
      'Workflow "w": nodes.a.agent: node "a": no agent named "writter" (agents: beta_only, critic, writer)',
    );
  });

  it("refuses a missing critic and a missing worker, at their keys", () => {
    const reflection = workflow(
      "r",
      { a: { type: "agent", agent: "writer", pattern: "reflection", critic: "editor" } },
      ["reflection"],
    );
    expect(refusal(reflection)).toBe(
      'Workflow "r": nodes.a.critic: node "a": no agent named "editor" (agents: beta_only, critic, writer)',
    );
    const supervisor = workflow(
      "s",
      { a: { type: "agent", agent: "writer", pattern: "supervisor", workers: ["critic", "ghost"] } },
      ["supervisor"],
    );
    expect(refusal(supervisor)).toBe(
      'Workflow "s": nodes.a.workers.1: node "a": no agent named "ghost" (agents: beta_only, critic, writer)',
    );
  });

  it("accepts an MCP tool node whose server one of the workflow's agents declares", () => {
    const list = WorkflowRegistry.from(agents, [
      workflow("m", { a: { type: "agent", agent: "writer" }, b: { type: "tool", tool: "mcp__docs__publish" } }),
    ]);
    expect(list.list()).toEqual(["m"]);
  });

  it("refuses an MCP tool node whose server no agent of the workflow declares", () => {
    const error = refusal(
      workflow("m", { a: { type: "agent", agent: "critic" }, b: { type: "tool", tool: "mcp__docs__publish" } }),
    );
    expect(error).toBe(
      'Workflow "m": nodes.b.tool: node "b": no agent of this workflow declares the MCP server "docs" (declared: none)',
    );
  });

  it("refuses a name defined twice", () => {
    const one = workflow("w", { a: { type: "human" } }, []);
    expect(refusal(one, one)).toBe('Workflow "w" is defined twice (a TypeScript workflow and a TypeScript workflow).');
  });

  it("throws a WorkflowDefinitionError with the key at fault", () => {
    try {
      WorkflowRegistry.from(agents, [workflow("w", { a: { type: "agent", agent: "nobody" } })]);
      throw new Error("assembled");
    } catch (error) {
      expect(error).toBeInstanceOf(WorkflowDefinitionError);
      expect((error as WorkflowDefinitionError).keys).toEqual(["nodes", "a", "agent"]);
    }
  });
});

describe("visibility", () => {
  const registry = WorkflowRegistry.from(agents, [
    workflow("open", { a: { type: "agent", agent: "writer" } }),
    workflow("beta_flow", { a: { type: "agent", agent: "writer" }, b: { type: "agent", agent: "beta_only" } }),
    workflow("people", { a: { type: "human" } }, []),
  ]);

  it("shows a tenant the workflows whose agents it may all see", () => {
    expect(registry.listFor("default").map((w) => w.name)).toEqual(["open", "people"]);
    expect(registry.listFor("beta").map((w) => w.name)).toEqual(["beta_flow", "open", "people"]);
  });

  it("answers a hidden workflow like an unknown one", () => {
    expect(registry.visible("beta_flow", "default")).toBeUndefined();
    expect(registry.visible("nothing", "default")).toBeUndefined();
    expect(registry.visible("beta_flow", "beta")?.name).toBe("beta_flow");
  });
});
