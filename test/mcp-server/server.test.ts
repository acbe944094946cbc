// The MCP server at /mcp, driven by the official MCP SDK client over Streamable HTTP, unchanged, against the Worker:
// the tools a key's tenant sees, an agent run to its ExecutionResult, progress from its events, a session's
// follow-up, bad arguments, refused keys, and a task handle that outlives the connection that made it.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type Progress, type Task } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { afterEach, describe, expect, it } from "vitest";
import { ExecutionResultSchema } from "../../src/contracts/execution-result.ts";
import { api, BASE, defineAgent, done, script, toolUse, uniqueMarker, workerFetch } from "../support/helpers.ts";

const MCP_KEY = "test-mcp-key";
const OTHER_TENANT_KEY = "test-beta-key";
const READ_ONLY_KEY = "test-read-key";
const RUN_ONLY_KEY = "test-run-key";

/** An agent of the Worker that only the "mcp" tenant may see. */
const agent = defineAgent({ description: "Answers questions.", allowedTools: [], tenants: ["mcp"] });

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** The SDK's client connected to /mcp with `key` (none: no Authorization header), through the Worker's fetch. */
async function connect(key: string | null = MCP_KEY): Promise<Client> {
  const client = new Client(
    { name: "test", version: "1.0.0" },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: (url, init) => {
      const headers = new Headers(init?.headers);
      if (key !== null) headers.set("authorization", `Bearer ${key}`);
      return workerFetch(new Request(url, { ...init, headers }));
    },
  });
  await client.connect(transport);
  open.push(client);
  return client;
}

/** Scripts the emulator's answer to a run whose input carries a fresh marker; returns that input. */
async function scripted(answer: string, latency: { ttft_ms?: number } = {}): Promise<string> {
  const marker = uniqueMarker("mcp");
  await script(marker, [{ content: [{ type: "text", text: answer }] }], latency);
  return `Question ${marker}`;
}

/** A task-augmented call of the agent's tool: the handle it answers with at once (the stream is left after it). */
async function taskHandle(client: Client, input: string, name = agent): Promise<Task> {
  // The client asks for a task handle for a tool the listing marks as supporting one.
  await client.listTools();
  const stream = client.experimental.tasks.callToolStream({ name, arguments: { input } });
  const created = (await stream.next()).value;
  await stream.return();
  if (created?.type !== "taskCreated") throw new Error(`expected taskCreated, got ${JSON.stringify(created)}`);
  return created.task;
}

describe("tools/list", () => {
  it("lists each agent the tenant may run as a tool whose input is the task body and whose output is the ExecutionResult", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === agent);
    expect(tool?.inputSchema.required).toEqual(["input"]);
    expect(Object.keys(tool?.inputSchema.properties ?? {})).toContain("max_turns");
    expect(tool?.outputSchema?.required).toEqual([
      "response",
      "tool_calls",
      "tool_results",
      "token_usage",
      "structured_output",
      "num_turns",
      "is_error",
      "error_reason",
    ]);
    expect(tool?.execution).toEqual({ taskSupport: "optional" });
    expect(tools.map((t) => t.name)).toContain("start-session");
    expect(tools.map((t) => t.name)).toContain("send-message");
  });

  it("lists the tenant's own agents (PUT /v1/agents/:name), and another tenant sees neither them nor the tenant's Worker agents", async () => {
    const name = `mcp_own_${crypto.randomUUID().slice(0, 8)}`;
    const put = await api(`/v1/agents/${name}`, {
      method: "PUT",
      body: `name: ${name}\ndescription: Runs at runtime.\ninstructions: You answer.\n`,
      headers: { "content-type": "application/yaml" },
      key: MCP_KEY,
    });
    expect(put.status).toBe(201);
    const mine = (await (await connect()).listTools()).tools.map((t) => t.name);
    expect(mine).toContain(name);
    expect(mine).toContain(agent);
    const theirs = (await (await connect(OTHER_TENANT_KEY)).listTools()).tools.map((t) => t.name);
    expect(theirs).not.toContain(name);
    expect(theirs).not.toContain(agent);
  });
});

