// GET /v1/workflows and GET /v1/workflows/:name through the HTTP API: the shipped workflows (workflows/) as their
// definitions were checked, the scope they need, and 404 workflow_not_found for a name the tenant cannot see.
import { describe, expect, it } from "vitest";
import { WorkflowListSchema, WorkflowSchema } from "../../../src/http/responses.ts";
import { api, apiJson, expectError } from "../../support/helpers.ts";

describe("GET /v1/workflows", () => {
  it("lists the shipped workflows by name, each with its source", async () => {
    const body = await apiJson("/v1/workflows", WorkflowListSchema);
    expect(body.workflows.map((w) => [w.name, w.source])).toEqual([
      ["issue_triage", { kind: "file", path: "workflows/issue_triage.yaml" }],
      ["plan_and_build", { kind: "file", path: "workflows/plan_and_build.yaml" }],
      ["support_desk", { kind: "file", path: "workflows/support_desk.json" }],
    ]);
  });

  it("is readable with the read scope alone", async () => {
    const body = await apiJson("/v1/workflows", WorkflowListSchema, { key: "test-read-key" });
    expect(body.workflows).toHaveLength(3);
  });

  it("refuses a key without the read scope with 403 insufficient_scope", async () => {
    await expectError(await api("/v1/workflows", { key: "test-run-key" }), 403, "insufficient_scope", "authorization");
  });

  it("refuses a request without an API key with 401 unauthorized", async () => {
    await expectError(await api("/v1/workflows", { key: null }), 401, "unauthorized", "authorization");
  });
});

describe("GET /v1/workflows/:name", () => {
  it("describes a workflow with seed 003's defaults applied", async () => {
    const body = await apiJson("/v1/workflows/support_desk", WorkflowSchema);
    expect(body).toStrictEqual({
      name: "support_desk",
      description:
        "A supervisor: the assistant routes each request to the planner or the coder (routing_key) until it answers finish.",
      patterns: ["supervisor"],
      nodes: {
        desk: {
          type: "agent",
          agent: "assistant",
          pattern: "supervisor",
          workers: ["planner", "coder"],
          max_rounds: 6,
        },
      },
      edges: [],
      entry_point: "desk",
      checkpoints: [],
      max_iterations: 50,
      source: { kind: "file", path: "workflows/support_desk.json" },
    });
  });

  it("shows a condition node's edges with their conditions, in order", async () => {
    const body = await apiJson("/v1/workflows/issue_triage", WorkflowSchema);
    expect(body.edges).toEqual([
      { from: "triage", to: "route" },
      { from: "route", to: "escalate", condition: '"severity" in metadata && metadata.severity == "high"' },
      { from: "route", to: "ask_reporter", condition: 'last_message.endsWith("?")' },
      { from: "route", to: "plan" },
    ]);
    expect(body.checkpoints).toEqual(["plan"]);
  });

  it("answers an unknown name with 404 workflow_not_found naming the workflows there are", async () => {
    const body = await expectError(await api("/v1/workflows/deploy_all"), 404, "workflow_not_found", "name");
    expect(body.error.message).toBe(
      'No workflow named "deploy_all". Workflows: issue_triage, plan_and_build, support_desk.',
    );
  });
});
