// Workflow runs end to end through the API (seed 003 Workflow, State, Checkpoint; docs/workflows.md): POST
// /v1/workflows/:name/tasks starts a task that walks the graph, each agent node's agent a child task answered by the
// model emulator, each node a journaled step behind a checkpoint at its id, conditions choosing the edges, human
// nodes waiting for POST /v1/tasks/:id/resume. The workflows and their agents are defined by the tests themselves,
// in the Worker's registries, as agents are for the other tests.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { registry } from "../../src/agents/catalog.ts";
import {
  CheckpointListSchema,
  MessageListSchema,
  SubagentSessionListSchema,
  TaskListSchema,
  TaskResourceSchema,
  TraceLogSchema,
} from "../../src/http/responses.ts";
import { CheckpointSchema } from "../../src/runtime/checkpoints.ts";
import { workflows } from "../../src/workflows/catalog.ts";
import type { WorkflowInput } from "../../src/workflows/definition.ts";
import { defineWorkflow } from "../../src/workflows/workflow.ts";
import {
  api,
  apiJson,
  type EventBody,
  emulatorRequests,
  events,
  expectError,
  fireTimers,
  ofType,
  parseBody,
  parseEvent,
  readSse,
  script,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

let counter = 0;

/**
 * An agent of the Worker whose every run answers `answer` (after `ttft_ms`): its system prompt carries a marker the
 * emulator's script matches, whatever prompt the workflow gives it.
 */
async function answering(
  label: string,
  answer: string,
  ttft_ms = 0,
  usage?: { input_tokens: number; output_tokens: number },
): Promise<string> {
  const name = `wf_${label}_${++counter}`;
  const marker = uniqueMarker(name);
  registry.register(
    name,
    class extends Agent {
      constructor() {
        super({ name, systemPrompt: `You are ${marker}.`, maxTurns: 2 });
      }
    },
  );
  await script(marker, [{ content: [{ type: "text", text: answer }], ...(usage ? { usage } : {}) }], { ttft_ms });
  return name;
}

/** Registers a workflow named for the test; returns its name. */
function workflow(definition: Omit<WorkflowInput, "name">): string {
  const name = `wf_test_${++counter}`;
  workflows.register(defineWorkflow({ ...definition, name }));
  return name;
}

async function runWorkflow(name: string, body: Record<string, unknown>) {
  const res = await api(`/v1/workflows/${name}/tasks`, { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(202);
  return parseBody(res, TaskResourceSchema);
}

/** The task's events up to the first moment `enough` holds of them (the stream stays open while a run waits). */
async function eventsUntil(id: string, enough: (events: EventBody[]) => boolean): Promise<EventBody[]> {
  const seen: EventBody[] = [];
  await readSse(await api(`/v1/tasks/${id}/events`), (frame) => {
    seen.push(parseEvent(frame.data));
    return enough(seen);
  });
  return seen;
}

const nodesOf = (log: EventBody[], type: string) => ofType(log, type).map((e) => e.payload.node);

describe("POST /v1/workflows/:name/tasks", () => {
  it("runs a three-node workflow, taking the edge whose condition holds", async () => {
    const classify = await answering("classify", '{"routing_key": "bug", "metadata": {"area": "editor"}}');
    const fix = await answering("fix", "Fixed the crash.");
    const reply = await answering("reply", "Thanks for writing.");
    const name = workflow({
      patterns: ["react"],
      nodes: {
        classify: { type: "agent", agent: classify },
        route: { type: "condition" },
        fix: { type: "agent", agent: fix },
        reply: { type: "agent", agent: reply },
      },
      edges: [
        { from: "classify", to: "route" },
        { from: "route", to: "fix", condition: 'routing_key == "bug"' },
        { from: "route", to: "reply" },
      ],
      entry_point: "classify",
    });
    const created = await runWorkflow(name, { input: "The editor crashes on save.", metadata: { source: "form" } });
    expect(created).toMatchObject({ workflow: name, assigned_agent: name, status: "pending" });

    const task = await waitForTask(created.id, 30);
    expect(task).toMatchObject({ status: "completed", result: "Fixed the crash.", workflow: name });
    const log = await events(task.id);
    expect(nodesOf(log, "workflow_node_started")).toEqual(["classify", "route", "fix"]);
    expect(nodesOf(log, "workflow_node_completed")).toEqual(["classify", "route", "fix"]);
    expect(ofType(log, "workflow_edge_taken").map((e) => e.payload)).toEqual([
      { from: "classify", to: "route", edge_index: 0, condition: null },
      { from: "route", to: "fix", edge_index: 1, condition: 'routing_key == "bug"' },
    ]);
    expect(ofType(log, "workflow_node_completed")[0]?.payload).toEqual({
      node: "classify",
      type: "agent",
      iteration: 1,
      current_agent: classify,
      routing_key: "bug",
      message_count: 2,
    });

    // Each node starts at a checkpoint at its id, holding the State as it was.
    const { checkpoints } = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    expect(checkpoints.map((c) => [c.position, c.next_action, c.message_count])).toEqual([
      ["classify", "run_node", 1],
      ["route", "run_node", 2],
      ["fix", "run_node", 2],
    ]);
    const atFix = await apiJson(
      `/v1/tasks/${task.id}/checkpoints/${checkpoints[2]?.checkpoint_id}`,
      CheckpointSchema.unwrap(),
    );
    expect(atFix.state).toMatchObject({ current_agent: classify, routing_key: "bug", metadata: { area: "editor" } });

    // Each agent node ran its agent as a child task, given the work so far as its prompt.
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(subagents.map((s) => [s.agent_name, s.status, s.summary])).toEqual([
      [classify, "completed", '{"routing_key": "bug", "metadata": {"area": "editor"}}'],
      [fix, "completed", "Fixed the crash."],
    ]);
    const fixChild = await apiJson(`/v1/tasks/${subagents[1]?.session_id}`, TaskResourceSchema);
    expect(fixChild.input).toContain("The editor crashes on save.");
    expect(fixChild.input).toContain('"routing_key": "bug"');

    // The run's messages are the State's: the input, then what each agent node answered.
    const { messages } = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "The editor crashes on save."],
      ["assistant", [{ type: "text", text: '{"routing_key": "bug", "metadata": {"area": "editor"}}' }]],
      ["assistant", [{ type: "text", text: "Fixed the crash." }]],
    ]);
    const trace = await apiJson(`/v1/tasks/${task.id}/trace`, TraceLogSchema);
    expect(trace.task_id).toBe(task.id);
  });

  it("refuses a body the agents' route refuses, naming the field", async () => {
    const agent = await answering("valid", "ok");
    const name = workflow({
      patterns: ["react"],
      nodes: { only: { type: "agent", agent } },
      edges: [],
      entry_point: "only",
    });
    const post = (body: unknown) => api(`/v1/workflows/${name}/tasks`, { method: "POST", body: JSON.stringify(body) });
    await expectError(await post({}), 400, "validation_failed", "input");
    await expectError(await post({ input: "x", colour: "red" }), 400, "validation_failed", "colour");
    await expectError(await post({ input: "x", dry_run: true }), 400, "validation_failed", "dry_run");
    // The workflow's max_iterations (default 50) may be tightened, never loosened.
    await expectError(await post({ input: "x", max_iterations: 51 }), 400, "validation_failed", "max_iterations");
    await expectError(
      await api("/v1/workflows/no_such_workflow/tasks", { method: "POST", body: JSON.stringify({ input: "x" }) }),
      404,
      "workflow_not_found",
      "name",
    );
  });
});