describe("tools/call on an agent", () => {
  it("runs the agent as an Outpost task and answers with its ExecutionResult as structuredContent", async () => {
    const input = await scripted("The answer is 42.");
    const client = await connect();
    await client.listTools();
    const result = await client.callTool({ name: agent, arguments: { input } });
    expect(result.isError).toBe(false);
    expect(result.content).toEqual([{ type: "text", text: "The answer is 42." }]);
    const structured = ExecutionResultSchema.parse(result.structuredContent);
    expect(structured).toMatchObject({
      response: "The answer is 42.",
      tool_calls: [],
      tool_results: [],
      num_turns: 1,
      is_error: false,
      error_reason: null,
    });
  });

  it("reports progress from the task's events when the client sends a progressToken", async () => {
    const input = await scripted("Progressing.");
    const client = await connect();
    const progress: Progress[] = [];
    const result = await client.callTool({ name: agent, arguments: { input } }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(result.isError).toBe(false);
    const messages = progress.map((p) => p.message ?? "");
    const taskId = /\(task ([0-9a-f-]{36})\)/.exec(messages[0] ?? "")?.[1] ?? "";
    expect(messages[0]).toBe(`task_created (task ${taskId})`);
    expect(messages).toContain(`run_finished (task ${taskId})`);
    // One notification per event, its sequence number the progress: strictly increasing.
    const values = progress.map((p) => p.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
    const task = await api(`/v1/tasks/${taskId}`, { key: MCP_KEY });
    expect(((await task.json()) as { status: string }).status).toBe("completed");
  });

  it("answers arguments that are not a task body with an isError result naming the field and Outpost's code", async () => {
    const client = await connect();
    const result = await client.callTool({ name: agent, arguments: { input: "   " } });
    expect(result.isError).toBe(true);
    const body = JSON.parse((result.content as { text: string }[])[0]?.text ?? "");
    expect(body.error).toMatchObject({
      code: "validation_failed",
      field: "input",
      message: "Invalid input: must not be empty",
    });
  });

  it("answers a tool no agent of the tenant has with a JSON-RPC error", async () => {
    const client = await connect(OTHER_TENANT_KEY);
    await expect(client.callTool({ name: agent, arguments: { input: "hi" } })).rejects.toThrow(
      `MCP error -32602: Tool ${agent} not found`,
    );
  });
});

describe("authentication", () => {
  it("refuses a request without an API key with 401 unauthorized", async () => {
    await expect(connect(null)).rejects.toMatchObject({ code: 401 });
    const res = await workerFetch(
      new Request(`${BASE}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    );
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
  });

  it("answers GET and DELETE with 405: a stateless server has no standalone stream and no MCP session", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await api("/mcp", { method, key: MCP_KEY, headers: { accept: "text/event-stream" } });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });

  it("refuses tools/list to a key without the read scope", async () => {
    const client = await connect(RUN_ONLY_KEY);
    await expect(client.listTools()).rejects.toThrow(/MCP error -32600: .*do not include read/);
  });

  it("refuses tools/call to a key without the run scope", async () => {
    const client = await connect(READ_ONLY_KEY);
    await expect(client.callTool({ name: "planner", arguments: { input: "hi" } })).rejects.toThrow(
      /MCP error -32600: .*do not include run/,
    );
  });
});

describe("sessions as tools", () => {
  it("starts a session with start-session and continues the conversation with send-message", async () => {
    const marker = uniqueMarker("mcp-session");
    await script(marker, [
      { content: [{ type: "text", text: "Hello, Ada." }] },
      { content: [{ type: "text", text: "Your name is Ada." }] },
    ]);
    const client = await connect();
    await client.listTools();
    const first = await client.callTool({
      name: "start-session",
      arguments: { agent, message: `My name is Ada ${marker}` },
    });
    expect(first.isError).toBe(false);
    const { session_id, turn_id, response } = first.structuredContent as Record<string, string>;
    expect(response).toBe("Hello, Ada.");
    const second = await client.callTool({ name: "send-message", arguments: { session_id, message: "Who am I?" } });
    expect(second.isError).toBe(false);
    expect(second.structuredContent).toMatchObject({ session_id, response: "Your name is Ada.", num_turns: 1 });
    expect((second.structuredContent as { turn_id: string }).turn_id).not.toBe(turn_id);
    const session = await api(`/v1/sessions/${session_id}`, { key: MCP_KEY });
    expect(((await session.json()) as { history: unknown[] }).history).toEqual([
      { role: "user", content: `My name is Ada ${marker}` },
      { role: "assistant", content: "Hello, Ada." },
      { role: "user", content: "Who am I?" },
      { role: "assistant", content: "Your name is Ada." },
    ]);
  });

  it("answers send-message for another tenant's session with session_not_found", async () => {
    const marker = uniqueMarker("mcp-session");
    await script(marker, [{ content: [{ type: "text", text: "Hi." }] }]);
    const mine = await (await connect()).callTool({ name: "start-session", arguments: { agent, message: marker } });
    const { session_id } = mine.structuredContent as Record<string, string>;
    const theirs = await (await connect(OTHER_TENANT_KEY)).callTool({
      name: "send-message",
      arguments: { session_id, message: "Let me in." },
    });
    expect(theirs.isError).toBe(true);
    const body = JSON.parse((theirs.content as { text: string }[])[0]?.text ?? "");
    expect(body.error).toMatchObject({ code: "session_not_found", field: "id" });
  });
});

describe("a call that outlives its connection", () => {
  it("answers a task-augmented call with the Outpost task as its handle, which a new connection polls to the result", async () => {
    const input = await scripted("Done late.", { ttft_ms: 400 });
    const first = await connect();
    const { taskId, status } = await taskHandle(first, input);
    expect(status).toBe("working");
    await first.close();

    const second = await connect();
    await second.listTools();
    expect((await second.experimental.tasks.getTask(taskId)).taskId).toBe(taskId);
    const result = await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(ExecutionResultSchema.parse(result.structuredContent)).toMatchObject({
      response: "Done late.",
      is_error: false,
    });
    expect((await second.experimental.tasks.getTask(taskId)).status).toBe("completed");
    // The handle is the Outpost task: /v1 shows the same run.
    const task = await api(`/v1/tasks/${taskId}`, { key: MCP_KEY });
    expect(((await task.json()) as { result: string }).result).toBe("Done late.");
  });

  it("lets a client whose blocking call dropped fetch the result by the task id its progress named", async () => {
    const input = await scripted("Finished anyway.", { ttft_ms: 400 });
    const first = await connect();
    const dropped = new AbortController();
    let taskId = "";
    const call = first.callTool({ name: agent, arguments: { input } }, undefined, {
      signal: dropped.signal,
      onprogress: (p) => {
        taskId ||= /\(task ([0-9a-f-]{36})\)/.exec(p.message ?? "")?.[1] ?? "";
        dropped.abort();
      },
    });
    await expect(call).rejects.toThrow();
    expect(taskId).toMatch(/^[0-9a-f-]{36}$/);

    const second = await connect();
    const result = await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ response: "Finished anyway.", is_error: false });
  });

  it("does not let another tenant get or cancel the task", async () => {
    const input = await scripted("Mine.", { ttft_ms: 300 });
    const { taskId } = await taskHandle(await connect(), input);
    const other = await connect(OTHER_TENANT_KEY);
    await expect(other.experimental.tasks.getTask(taskId)).rejects.toThrow(/Task not found/);
    await expect(other.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/Task not found/);
  });

  it("shows a run that waits for a person as input_required, and its result once /v1 answers it", async () => {
    const reviewed = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual", tenants: ["mcp"] });
    const marker = uniqueMarker("mcp-review");
    const todos = [{ content: "Book the venue", status: "pending" }];
    await script(marker, [{ content: [toolUse("TodoWrite", { todos })], stop_reason: "tool_use" }, done]);
    const client = await connect();
    const { taskId } = await taskHandle(client, `Plan ${marker}`, reviewed);
    const waiting = (await (await api(`/v1/tasks/${taskId}?wait=20`, { key: MCP_KEY })).json()) as {
      status: string;
      pending_input: { request_id: string };
    };
    expect(waiting.status).toBe("input_required");
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({
      status: "input_required",
      statusMessage: `The task waits for a person: answer it with POST /v1/tasks/${taskId}/resume.`,
    });
    const approved = await api(`/v1/tasks/${taskId}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: waiting.pending_input.request_id, action: "approve" }),
      key: MCP_KEY,
    });
    expect(approved.status).toBe(200);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({
      response: "Done.",
      tool_calls: [{ name: "TodoWrite", arguments: { todos } }],
      is_error: false,
    });
  });

  it("cancels the Outpost task with tasks/cancel", async () => {
    const input = await scripted("Never said.", { ttft_ms: 2_000 });
    const client = await connect();
    const { taskId } = await taskHandle(client, input);
    const canceled = await client.experimental.tasks.cancelTask(taskId);
    expect(canceled.status).toBe("cancelled");
    const task = await api(`/v1/tasks/${taskId}?wait=10`, { key: MCP_KEY });
    expect(((await task.json()) as { status: string }).status).toBe("canceled");
  });
});
