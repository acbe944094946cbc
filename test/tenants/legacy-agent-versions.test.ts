// A tenant's agent whose current version was stored by an earlier Outpost, before the definition checks grew stricter
// (max_turns and max_tokens bounded, unknown allowed_tools refused): its row is written into the tenant object's
// storage as that code wrote it, past today's PUT checks. The tenant keeps working (no 500, its other agents listed
// and run), the agent is shown with what no longer passes, every way of running it is refused with 409
// agent_version_invalid naming the key, and a corrected PUT makes it run again. The tests run in the "authors"
// tenant (vitest.config.ts), and in "mcp" for the MCP server.

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import {
  AgentListSchema,
  AgentSchema,
  AgentVersionListSchema,
  CheckpointListSchema,
  TaskResourceSchema,
} from "../../src/http/responses.ts";
import { sha256Hex } from "../../src/lib/sha256.ts";
import { api, BASE, expectError, parseBody, script, uniqueMarker, workerFetch } from "../support/helpers.ts";

const ADMIN = "test-author-key";
const RUNNER = "test-author-runner";
const MCP_KEY = "test-mcp-key";

function agentName(label: string): string {
  return `${label}_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

/** What an earlier Outpost kept of a PUT: the body, and the definition it made of it (no check of today's applied). */
interface LegacyVersion {
  source: string;
  definition: Record<string, unknown>;
}

/** An agent with max_turns past today's bound (1,000), as a file and as the definition the old code stored. */
function turnsPastBound(name: string): LegacyVersion {
  return {
    source: `name: ${name}\ninstructions: Loop for ever.\nclaude:\n  max_turns: 1000000000\n`,
    definition: { name, systemPrompt: "Loop for ever.", maxTurns: 1_000_000_000 },
  };
}

/** An agent whose allowed_tools names a tool that today's checks refuse. */
function unknownTool(name: string): LegacyVersion {
  return {
    source: `name: ${name}\ninstructions: Plan.\nclaude:\n  allowed_tools:\n    - TodoWrite\n    - NoSuchTool\n`,
    definition: { name, systemPrompt: "Plan.", allowedTools: ["TodoWrite", "NoSuchTool"] },
  };
}

/** Writes the next version of `name` into the tenant's object as src/tenants/agent-versions.ts's INSERT does. */
async function storeAsBefore(tenant: string, name: string, legacy: LegacyVersion): Promise<void> {
  const sha256 = await sha256Hex(legacy.source);
  await runInDurableObject(env.TENANTS.get(env.TENANTS.idFromName(tenant)), (_instance, state) => {
    const sql = state.storage.sql;
    const last = sql
      .exec<{ v: number | null }>("SELECT MAX(version) AS v FROM agents_versions WHERE name = ?", name)
      .one().v;
    sql.exec(
      `INSERT INTO agents_versions (name, version, source, sha256, definition, warnings, created_at, created_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      name,
      (last ?? 0) + 1,
      legacy.source,
      sha256,
      JSON.stringify(legacy.definition),
      "[]",
      new Date().toISOString(),
      "author",
    );
  });
}

function put(name: string, body: string, key = ADMIN) {
  return api(`/v1/agents/${name}`, {
    method: "PUT",
    body,
    headers: { "content-type": "application/yaml" },
    key,
  });
}

/**
 * A valid agent beside the legacy one, added with PUT: the tenant's other agents must keep working. The PUT also has
 * this Worker instance read the tenant's agents anew (src/http/agent-lookup.ts), as it would a little later anyway.
 */
async function neighbour(key = ADMIN): Promise<string> {
  const name = agentName("neighbour");
  expect((await put(name, `name: ${name}\ninstructions: You answer.\nclaude:\n  max_turns: 2\n`, key)).status).toBe(
    201,
  );
  return name;
}

async function runOn(agent: string, label: string): Promise<Response> {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }]);
  return api(`/v1/agents/${agent}/tasks`, {
    method: "POST",
    body: JSON.stringify({ input: `${label} ${marker}` }),
    key: RUNNER,
  });
}

async function finished(res: Response) {
  expect(res.status).toBe(202);
  const { id } = await parseBody(res, TaskResourceSchema);
  return parseBody(await api(`/v1/tasks/${id}?wait=20`, { key: RUNNER }), TaskResourceSchema);
}

const STATEMENT = /^Version 1 of this agent no longer passes Outpost's checks, at claude\.max_turns: /;