describe("budgets", () => {
  it("bound the whole run: each node's child gets what is left, and a node that finds nothing left fails it", async () => {
    // Each child's one model call uses 150 tokens.
    const usage = { input_tokens: 100, output_tokens: 50 };
    const [first, second, third] = await Promise.all([
      answering("budget_a", "a", 0, usage),
      answering("budget_b", "b", 0, usage),
      answering("budget_c", "c", 0, usage),
    ]);
    const name = workflow({
      patterns: ["react"],
      nodes: {
        first: { type: "agent", agent: first as string },
        second: { type: "agent", agent: second as string },
        third: { type: "agent", agent: third as string },
      },
      edges: [
        { from: "first", to: "second" },
        { from: "second", to: "third" },
      ],
      entry_point: "first",
    });
    const task = await runWorkflow(name, { input: "Go.", max_tokens: 250 });
    const failed = await waitForTask(task.id, 30);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({
      code: "workflow_node_failed",
      message: `Node "third": agent ${third}: This task's budget of 250 tokens is spent or held by its running sub-agents; do the rest yourself.`,
    });
    // 250, then the 100 left after the first child's 150; the second spent 150 in its one call, leaving nothing.
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    const limits = await Promise.all(
      subagents.map(async (s) => (await apiJson(`/v1/tasks/${s.session_id}`, TaskResourceSchema)).limits.max_tokens),
    );
    expect(limits).toEqual([250, 100]);
  });
});

