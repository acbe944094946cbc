// The shipped workflows of workflows/ run end to end (docs/workflows.md): each through POST
// /v1/workflows/:name/tasks against the model emulator, the Worker's own agents answering from a script that matches
// the task's input, which every child's prompt begins with.
import { describe, expect, it } from "vitest";
import { SubagentSessionListSchema, TaskResourceSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  type EventBody,
  events,
  ofType,
  parseBody,
  parseEvent,
  readSse,
  script,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

async function start(name: string, body: Record<string, unknown>) {
  const res = await api(`/v1/workflows/${name}/tasks`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(202);
  return parseBody(res, TaskResourceSchema);
}

/** Waits until the run asks for a person, and approves what it asks. */
async function approveWait(id: string, requestId: string): Promise<void> {
  const seen: EventBody[] = [];
  await readSse(await api(`/v1/tasks/${id}/events`), (frame) => {
    seen.push(parseEvent(frame.data));
    return ofType(seen, "input_requested").some((e) => e.payload.request_id === requestId);
  });
  const res = await api(`/v1/tasks/${id}/resume`, {
    method: "POST",
    body: JSON.stringify({ request_id: requestId, action: "approve" }),
  });
  expect(res.status).toBe(200);
}

async function children(id: string): Promise<string[]> {
  const { subagents } = await apiJson(`/v1/tasks/${id}/subagents`, SubagentSessionListSchema);
  return subagents.map((s) => `${s.tool_use_id} ${s.agent_name}`);
}

describe("the shipped workflows", () => {
  it("plan_and_build: plans, waits for approval, builds with review, and lists the files", async () => {
    const marker = uniqueMarker("plan-and-build");
    await script(marker, [{ content: [{ type: "text", text: "LGTM: a plan, a draft and a review in one." }] }]);
    const task = await start("plan_and_build", {
      input: `Add a dark mode. ${marker}`,
      files: { "README.md": "# App\n" },
    });
    await approveWait(task.id, "wf:approve");
    const done = await waitForTask(task.id, 30);
    expect(done.status).toBe("completed");
    expect(done.result).toContain("README.md");
    expect(await children(task.id)).toEqual([
      "wf:plan:1:planner planner",
      "wf:build:1:draft coder",
      "wf:build:1:critique assistant",
    ]);
    const log = await events(task.id);
    expect(ofType(log, "workflow_node_completed").map((e) => e.payload.node)).toEqual([
      "plan",
      "approve",
      "build",
      "list_files",
    ]);
  });

  it("issue_triage: escalates a high-severity issue to a person", async () => {
    const marker = uniqueMarker("triage-high");
    await script(marker, [{ content: [{ type: "text", text: "The cache is stale; clear it first." }] }]);
    const task = await start("issue_triage", {
      input: `Users see old data. ${marker}`,
      metadata: { severity: "high" },
    });
    await approveWait(task.id, "wf:escalate");
    const done = await waitForTask(task.id, 30);
    expect(done).toMatchObject({ status: "completed", result: "The cache is stale; clear it first." });
    const taken = ofType(await events(task.id), "workflow_edge_taken").map((e) => `${e.payload.from}→${e.payload.to}`);
    expect(taken).toEqual(["triage→route", "route→escalate"]);
  });

  it("issue_triage: plans any other issue, after a person approves the plan node", async () => {
    const marker = uniqueMarker("triage-plan");
    await script(marker, [{ content: [{ type: "text", text: "Add an index on users.email." }] }]);
    const task = await start("issue_triage", { input: `Login is slow. ${marker}` });
    await approveWait(task.id, "wf:plan");
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    expect(await children(task.id)).toEqual(["wf:triage:1:triage triage", "wf:plan:1:planner planner"]);
  });

  it("support_desk: the assistant routes to a worker until it answers finish", async () => {
    const marker = uniqueMarker("support-desk");
    await script(marker, [{ content: [{ type: "text", text: "planner" }] }]);
    // The router's second round finishes (its prompt names the round; the latest script that matches wins).
    await script("Round 2 of 6", [{ content: [{ type: "text", text: "finish" }] }]);
    const task = await start("support_desk", { input: `Plan the migration. ${marker}` });
    const done = await waitForTask(task.id, 30);
    expect(done.status).toBe("completed");
    expect(await children(task.id)).toEqual([
      "wf:desk:1:route assistant",
      "wf:desk:1:planner planner",
      "wf:desk:2:route assistant",
    ]);
  });
});
