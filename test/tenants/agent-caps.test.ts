// The caps on a tenant's own agents (PUT /v1/agents/:name): at most OUTPOST_MAX_RUNTIME_AGENTS agents per tenant and
// OUTPOST_MAX_AGENT_VERSIONS versions per agent, each past its cap answered 409 naming the limit, nothing stored, and
// no version ever dropped (a task, a fork or a waiting delegation may still need any). The tests' deployment sets
// 16 and 4 (vitest.config.ts); Durable Object storage is this file's own, so the tenant starts with no agents.
import { describe, expect, it } from "vitest";
import { AgentVersionListSchema } from "../../src/http/responses.ts";
import { api, apiJson, expectError } from "../support/helpers.ts";

const ADMIN = "test-author-key";
const MAX_AGENTS = 16;
const MAX_VERSIONS = 4;

function put(name: string, prompt: string, key = ADMIN) {
  return api(`/v1/agents/${name}`, {
    method: "PUT",
    body: `name: ${name}\ninstructions: ${prompt}\n`,
    headers: { "content-type": "application/yaml" },
    key,
  });
}

describe("the caps on a tenant's own agents", () => {
  it("refuses an agent past OUTPOST_MAX_RUNTIME_AGENTS with 409 agent_limit_reached, and takes new versions still", async () => {
    for (let i = 0; i < MAX_AGENTS; i++) expect((await put(`capped_${i}`, "Help.")).status).toBe(201);
    const refused = await expectError(await put("capped_extra", "Help."), 409, "agent_limit_reached", "name");
    expect(refused.error.message).toBe(
      `The tenant has ${MAX_AGENTS} agents of its own, the most OUTPOST_MAX_RUNTIME_AGENTS allows; change one of them instead, or ask the operator to raise the limit.`,
    );
    expect((await api("/v1/agents/capped_extra", { key: ADMIN })).status).toBe(404);
    expect((await put("capped_0", "Help, version two.")).status).toBe(200);
    // Another tenant's count is its own.
    expect((await put("capped_extra", "Help.", "test-beta-admin")).status).toBe(201);
  });

  it("refuses a version past OUTPOST_MAX_AGENT_VERSIONS with 409 agent_version_limit_reached, dropping none", async () => {
    // In the tenant "default" (test-key-1 is its admin): "authors" fills its count of agents above.
    const name = "versioned_to_the_cap";
    const putDefault = (prompt: string) => put(name, prompt, "test-key-1");
    for (let v = 1; v <= MAX_VERSIONS; v++)
      expect((await putDefault(`Version ${v}.`)).status).toBe(v === 1 ? 201 : 200);
    const refused = await expectError(await putDefault("One more."), 409, "agent_version_limit_reached", "name");
    expect(refused.error.message).toBe(
      `The agent "${name}" has ${MAX_VERSIONS} versions, the most OUTPOST_MAX_AGENT_VERSIONS allows; Outpost drops none (a task may still need any), so add the change under a new name, or ask the operator to raise the limit.`,
    );
    // The current body again is the current version, not a new one.
    const again = await putDefault(`Version ${MAX_VERSIONS}.`);
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    const versions = await apiJson(`/v1/agents/${name}/versions`, AgentVersionListSchema);
    expect(versions.versions.map((v) => v.version)).toEqual([4, 3, 2, 1]);
  });
});