describe("tool nodes", () => {
  it("calls the tool through the task's own tools, its call and result joining the State", async () => {
    const name = workflow({
      patterns: [],
      nodes: {
        write: { type: "tool", tool: "Write", arguments: { file_path: "notes.md", content: "# Notes\n" } },
        read: { type: "tool", tool: "Read", arguments: { file_path: "notes.md" } },
      },
      edges: [{ from: "write", to: "read" }],
      entry_point: "write",
    });
    const task = await waitForTask((await runWorkflow(name, { input: "Keep notes." })).id, 30);
    expect(task.status).toBe("completed");
    expect(task.result).toContain("# Notes");
    const file = await api(`/v1/tasks/${task.id}/workspace/notes.md`);
    expect(await file.text()).toBe("# Notes\n");
    const log = await events(task.id);
    expect(ofType(log, "tool_call_started").map((e) => e.payload.tool_name)).toEqual(["Write", "Read"]);
  });

  it("fails the run with workflow_node_failed, naming the node, when its tool returns an error", async () => {
    const name = workflow({
      patterns: [],
      nodes: { read: { type: "tool", tool: "Read", arguments: { file_path: "missing.md" } } },
      edges: [],
      entry_point: "read",
    });
    const task = await waitForTask((await runWorkflow(name, { input: "Read it." })).id, 30);
    expect(task.status).toBe("failed");
    expect(task.error?.code).toBe("workflow_node_failed");
    expect(task.error?.message).toMatch(/^Node "read": Read failed: /);
  });
});

