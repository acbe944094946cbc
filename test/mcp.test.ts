// MCP tools end to end, against the real @modelcontextprotocol/server-everything (pinned in package.json) that
// test/global-setup.ts runs on 127.0.0.1: discovery, calls, structured content, timeouts, a server killed in the
// middle of a call, a server unreachable at start, fallback tools, the legacy SSE transport, and eviction.
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import {
  api,
  defineAgent,
  done,
  events,
  modelRequest,
  ofType,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "./helpers.ts";

const MCP_URL = inject("mcpUrl");
const CONTROL_URL = inject("mcpControlUrl");

async function ownServer(transport: "streamableHttp" | "sse" = "streamableHttp"): Promise<{ id: string; url: string }> {
  const res = await fetch(`${CONTROL_URL}/servers`, { method: "POST", body: JSON.stringify({ transport }) });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; url: string };
}

async function killServer(id: string): Promise<void> {
  const res = await fetch(`${CONTROL_URL}/servers/${id}`, { method: "DELETE" });
  expect(res.status).toBe(200);
}

/** A URL on 127.0.0.1 where nothing listens: a server we start and kill. */
async function deadUrl(): Promise<string> {
  const server = await ownServer();
  await killServer(server.id);
  return server.url;
}

const everything = () => ({
  everything: {
    url: MCP_URL,
    headers: { Authorization: { secret: "MCP_TEST_TOKEN", prefix: "Bearer " } },
  },
});

