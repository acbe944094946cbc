// MCP tools end to end, against the real @modelcontextprotocol/server-everything (pinned in package.json) that
// test/support/global-setup.ts runs on 127.0.0.1: discovery, calls, structured content, timeouts, a server killed in the
// middle of a call, a server unreachable at start, fallback tools (after a dead server and after a timeout), the
// legacy SSE transport, and eviction. A proxy of test/support/mcp-servers.ts in front of a server shows what the server
// sees: the header secret on every request (and nowhere in what Outpost records), no standing GET stream, a session
// re-established after a restart, and an answer that breaks its output schema.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import {
  api,
  defineAgent,
  done,
  events,
  fireTimers,
  modelRequest,
  ofType,
  type ScriptTurn,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "../support/helpers.ts";

const MCP_URL = inject("mcpUrl");
const CONTROL_URL = inject("mcpControlUrl");

interface ServerOptions {
  transport?: "streamableHttp" | "sse";
  /** A proxy in front answers 401 to any request without `Authorization: Bearer <token>`. */
  requireBearer?: string;
  /** A proxy in front rewrites the server's response bodies. */
  rewrite?: { from: string; to: string }[];
  /** A proxy in front only logs the requests (GET /servers/:id/requests). */
  proxy?: boolean;
}

async function ownServer(options: ServerOptions = {}): Promise<{ id: string; url: string }> {
  const res = await fetch(`${CONTROL_URL}/servers`, { method: "POST", body: JSON.stringify(options) });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; url: string };
}

async function killServer(id: string): Promise<void> {
  const res = await fetch(`${CONTROL_URL}/servers/${id}`, { method: "DELETE" });
  expect(res.status).toBe(200);
}

/** Kills the server process and starts a fresh one on the same port: every session it knew is gone. */
async function restartServer(id: string): Promise<void> {
  const res = await fetch(`${CONTROL_URL}/servers/${id}/restart`, { method: "POST" });
  expect(res.status).toBe(200);
}

interface ProxiedRequest {
  method: string;
  rpc: string[];
  authorized: boolean;
  session: string | null;
  status: number | null;
}

/** What the proxy in front of a server saw, in order; `{marker: "restart"}` where the server was restarted. */
async function proxyLog(id: string): Promise<(ProxiedRequest | { marker: string })[]> {
  const res = await fetch(`${CONTROL_URL}/servers/${id}/requests`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { requests: (ProxiedRequest | { marker: string })[] }).requests;
}

/** The proxy log as short lines: "POST tools/call 200", "DELETE 200", "restart". */
function logLines(log: (ProxiedRequest | { marker: string })[]): string[] {
  return log.map((e) => ("marker" in e ? e.marker : [e.method, ...e.rpc, String(e.status)].join(" ")));
}

/** A URL on 127.0.0.1 where nothing listens: a server we start and kill. */
async function deadUrl(): Promise<string> {
  const server = await ownServer();
  await killServer(server.id);
  return server.url;
}

/** A scripted turn whose first token waits `ms` (the emulator takes ttft_ms per turn as well as per script). */
function slow(turn: ScriptTurn, ms: number): ScriptTurn {
  return Object.assign({}, turn, { ttft_ms: ms });
}