describe("patterns", () => {
  it("ends a reflection loop at max_rounds when the critic never approves", async () => {
    const writer = await answering("writer", "Draft.");
    const critic = await answering("critic", "Needs more work.");
    const name = workflow({
      patterns: ["reflection"],
      nodes: {
        write: {
          type: "agent",
          agent: writer,
          pattern: "reflection",
          critic,
          max_rounds: 2,
          until: 'last_message.contains("LGTM")',
        },
      },
      edges: [],
      entry_point: "write",
    });
    const task = await waitForTask((await runWorkflow(name, { input: "Write a haiku." })).id, 30);
    expect(task).toMatchObject({ status: "completed", result: "Needs more work." });
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(subagents.map((s) => [s.tool_use_id, s.agent_name])).toEqual([
      ["wf:write:1:draft", writer],
      ["wf:write:1:critique", critic],
      ["wf:write:2:draft", writer],
      ["wf:write:2:critique", critic],
    ]);
    // The node ran once and its second round counted: two iterations.
    const [completed] = ofType(await events(task.id), "workflow_node_completed");
    expect(completed?.payload).toMatchObject({ node: "write", iteration: 2, current_agent: critic, message_count: 5 });
  });

  it("ends a reflection loop early when `until` holds after a critique", async () => {
    const writer = await answering("writer", "Draft.");
    const critic = await answering("critic", "LGTM, ship it.");
    const name = workflow({
      patterns: ["reflection"],
      nodes: {
        write: { type: "agent", agent: writer, pattern: "reflection", critic, until: 'last_message.contains("LGTM")' },
      },
      edges: [],
      entry_point: "write",
    });
    const task = await waitForTask((await runWorkflow(name, { input: "Write a limerick." })).id, 30);
    expect(task).toMatchObject({ status: "completed", result: "LGTM, ship it." });
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(subagents.map((s) => s.tool_use_id)).toEqual(["wf:write:1:draft", "wf:write:1:critique"]);
  });

  it("fails the run with max_iterations when node executions and rounds pass the task's bound", async () => {
    const writer = await answering("writer", "Draft.");
    const critic = await answering("critic", "Needs more work.");
    const name = workflow({
      patterns: ["reflection"],
      nodes: { write: { type: "agent", agent: writer, pattern: "reflection", critic, max_rounds: 3 } },
      edges: [],
      entry_point: "write",
    });
    const task = await waitForTask((await runWorkflow(name, { input: "Write.", max_iterations: 1 })).id, 30);
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({ code: "max_iterations" });
    // The first round ran; the second was not started.
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(subagents.map((s) => s.tool_use_id)).toEqual(["wf:write:1:draft", "wf:write:1:critique"]);
  });

  it("runs a supervisor: the router names each worker by routing_key until it answers finish", async () => {
    const marker = uniqueMarker("router");
    const router = `wf_router_${++counter}`;
    registry.register(
      router,
      class extends Agent {
        constructor() {
          super({ name: router, systemPrompt: `You are ${marker}.`, maxTurns: 2 });
        }
      },
    );
    const worker = await answering("worker", "Planned.");
    // The router's prompt tells it the round: the first round hands the work over, the second finishes.
    await script(`${marker}`, [{ content: [{ type: "text", text: worker }] }]);
    await script("Round 2 of 7", [{ content: [{ type: "text", text: "finish" }] }]);
    const name = workflow({
      patterns: ["supervisor"],
      nodes: { desk: { type: "agent", agent: router, pattern: "supervisor", workers: [worker], max_rounds: 7 } },
      edges: [],
      entry_point: "desk",
    });
    const task = await waitForTask((await runWorkflow(name, { input: "Plan the release." })).id, 30);
    expect(task).toMatchObject({ status: "completed", result: "Planned." });
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(subagents.map((s) => [s.tool_use_id, s.agent_name, s.summary])).toEqual([
      ["wf:desk:1:route", router, worker],
      [`wf:desk:1:${worker}`, worker, "Planned."],
      ["wf:desk:2:route", router, "finish"],
    ]);
    const [completed] = ofType(await events(task.id), "workflow_node_completed");
    expect(completed?.payload).toMatchObject({ routing_key: "finish", current_agent: router, iteration: 2 });
  });
});