describe("MCP tools from a real server", () => {
  it("discovers the server's tools, offers them to the model, and calls echo, get-sum and structured content", async () => {
    const agent = defineAgent({ mcpServers: everything() });
    const marker = uniqueMarker("mcp-basic");
    await script(marker, [
      {
        content: [
          toolUse("mcp__everything__echo", { message: "hello mcp" }),
          toolUse("mcp__everything__get-sum", { a: 2, b: 3 }),
          toolUse("mcp__everything__get-structured-content", { location: "Chicago" }),
        ],
        stop_reason: "tool_use",
      },
      done,
    ]);
    const task = await startTask(agent, `use tools ${marker}`);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");

    const log = await events(task.id);
    const connected = ofType(log, "mcp_servers_connected");
    expect(connected).toHaveLength(1);
    const tools = connected[0]?.payload.tools as string[];
    expect(tools).toEqual(
      expect.arrayContaining([
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__everything__get-structured-content",
      ]),
    );
    expect(connected[0]?.payload).toMatchObject({
      server_count: 1,
      tool_count: tools.length,
      servers: { everything: { transport: "streamable_http" } },
    });

    // The model saw the server's tools with their JSON schemas.
    const first = await modelRequest(task.id, 1);
    const sum = first.tools?.find((t) => t.name === "mcp__everything__get-sum");
    expect(sum?.input_schema).toMatchObject({
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
    });

    const results = await toolResults(task.id, 2);
    expect(results.map((r) => r.is_error)).toEqual([false, false, false]);
    expect(results[0]?.content).toBe("Echo: hello mcp");
    expect(results[1]?.content).toContain("5");
    expect(JSON.parse(String(results[2]?.content))).toMatchObject({
      conditions: expect.any(String),
      humidity: expect.any(Number),
    });

    const completed = ofType(log, "mcp_tool_call_completed");
    expect(completed.map((e) => [e.payload.tool_name, e.payload.server, e.payload.status])).toEqual([
      ["mcp__everything__echo", "everything", "success"],
      ["mcp__everything__get-sum", "everything", "success"],
      ["mcp__everything__get-structured-content", "everything", "success"],
    ]);
    expect(completed[2]?.payload.structured_content).toMatchObject({ temperature: expect.any(Number) });
    expect(ofType(log, "mcp_tool_call_started")).toHaveLength(3);
    // Cleanup comes before the terminal event.
    const types = log.map((e) => e.event_type);
    expect(types.indexOf("mcp_servers_disconnected")).toBe(types.length - 2);
    expect(types.at(-1)).toBe("run_finished");
  });

  it("ends a call that exceeds its timeout_seconds and gives the model an error it can act on; the run goes on", async () => {
    const agent = defineAgent({
      mcpServers: { everything: { url: MCP_URL, tools: { "trigger-long-running-operation": { timeout_seconds: 1 } } } },
    });
    const marker = uniqueMarker("mcp-timeout");
    await script(marker, [
      {
        content: [toolUse("mcp__everything__trigger-long-running-operation", { duration: 4, steps: 4 })],
        stop_reason: "tool_use",
      },
      done,
    ]);
    const started = Date.now();
    const task = await startTask(agent, `slow ${marker}`);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(3_900);

    const log = await events(task.id);
    const failed = ofType(log, "mcp_tool_call_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.payload.error).toEqual({
      code: "timeout",
      message: "the call did not finish within its timeout of 1 s",
    });
    const [result] = await toolResults(task.id, 2);
    expect(result?.is_error).toBe(true);
    expect(String(result?.content)).toContain("timeout of 1 s");
  });

  it("fails a call at once when the server is killed in the middle of it, and the run continues", async () => {
    const server = await ownServer();
    const agent = defineAgent({ mcpServers: { doomed: { url: server.url } } });
    const marker = uniqueMarker("mcp-killed");
    await script(marker, [
      {
        content: [toolUse("mcp__doomed__trigger-long-running-operation", { duration: 20, steps: 20 })],
        stop_reason: "tool_use",
      },
      done,
    ]);
    const task = await startTask(agent, `kill it ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "mcp_tool_call_started");
    const killedAt = Date.now();
    await killServer(server.id);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    // Well before the 20 s the operation would take, and the 300 s default timeout.
    expect(Date.now() - killedAt).toBeLessThan(8_000);

    const log = await events(task.id);
    const failed = ofType(log, "mcp_tool_call_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.payload.error).toMatchObject({ code: "mcp_connection_failed" });
    const [result] = await toolResults(task.id, 2);
    expect(result?.is_error).toBe(true);
    expect(String(result?.content)).toContain("failed and returned no result");
  });

  it("reports a server unreachable at start and runs without its tools", async () => {
    const agent = defineAgent({ mcpServers: { gone: { url: await deadUrl() } } });
    const marker = uniqueMarker("mcp-unreachable");
    await script(marker, [done]);
    const task = await startTask(agent, `no server ${marker}`);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    const log = await events(task.id);
    const failed = ofType(log, "mcp_connection_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]?.payload).toMatchObject({ server: "gone", error: { code: "mcp_connection_failed" } });
    expect(ofType(log, "mcp_servers_connected")).toHaveLength(0);
    expect((await modelRequest(task.id, 1)).tools).toBeUndefined();
  });

  it("fails the run when a required server is unreachable at start", async () => {
    const agent = defineAgent({ mcpServers: { needed: { url: await deadUrl(), required: true } } });
    const marker = uniqueMarker("mcp-required");
    const task = await startTask(agent, `required ${marker}`);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("failed");
    expect(finished.error).toMatchObject({ code: "mcp_connection_failed" });
    expect(finished.error?.message).toContain('MCP server "needed": it is required');
  });

  it("hands the call to a fallback tool when the first tool's server dies, each attempt an event", async () => {
    const primary = await ownServer();
    const agent = defineAgent({
      mcpServers: {
        primary: { url: primary.url, tools: { echo: { fallback_tools: ["mcp__backup__echo"] } } },
        backup: { url: MCP_URL },
      },
    });
    const marker = uniqueMarker("mcp-fallback");
    // The first token waits 1.5 s: time to kill the primary server after discovery and before the call.
    await script(
      marker,
      [{ content: [toolUse("mcp__primary__echo", { message: "via fallback" })], stop_reason: "tool_use" }, done],
      {
        ttft_ms: 1_500,
      },
    );
    const task = await startTask(agent, `fallback ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "mcp_servers_connected");
    await killServer(primary.id);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");

    const log = await events(task.id);
    const attempts = log
      .filter((e) => e.event_type.startsWith("mcp_tool_call_"))
      .map((e) => [e.event_type, e.payload.tool_name, e.payload.fallback_for ?? null]);
    expect(attempts).toEqual([
      ["mcp_tool_call_started", "mcp__primary__echo", null],
      ["mcp_tool_call_failed", "mcp__primary__echo", null],
      ["mcp_tool_call_started", "mcp__backup__echo", "mcp__primary__echo"],
      ["mcp_tool_call_completed", "mcp__backup__echo", "mcp__primary__echo"],
    ]);
    const [result] = await toolResults(task.id, 2);
    expect(result).toMatchObject({ is_error: false, content: "Echo: via fallback" });
  });

  it("falls back to the legacy SSE transport when the server does not speak Streamable HTTP", async () => {
    const legacy = await ownServer("sse");
    const agent = defineAgent({ mcpServers: { old: { url: legacy.url } } });
    const marker = uniqueMarker("mcp-sse");
    await script(marker, [
      { content: [toolUse("mcp__old__echo", { message: "over sse" })], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(agent, `legacy ${marker}`);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "mcp_servers_connected")[0]?.payload.servers).toEqual({ old: { transport: "sse" } });
    const [result] = await toolResults(task.id, 2);
    expect(result).toMatchObject({ is_error: false, content: "Echo: over sse" });
    await killServer(legacy.id);
  });

  it("re-establishes the MCP session by itself after the task's object is evicted", async () => {
    const agent = defineAgent({ mcpServers: everything() });
    const marker = uniqueMarker("mcp-evict");
    await script(
      marker,
      [
        { content: [toolUse("mcp__everything__echo", { message: "before" })], stop_reason: "tool_use" },
        { content: [toolUse("mcp__everything__get-sum", { a: 20, b: 22 })], stop_reason: "tool_use" },
        done,
      ],
      { ttft_ms: 800 },
    );
    const task = await startTask(agent, `evict ${marker}`);
    // Evict while the second model call waits for its first token: the live MCP session is lost with the object.
    await waitForEvent(task.id, (e) => e.event_type === "llm_request_sent" && e.payload.turn_index === 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(env.TASKS.get(env.TASKS.idFromName(task.id)))).toBe(true);

    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    const log = await events(task.id);
    // Discovery is journaled: the resumed run did not list the tools again.
    expect(ofType(log, "mcp_servers_connected")).toHaveLength(1);
    expect(ofType(log, "run_resumed")).toHaveLength(1);
    const completed = ofType(log, "mcp_tool_call_completed").map((e) => e.payload.tool_name);
    expect(completed).toEqual(["mcp__everything__echo", "mcp__everything__get-sum"]);
    const [result] = await toolResults(task.id, 3);
    expect(result).toMatchObject({ is_error: false });
    expect(String(result?.content)).toContain("42");
  });
});

