// A tenant's own agents (PUT /v1/agents/:name): added and replaced at runtime with a YAML or JSON body checked like an
// agents/ file, every version kept, each task and session recording the version it runs and keeping it whatever
// comes after, the Worker's agent of the same name shadowed for that tenant only, and every way a PUT is refused.
// The tests run in a tenant of their own ("authors", vitest.config.ts).
import { describe, expect, it } from "vitest";
import {
  AgentListSchema,
  AgentSchema,
  AgentVersionListSchema,
  CheckpointListSchema,
  SessionResourceSchema,
  type TaskResource,
  TaskResourceSchema,
} from "../../src/http/responses.ts";
import { api, expectError, parseBody, script, uniqueMarker } from "../support/helpers.ts";

const ADMIN = "test-author-key";
const RUNNER = "test-author-runner";

/** A unique agent name, so tests do not share versions. */
function agentName(label: string): string {
  return `${label}_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

function yamlOf(name: string, prompt: string, extra = ""): string {
  return `name: ${name}\ndescription: Runs at runtime.\ninstructions: ${prompt}\nclaude:\n  max_turns: 2\n${extra}`;
}

function put(name: string, body: string, init: { key?: string; type?: string; ifMatch?: string } = {}) {
  const headers: Record<string, string> = { "content-type": init.type ?? "application/yaml" };
  if (init.ifMatch !== undefined) headers["if-match"] = init.ifMatch;
  return api(`/v1/agents/${name}`, { method: "PUT", body, headers, key: init.key ?? ADMIN });
}

async function runOn(agent: string, label: string, latency: { ttft_ms?: number } = {}): Promise<TaskResource> {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [{ type: "text", text: `Answer ${marker}` }] }], latency);
  const res = await api(`/v1/agents/${agent}/tasks`, {
    method: "POST",
    body: JSON.stringify({ input: `${label} ${marker}` }),
    key: RUNNER,
  });
  expect(res.status).toBe(202);
  return parseBody(res, TaskResourceSchema);
}

async function finished(id: string): Promise<TaskResource> {
  const res = await api(`/v1/tasks/${id}?wait=20`, { key: RUNNER });
  return parseBody(res, TaskResourceSchema);
}

/** The system prompt of the task's first model request, as its run bundle recorded it (one text block). */
async function systemPrompt(id: string): Promise<unknown> {
  const res = await api(`/v1/tasks/${id}/artifacts/artifacts/llm/decision_loop_turn_1_attempt_1_request.txt`, {
    key: RUNNER,
  });
  expect(res.status).toBe(200);
  const { system } = JSON.parse(await res.text()) as { system: { type: string; text: string }[] };
  expect(system).toHaveLength(1);
  return system[0]?.text;
}

describe("PUT /v1/agents/:name", () => {
  it("adds an agent from YAML that the tenant can describe, list and run, each task recording its version", async () => {
    const name = agentName("support");
    const res = await put(name, yamlOf(name, "You answer support questions, version one."));
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBe(`https://outpost.test/v1/agents/${name}`);
    expect(res.headers.get("etag")).toBe('"1"');
    const described = await parseBody(res, AgentSchema);
    expect(described).toMatchObject({
      name,
      description: "Runs at runtime.",
      max_turns: 2,
      system_prompt: "You answer support questions, version one.",
      source: { kind: "runtime", version: 1 },
      warnings: [],
    });
    expect(await parseBody(await api(`/v1/agents/${name}`, { key: RUNNER }), AgentSchema)).toEqual(described);
    const list = await parseBody(await api("/v1/agents", { key: RUNNER }), AgentListSchema);
    expect(list.agents.map((a) => a.name)).toContain(name);

    const task = await finished((await runOn(name, "v1")).id);
    expect(task).toMatchObject({ status: "completed", assigned_agent: name, agent_version: 1 });
    expect(await systemPrompt(task.id)).toBe("You answer support questions, version one.");
  });

  it("makes a changed body a new version and the same body the same one; a task keeps the version it began with", async () => {
    const name = agentName("versions");
    const first = yamlOf(name, "Version one speaks.");
    expect((await put(name, first)).status).toBe(201);
    // A task whose model call is slow: version 2 arrives while it runs.
    const early = await runOn(name, "early", { ttft_ms: 1_500 });
    const second = yamlOf(name, "Version two speaks.");
    const replaced = await put(name, second);
    expect(replaced.status).toBe(200);
    expect((await parseBody(replaced, AgentSchema)).source).toEqual({ kind: "runtime", version: 2 });
    const again = await put(name, second);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect((await parseBody(again, AgentSchema)).source).toEqual({ kind: "runtime", version: 2 });

    const kept = await finished(early.id);
    expect(kept).toMatchObject({ status: "completed", agent_version: 1 });
    expect(await systemPrompt(kept.id)).toBe("Version one speaks.");
    const late = await finished((await runOn(name, "late")).id);
    expect(late.agent_version).toBe(2);
    expect(await systemPrompt(late.id)).toBe("Version two speaks.");

    const versions = await parseBody(await api(`/v1/agents/${name}/versions`, { key: RUNNER }), AgentVersionListSchema);
    expect(versions.agent).toBe(name);
    expect(versions.versions.map((v) => [v.version, v.created_by])).toEqual([
      [2, "author"],
      [1, "author"],
    ]);
    expect(versions.versions[0]?.sha256).not.toBe(versions.versions[1]?.sha256);
  });

  it("forks a task on the version its origin ran, and onto the current one when handed to the agent anew", async () => {
    const name = agentName("forked");
    expect((await put(name, yamlOf(name, "Version one forks."))).status).toBe(201);
    const origin = await finished((await runOn(name, "fork-origin")).id);
    expect((await put(name, yamlOf(name, "Version two forks."))).status).toBe(200);
    const checkpoints = await parseBody(
      await api(`/v1/tasks/${origin.id}/checkpoints`, { key: RUNNER }),
      CheckpointListSchema,
    );
    const start = checkpoints.checkpoints[0]?.checkpoint_id;
    const fork = async (body: Record<string, unknown>) => {
      const res = await api(`/v1/tasks/${origin.id}/fork`, { method: "POST", key: RUNNER, body: JSON.stringify(body) });
      expect(res.status).toBe(202);
      return finished((await parseBody(res, TaskResourceSchema)).id);
    };
    const kept = await fork({ checkpoint_id: start });
    expect(kept.agent_version).toBe(1);
    expect(await systemPrompt(kept.id)).toBe("Version one forks.");
    const handed = await fork({ checkpoint_id: start, state_updates: { current_agent: name } });
    expect(handed.agent_version).toBe(2);
    expect(await systemPrompt(handed.id)).toBe("Version two forks.");
  });

  it("takes JSON as well as YAML, and records the version a session's turns run", async () => {
    const name = agentName("json");
    const body = JSON.stringify({ name, instructions: "You chat.", claude: { max_turns: 3 } });
    const res = await put(name, body, { type: "application/json" });
    expect(res.status).toBe(201);
    const created = await api(`/v1/agents/${name}/sessions`, { method: "POST", body: "{}", key: RUNNER });
    expect(created.status).toBe(201);
    expect((await parseBody(created, SessionResourceSchema)).agent_version).toBe(1);
  });

  it("shadows the Worker's agent of the same name for its own tenant only", async () => {
    // A name of its own: the shipped agents' names are left to the other tests of this tenant.
    const res = await put("coder", yamlOf("coder", "The tenant's own coder."));
    expect([200, 201]).toContain(res.status);
    const mine = await parseBody(await api("/v1/agents/coder", { key: RUNNER }), AgentSchema);
    expect(mine).toMatchObject({ source: { kind: "runtime" }, system_prompt: "The tenant's own coder." });
    const theirs = await parseBody(await api("/v1/agents/coder"), AgentSchema);
    expect(theirs.source).toEqual({ kind: "file", path: "agents/coder.yaml" });
  });

  it("keeps a tenant's agents out of every other tenant's sight", async () => {
    const name = agentName("private");
    expect((await put(name, yamlOf(name, "Private."))).status).toBe(201);
    await expectError(await api(`/v1/agents/${name}`), 404, "agent_not_found", "name");
    await expectError(await api(`/v1/agents/${name}/versions`), 404, "agent_not_found", "name");
    const start = await api(`/v1/agents/${name}/tasks`, { method: "POST", body: JSON.stringify({ input: "hi" }) });
    await expectError(start, 404, "agent_not_found", "name");
  });

  it("refuses a stale If-Match with 409 agent_version_conflict, and applies the current one", async () => {
    const name = agentName("race");
    expect((await put(name, yamlOf(name, "One."), { ifMatch: "0" })).status).toBe(201);
    const stale = await expectError(
      await put(name, yamlOf(name, "Two."), { ifMatch: "0" }),
      409,
      "agent_version_conflict",
      "if-match",
    );
    expect(stale.error.message).toContain("at version 1");
    const applied = await put(name, yamlOf(name, "Two."), { ifMatch: '"1"' });
    expect(applied.status).toBe(200);
    expect(applied.headers.get("etag")).toBe('"2"');
    await expectError(
      await put(name, yamlOf(name, "Three."), { ifMatch: "one" }),
      400,
      "validation_failed",
      "if-match",
    );
  });

  it("refuses a broken body with the key and line at fault, as the build refuses a file", async () => {
    const name = agentName("broken");
    const unknown = await expectError(
      await put(name, `name: ${name}\ninstructions: Hi.\nclaude:\n  max_turn: 3\n`),
      400,
      "validation_failed",
      "claude.max_turn",
    );
    expect(unknown.error.message).toBe("body:4: claude.max_turn: unknown key");
    await expectError(await put(name, `name: ${name}\n`), 400, "validation_failed", "instructions");
    await expectError(await put(name, "name: [unclosed\n"), 400, "validation_failed", "(body)");
    await expectError(await put(name, yamlOf("someone_else", "Hi.")), 400, "validation_failed", "name");
    await expectError(await put("Not-A-Name", yamlOf(name, "Hi.")), 400, "validation_failed", "name");
    expect((await api(`/v1/agents/${name}`, { key: RUNNER })).status).toBe(404);
  });

  it("refuses what only the deployment may set: its secrets, another model endpoint, hooks and tenants", async () => {
    const name = agentName("reach");
    const cases: [string, string][] = [
      ["model:\n  provider: openai_compatible\n  endpoint: https://llm.example.com/v1\n", "model.endpoint"],
      ["model:\n  provider: gemini\n  api_key: GEMINI_API_KEY\n", "model.api_key"],
      // Another auth provider reads the deployment's credentials for it, even when the agent names none.
      ["model:\n  auth_provider: oauth_token\n", "model.auth_provider"],
      ["model:\n  auth_provider: bedrock\n  bedrock:\n    region: us-east-1\n", "model.auth_provider"],
      ["model:\n  auth_provider: foundry\n  foundry:\n    resource: contoso\n", "model.auth_provider"],
      [
        "tools:\n  - type: mcp\n    name: docs\n    url: https://docs.example.com/mcp\n    headers:\n      Authorization:\n        secret: DOCS_TOKEN\n",
        "tools.0.headers",
      ],
      ["hooks:\n  issues:\n    scheme: github\n    secret: GITHUB_WEBHOOK_SECRET\n    input: x\n", "hooks"],
      ["tenants: [authors]\n", "tenants"],
    ];
    for (const [extra, field] of cases) {
      const refused = await expectError(await put(name, yamlOf(name, "Hi.", extra)), 400, "validation_failed", field);
      expect(refused.error.message).toContain("not for an agent added at runtime");
    }
    expect((await api(`/v1/agents/${name}`, { key: RUNNER })).status).toBe(404);
  });

  it("needs the admin scope, a YAML or JSON body, and a body within the size limit", async () => {
    const name = agentName("scope");
    await expectError(
      await put(name, yamlOf(name, "Hi."), { key: RUNNER }),
      403,
      "insufficient_scope",
      "authorization",
    );
    await expectError(
      await put(name, yamlOf(name, "Hi."), { type: "text/plain" }),
      415,
      "unsupported_media_type",
      "content-type",
    );
    const huge = yamlOf(name, "x".repeat(300 * 1024));
    await expectError(await put(name, huge), 413, "payload_too_large");
  });
});
