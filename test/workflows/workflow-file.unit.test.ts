// Workflow files (src/workflows/workflow-file.ts): a problem is named by file, line and key; the shipped files of
// workflows/ load (built by scripts/build-workflows.ts before every test run) and are what the Worker serves.
import { describe, expect, it } from "vitest";
import { registry as agents } from "../../src/agents/catalog.ts";
import { workflows } from "../../src/workflows/catalog.ts";
import { WORKFLOW_FILES } from "../../src/workflows/files.generated.ts";
import { parseWorkflowFile, WorkflowFileError } from "../../src/workflows/workflow-file.ts";
import issueTriage from "../../workflows/issue_triage.yaml?raw";
import planAndBuild from "../../workflows/plan_and_build.yaml?raw";
import supportDesk from "../../workflows/support_desk.json?raw";

const GOOD = `name: review
patterns: [react]
nodes:
  draft:
    type: agent
    agent: assistant
  route:
    type: condition
  publish:
    type: human
edges:
  - from: draft
    to: route
  - from: route
    to: publish
    condition: metadata.ok
entry_point: draft
`;

function fileError(source: string, withAgents = true): WorkflowFileError {
  try {
    parseWorkflowFile("workflows/review.yaml", source, withAgents ? agents : undefined);
  } catch (error) {
    expect(error).toBeInstanceOf(WorkflowFileError);
    return error as WorkflowFileError;
  }
  throw new Error("the file was accepted");
}

describe("a workflow file", () => {
  it("loads, with its path as its source", () => {
    const workflow = parseWorkflowFile("workflows/review.yaml", GOOD, agents);
    expect(workflow.name).toBe("review");
    expect(workflow.source).toEqual({ kind: "file", path: "workflows/review.yaml" });
    expect(
      workflow
        .edgeCondition(1)
        ?.evaluate({ routing_key: null, current_agent: null, last_message: "", metadata: { ok: true } }),
    ).toBe(true);
  });

  it("names the line and key of an unknown key", () => {
    const error = fileError(GOOD.replace("    type: human\n", "    type: human\n    timeout: 5\n"));
    expect(error.message).toBe("workflows/review.yaml:11: nodes.publish.timeout: unknown key");
    expect([error.line, error.key]).toEqual([11, "nodes.publish.timeout"]);
  });

  it("names the line of an unknown node type", () => {
    expect(fileError(GOOD.replace("type: condition", "type: branch")).message).toBe(
      "workflows/review.yaml:8: nodes.route.type: unknown node type; a node is one of agent, tool, condition, human",
    );
  });

  it("names the line of an edge to an unknown node", () => {
    expect(fileError(GOOD.replace("    to: publish", "    to: publsh")).message).toBe(
      'workflows/review.yaml:15: edges.1.to: edge 1 (route → publsh): "publsh" is not a node',
    );
  });

  it("names the line of a condition that does not parse, and its column", () => {
    expect(fileError(GOOD.replace("condition: metadata.ok", "condition: metadata.ok ==")).message).toBe(
      'workflows/review.yaml:16: edges.1.condition: edge 1 (route → publish): invalid condition "metadata.ok ==": Unexpected token: EOF at column 15',
    );
  });

  it("names the line of an agent that does not exist, when the agents are given", () => {
    const source = GOOD.replace("agent: assistant", "agent: asistant");
    expect(fileError(source).message).toBe(
      'workflows/review.yaml:6: nodes.draft.agent: node "draft": no agent named "asistant" (agents: assistant, coder, librarian, operator, planner, router, triage)',
    );
    expect(parseWorkflowFile("workflows/review.yaml", source).agents).toEqual(["asistant"]);
  });

  it("names the line of a missing entry point", () => {
    expect(fileError(GOOD.replace("entry_point: draft\n", "")).message).toBe(
      "workflows/review.yaml: entry_point: required",
    );
    expect(fileError(GOOD.replace("entry_point: draft", "entry_point: start")).message).toBe(
      'workflows/review.yaml:17: entry_point: "start" is not a node (nodes: draft, route, publish)',
    );
  });

  it("names the line of a YAML syntax error", () => {
    expect(fileError(GOOD.replace("  draft:\n", "  draft:\n   - x\n")).message).toMatch(
      /^workflows\/review\.yaml:5: not valid YAML: /,
    );
  });

  it("reads JSON too", () => {
    const json = JSON.stringify({
      name: "j",
      patterns: [],
      nodes: { ask: { type: "human" } },
      edges: [],
      entry_point: "ask",
    });
    expect(parseWorkflowFile("workflows/j.json", json, agents).definition.nodes).toEqual({ ask: { type: "human" } });
  });
});

describe("the shipped workflows", () => {
  it.each([
    ["workflows/issue_triage.yaml", issueTriage],
    ["workflows/plan_and_build.yaml", planAndBuild],
    ["workflows/support_desk.json", supportDesk],
  ])("%s loads against the Worker's agents", (path, source) => {
    const workflow = parseWorkflowFile(path, source, agents);
    expect(WORKFLOW_FILES.find((f) => f.path === path)?.definition).toEqual(workflow.definition);
  });

  it("are the workflows the Worker serves", () => {
    expect(workflows.list()).toEqual(["issue_triage", "plan_and_build", "support_desk"]);
    expect(WORKFLOW_FILES.map((f) => f.path)).toEqual([
      "workflows/issue_triage.yaml",
      "workflows/plan_and_build.yaml",
      "workflows/support_desk.json",
    ]);
  });

  it("route the triage workflow by its conditions, in order, with the last edge as the default", () => {
    const workflow = workflows.visible("issue_triage", "default");
    if (!workflow) throw new Error("issue_triage is not visible");
    const taken = (metadata: Record<string, unknown>, last: string) =>
      workflow.definition.edges.findIndex(
        (edge, i) =>
          edge.from === "route" &&
          (workflow
            .edgeCondition(i)
            ?.evaluate({ routing_key: null, current_agent: "triage", last_message: last, metadata }) ??
            true),
      );
    expect(taken({ severity: "high" }, "Crash on save.")).toBe(1);
    expect(taken({ severity: "low" }, "Which version?")).toBe(2);
    expect(taken({ severity: "low" }, "Fix the null check.")).toBe(3);
  });
});
