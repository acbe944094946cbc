// `npm start` as an operator runs it from a fresh clone with no Cloudflare account: scripts/start.ts serving the
// deploy bundle under `workerd serve`, on a new state directory, with an env file that holds nothing (no model key, no
// API keys). It starts the model emulator and generates an API key, and then the demo agents answer through the
// HTTP API, MCP and A2A; run bundles land in the state directory's runs folder and are served back from it; the
// console and GET /docs's assets are served.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Role, type SendMessageRequest, TaskState } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/wrangler.ts";

const ROOT = resolve(import.meta.dirname, "../..");
/** What the emulator answers the planner when no script matches (a TodoWrite, then this). */
const PLANNER_ANSWER = "Done. The tool returned: Task list saved: 1 items, 0 completed.";

let state: string;
let server: ChildProcess;
let base: string;
let key: string;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "outpost-start-"));
  const envFile = join(state, "empty.env");
  writeFileSync(envFile, "# nothing: no model key, no API keys\n");
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(
    join(ROOT, "node_modules/.bin/node"),
    ["scripts/start.ts", "--state", join(state, "data"), "--address", `127.0.0.1:${port}`, "--env-file", envFile],
    // No ANTHROPIC_API_KEY, nor anything else of the test run's environment.
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  server.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise<void>((ready, fail) => {
    server.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("[outpost] serving on")) ready();
    });
    server.once("exit", (code) => fail(new Error(`npm start exited with ${code}:\n${output}`)));
  });
  key = readFileSync(join(state, "data", "api-key"), "utf8").trim();
}, 120_000);

afterAll(async () => {
  if (server.exitCode === null) {
    const exited = new Promise((done) => server.once("exit", done));
    server.kill("SIGTERM");
    await exited;
  }
  rmSync(state, { recursive: true, force: true });
});

const api = (path: string, init: RequestInit = {}, bearer: string | null = key) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: {
      ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
      ...(init.body ? { "content-type": "application/json" } : {}),
    },
  });

describe("npm start on a fresh state directory, with no model key and no API keys", () => {
  it("runs the demo planner against the model emulator, with the API key it generated", async () => {
    const created = await api("/v1/agents/planner/tasks", { method: "POST", body: JSON.stringify({ input: "Plan" }) });
    expect(created.status).toBe(202);
    const { id } = (await created.json()) as { id: string };
    const done = (await (await api(`/v1/tasks/${id}?wait=30`)).json()) as { status: string; result: string };
    expect([done.status, done.result]).toEqual(["completed", PLANNER_ANSWER]);
  });

  it("answers 401 to a request without the generated key, and to one with another key", async () => {
    expect((await api("/v1/agents", {}, null)).status).toBe(401);
    expect((await api("/v1/agents", {}, "op_not-the-key")).status).toBe(401);
  });

  it("keeps the run bundle in <state>/runs and serves its files from there", async () => {
    const created = await api("/v1/agents/planner/tasks", { method: "POST", body: JSON.stringify({ input: "Plan" }) });
    const { id } = (await created.json()) as { id: string };
    await api(`/v1/tasks/${id}?wait=30`);
    const listed = (await (await api(`/v1/tasks/${id}/artifacts`)).json()) as {
      artifacts: { path: string; uploaded: boolean }[];
    };
    expect(listed.artifacts.find((a) => a.path === "final_summary.md")?.uploaded).toBe(true);
    const onDisk = readFileSync(join(state, "data", "runs", "runs", id, "final_summary.md"), "utf8");
    expect(onDisk).toContain(`# Task ${id}`);
    const served = await api(`/v1/tasks/${id}/artifacts/final_summary.md`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(await served.text()).toBe(onDisk);
  });

  it("serves the demo agents as MCP tools to the MCP SDK's client", async () => {
    const client = new Client({ name: "self-host-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["assistant", "coder", "planner"]));
  });

  it("runs the planner for the A2A SDK's client, from its agent card", async () => {
    const fetchImpl: typeof fetch = (input, init) => {
      const request = new Request(input, init);
      const headers = new Headers(request.headers);
      headers.set("authorization", `Bearer ${key}`);
      return fetch(new Request(request, { headers }));
    };
    const client = await new ClientFactory({
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }).createFromUrl(`${base}/a2a/planner/`);
    const request: SendMessageRequest = {
      tenant: "",
      message: {
        messageId: crypto.randomUUID(),
        contextId: "",
        taskId: "",
        role: Role.ROLE_USER,
        parts: [
          { content: { $case: "text", value: "Plan" }, metadata: undefined, filename: "", mediaType: "text/plain" },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
      metadata: undefined,
    };
    const result = await client.sendMessage(request);
    expect("messageId" in result).toBe(false);
    if ("messageId" in result) return;
    expect(result.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("serves the console and GET /docs's stylesheet with its content type", async () => {
    const page = await fetch(`${base}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const css = await fetch(`${base}/docs/swagger-ui.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
  });
});