describe("a person in the run", () => {
  /** A workflow asking a person (`ask`), then routing on the State's metadata. */
  async function triage(): Promise<{ name: string; escalate: string; plan: string }> {
    const escalate = await answering("escalate", "Escalated to on-call.");
    const plan = await answering("plan", "Planned for next sprint.");
    const name = workflow({
      patterns: ["react"],
      nodes: {
        ask: { type: "human", prompt: "How severe is it?" },
        route: { type: "condition" },
        escalate: { type: "agent", agent: escalate },
        plan: { type: "agent", agent: plan },
      },
      edges: [
        { from: "ask", to: "route" },
        { from: "route", to: "escalate", condition: '"severity" in metadata && metadata.severity == "high"' },
        { from: "route", to: "plan" },
      ],
      entry_point: "ask",
    });
    return { name, escalate, plan };
  }

  async function waiting(id: string) {
    await eventsUntil(id, (log) => ofType(log, "input_requested").length === 1);
    return apiJson(`/v1/tasks/${id}`, TaskResourceSchema);
  }

  const resume = (id: string, body: unknown) =>
    api(`/v1/tasks/${id}/resume`, { method: "POST", body: JSON.stringify(body) });

  it("waits at a human node, and goes on with the State as the person modified it", async () => {
    const { name, escalate } = await triage();
    const created = await runWorkflow(name, { input: "Checkout fails for some users.", metadata: { severity: "low" } });
    const task = await waiting(created.id);
    expect(task.status).toBe("input_required");
    expect(task.pending_input).toMatchObject({
      kind: "approval",
      request_id: "wf:ask",
      tool_name: "ask",
      input: { node: "ask", type: "human", prompt: "How severe is it?" },
      reason: "How severe is it?",
    });
    const { checkpoints } = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    expect(checkpoints.map((c) => [c.position, c.awaiting_human])).toEqual([["ask", true]]);

    // A decision names the request it answers.
    await expectError(
      await resume(task.id, { request_id: "wf:other", action: "approve" }),
      409,
      "pending_input_changed",
      "request_id",
      { pending_input: expect.objectContaining({ request_id: "wf:ask" }) },
    );
    await expectError(
      await resume(task.id, { request_id: "wf:ask", action: "modify", tool_input: { a: 1 } }),
      400,
      "validation_failed",
      "tool_input",
    );
    const decision = {
      request_id: "wf:ask",
      action: "modify",
      state_updates: {
        metadata: { severity: "high" },
        messages: [{ role: "user", content: "Customer data is at risk." }],
      },
    };
    expect((await resume(task.id, decision)).status).toBe(200);
    const done = await waitForTask(task.id, 30);
    expect(done).toMatchObject({ status: "completed", result: "Escalated to on-call." });
    // The same answer again is the recorded one; another is refused.
    const again = await resume(task.id, decision);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    await expectError(
      await resume(task.id, { request_id: "wf:ask", action: "approve" }),
      409,
      "already_decided",
      "request_id",
      { decision: expect.objectContaining({ request_id: "wf:ask", action: "modify" }) },
    );

    const log = await events(task.id);
    expect(nodesOf(log, "workflow_node_completed")).toEqual(["ask", "route", "escalate"]);
    expect(ofType(log, "workflow_edge_taken")[1]?.payload).toMatchObject({ from: "route", to: "escalate" });
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(subagents.map((s) => s.agent_name)).toEqual([escalate]);
    const child = await apiJson(`/v1/tasks/${subagents[0]?.session_id}`, TaskResourceSchema);
    expect(child.input).toContain("Customer data is at risk.");
    // The person's message joined the State's messages; the checkpoint after the wait holds the new metadata.
    const after = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    const atEscalate = after.checkpoints.find((c) => c.position === "escalate");
    const state = await apiJson(
      `/v1/tasks/${task.id}/checkpoints/${atEscalate?.checkpoint_id}`,
      CheckpointSchema.unwrap(),
    );
    expect(state.state.metadata).toEqual({ severity: "high" });
    expect(state.state.messages.map((m) => m.content)).toEqual([
      "Checkout fails for some users.",
      "Customer data is at risk.",
    ]);
  });

  it("sets the State's routing_key from a person's state_updates, and a condition routes on it", async () => {
    const fast = await answering("fast", "Fast path taken.");
    const slow = await answering("slow_path", "Slow path taken.");
    const name = workflow({
      patterns: ["react"],
      nodes: {
        pick: { type: "human", prompt: "fast or slow?" },
        route: { type: "condition" },
        fast: { type: "agent", agent: fast },
        slow: { type: "agent", agent: slow },
      },
      edges: [
        { from: "pick", to: "route" },
        { from: "route", to: "fast", condition: 'routing_key == "fast"' },
        { from: "route", to: "slow" },
      ],
      entry_point: "pick",
    });
    const task = await waiting((await runWorkflow(name, { input: "Choose." })).id);
    const res = await resume(task.id, {
      request_id: "wf:pick",
      action: "modify",
      state_updates: { routing_key: "fast" },
    });
    expect(res.status).toBe(200);
    expect(await waitForTask(task.id, 30)).toMatchObject({ status: "completed", result: "Fast path taken." });
    const [completed] = ofType(await events(task.id), "workflow_node_completed");
    expect(completed?.payload).toMatchObject({ node: "pick", routing_key: "fast" });
  });

  it("refuses state_updates.routing_key for a task of one agent, whose State has none", async () => {
    const agent = await answering("single", "Single answer.");
    const started = await api(`/v1/agents/${agent}/tasks`, { method: "POST", body: JSON.stringify({ input: "Hi." }) });
    const task = await waitForTask((await parseBody(started, TaskResourceSchema)).id, 30);
    await expectError(
      await resume(task.id, { request_id: "x", action: "modify", state_updates: { routing_key: "fast" } }),
      400,
      "validation_failed",
      "state_updates.routing_key",
    );
    const { checkpoints } = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    const fork = await api(`/v1/tasks/${task.id}/fork`, {
      method: "POST",
      body: JSON.stringify({
        checkpoint_id: checkpoints[0]?.checkpoint_id,
        state_updates: { routing_key: "fast" },
      }),
    });
    await expectError(fork, 400, "validation_failed", "state_updates.routing_key");
  });

  it("shows a node's child waiting for a person on the workflow's task, which answers it with tool_input", async () => {
    const marker = uniqueMarker("asks");
    const name = `wf_asks_${++counter}`;
    registry.register(
      name,
      class extends Agent {
        constructor() {
          super({
            name,
            systemPrompt: `You are ${marker}.`,
            maxTurns: 3,
            allowedTools: ["TodoWrite"],
            toolPermissions: { TodoWrite: "ask" },
          });
        }
      },
    );
    await script(marker, [
      {
        content: [{ type: "tool_use", name: "TodoWrite", input: { todos: [{ content: "a", status: "pending" }] } }],
        stop_reason: "tool_use",
      },
      { content: [{ type: "text", text: "Listed." }] },
    ]);
    const flow = workflow({
      patterns: ["react"],
      nodes: { list: { type: "agent", agent: name } },
      edges: [],
      entry_point: "list",
    });
    const created = await runWorkflow(flow, { input: "Make a list." });
    const shown = await waitForTask(created.id, 20);
    expect(shown.status).toBe("input_required");
    expect(shown.pending_input).toMatchObject({ tool_name: "TodoWrite", task_id: expect.any(String) });
    const res = await resume(created.id, {
      request_id: shown.pending_input?.request_id,
      action: "modify",
      tool_input: { todos: [{ content: "b", status: "pending" }] },
    });
    expect(res.status).toBe(200);
    // The workflow's task shows the request until the child's report of its answer reaches it.
    let task = await waitForTask(created.id, 30);
    for (let i = 0; i < 100 && task.status !== "completed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      task = await waitForTask(created.id, 30);
    }
    expect(task).toMatchObject({ status: "completed", result: "Listed." });
  });

  it("follows the State unchanged when the person approves", async () => {
    const { name, plan } = await triage();
    const task = await waiting((await runWorkflow(name, { input: "A typo on the help page." })).id);
    expect((await resume(task.id, { request_id: "wf:ask", action: "approve" })).status).toBe(200);
    expect(await waitForTask(task.id, 30)).toMatchObject({ status: "completed", result: "Planned for next sprint." });
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(subagents.map((s) => s.agent_name)).toEqual([plan]);
  });

  it("waits before a node listed in checkpoints, and a rejection fails the run before the node runs", async () => {
    const agent = await answering("publish", "Published.");
    const name = workflow({
      patterns: ["react"],
      nodes: { publish: { type: "agent", agent } },
      edges: [],
      entry_point: "publish",
      checkpoints: ["publish"],
    });
    const task = await waiting((await runWorkflow(name, { input: "Publish the post." })).id);
    expect(task.pending_input).toMatchObject({ request_id: "wf:publish", input: { node: "publish", type: "agent" } });
    const res = await resume(task.id, { request_id: "wf:publish", action: "reject", message: "Not on a Friday." });
    expect(res.status).toBe(200);
    const failed = await waitForTask(task.id, 30);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({
      code: "workflow_rejected",
      message: 'A person rejected the run at node "publish": Not on a Friday.',
    });
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    expect(subagents).toEqual([]);
  });

  it("runs a node listed in checkpoints once approved", async () => {
    const agent = await answering("publish", "Published.");
    const name = workflow({
      patterns: ["react"],
      nodes: { publish: { type: "agent", agent } },
      edges: [],
      entry_point: "publish",
      checkpoints: ["publish"],
    });
    const task = await waiting((await runWorkflow(name, { input: "Publish the post." })).id);
    expect((await resume(task.id, { request_id: "wf:publish", action: "approve" })).status).toBe(200);
    expect(await waitForTask(task.id, 30)).toMatchObject({ status: "completed", result: "Published." });
  });
});

