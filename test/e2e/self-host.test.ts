// `npm start` as an operator runs it from a fresh clone with no Cloudflare account: scripts/start.ts serving the
// deploy bundle under `workerd serve`, on a new state directory, with an env file that holds nothing (no model key, no
// API keys). It starts the model emulator and generates an API key, and then the demo agents answer through the
// HTTP API, MCP and A2A; run bundles land in the state directory's runs folder and are served back from it; the
// console and GET /docs's assets are served; the emulator's own address is the only local one the Worker may reach.
// Started again with a certificate, an env file and --emulator, it serves HTTPS with them, takes its API key and a
// [vars] override from the file, and writes no secret into its config. Without a model key, it refuses to start
// where others can reach it (an address that is not loopback, or TLS) unless --emulator says to serve the emulator.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Role, type SendMessageRequest, TaskState } from "@a2a-js/sdk";
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../bench/wrangler.ts";
import { modelSource } from "../../scripts/self-host/config.ts";

const ROOT = resolve(import.meta.dirname, "../..");
/** What the emulator answers the planner when no script matches (a TodoWrite, then this). */
const PLANNER_ANSWER = "Done. The tool returned: Task list saved: 1 items, 0 completed.";

/** `npm start` as a child process, with only PATH and HOME of this environment, until it says it is serving. */
async function startOutpost(
  args: string[],
  envFile: string,
): Promise<{ process: ChildProcess; port: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    join(ROOT, "node_modules/.bin/node"),
    ["scripts/start.ts", ...args, "--address", `127.0.0.1:${port}`, "--env-file", envFile],
    // No ANTHROPIC_API_KEY, nor anything else of the test run's environment.
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  await new Promise<void>((ready, fail) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("[outpost] serving on")) ready();
    });
    child.once("exit", (code) => fail(new Error(`npm start exited with ${code}:\n${output}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((done) => child.once("exit", done));
    child.kill("SIGTERM");
    await exited;
  };
  return { process: child, port, stop };
}

let state: string;
let stopServer: () => Promise<void>;
let base: string;
let key: string;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "outpost-start-"));
  const envFile = join(state, "empty.env");
  writeFileSync(envFile, "# nothing: no model key, no API keys\n");
  const started = await startOutpost(["--state", join(state, "data")], envFile);
  stopServer = started.stop;
  base = `http://127.0.0.1:${started.port}`;
  key = readFileSync(join(state, "data", "api-key"), "utf8").trim();
}, 120_000);

afterAll(async () => {
  await stopServer();
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

  it("keeps the run bundle as one tar in <state>/runs, serves its files from it, and downloads it whole", async () => {
    const created = await api("/v1/agents/planner/tasks", { method: "POST", body: JSON.stringify({ input: "Plan" }) });
    const { id } = (await created.json()) as { id: string };
    await api(`/v1/tasks/${id}?wait=30`);
    const listed = (await (await api(`/v1/tasks/${id}/artifacts`)).json()) as {
      artifacts: { path: string; uploaded: boolean }[];
    };
    expect(listed.artifacts.find((a) => a.path === "final_summary.md")?.uploaded).toBe(true);
    // The system's own tar reads the archive on disk (bundle format 2: docs/reference/run-bundle.md).
    const archive = join(state, "data", "runs", "runs", id, "bundle.tar");
    const onDisk = execFileSync("tar", ["-xOf", archive, "final_summary.md"], { encoding: "utf8" });
    expect(onDisk).toContain(`# Task ${id}`);
    const served = await api(`/v1/tasks/${id}/artifacts/final_summary.md`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(await served.text()).toBe(onDisk);
    const download = await api(`/v1/tasks/${id}/bundle`);
    expect(download.status).toBe(200);
    const tar = Buffer.from(await download.arrayBuffer());
    const names = execFileSync("tar", ["-t"], { input: tar, encoding: "utf8" }).trimEnd().split("\n");
    expect(names[0]).toBe("bundle.json");
    expect(names.sort()).toEqual(listed.artifacts.map((a) => a.path).sort());
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

  it("fires an `at` schedule from its Durable Object's alarm, on local disk, and its task completes", async () => {
    const at = new Date(Date.now() + 2_000).toISOString();
    const created = await api("/v1/schedules", {
      method: "POST",
      body: JSON.stringify({ agent: "planner", input: "Plan", at }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    type Fire = { outcome: string; task_id: string | null };
    let fires: Fire[] = [];
    // Nothing but the alarm can fire it; wait (up to 30 s) until it has.
    for (let i = 0; i < 300 && !fires.some((f) => f.outcome === "started"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      fires = ((await (await api(`/v1/schedules/${id}`)).json()) as { recent_fires: Fire[] }).recent_fires;
    }
    expect(fires.map((f) => f.outcome)).toEqual(["started"]);
    const task = (await (await api(`/v1/tasks/${fires[0]?.task_id}?wait=30`)).json()) as {
      status: string;
      trigger: { kind: string; schedule_id: string } | null;
    };
    expect([task.status, task.trigger?.kind, task.trigger?.schedule_id]).toEqual(["completed", "schedule", id]);
  });

  it("lets the Worker reach the emulator's own host and port, and no other local or private address", () => {
    const config = readFileSync(join(state, "data", "workerd.capnp"), "utf8");
    // The emulator: one external server at its own address, which only the router sends requests to.
    const address = /\(name = "model-endpoint", external = \(address = "(127\.0\.0\.1:\d+)", http = \(\)\)\)/.exec(
      config,
    )?.[1];
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(config).toContain(`const MODEL_ORIGIN = \\"http://${address}\\";`);
    expect(config).toContain('globalOutbound = "outbound"');
    // The internet: public addresses only.
    expect(config).toContain(
      '(name = "internet", network = (allow = ["public"], tlsOptions = (trustBrowserCas = true)))',
    );
    expect(config).not.toMatch(/"private"|"local"/);
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

describe("npm start with a TLS certificate and an env file", () => {
  let dir: string;
  let stop: () => Promise<void>;
  let port: number;
  let cert: string;
  const envKey = `op_${crypto.randomUUID()}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "outpost-start-tls-"));
    // A self-signed certificate for 127.0.0.1, made for this run.
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"],
        ...["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        ...["-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")],
      ],
      { stdio: "ignore" },
    );
    cert = readFileSync(join(dir, "cert.pem"), "utf8");
    writeFileSync(
      join(dir, "outpost.env"),
      `# the API keys (a secret) and a [vars] override\nexport OUTPOST_API_KEYS=${envKey}\nOUTPOST_DEFAULT_MODEL="claude-haiku-4-5"\n`,
    );
    // No model key in the env file: with TLS on, only --emulator makes it serve the emulator.
    const started = await startOutpost(
      [
        "--state",
        join(dir, "data"),
        "--tls-cert",
        join(dir, "cert.pem"),
        "--tls-key",
        join(dir, "key.pem"),
        "--emulator",
      ],
      join(dir, "outpost.env"),
    );
    stop = started.stop;
    port = started.port;
  }, 120_000);

  afterAll(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A request over HTTPS that trusts only the test's certificate. */
  const https = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; body: string }>((done, fail) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          method,
          path,
          ca: cert,
          headers: { authorization: `Bearer ${envKey}`, ...(body ? { "content-type": "application/json" } : {}) },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => {
            text += chunk.toString();
          });
          res.on("end", () => done({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.once("error", fail);
      req.end(body);
    });

  it("serves HTTPS with the certificate it was given", async () => {
    const res = await https("GET", "/");
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body) as { name: string }).name).toBe("outpost");
  });

  it("takes its API key and a [vars] override from the env file, generating no key of its own", async () => {
    const created = await https("POST", "/v1/agents/planner/tasks", JSON.stringify({ input: "Plan" }));
    expect(created.status).toBe(202);
    expect((JSON.parse(created.body) as { model: string }).model).toBe("claude-haiku-4-5");
    expect(existsSync(join(dir, "data", "api-key"))).toBe(false);
  });

  it("writes the secret's name into the workerd config, never its value", () => {
    const config = readFileSync(join(dir, "data", "workerd.capnp"), "utf8");
    expect(config).toContain('(name = "OUTPOST_API_KEYS", fromEnvironment = "OUTPOST_API_KEYS")');
    expect(config).toContain('(name = "OUTPOST_DEFAULT_MODEL", fromEnvironment = "OUTPOST_DEFAULT_MODEL")');
    expect(config).not.toContain(envKey);
  });
});

/** `npm start` with `args` until it exits or says it is serving (then stopped): its exit code (null: it served). */
async function startOrExit(args: string[], envFile: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(join(ROOT, "node_modules/.bin/node"), ["scripts/start.ts", ...args, "--env-file", envFile], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const served = new Promise<null>((done) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("[outpost] serving on")) done(null);
    };
    child.stdout?.on("data", read);
    child.stderr?.on("data", read);
  });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const code = await Promise.race([served, exited]);
  if (code === null) {
    child.kill("SIGTERM");
    await exited;
  }
  return { code, output };
}

describe("npm start with no model key where others can reach it", () => {
  let dir: string;
  let envFile: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "outpost-start-refused-"));
    envFile = join(dir, "outpost.env");
    writeFileSync(envFile, `OUTPOST_API_KEYS=op_${crypto.randomUUID()}\n`);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const exposures: [string, (port: number) => string[]][] = [
    ["an address that is not loopback", (port) => ["--address", `0.0.0.0:${port}`]],
    [
      "TLS, even on loopback",
      (port) => ["--address", `127.0.0.1:${port}`, "--tls-cert", "cert.pem", "--tls-key", "key.pem"],
    ],
  ];
  for (const [what, args] of exposures) {
    it(`does not start on ${what}, and says what to set`, async () => {
      const { code, output } = await startOrExit([...args(await freePort()), "--state", join(dir, "data")], envFile);
      expect(code).toBe(1);
      expect(output).toContain(
        "[outpost] No model key: the env file sets neither ANTHROPIC_API_KEY nor ANTHROPIC_BASE_URL",
      );
      expect(output).toContain(`Put ANTHROPIC_API_KEY in ${envFile}, or pass --emulator`);
      // Refused before anything was built or served.
      expect(output).not.toContain("building the bundle");
      expect(existsSync(join(dir, "data", "workerd.capnp"))).toBe(false);
    });
  }

  it("starts exposed without the emulator when the env file names another provider's key", () => {
    const exposed = { address: "0.0.0.0:8443", envFile: "outpost.env", emulator: false };
    const env = (entries: Record<string, string>) => new Map(Object.entries(entries));
    expect(modelSource(exposed, env({ GEMINI_API_KEY: "g" }))).toEqual({ kind: "provider" });
    expect(modelSource(exposed, env({ CLAUDE_CODE_OAUTH_TOKEN: "t" }))).toEqual({ kind: "provider" });
    expect(modelSource(exposed, env({ OUTPOST_API_KEYS: "k" })).kind).toBe("refused");
    // On loopback, no key at all still means the emulator.
    expect(modelSource({ ...exposed, address: "127.0.0.1:8787" }, env({}))).toEqual({ kind: "emulator" });
  });

  it("refuses --emulator beside a model key: the emulator would answer in its place", async () => {
    const keyed = join(dir, "keyed.env");
    writeFileSync(keyed, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key\n");
    const { code, output } = await startOrExit(["--emulator", "--state", join(dir, "keyed")], keyed);
    expect(code).toBe(1);
    expect(output).toContain("--emulator serves the model emulator in place of the model provider");
    expect(output).not.toContain("sk-ant-test-not-a-key");
  });
});
