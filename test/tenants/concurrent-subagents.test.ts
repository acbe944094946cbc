// Two PUTs at once that would close a sub-agent cycle between them (a → b while b → a): each read the tenant's
// agents before the other's write, so the cycle check must run again where the version is written, in the tenant's
// object (durable-objects/tenant-object.ts), and one of the two must be refused. The tests run in the "authors"
// tenant (vitest.config.ts).
import { describe, expect, it } from "vitest";
import { AgentListSchema, AgentSchema } from "../../src/http/responses.ts";
import { api, expectError, parseBody } from "../support/helpers.ts";

const ADMIN = "test-author-key";

function agentName(label: string): string {
  return `${label}_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

function put(name: string, subagents: readonly string[]) {
  const delegation =
    subagents.length > 0 ? `claude:\n  subagents:\n    enabled: true\n    agents: [${subagents.join(", ")}]\n` : "";
  return api(`/v1/agents/${name}`, {
    method: "PUT",
    body: `name: ${name}\ninstructions: Help.\n${delegation}`,
    headers: { "content-type": "application/yaml" },
    key: ADMIN,
  });
}

describe("PUT /v1/agents/:name at once", () => {
  it("refuses exactly one of two PUTs that together would make a sub-agent cycle", async () => {
    const a = agentName("ping");
    const b = agentName("pong");
    expect((await put(a, [])).status).toBe(201);
    expect((await put(b, [])).status).toBe(201);

    const [toB, toA] = await Promise.all([put(a, [b]), put(b, [a])]);
    const statuses = [toB.status, toA.status].sort();
    expect(statuses).toEqual([200, 400]);
    const [accepted, refused] = toB.status === 200 ? [toB, toA] : [toA, toB];
    const body = await expectError(refused, 400, "validation_failed", "claude.subagents.agents.0");
    const [from, to] = refused === toB ? [a, b] : [b, a];
    expect(body.error.message).toContain(`${from} → ${to} → ${from}`);
    expect((await parseBody(accepted, AgentSchema)).source).toEqual({ kind: "runtime", version: 2 });

    // Nothing of the refused one was stored: its agent is still at version 1.
    const { agents } = await parseBody(await api("/v1/agents", { key: ADMIN }), AgentListSchema);
    expect(agents.find((agent) => agent.name === from)?.source).toEqual({ kind: "runtime", version: 1 });
  });

  it("refuses the one that closes a longer cycle through an agent already stored", async () => {
    const [a, b, c] = [agentName("first"), agentName("second"), agentName("third")];
    expect((await put(c, [])).status).toBe(201);
    expect((await put(a, [])).status).toBe(201);
    expect((await put(b, [c])).status).toBe(201);

    const results = await Promise.all([put(a, [b]), put(c, [a])]);
    expect(results.map((res) => res.status).sort()).toEqual([200, 400]);
    const refused = results.find((res) => res.status === 400);
    if (!refused) throw new Error("expected a refusal");
    await expectError(refused, 400, "validation_failed", "claude.subagents.agents.0");
  });
});