describe("MCP tool permissions and validation at run start", () => {
  it("describes an agent's servers over the API without their secrets", async () => {
    const agent = defineAgent({ mcpServers: everything() });
    const res = await api(`/v1/agents/${agent}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { allowed_tools: string[]; mcp_servers: unknown[] };
    expect(body.allowed_tools).toEqual(["mcp__everything__*"]);
    expect(body.mcp_servers).toEqual([
      { name: "everything", transport: "streamable_http", url: MCP_URL, required: false },
    ]);
    expect(JSON.stringify(body)).not.toContain("MCP_TEST_TOKEN");
  });

  it("denies a server tool the agent does not allow: it never runs, the model is told, the log says tool_denied", async () => {
    const agent = defineAgent({ mcpServers: everything(), allowedTools: ["mcp__everything__echo"] });
    const marker = uniqueMarker("mcp-denied");
    await script(marker, [
      { content: [toolUse("mcp__everything__get-sum", { a: 1, b: 1 })], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(agent, `deny ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "tool_denied").map((e) => e.payload.tool_name)).toEqual(["mcp__everything__get-sum"]);
    expect(ofType(log, "mcp_tool_call_started")).toHaveLength(0);
    expect((await modelRequest(task.id, 1)).tools?.map((t) => t.name)).toEqual(["mcp__everything__echo"]);
    const [result] = await toolResults(task.id, 2);
    expect(result?.is_error).toBe(true);
    expect(String(result?.content)).toContain("Available tools: mcp__everything__echo");
  });

  it("fails the run with invalid_tool when allowed_tools names a tool the server does not offer", async () => {
    const agent = defineAgent({ mcpServers: everything(), allowedTools: ["mcp__everything__no-such-tool"] });
    const task = await startTask(agent, `bad tool ${uniqueMarker("mcp-invalid")}`);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("failed");
    expect(finished.error).toMatchObject({ code: "invalid_tool", tool_name: "mcp__everything__no-such-tool" });
    expect(finished.error?.message).toContain('is not offered by MCP server "everything"');
    expect((finished.error as { available_tools?: string[] }).available_tools).toContain("mcp__everything__echo");
  });

  it("reports a header secret that is not set as the connection failure, naming the secret", async () => {
    const agent = defineAgent({
      mcpServers: { everything: { url: MCP_URL, headers: { Authorization: { secret: "NOT_A_SECRET_WE_SET" } } } },
    });
    const marker = uniqueMarker("mcp-secret");
    await script(marker, [done]);
    const task = await startTask(agent, `secret ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const [failed] = ofType(await events(task.id), "mcp_connection_failed");
    expect(failed?.payload.error).toMatchObject({ code: "config_error" });
    expect(JSON.stringify(failed?.payload.error)).toContain("NOT_A_SECRET_WE_SET");
  });

  it("refuses a private host that configuration does not allow (only 127.0.0.1 is allowed in tests)", async () => {
    const agent = defineAgent({ mcpServers: { local: { url: MCP_URL.replace("127.0.0.1", "localhost") } } });
    const marker = uniqueMarker("mcp-private");
    await script(marker, [done]);
    const task = await startTask(agent, `private ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const [failed] = ofType(await events(task.id), "mcp_connection_failed");
    expect(failed?.payload.error).toMatchObject({ code: "url_not_allowed" });
  });
});
