// Private hosts are the operator's: an agent a tenant adds at runtime (PUT /v1/agents/:name) is judged as if
// OUTPOST_ALLOW_PRIVATE_HOSTS were empty, and reaches a private host only at a host:port the operator gave its tenant
// (OUTPOST_TENANT_PRIVATE_HOSTS). A private MCP URL is refused at PUT, naming the field, and again when a run
// connects; a WebFetch of the agent is judged by the same allowance, redirects included. The deployment's own agents
// keep the operator's list. The tests' deployment (vitest.config.ts) allows 127.0.0.1 for the tools, and gives the
// tenant "default" the host:port of the shared MCP server and of the fixture web server, and "beta" nothing.
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { forgetOwnAgents } from "../../src/http/agent-lookup.ts";
import {
  api,
  defineAgent,
  done,
  type EventBody,
  expectError,
  ofType,
  parseEvent,
  readSse,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const MCP_URL = inject("mcpUrl");
const WEB_URL = inject("webUrl");
/** beta's admin and its key that runs and reads: a tenant the operator gave no private host. */
const BETA_ADMIN = "test-beta-admin";
const BETA = "test-beta-key";

function agentName(label: string): string {
  return `${label}_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

function put(name: string, extra: string, key?: string) {
  return api(`/v1/agents/${name}`, {
    method: "PUT",
    body: `name: ${name}\ninstructions: You use tools.\nclaude:\n  max_turns: 3\n${extra}`,
    headers: { "content-type": "application/yaml" },
    ...(key === undefined ? {} : { key }),
  });
}

const mcpTool = (url: string, required = false) =>
  `tools:\n  - type: mcp\n    name: everything\n    url: ${url}\n    required: ${required}\n`;

async function eventsOf(id: string, key?: string): Promise<EventBody[]> {
  const frames = await readSse(await api(`/v1/tasks/${id}/events`, key === undefined ? {} : { key }));
  return frames.map((f) => parseEvent(f.data));
}

describe("a runtime agent's MCP servers", () => {
  it("are refused at PUT on a private host the operator allows but did not give the tenant, naming the field", async () => {
    const name = agentName("private_mcp");
    const refused = await expectError(
      await put(name, mcpTool(MCP_URL), BETA_ADMIN),
      400,
      "validation_failed",
      "tools.0.url",
    );
    expect(refused.error.message).toBe(
      `body:8: tools.0.url: ${MCP_URL} is not allowed: the address is loopback (127.0.0.0/8). An agent added at runtime reaches a private host only at a host:port that OUTPOST_TENANT_PRIVATE_HOSTS gives its tenant.`,
    );
    expect((await api(`/v1/agents/${name}`, { key: BETA })).status).toBe(404);
  });

  it("are taken at the host:port the operator gave the tenant, and refused at another port of that host", async () => {
    const name = agentName("given_mcp");
    expect((await put(name, mcpTool(MCP_URL))).status).toBe(201);
    const marker = uniqueMarker("given-mcp");
    await script(marker, [
      { content: [toolUse("mcp__everything__echo", { message: marker })], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(name, `Echo ${marker}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    expect((await toolResults(task.id, 2)).map((r) => [String(r.content), r.is_error])).toEqual([
      [`Echo: ${marker}`, false],
    ]);
    const otherPort = `http://127.0.0.1:${Number(new URL(MCP_URL).port) === 1 ? 2 : 1}/mcp`;
    await expectError(await put(agentName("port_mcp"), mcpTool(otherPort)), 400, "validation_failed", "tools.0.url");
  });

  it("are refused again when a run connects: a version stored before the tenant's allowance was taken away", async () => {
    const name = agentName("stored_mcp");
    // What a PUT stored under an allowance the operator has since removed: the version is kept as it was.
    await env.TENANTS.get(env.TENANTS.idFromName("beta")).putAgent(
      {
        name,
        source: "(stored before)",
        sha256: "0".repeat(64),
        definition: {
          name,
          systemPrompt: "You use tools.",
          maxTurns: 3,
          mcpServers: { everything: { url: MCP_URL, required: true } },
        },
        warnings: [],
        created_by: "beta-admin",
      },
      null,
      { maxAgents: 100, maxVersions: 50 },
    );
    // As a PUT does on the instance that took it: the next request reads the tenant's agents anew.
    forgetOwnAgents("beta");
    const res = await api(`/v1/agents/${name}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: "Connect" }),
      key: BETA,
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const finished = await waitForTask(id, 30, BETA);
    expect(finished.status).toBe("failed");
    const failures = ofType(await eventsOf(id, BETA), "mcp_connection_failed");
    expect(failures.map((e) => [e.payload.server, (e.payload.error as { code: string }).code])).toEqual([
      ["everything", "url_not_allowed"],
    ]);
    expect(JSON.stringify(failures[0]?.payload.error)).toContain(`${MCP_URL} is not allowed`);
  });
});

describe("a runtime agent's WebFetch", () => {
  it("reaches the host:port its tenant was given, and no other port of that host, redirects included", async () => {
    const name = agentName("fetcher");
    expect((await put(name, "web_fetch:\n  enabled: true\n")).status).toBe(201);
    const marker = uniqueMarker("tenant-fetch");
    await script(marker, [
      {
        content: [
          toolUse("WebFetch", { url: `${WEB_URL}/plain.txt` }),
          toolUse("WebFetch", { url: `${WEB_URL}/redirect-cross-origin` }),
        ],
        stop_reason: "tool_use",
      },
      done,
    ]);
    const task = await startTask(name, `Fetch ${marker}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const [plain, redirected] = await toolResults(task.id, 2);
    expect([String(plain?.content), plain?.is_error]).toEqual([expect.stringContaining("plain text body"), false]);
    expect(redirected?.is_error).toBe(true);
    expect(String(redirected?.content)).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/echo-credentials is not allowed: the address is loopback \(127\.0\.0\.0\/8\)\. An agent added at runtime reaches a private host only at a host:port that OUTPOST_TENANT_PRIVATE_HOSTS gives its tenant\.$/,
    );
  });

  it("reaches no private host at all for a tenant given none, where the deployment's own agent does", async () => {
    const name = agentName("beta_fetcher");
    expect((await put(name, "web_fetch:\n  enabled: true\n", BETA_ADMIN)).status).toBe(201);
    const marker = uniqueMarker("beta-fetch");
    const fetch = toolUse("WebFetch", { url: `${WEB_URL}/redirect-cross-origin` });
    await script(marker, [{ content: [fetch], stop_reason: "tool_use" }, done]);
    const res = await api(`/v1/agents/${name}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: `Fetch ${marker}` }),
      key: BETA,
    });
    const { id } = (await res.json()) as { id: string };
    expect((await waitForTask(id, 30, BETA)).status).toBe("completed");
    const completed = ofType(await eventsOf(id, BETA), "tool_call_completed");
    expect(completed.map((e) => e.payload.is_error)).toEqual([true]);

    // The deployment's own agent keeps the operator's OUTPOST_ALLOW_PRIVATE_HOSTS, every port of 127.0.0.1.
    const own = defineAgent({ webFetch: { enabled: true } });
    const ownMarker = uniqueMarker("own-fetch");
    await script(ownMarker, [{ content: [fetch], stop_reason: "tool_use" }, done]);
    const ownTask = await startTask(own, `Fetch ${ownMarker}`);
    expect((await waitForTask(ownTask.id, 30)).status).toBe("completed");
    const [result] = await toolResults(ownTask.id, 2);
    expect([String(result?.content), result?.is_error]).toEqual([expect.stringContaining('"origin":"other"'), false]);
  });
});