/** The whole text of a response, for checking that a value appears nowhere in it. */
async function bodyText(path: string): Promise<string> {
  const res = await api(path);
  expect(res.status).toBe(200);
  return new TextDecoder().decode(await res.arrayBuffer());
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
        // 30 s of work: only the 1 s timeout can end this call in time.
        content: [toolUse("mcp__everything__trigger-long-running-operation", { duration: 30, steps: 30 })],
        stop_reason: "tool_use",
      },
      done,
    ]);
    const started = Date.now();
    const task = await startTask(agent, `slow ${marker}`);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(10_000);

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
    // The model's first turn waits 3 s for its first token, so the primary server is surely dead (killed right after
    // discovery) before the model asks for the call; a lost race would show as a successful primary call below.
    await script(marker, [
      slow({ content: [toolUse("mcp__primary__echo", { message: "via fallback" })], stop_reason: "tool_use" }, 3_000),
      done,
    ]);
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
    expect(ofType(log, "mcp_tool_call_failed")[0]?.payload.error).toMatchObject({ code: "mcp_connection_failed" });
    const [result] = await toolResults(task.id, 2);
    expect(result).toMatchObject({ is_error: false, content: "Echo: via fallback" });
  });

  it("falls back to the legacy SSE transport when the server does not speak Streamable HTTP", async () => {
    const legacy = await ownServer({ transport: "sse" });
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
    expect(await fireTimers(task.id, ["heartbeat"])).toBe(true);

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

describe("MCP header secrets", () => {
  const TOKEN = "test-mcp-token"; // the value vitest.config.ts gives the Worker secret MCP_TEST_TOKEN
  const withToken = (url: string) => ({
    guarded: { url, headers: { Authorization: { secret: "MCP_TEST_TOKEN", prefix: "Bearer " } } },
  });

  it("sends the header secret on every request to the server; without the header the server refuses the connection", async () => {
    const server = await ownServer({ requireBearer: TOKEN });

    const bare = defineAgent({ mcpServers: { guarded: { url: server.url } } });
    const bareMarker = uniqueMarker("mcp-no-token");
    await script(bareMarker, [done]);
    const refused = await startTask(bare, `no token ${bareMarker}`);
    expect((await waitForTask(refused.id)).status).toBe("completed");
    const refusedLog = await events(refused.id);
    expect(ofType(refusedLog, "mcp_servers_connected")).toHaveLength(0);
    const [failed] = ofType(refusedLog, "mcp_connection_failed");
    expect(failed?.payload).toMatchObject({ server: "guarded", error: { code: "mcp_connection_failed" } });
    expect(JSON.stringify(failed?.payload.error)).toContain("HTTP 401; check the server's header secrets");
    // One refused initialize, and no attempt at the legacy transport: a 401 is not an old server.
    expect(await proxyLog(server.id)).toEqual([
      { method: "POST", rpc: ["initialize"], authorized: false, session: null, status: 401 },
    ]);

    const agent = defineAgent({ mcpServers: withToken(server.url) });
    const marker = uniqueMarker("mcp-token");
    await script(marker, [
      { content: [toolUse("mcp__guarded__echo", { message: "through the proxy" })], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(agent, `token ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const [result] = await toolResults(task.id, 2);
    expect(result).toMatchObject({ is_error: false, content: "Echo: through the proxy" });
    const log = (await proxyLog(server.id)).slice(1) as ProxiedRequest[];
    expect(log.length).toBeGreaterThanOrEqual(4);
    expect(log.every((r) => r.authorized)).toBe(true);
    await killServer(server.id);
  });

  it("never records the secret's value: not in the events, the artifacts, the messages, the task or the agent", async () => {
    const server = await ownServer({ requireBearer: TOKEN });
    const agent = defineAgent({ mcpServers: withToken(server.url) });
    const marker = uniqueMarker("mcp-no-leak");
    await script(marker, [
      {
        content: [
          toolUse("mcp__guarded__echo", { message: "keep it secret" }),
          toolUse("mcp__guarded__get-sum", { a: "x", b: 1 }),
        ],
        stop_reason: "tool_use",
      },
      done,
    ]);
    const task = await startTask(agent, `leak ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    expect(ofType(await events(task.id), "mcp_tool_call_completed")).toHaveLength(2);
    // The secret was really in use: the server refuses everything without it.
    expect((await proxyLog(server.id)).every((r) => "method" in r && r.authorized && r.status !== 401)).toBe(true);

    const texts = new Map<string, string>();
    texts.set("events", await bodyText(`/v1/tasks/${task.id}/events`));
    texts.set("task", await bodyText(`/v1/tasks/${task.id}`));
    texts.set("messages", await bodyText(`/v1/tasks/${task.id}/messages`));
    texts.set("agent", await bodyText(`/v1/agents/${agent}`));
    const listing = await bodyText(`/v1/tasks/${task.id}/artifacts`);
    texts.set("artifacts", listing);
    const paths = (JSON.parse(listing) as { artifacts: { path: string }[] }).artifacts.map((a) => a.path);
    expect(paths).toContain("artifacts/turn_1_step-1_mcp_stdout.txt");
    expect(paths).toContain("artifacts/llm/decision_loop_turn_1_attempt_1_request.txt");
    for (const path of paths) texts.set(path, await bodyText(`/v1/tasks/${task.id}/artifacts/${path}`));
    // The checks look at real content (the echo is in the events and its artifact).
    expect(texts.get("events")).toContain("Echo: keep it secret");
    expect(texts.get("artifacts/turn_1_step-1_mcp_stdout.txt")).toBe("Echo: keep it secret");
    const leaks = [...texts].filter(([, text]) => text.includes(TOKEN)).map(([where]) => where);
    expect(leaks).toEqual([]);
    await killServer(server.id);
  });
});

describe("MCP over Streamable HTTP, seen from the server", () => {
  it("uses POST and DELETE only: no standing GET stream is opened, and the session is ended at the end of the run", async () => {
    const server = await ownServer({ proxy: true });
    const agent = defineAgent({ mcpServers: { watched: { url: server.url } } });
    const marker = uniqueMarker("mcp-no-get");
    await script(marker, [
      { content: [toolUse("mcp__watched__echo", { message: "watched" })], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(agent, `no get ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const log = await proxyLog(server.id);
    expect(logLines(log)).toEqual([
      "POST initialize 200",
      "POST notifications/initialized 202",
      "POST tools/list 200",
      "POST tools/call 200",
      "DELETE 200",
    ]);
    await killServer(server.id);
  });

  it("re-initializes a session the server no longer knows (a restarted server) and sends the call again", async () => {
    const server = await ownServer({ proxy: true });
    const agent = defineAgent({ mcpServers: { fickle: { url: server.url } } });
    const marker = uniqueMarker("mcp-restart");
    await script(marker, [
      { content: [toolUse("mcp__fickle__echo", { message: "before restart" })], stop_reason: "tool_use" },
      // 3 s before the model asks again: the server is restarted in that window (it takes well under a second).
      slow({ content: [toolUse("mcp__fickle__echo", { message: "after restart" })], stop_reason: "tool_use" }, 3_000),
      done,
    ]);
    const task = await startTask(agent, `restart ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "llm_request_sent" && e.payload.turn_index === 2);
    await restartServer(server.id);
    expect((await waitForTask(task.id)).status).toBe("completed");

    const log = await events(task.id);
    expect(ofType(log, "mcp_tool_call_failed")).toHaveLength(0);
    const completed = ofType(log, "mcp_tool_call_completed");
    expect(completed.map((e) => [e.payload.status, e.payload.output_preview])).toEqual([
      ["success", "Echo: before restart"],
      ["success", "Echo: after restart"],
    ]);
    expect((await toolResults(task.id, 3))[0]).toMatchObject({ is_error: false, content: "Echo: after restart" });

    // The call on the old session was refused (server-everything: 400 "No valid session ID"), a new session was
    // opened, and the call went again on it; the restart came before any of it.
    const seen = await proxyLog(server.id);
    expect(logLines(seen)).toEqual([
      "POST initialize 200",
      "POST notifications/initialized 202",
      "POST tools/list 200",
      "POST tools/call 200",
      "restart",
      "POST tools/call 400",
      "POST initialize 200",
      "POST notifications/initialized 202",
      "POST tools/call 200",
      "DELETE 200",
    ]);
    const requests = seen.filter((e): e is ProxiedRequest => "method" in e);
    const stale = requests[4]?.session;
    expect(stale).toBe(requests[3]?.session);
    expect(requests[7]?.session).toEqual(expect.any(String));
    expect(requests[7]?.session).not.toBe(stale);
    await killServer(server.id);
  });
});

describe("MCP results and failures", () => {
  it("gives the model a tool's own isError answer as is: status error, no fallback even when one is configured", async () => {
    const agent = defineAgent({
      mcpServers: {
        main: { url: MCP_URL, tools: { "get-sum": { fallback_tools: ["mcp__backup__get-sum"] } } },
        backup: { url: MCP_URL },
      },
    });
    const marker = uniqueMarker("mcp-is-error");
    await script(marker, [
      // server-everything answers invalid arguments with a result marked isError ("Input validation error: …").
      { content: [toolUse("mcp__main__get-sum", { a: "x", b: 1 })], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(agent, `is error ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const log = await events(task.id);
    const calls = log.filter((e) => e.event_type.startsWith("mcp_tool_call_"));
    expect(calls.map((e) => [e.event_type, e.payload.tool_name])).toEqual([
      ["mcp_tool_call_started", "mcp__main__get-sum"],
      ["mcp_tool_call_completed", "mcp__main__get-sum"],
    ]);
    expect(calls[1]?.payload).toMatchObject({
      status: "error",
      is_error: true,
      output_preview: expect.stringContaining("Input validation error"),
      step_result: { step_id: "step-1", exit_code: 1, status: "failed", retry_count: 0 },
    });
    const [result] = await toolResults(task.id, 2);
    expect(result?.is_error).toBe(true);
    expect(String(result?.content)).toContain("Input validation error");
    expect(String(result?.content)).not.toContain("failed and returned no result");
  });

  it("hands a call that timed out to its fallback tool, which has its own timeout and succeeds", async () => {
    const op = "trigger-long-running-operation";
    const agent = defineAgent({
      mcpServers: {
        first: { url: MCP_URL, tools: { [op]: { timeout_seconds: 1, fallback_tools: [`mcp__second__${op}`] } } },
        second: { url: MCP_URL, tools: { [op]: { timeout_seconds: 10 } } },
      },
    });
    const marker = uniqueMarker("mcp-timeout-fallback");
    // 3 s of work: longer than the first tool's 1 s, well within the fallback's 10 s.
    await script(marker, [
      { content: [toolUse(`mcp__first__${op}`, { duration: 3, steps: 1 })], stop_reason: "tool_use" },
      done,
    ]);
    const started = Date.now();
    const task = await startTask(agent, `timeout fallback ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(10_000);

    const log = await events(task.id);
    const calls = log.filter((e) => e.event_type.startsWith("mcp_tool_call_"));
    expect(calls.map((e) => [e.event_type, e.payload.tool_name, e.payload.timeout_seconds ?? null])).toEqual([
      ["mcp_tool_call_started", `mcp__first__${op}`, 1],
      ["mcp_tool_call_failed", `mcp__first__${op}`, null],
      ["mcp_tool_call_started", `mcp__second__${op}`, 10],
      ["mcp_tool_call_completed", `mcp__second__${op}`, null],
    ]);
    expect(calls[1]?.payload.error).toEqual({
      code: "timeout",
      message: "the call did not finish within its timeout of 1 s",
    });
    expect(calls[1]?.payload.duration_ms).toBeLessThan(2_500);
    expect(calls[3]?.payload).toMatchObject({
      fallback_for: `mcp__first__${op}`,
      fallback_index: 1,
      status: "success",
      step_result: { retry_count: 1, status: "success" },
    });
    // The fallback really ran the 3 s operation.
    expect(calls[3]?.payload.duration_ms).toBeGreaterThanOrEqual(2_500);
    const [result] = await toolResults(task.id, 2);
    expect(result).toMatchObject({
      is_error: false,
      content: "Long running operation completed. Duration: 3 seconds, Steps: 1.",
    });
  });

  it("never stands in a fallback that would need a person's approval for a call that did not", async () => {
    const op = "trigger-long-running-operation";
    const agent = defineAgent({
      mcpServers: {
        first: { url: MCP_URL, tools: { [op]: { timeout_seconds: 1, fallback_tools: [`mcp__second__${op}`] } } },
        second: { url: MCP_URL },
      },
      toolPermissions: { "mcp__second__*": "ask" },
    });
    const marker = uniqueMarker("mcp-fallback-approval");
    await script(marker, [
      { content: [toolUse(`mcp__first__${op}`, { duration: 2, steps: 1 })], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(agent, `fallback approval ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "input_requested")).toHaveLength(0);
    expect(ofType(log, "mcp_tool_call_started").map((e) => e.payload.tool_name)).toEqual([`mcp__first__${op}`]);
    const [result] = await toolResults(task.id, 2);
    expect(result?.is_error).toBe(true);
  });

  it("cuts a long result for the model at 30,000 characters and keeps the whole of it as the step's artifact", async () => {
    const agent = defineAgent({ mcpServers: everything() });
    // 42,000 characters, each 6-character cell naming its position, so any cut or shift shows.
    const message = Array.from({ length: 7_000 }, (_, i) => `${String(i).padStart(5, "0")}|`).join("");
    const full = `Echo: ${message}`;
    const artifact = "artifacts/turn_1_step-1_mcp_stdout.txt";
    const marker = uniqueMarker("mcp-long");
    await script(marker, [{ content: [toolUse("mcp__everything__echo", { message })], stop_reason: "tool_use" }, done]);
    const task = await startTask(agent, `long ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");

    const [result] = await toolResults(task.id, 2);
    const content = String(result?.content);
    expect(result?.is_error).toBe(false);
    expect(content.startsWith(full.slice(0, 30_000))).toBe(true);
    expect(content).not.toContain(full.slice(30_000, 30_012));
    expect(content.length).toBeLessThanOrEqual(30_000 + 200);
    expect(content.slice(30_000)).toContain(artifact);

    expect(await bodyText(`/v1/tasks/${task.id}/artifacts/${artifact}`)).toBe(full);
    const [completed] = ofType(await events(task.id), "mcp_tool_call_completed");
    expect(completed?.payload.step_result).toMatchObject({
      step_id: "step-1",
      exit_code: 0,
      status: "success",
      stdout_artifact: artifact,
      stderr_artifact: null,
      retry_count: 0,
      stdout_summary: full.slice(0, 500),
    });
  });

  it("still checks structured content against the tool's output schema after the task's object is evicted", async () => {
    // A proxy makes the server break its own output schema for Los Angeles only (temperature as a string).
    const server = await ownServer({
      rewrite: [{ from: '"structuredContent":{"temperature":73,', to: '"structuredContent":{"temperature":"73",' }],
    });
    const agent = defineAgent({ mcpServers: { weather: { url: server.url } } });
    const call = (location: string) => toolUse("mcp__weather__get-structured-content", { location });
    const marker = uniqueMarker("mcp-schema-evict");
    await script(marker, [
      { content: [call("Chicago"), call("Los Angeles")], stop_reason: "tool_use" },
      slow({ content: [call("Chicago"), call("Los Angeles")], stop_reason: "tool_use" }, 1_500),
      done,
    ]);
    const task = await startTask(agent, `schema ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "llm_request_sent" && e.payload.turn_index === 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await abortAllDurableObjects();
    expect(await fireTimers(task.id, ["heartbeat"])).toBe(true);
    expect((await waitForTask(task.id)).status).toBe("completed");

    const log = await events(task.id);
    expect(ofType(log, "run_resumed")).toHaveLength(1);
    const locations = new Map(
      ofType(log, "mcp_tool_call_started").map((e) => [
        e.payload.step_id,
        (e.payload.arguments as { location?: string }).location,
      ]),
    );
    const outcomes = log
      .filter((e) => e.event_type === "mcp_tool_call_completed" || e.event_type === "mcp_tool_call_failed")
      .map((e) => [e.payload.turn_index, locations.get(e.payload.step_id), e.event_type].join(" "));
    expect(outcomes.sort()).toEqual([
      "1 Chicago mcp_tool_call_completed",
      "1 Los Angeles mcp_tool_call_failed",
      "2 Chicago mcp_tool_call_completed",
      "2 Los Angeles mcp_tool_call_failed",
    ]);
    for (const completed of ofType(log, "mcp_tool_call_completed")) {
      expect(completed.payload).toMatchObject({
        status: "success",
        structured_content: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 },
      });
    }
    for (const failed of ofType(log, "mcp_tool_call_failed")) {
      expect(failed.payload.error).toMatchObject({
        code: "mcp_error",
        message: expect.stringContaining("does not match the tool's output schema"),
      });
    }
    const results = await toolResults(task.id, 3);
    expect(results.map((r) => r.is_error)).toEqual([false, true]);
    // The resumed run did not list the tools again (discovery is journaled), so the SDK client had no schema of
    // its own to check against: the check after the eviction is Outpost's, from the journaled schema.
    const rpc = (await proxyLog(server.id)).flatMap((e) => ("rpc" in e ? e.rpc : []));
    expect(rpc.filter((m) => m === "tools/list")).toHaveLength(1);
    expect(rpc.filter((m) => m === "initialize")).toHaveLength(2);
    await killServer(server.id);
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
