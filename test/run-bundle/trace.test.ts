// Seed 003's TraceLog (GET /v1/tasks/:id/trace, GET /v1/sessions/:id/trace) and its files in the run bundle
// (task.json, trace.json, checkpoints.json), through the API against the emulator.

import { describe, expect, it } from "vitest";
import { CheckpointListSchema, SessionResourceSchema, TraceLogSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  expectError,
  type ScriptTurn,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** Runs `agent` on a fresh script with `files`; returns the ended task's id. */
async function run(agent: string, turns: ScriptTurn[], files?: Record<string, string>): Promise<string> {
  const marker = uniqueMarker("trace");
  await script(marker, turns);
  const task = await startTask(agent, `Trace ${marker}`, files ? { files } : {});
  await waitForTask(task.id);
  return task.id;
}

async function artifact(id: string, path: string): Promise<string> {
  const res = await api(`/v1/tasks/${id}/artifacts/${path}`);
  expect(res.status).toBe(200);
  return res.text();
}

describe("GET /v1/tasks/:id/trace", () => {
  it("has a step per model turn with the tool calls it asked for, between the run's start and end", async () => {
    const agent = defineAgent({ fileSystem: { read: true } });
    const id = await run(
      agent,
      [
        {
          content: [toolUse("Read", { file_path: "notes.txt" }), toolUse("Write", { file_path: "x", content: "y" })],
          stop_reason: "tool_use",
        },
        done,
      ],
      { "notes.txt": "hello\n" },
    );
    const trace = await apiJson(`/v1/tasks/${id}/trace`, TraceLogSchema);
    expect(trace.task_id).toBe(id);
    expect(trace.sub_agent_sessions).toEqual({});
    expect(trace.steps.map((s) => [s.step_name, s.status, s.agent])).toEqual([
      ["task_created", "info", agent],
      ["run_started", "info", agent],
      ["turn_1", "warning", agent],
      ["turn_2", "info", agent],
      ["run_finished", "info", agent],
    ]);
    const [, , first, second] = trace.steps;
    expect(first?.message).toMatch(/^Model turn 1: stop_reason tool_use, \d+ input and \d+ output tokens\.$/);
    expect(first?.tool_calls).toEqual([
      {
        tool_use_id: expect.any(String),
        server: null,
        tool: "Read",
        arguments: { file_path: "notes.txt" },
        result: { content: "     1\thello", is_error: false },
        error: null,
        duration_ms: expect.any(Number),
      },
      {
        tool_use_id: expect.any(String),
        server: null,
        tool: "Write",
        arguments: {},
        result: null,
        error: "not run: not_allowed",
        duration_ms: null,
      },
    ]);
    expect(second?.tool_calls).toEqual([]);
    expect(Date.parse(trace.updated_at)).toBeGreaterThanOrEqual(Date.parse(trace.created_at));
  });

  it("records an MCP tool call with its server", async () => {
    const agent = defineAgent({ mcpServers: { ledger: { url: "http://127.0.0.1:0/never", required: false } } });
    const id = await run(agent, [done]);
    const trace = await apiJson(`/v1/tasks/${id}/trace`, TraceLogSchema);
    expect(trace.steps.map((s) => s.step_name)).toEqual([
      "task_created",
      "run_started",
      "mcp_connection_failed",
      "turn_1",
      "run_finished",
    ]);
    expect(trace.steps[2]?.status).toBe("warning");
  });

  it("ends a failed run with an error step naming why", async () => {
    const agent = defineAgent({});
    const id = await run(agent, [{ content: [], faults: [{ kind: "http", status: 400, message: "bad request" }] }]);
    const trace = await apiJson(`/v1/tasks/${id}/trace`, TraceLogSchema);
    const last = trace.steps.at(-1);
    expect(last?.step_name).toBe("run_failed");
    expect(last?.status).toBe("error");
    expect(trace.steps.find((s) => s.step_name === "llm_request_failed")?.status).toBe("error");
  });

  it("is task_not_found for an unknown task", async () => {
    await expectError(await api(`/v1/tasks/${crypto.randomUUID()}/trace`), 404, "task_not_found", "id");
  });
});

describe("the trace of a tree of sub-agents", () => {
  it("nests each sub-agent's trace under its sub_agent_sessions entry, grandchildren too, in the API and trace.json", async () => {
    const grandchild = defineAgent({ fileSystem: { read: true } });
    const child = defineAgent({ subagents: { enabled: true, agents: [grandchild] } });
    const root = defineAgent({ subagents: { enabled: true, agents: [child] } });
    const leaf = `Leaf ${uniqueMarker("trace-grandchild")}`;
    await script(leaf, [{ content: [toolUse("Glob", { pattern: "*" })], stop_reason: "tool_use" }, done]);
    const middle = `Middle ${uniqueMarker("trace-child")}`;
    const delegateLeaf = toolUse("Task", { agent: grandchild, description: "look around", prompt: leaf });
    await script(middle, [{ content: [delegateLeaf], stop_reason: "tool_use" }, done]);
    const delegateMiddle = toolUse("Task", { agent: child, description: "hand it down", prompt: middle });
    const id = await run(root, [{ content: [delegateMiddle], stop_reason: "tool_use" }, done]);
    expect((await waitForTask(id, 30)).status).toBe("completed");

    const trace = await apiJson(`/v1/tasks/${id}/trace`, TraceLogSchema);
    const sessions = Object.values(trace.sub_agent_sessions);
    expect(sessions).toHaveLength(1);
    const [middleSession] = sessions;
    expect(middleSession).toMatchObject({
      agent: child,
      parent_task_id: id,
      task_description: "hand it down",
      status: "completed",
      // The prompt, the Task call, its result and the answer.
      message_count: 4,
    });
    const rootCall = trace.steps.find((s) => s.step_name === "turn_1")?.tool_calls[0];
    expect(rootCall?.tool_use_id).toBe(middleSession?.tool_use_id);
    const middleTrace = middleSession?.trace;
    expect(middleTrace?.task_id).toBe(middleSession?.session_id);
    // Its run stopped while its own sub-agent worked, and went on when it ended.
    expect(middleTrace?.steps.map((s) => s.step_name)).toEqual([
      "task_created",
      "run_started",
      "turn_1",
      "run_resumed",
      "turn_2",
      "run_finished",
    ]);
    const leafSessions = Object.values(middleTrace?.sub_agent_sessions ?? {});
    expect(leafSessions).toEqual([
      expect.objectContaining({
        agent: grandchild,
        parent_task_id: middleSession?.session_id,
        status: "completed",
        message_count: 4,
      }),
    ]);
    expect(leafSessions[0]?.trace.steps.find((s) => s.step_name === "turn_1")?.tool_calls[0]).toMatchObject({
      server: null,
      tool: "Glob",
      arguments: { pattern: "*" },
    });
    // The same tree in the bundle.
    expect(TraceLogSchema.parse(JSON.parse(await artifact(id, "trace.json")))).toEqual(trace);
    // The child's own trace is the same as its entry in its parent's.
    expect(await apiJson(`/v1/tasks/${middleSession?.session_id}/trace`, TraceLogSchema)).toEqual(middleTrace);
  });
});

describe("seed 003's files in the run bundle", () => {
  it("has task.json, trace.json (the route's trace) and checkpoints.json (every checkpoint, as the API shows it)", async () => {
    const agent = defineAgent({ fileSystem: { read: true } });
    const id = await run(
      agent,
      [{ content: [toolUse("Read", { file_path: "a.txt" })], stop_reason: "tool_use" }, done],
      {
        "a.txt": "a\n",
      },
    );
    const task = JSON.parse(await artifact(id, "task.json"));
    expect(task).toEqual({
      id,
      description: expect.stringMatching(/^Trace /),
      status: "completed",
      assigned_agent: agent,
      result: "Done.",
      error: null,
      created_at: expect.any(String),
      started_at: expect.any(String),
      completed_at: expect.any(String),
      retention_days: expect.any(Number),
      parent_task_id: null,
    });
    const trace = TraceLogSchema.parse(JSON.parse(await artifact(id, "trace.json")));
    expect(trace).toEqual(await apiJson(`/v1/tasks/${id}/trace`, TraceLogSchema));
    const { checkpoints } = await apiJson(`/v1/tasks/${id}/checkpoints`, CheckpointListSchema);
    expect(checkpoints.length).toBeGreaterThan(1);
    const file = JSON.parse(await artifact(id, "checkpoints.json"));
    expect(file).toEqual(
      await Promise.all(
        checkpoints.map(async (summary) => (await api(`/v1/tasks/${id}/checkpoints/${summary.checkpoint_id}`)).json()),
      ),
    );
  });
});

describe("GET /v1/sessions/:id/trace", () => {
  it("has each turn of the session, its model turns inside", async () => {
    const agent = defineAgent({});
    const created = await api(`/v1/agents/${agent}/sessions`, { method: "POST", body: "{}" });
    const session = SessionResourceSchema.parse(await created.json());
    expect(session.links.trace).toMatch(new RegExp(`/v1/sessions/${session.id}/trace$`));
    // The emulator picks a conversation's script by its first message.
    const marker = uniqueMarker("trace-session");
    await script(marker, [
      { content: [{ type: "text", text: "One." }] },
      { content: [{ type: "text", text: "Two." }] },
    ]);
    for (const message of [`Say ${marker}`, "And again."]) {
      const res = await api(`/v1/sessions/${session.id}/messages?wait=20`, {
        method: "POST",
        body: JSON.stringify({ message }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ result: { is_error: false } });
    }
    const trace = await apiJson(`/v1/sessions/${session.id}/trace`, TraceLogSchema);
    expect(trace.steps.map((s) => s.step_name)).toEqual([
      "session_created",
      "turn_started",
      "run_started",
      "turn_1",
      "turn_finished",
      "turn_started",
      "run_started",
      "turn_2",
      "turn_finished",
    ]);
    await expectError(await api(`/v1/sessions/${crypto.randomUUID()}/trace`), 404, "session_not_found", "id");
  });
});