describe("a version stored before the stricter checks", () => {
  it("leaves GET /v1/agents answering: the tenant's other agents, and this one with what no longer passes", async () => {
    const legacy = agentName("legacy");
    await storeAsBefore("authors", legacy, turnsPastBound(legacy));
    const other = await neighbour();

    const res = await api("/v1/agents", { key: RUNNER });
    expect(res.status).toBe(200);
    const { agents } = await parseBody(res, AgentListSchema);
    expect(agents.map((a) => a.name)).toEqual(expect.arrayContaining([legacy, other, "planner"]));
    expect(agents.find((a) => a.name === other)?.warnings).toEqual([]);
    const shown = agents.find((a) => a.name === legacy);
    expect(shown?.source).toEqual({ kind: "runtime", version: 1 });
    expect(shown?.system_prompt).toBe("Loop for ever.");
    expect(shown?.warnings).toHaveLength(1);
    expect(shown?.warnings[0]).toMatch(STATEMENT);
    expect(shown?.warnings[0]).toContain(`PUT /v1/agents/${legacy}`);
  });

  it("describes the agent at GET /v1/agents/:name and lists its versions, naming the key at fault", async () => {
    const legacy = agentName("legacy");
    await storeAsBefore("authors", legacy, unknownTool(legacy));
    await neighbour();

    const described = await parseBody(await api(`/v1/agents/${legacy}`, { key: RUNNER }), AgentSchema);
    expect(described.name).toBe(legacy);
    // The settings shown leave out the entry at fault, which the statement names.
    expect(described.allowed_tools).toEqual(["TodoWrite"]);
    expect(described.warnings).toHaveLength(1);
    expect(described.warnings[0]).toMatch(
      /^Version 1 of this agent no longer passes Outpost's checks, at claude\.allowed_tools\.1: .*NoSuchTool/,
    );
    const versions = await parseBody(
      await api(`/v1/agents/${legacy}/versions`, { key: RUNNER }),
      AgentVersionListSchema,
    );
    expect(versions.versions.map((v) => v.version)).toEqual([1]);
  });

  it("refuses every way of running it with 409 agent_version_invalid naming the key, and runs the others", async () => {
    const legacy = agentName("legacy");
    await storeAsBefore("authors", legacy, turnsPastBound(legacy));
    const other = await neighbour();
    const refused = async (res: Response) => {
      const body = await expectError(res, 409, "agent_version_invalid", "claude.max_turns");
      expect(body.error.message).toContain(`version 1`);
      expect(body.error.message).toContain(`PUT /v1/agents/${legacy}`);
    };
    const post = (path: string, body: unknown) =>
      api(path, { method: "POST", body: JSON.stringify(body), key: RUNNER });

    await refused(await post(`/v1/agents/${legacy}/tasks`, { input: "hi" }));
    await refused(await post(`/v1/agents/${legacy}/sessions`, {}));
    await refused(await post(`/v1/agents/${legacy}/invoke`, { message: "hi" }));
    await refused(await api(`/a2a/${legacy}/.well-known/agent-card.json`, { key: RUNNER }));
    await refused(await post(`/a2a/${legacy}`, { jsonrpc: "2.0", id: 1, method: "SendMessage", params: {} }));
    await refused(
      await api("/v1/schedules", {
        method: "POST",
        body: JSON.stringify({ agent: legacy, input: "hi", cron: "0 0 1 1 *" }),
        key: ADMIN,
      }),
    );

    expect((await finished(await runOn(other, "neighbour"))).status).toBe("completed");
    // The A2A listing names the agents that can run.
    const cards = (await (await api("/a2a", { key: RUNNER })).json()) as { agents: { name: string }[] };
    expect(cards.agents.map((a) => a.name)).toContain(other);
    expect(cards.agents.map((a) => a.name)).not.toContain(legacy);
  });

  it("refuses a fork of a task that ran on a version that no longer passes", async () => {
    const name = agentName("forked");
    expect((await put(name, `name: ${name}\ninstructions: You answer.\n`)).status).toBe(201);
    const origin = await finished(await runOn(name, "fork-origin"));
    // As if version 1 had been stored, and run, by the earlier Outpost.
    await runInDurableObject(env.TENANTS.get(env.TENANTS.idFromName("authors")), (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE agents_versions SET definition = ? WHERE name = ? AND version = 1",
        JSON.stringify(turnsPastBound(name).definition),
        name,
      );
    });
    const checkpoints = await parseBody(
      await api(`/v1/tasks/${origin.id}/checkpoints`, { key: RUNNER }),
      CheckpointListSchema,
    );
    const fork = await api(`/v1/tasks/${origin.id}/fork`, {
      method: "POST",
      key: RUNNER,
      body: JSON.stringify({ checkpoint_id: checkpoints.checkpoints[0]?.checkpoint_id }),
    });
    await expectError(fork, 409, "agent_version_invalid", "claude.max_turns");
  });

  it("runs again once a corrected version is PUT", async () => {
    const legacy = agentName("legacy");
    await storeAsBefore("authors", legacy, turnsPastBound(legacy));
    await neighbour();
    await expectError(await runOn(legacy, "before"), 409, "agent_version_invalid", "claude.max_turns");

    const fixed = await put(legacy, `name: ${legacy}\ninstructions: Loop a little.\nclaude:\n  max_turns: 3\n`);
    expect(fixed.status).toBe(200);
    const described = await parseBody(fixed, AgentSchema);
    expect(described).toMatchObject({ source: { kind: "runtime", version: 2 }, max_turns: 3, warnings: [] });
    const task = await finished(await runOn(legacy, "after"));
    expect(task).toMatchObject({ status: "completed", agent_version: 2 });
  });

  it("is left out of the MCP server's tools, and a call of it is refused naming the key", async () => {
    const legacy = agentName("legacy");
    await storeAsBefore("mcp", legacy, turnsPastBound(legacy));
    const other = await neighbour(MCP_KEY);
    const client = new Client({ name: "test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
      fetch: (url, init) => {
        const headers = new Headers(init?.headers);
        headers.set("authorization", `Bearer ${MCP_KEY}`);
        return workerFetch(new Request(url, { ...init, headers }));
      },
    });
    await client.connect(transport);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain(other);
      expect(tools).not.toContain(legacy);
      await expect(client.callTool({ name: legacy, arguments: { input: "hi" } })).rejects.toThrow(
        /no longer passes Outpost's checks, at claude\.max_turns/,
      );
    } finally {
      await client.close();
    }
  });
});