describe("GET /v1/tasks?workflow=", () => {
  it("lists the tasks that run a workflow, naming it, and no other task", async () => {
    const agent = await answering("listed", "Listed.");
    const name = workflow({
      patterns: ["react"],
      nodes: { only: { type: "agent", agent } },
      edges: [],
      entry_point: "only",
    });
    const other = workflow({
      patterns: ["react"],
      nodes: { only: { type: "agent", agent } },
      edges: [],
      entry_point: "only",
    });
    const runs = [await runWorkflow(name, { input: "One." }), await runWorkflow(name, { input: "Two." })];
    const elsewhere = await runWorkflow(other, { input: "Three." });
    for (const task of [...runs, elsewhere]) expect((await waitForTask(task.id, 30)).status).toBe("completed");
    // The directory is updated when a task's status changes, up to a second later (a short run's only report is
    // its end's): wait for both runs, completed.
    const settled = (tasks: { status: string }[]) =>
      tasks.length === runs.length && tasks.every((t) => t.status === "completed");
    let listed = await apiJson(`/v1/tasks?workflow=${name}`, TaskListSchema);
    for (let i = 0; i < 50 && !settled(listed.tasks); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      listed = await apiJson(`/v1/tasks?workflow=${name}`, TaskListSchema);
    }
    expect(listed.tasks.map((t) => [t.id, t.workflow, t.agent, t.status])).toEqual(
      [...runs].reverse().map((t) => [t.id, name, name, "completed"]),
    );
    // A workflow's children are tasks of their agents, listed under their parent, not under the workflow.
    const children = await apiJson(`/v1/tasks?parent_task_id=${runs[0]?.id}`, TaskListSchema);
    expect(children.tasks.map((t) => [t.agent, t.workflow])).toEqual([[agent, null]]);
    await expectError(await api("/v1/tasks?workflow=Not-A-Name"), 400, "validation_failed", "workflow");
  });
});

describe("POST /v1/tasks/:id/fork of a workflow's task", () => {
  it("runs the workflow again from a middle node, with the State as it was there and the request's updates", async () => {
    const one = await answering("one", "One found the cause.");
    const two = await answering("two", "Two wrote the fix.");
    const three = await answering("three", "Three shipped it.");
    const name = workflow({
      patterns: ["react"],
      nodes: {
        one: { type: "agent", agent: one },
        two: { type: "agent", agent: two },
        three: { type: "agent", agent: three },
      },
      edges: [
        { from: "one", to: "two" },
        { from: "two", to: "three" },
      ],
      entry_point: "one",
    });
    const origin = await waitForTask((await runWorkflow(name, { input: "Fix the bug." })).id, 30);
    expect(origin.status).toBe("completed");
    const { checkpoints } = await apiJson(`/v1/tasks/${origin.id}/checkpoints`, CheckpointListSchema);
    const atTwo = checkpoints.find((c) => c.position === "two");

    const fork = (body: unknown) => api(`/v1/tasks/${origin.id}/fork`, { method: "POST", body: JSON.stringify(body) });
    await expectError(
      await fork({ checkpoint_id: atTwo?.checkpoint_id, state_updates: { current_agent: one } }),
      400,
      "validation_failed",
      "state_updates.current_agent",
    );
    const res = await fork({
      checkpoint_id: atTwo?.checkpoint_id,
      state_updates: { messages: [{ role: "user", content: "Keep the fix small." }] },
    });
    expect(res.status).toBe(202);
    const forked = await waitForTask((await parseBody(res, TaskResourceSchema)).id, 30);
    expect(forked).toMatchObject({
      status: "completed",
      result: "Three shipped it.",
      workflow: name,
      parent_task_id: origin.id,
    });

    // Node one is not run again: the fork starts at node two, whose checkpoint holds one's answer.
    const log = await events(forked.id);
    expect(nodesOf(log, "workflow_node_started")).toEqual(["two", "three"]);
    const { subagents } = await apiJson(`/v1/tasks/${forked.id}/subagents`, SubagentSessionListSchema);
    expect(subagents.map((s) => s.agent_name)).toEqual([two, three]);
    const childTwo = await apiJson(`/v1/tasks/${subagents[0]?.session_id}`, TaskResourceSchema);
    expect(childTwo.input).toContain("One found the cause.");
    expect(childTwo.input).toContain("Keep the fix small.");
    const own = await apiJson(`/v1/tasks/${forked.id}/checkpoints`, CheckpointListSchema);
    expect(own.checkpoints.map((c) => [c.position, c.message_count])).toEqual([
      ["two", 3],
      ["three", 4],
    ]);
    const atForkTwo = await apiJson(
      `/v1/tasks/${forked.id}/checkpoints/${own.checkpoints[0]?.checkpoint_id}`,
      CheckpointSchema.unwrap(),
    );
    expect(atForkTwo.state.current_agent).toBe(one);
  });
});

describe("durability", () => {
  it("runs no node twice when the objects are evicted between nodes", async () => {
    const first = await answering("first", "First done.");
    const second = await answering("second", "Second done.", 1500);
    const name = workflow({
      patterns: ["react"],
      nodes: { one: { type: "agent", agent: first }, two: { type: "agent", agent: second } },
      edges: [{ from: "one", to: "two" }],
      entry_point: "one",
    });
    const created = await runWorkflow(name, { input: "Two steps." });
    const seen = await eventsUntil(created.id, (log) => ofType(log, "subagent_started").length === 2);
    const childTwo = String(ofType(seen, "subagent_started")[1]?.payload.child_task_id);
    // The parent sleeps while node two's child works: evict every object, and let the child's heartbeat resume it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await abortAllDurableObjects();
    expect((await apiJson(`/v1/tasks/${childTwo}`, TaskResourceSchema)).status).toBe("running");
    expect(await fireTimers(childTwo, ["heartbeat"])).toBe(true);

    const task = await waitForTask(created.id, 30);
    expect(task).toMatchObject({ status: "completed", result: "Second done." });
    const log = await events(task.id);
    expect(nodesOf(log, "workflow_node_started")).toEqual(["one", "two"]);
    expect(nodesOf(log, "workflow_node_completed")).toEqual(["one", "two"]);
    expect(ofType(log, "subagent_started")).toHaveLength(2);
    expect(ofType(log, "subagent_finished")).toHaveLength(2);
    const { subagents } = await apiJson(`/v1/tasks/${task.id}/subagents`, SubagentSessionListSchema);
    // Node one's child answered once, before the eviction, and was not asked again (node two's model call was cut
    // short by the eviction, so its child asked twice: the child's own step, not the node, ran again).
    expect(subagents.map((s) => s.tool_use_id)).toEqual([`wf:one:1:${first}`, `wf:two:1:${second}`]);
    expect(await emulatorRequests(String(subagents[0]?.session_id))).toHaveLength(1);
  });

  it("cancels a workflow's running node with the task: its child task is canceled too", async () => {
    const slow = await answering("slow", "Too late.", 20_000);
    const name = workflow({
      patterns: ["react"],
      nodes: { wait: { type: "agent", agent: slow } },
      edges: [],
      entry_point: "wait",
    });
    const created = await runWorkflow(name, { input: "Take your time." });
    const seen = await eventsUntil(created.id, (log) => ofType(log, "subagent_started").length === 1);
    const child = String(ofType(seen, "subagent_started")[0]?.payload.child_task_id);
    expect((await api(`/v1/tasks/${created.id}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await waitForTask(child, 10)).status).toBe("canceled");
    expect((await waitForTask(created.id)).status).toBe("canceled");
    expect(nodesOf(await events(created.id), "workflow_node_completed")).toEqual([]);
  });
});
