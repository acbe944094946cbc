// The HTTP API outside a task's lifetime: health, authentication, routing, the agent catalog, and every way
// POST /v1/agents/:name/tasks accepts or rejects a request. Each failure is asserted down to its status, its
// stable error code, the field it names, and the request id that ties the body to the x-request-id header.

import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { registry } from "../../../src/agents/catalog.ts";
import { DEFAULT_MAX_TOKENS } from "../../../src/config/models.ts";
import { AgentListSchema, AgentSchema, HealthSchema, TaskResourceSchema } from "../../../src/http/responses.ts";
import {
  API_KEY,
  api,
  BASE,
  checkBody,
  expectError,
  ISO_TIME,
  parseBody,
  script,
  UUID_V4,
  uniqueMarker,
} from "../../support/helpers.ts";

const ASSISTANT_PROMPT = registry.create("assistant").systemPrompt;
const PLANNER_PROMPT = registry.create("planner").systemPrompt;
const CODER_PROMPT = registry.create("coder").systemPrompt;

/** A request straight to the Worker with exactly the headers given (the shared `api` helper adds some). */
function raw(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(BASE + path, init));
}

function createTask(body: unknown, agent = "assistant"): Promise<Response> {
  return api(`/v1/agents/${agent}/tasks`, { method: "POST", body: JSON.stringify(body) });
}

describe("GET /", () => {
  it("answers without an API key and reveals nothing of the configuration", async () => {
    const res = await raw("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const text = await res.text();
    expect(checkBody(HealthSchema, JSON.parse(text))).toStrictEqual({ name: "outpost", status: "ok" });
    expect(text).not.toContain(env.ANTHROPIC_BASE_URL);
  });
});

describe("authentication", () => {
  it("rejects a request without an Authorization header with 401 unauthorized naming the header", async () => {
    await expectError(await api("/v1/agents", { key: null }), 401, "unauthorized", "authorization");
  });

  it("rejects an unknown bearer key with 401 unauthorized", async () => {
    const body = await expectError(await api("/v1/agents", { key: "not-a-key" }), 401, "unauthorized", "authorization");
    expect(body.error.message).toBe("The API key is not valid.");
  });

  it("rejects Basic credentials with 401 unauthorized", async () => {
    const res = await api("/v1/agents", { key: null, headers: { authorization: `Basic ${btoa(`u:${API_KEY}`)}` } });
    await expectError(res, 401, "unauthorized", "authorization");
  });

  it("rejects a Bearer scheme with no key with 401 unauthorized", async () => {
    const res = await api("/v1/agents", { key: null, headers: { authorization: "Bearer " } });
    await expectError(res, 401, "unauthorized", "authorization");
  });

  it("checks the key before looking for the route", async () => {
    await expectError(await api("/v1/no-such-route", { key: null }), 401, "unauthorized", "authorization");
  });

  it("accepts the second configured key", async () => {
    const res = await api("/v1/agents", { key: "test-key-2" });
    expect(res.status).toBe(200);
  });

  it("accepts the scheme name in any letter case", async () => {
    const res = await api("/v1/agents", { key: null, headers: { authorization: `bearer ${API_KEY}` } });
    expect(res.status).toBe(200);
  });
});

describe("routing", () => {
  it("answers an unknown path under /v1 with 404 route_not_found", async () => {
    const body = await expectError(await api("/v1/no-such-route"), 404, "route_not_found");
    expect(body.error.message).toBe("No route for GET /v1/no-such-route.");
  });

  it("answers an unknown path outside /v1 with 404 route_not_found without asking for a key", async () => {
    await expectError(await raw("/no-such-route"), 404, "route_not_found");
  });

  it("answers an unsupported method on a known path with a JSON 404 route_not_found", async () => {
    const body = await expectError(await api("/v1/agents", { method: "DELETE" }), 404, "route_not_found");
    expect(body.error.message).toBe("No route for DELETE /v1/agents.");
  });
});

describe("x-request-id", () => {
  it.each([
    ["the health route", () => raw("/")],
    ["a JSON success", () => api("/v1/agents")],
    ["an authentication failure", () => api("/v1/agents", { key: null })],
    ["an unknown route", () => api("/v1/nope")],
    ["a validation failure", () => createTask({})],
  ])("is a fresh UUID on %s", async (_label, send) => {
    const first = (await send()).headers.get("x-request-id");
    const second = (await send()).headers.get("x-request-id");
    expect(first).toMatch(UUID_V4);
    expect(second).toMatch(UUID_V4);
    expect(second).not.toBe(first);
  });
});

describe("GET /v1/agents", () => {
  it("lists the compiled-in agents, sorted by name, with their definitions", async () => {
    const res = await api("/v1/agents");
    expect(res.status).toBe(200);
    expect(await parseBody(res, AgentListSchema)).toStrictEqual({
      agents: [
        {
          name: "assistant",
          kind: "tool_loop",
          description: "A concise general-purpose assistant that answers in one turn.",
          role: null,
          model: "claude-sonnet-5-5",
          temperature: null,
          thinking_budget_tokens: null,
          response_format: null,
          max_tokens: DEFAULT_MAX_TOKENS,
          allowed_tools: [],
          capabilities: {
            bash: { enabled: false, excluded_commands: [], allow_unsafe: false },
            file_system: { read: false, write: false, edit: false },
            web_fetch: { enabled: false, max_bytes: 1048576, timeout_seconds: 30 },
            web_search: null,
          },
          mcp_servers: [],
          max_turns: 1,
          permission_mode: "acceptAll",
          tool_permissions: {},
          hooks: [],
          skills: null,
          system_prompt: ASSISTANT_PROMPT,
          source: { kind: "file", path: "agents/assistant.yaml" },
          warnings: [],
        },
        {
          name: "coder",
          kind: "tool_loop",
          description: "Works on the files of its task's workspace with a shell and file tools.",
          role: null,
          model: "claude-sonnet-5-5",
          temperature: null,
          thinking_budget_tokens: null,
          response_format: null,
          max_tokens: DEFAULT_MAX_TOKENS,
          allowed_tools: ["Bash", "Read", "Write", "Edit", "Glob", "Grep"],
          capabilities: {
            bash: { enabled: true, excluded_commands: [], allow_unsafe: false },
            file_system: { read: true, write: true, edit: true },
            web_fetch: { enabled: false, max_bytes: 1048576, timeout_seconds: 30 },
            web_search: null,
          },
          mcp_servers: [],
          max_turns: 12,
          permission_mode: "acceptAll",
          tool_permissions: {},
          hooks: [],
          skills: null,
          system_prompt: CODER_PROMPT,
          source: { kind: "file", path: "agents/coder.yaml" },
          warnings: [],
        },
        {
          name: "librarian",
          kind: "tool_loop",
          description: "Answers questions from the documents of the handbook collection, citing their sources.",
          role: null,
          model: "claude-sonnet-5-5",
          temperature: null,
          thinking_budget_tokens: null,
          response_format: null,
          max_tokens: DEFAULT_MAX_TOKENS,
          // Its knowledge tools (docs/knowledge.md), by the names the file gives them.
          allowed_tools: ["search_handbook", "read_handbook"],
          capabilities: {
            bash: { enabled: false, excluded_commands: [], allow_unsafe: false },
            file_system: { read: false, write: false, edit: false },
            web_fetch: { enabled: false, max_bytes: 1048576, timeout_seconds: 30 },
            web_search: null,
          },
          mcp_servers: [],
          max_turns: 4,
          permission_mode: "acceptAll",
          tool_permissions: {},
          hooks: [],
          skills: null,
          system_prompt: registry.create("librarian").systemPrompt,
          source: { kind: "file", path: "agents/librarian.yaml" },
          warnings: [],
        },
        {
          name: "operator",
          kind: "skills",
          description:
            "Works through the project's skills (SKILL.md): release notes, incident triage, and any you add.",
          role: null,
          model: "claude-sonnet-5-5",
          temperature: null,
          thinking_budget_tokens: null,
          response_format: null,
          max_tokens: DEFAULT_MAX_TOKENS,
          allowed_tools: ["Bash", "AskUser"],
          capabilities: {
            bash: { enabled: true, excluded_commands: [], allow_unsafe: false },
            file_system: { read: true, write: true, edit: false },
            web_fetch: { enabled: false, max_bytes: 1048576, timeout_seconds: 30 },
            web_search: null,
          },
          mcp_servers: [],
          max_turns: 8,
          permission_mode: "acceptAll",
          tool_permissions: {},
          hooks: [],
          skills: "all",
          system_prompt: expect.stringContaining("You are an operations assistant."),
          source: { kind: "typescript" },
          warnings: [],
        },
        {
          name: "planner",
          kind: "tool_loop",
          description: "Breaks a request into a task list (TodoWrite), then answers with the plan.",
          role: null,
          model: "claude-sonnet-5-5",
          temperature: null,
          thinking_budget_tokens: null,
          response_format: null,
          max_tokens: DEFAULT_MAX_TOKENS,
          allowed_tools: ["TodoWrite"],
          capabilities: {
            bash: { enabled: false, excluded_commands: [], allow_unsafe: false },
            file_system: { read: false, write: false, edit: false },
            web_fetch: { enabled: false, max_bytes: 1048576, timeout_seconds: 30 },
            web_search: null,
          },
          mcp_servers: [],
          max_turns: 4,
          permission_mode: "acceptAll",
          tool_permissions: {},
          hooks: [],
          skills: null,
          system_prompt: PLANNER_PROMPT,
          source: { kind: "file", path: "agents/planner.yaml" },
          warnings: [],
        },
        {
          name: "router",
          kind: "tool_loop",
          description:
            "Routes a customer support message to a team, answering with JSON after reading the routing guide.",
          role: null,
          model: "claude-sonnet-5-5",
          temperature: null,
          thinking_budget_tokens: null,
          response_format: {
            type: "object",
            properties: { team: { enum: ["billing", "technical", "account"] } },
            required: ["team"],
            additionalProperties: false,
          },
          max_tokens: DEFAULT_MAX_TOKENS,
          allowed_tools: ["Read"],
          capabilities: {
            bash: { enabled: false, excluded_commands: [], allow_unsafe: false },
            file_system: { read: true, write: false, edit: false },
            web_fetch: { enabled: false, max_bytes: 1048576, timeout_seconds: 30 },
            web_search: null,
          },
          mcp_servers: [],
          max_turns: 4,
          permission_mode: "acceptAll",
          tool_permissions: {},
          hooks: [],
          skills: null,
          // Its instructions, the working directory's and the response_format's (the schema it answers to).
          system_prompt: registry.create("router").systemPrompt,
          source: { kind: "file", path: "agents/router.yaml" },
          warnings: [],
        },
        {
          name: "triage",
          kind: "tool_loop",
          description: "Triages a GitHub issue into a task list, which a person approves.",
          role: null,
          model: "claude-sonnet-5-5",
          temperature: null,
          thinking_budget_tokens: null,
          response_format: null,
          max_tokens: DEFAULT_MAX_TOKENS,
          allowed_tools: ["TodoWrite", "AskUser"],
          capabilities: {
            bash: { enabled: false, excluded_commands: [], allow_unsafe: false },
            file_system: { read: false, write: false, edit: false },
            web_fetch: { enabled: false, max_bytes: 1048576, timeout_seconds: 30 },
            web_search: null,
          },
          mcp_servers: [],
          max_turns: 4,
          permission_mode: "acceptAll",
          tool_permissions: { TodoWrite: "ask" },
          hooks: [
            {
              id: "github-issues",
              path: "/v1/hooks/github-issues",
              scheme: "github",
              secret: "GITHUB_WEBHOOK_SECRET",
              events: ["issues"],
            },
          ],
          skills: null,
          system_prompt: expect.stringContaining("You triage software issues."),
          source: { kind: "file", path: "agents/triage.yaml" },
          warnings: [],
        },
      ],
    });
  });
});

describe("GET /v1/agents/:name", () => {
  it("describes one agent", async () => {
    const res = await api("/v1/agents/planner");
    expect(res.status).toBe(200);
    expect(await parseBody(res, AgentSchema)).toStrictEqual({
      name: "planner",
      kind: "tool_loop",
      description: "Breaks a request into a task list (TodoWrite), then answers with the plan.",
      role: null,
      model: "claude-sonnet-5-5",
      temperature: null,
      thinking_budget_tokens: null,
      response_format: null,
      max_tokens: DEFAULT_MAX_TOKENS,
      allowed_tools: ["TodoWrite"],
      capabilities: {
        bash: { enabled: false, excluded_commands: [], allow_unsafe: false },
        file_system: { read: false, write: false, edit: false },
        web_fetch: { enabled: false, max_bytes: 1048576, timeout_seconds: 30 },
        web_search: null,
      },
      mcp_servers: [],
      max_turns: 4,
      permission_mode: "acceptAll",
      tool_permissions: {},
      hooks: [],
      skills: null,
      system_prompt: PLANNER_PROMPT,
      source: { kind: "file", path: "agents/planner.yaml" },
      warnings: [],
    });
  });

  it("answers an unregistered name with 404 agent_not_found naming the field", async () => {
    const body = await expectError(await api("/v1/agents/nobody"), 404, "agent_not_found", "name");
    expect(body.error.message).toBe(
      'No agent named "nobody". Registered agents: assistant, coder, librarian, operator, planner, router, triage.',
    );
  });

  it("answers a name no agent could have like an unregistered one", async () => {
    await expectError(await api("/v1/agents/Not-A-Name"), 404, "agent_not_found", "name");
  });
});

describe("POST /v1/agents/:name/tasks", () => {
  it("accepts the task with 202, the pending task resource and a Location header", async () => {
    const marker = uniqueMarker("create");
    await script(marker, [{ content: [{ type: "text", text: "Created." }] }]);
    const input = `start ${marker}`;
    const metadata = { branch: "main", attempt: 2, urgent: true, ticket: null };
    const res = await createTask({ input, metadata });
    expect(res.status).toBe(202);
    const task = await parseBody(res, TaskResourceSchema);
    const self = `${BASE}/v1/tasks/${task.id}`;
    expect(task.id).toMatch(UUID_V4);
    expect(res.headers.get("location")).toBe(self);
    expect(task).toStrictEqual({
      id: task.id,
      assigned_agent: "assistant",
      agent_version: null,
      workflow: null,
      structured_output: null,
      input,
      metadata,
      status: "pending",
      model: "claude-sonnet-5-5",
      result: null,
      error: null,
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        total_tokens: 0,
        total_cost_usd: 0,
        unpriced_models: [],
        model_calls: 0,
        duration_ms: 0,
        recovery: { attempts: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 },
      },
      created_at: expect.stringMatching(ISO_TIME),
      started_at: null,
      completed_at: null,
      retention_days: 7,
      parent_task_id: null,
      limits: {},
      tags: [],
      expires_at: null,
      pending_input: null,
      waiting_for: null,
      last_event_seq: 1,
      redaction_mode: "full",
      dry_run: false,
      webhook: null,
      trigger: null,
      links: {
        self,
        events: `${self}/events`,
        messages: `${self}/messages`,
        artifacts: `${self}/artifacts`,
        workspace: `${self}/workspace`,
        checkpoints: `${self}/checkpoints`,
        trace: `${self}/trace`,
        resume: `${self}/resume`,
        cancel: `${self}/cancel`,
        deliveries: `${self}/deliveries`,
      },
    });
  });

  it("defaults metadata to an empty object", async () => {
    const marker = uniqueMarker("no-metadata");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const res = await createTask({ input: `go ${marker}` });
    expect(res.status).toBe(202);
    expect((await parseBody(res, TaskResourceSchema)).metadata).toStrictEqual({});
  });

  it("accepts an input of exactly 100000 characters", async () => {
    const marker = uniqueMarker("max-input");
    await script(marker, [{ content: [{ type: "text", text: "long" }] }]);
    const input = marker + "x".repeat(100_000 - marker.length);
    const res = await createTask({ input });
    expect(res.status).toBe(202);
    expect((await parseBody(res, TaskResourceSchema)).input).toHaveLength(100_000);
  });

  it("answers an unregistered agent with 404 agent_not_found naming the field", async () => {
    await expectError(await createTask({ input: "hello" }, "nobody"), 404, "agent_not_found", "name");
  });

  it("answers a name no agent could have like an unregistered one", async () => {
    await expectError(await createTask({ input: "hello" }, "Not-A-Name"), 404, "agent_not_found", "name");
  });

  it("answers an unregistered agent with 404 even when the body is also invalid", async () => {
    await expectError(await createTask({}, "nobody"), 404, "agent_not_found", "name");
  });

  it("rejects a body without input with 400 validation_failed naming input", async () => {
    await expectError(await createTask({}), 400, "validation_failed", "input");
  });

  it("rejects an empty input with 400 validation_failed naming input", async () => {
    const body = await expectError(await createTask({ input: "" }), 400, "validation_failed", "input");
    expect(body.error.message).toBe("Invalid input: must not be empty");
  });

  it("rejects an input of only whitespace with 400 validation_failed naming input", async () => {
    await expectError(await createTask({ input: " \n\t " }), 400, "validation_failed", "input");
  });

  it("rejects a non-string input with 400 validation_failed naming input", async () => {
    await expectError(await createTask({ input: 42 }), 400, "validation_failed", "input");
  });

  it("rejects an input over 100000 characters with 400 validation_failed naming input", async () => {
    const body = await expectError(await createTask({ input: "x".repeat(100_001) }), 400, "validation_failed", "input");
    expect(body.error.message).toBe("Invalid input: must be at most 100000 characters");
  });

  it("rejects an unknown top-level field with 400 validation_failed naming that field", async () => {
    const body = await expectError(
      await createTask({ input: "hi", priority: 1 }),
      400,
      "validation_failed",
      "priority",
    );
    expect(body.error.message).toBe('Invalid priority: unknown field "priority"');
  });

  it("rejects metadata that is not an object with 400 validation_failed naming metadata", async () => {
    await expectError(await createTask({ input: "hi", metadata: ["a"] }), 400, "validation_failed", "metadata");
  });

  it("rejects metadata with more than 32 keys with 400 validation_failed naming metadata", async () => {
    const metadata = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i]));
    const body = await expectError(await createTask({ input: "hi", metadata }), 400, "validation_failed", "metadata");
    expect(body.error.message).toBe("Invalid metadata: at most 32 keys");
  });

  it("accepts metadata with exactly 32 keys", async () => {
    const marker = uniqueMarker("meta-32");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const metadata = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, i]));
    expect((await createTask({ input: `go ${marker}`, metadata })).status).toBe(202);
  });

  it("rejects a nested metadata object with 400 validation_failed naming its key", async () => {
    const res = await createTask({ input: "hi", metadata: { ok: 1, nested: { deep: true } } });
    await expectError(res, 400, "validation_failed", "metadata.nested");
  });

  it("rejects a metadata array value with 400 validation_failed naming its key", async () => {
    await expectError(
      await createTask({ input: "hi", metadata: { tags: ["a"] } }),
      400,
      "validation_failed",
      "metadata.tags",
    );
  });

  it("rejects a metadata string over 2000 characters with 400 validation_failed naming its key", async () => {
    const res = await createTask({ input: "hi", metadata: { note: "n".repeat(2001) } });
    await expectError(res, 400, "validation_failed", "metadata.note");
  });

  it("rejects a body that is JSON but not an object with 400 validation_failed", async () => {
    await expectError(
      await api("/v1/agents/assistant/tasks", { method: "POST", body: "[]" }),
      400,
      "validation_failed",
      "(body)",
    );
  });

  it("rejects a body that is not JSON with 400 invalid_json", async () => {
    const res = await api("/v1/agents/assistant/tasks", { method: "POST", body: '{"input": "hi"' });
    const body = await expectError(res, 400, "invalid_json");
    expect(body.error.message).toBe("The body is not valid JSON.");
  });

  it("rejects an empty body with 400 invalid_json", async () => {
    await expectError(await api("/v1/agents/assistant/tasks", { method: "POST", body: "" }), 400, "invalid_json");
  });

  it("rejects a body that is not valid UTF-8 with 400 invalid_json", async () => {
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"input": "'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"}'),
    ]);
    const res = await api("/v1/agents/assistant/tasks", { method: "POST", body: bytes });
    const body = await expectError(res, 400, "invalid_json");
    expect(body.error.message).toBe("The body is not valid UTF-8.");
  });

  it("rejects a text/plain body with 415 unsupported_media_type naming content-type", async () => {
    const res = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ input: "hi" }),
    });
    await expectError(res, 415, "unsupported_media_type", "content-type");
  });

  it("rejects a body with no content type with 415 unsupported_media_type", async () => {
    const res = await raw("/v1/agents/assistant/tasks", {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}` },
      body: new TextEncoder().encode(JSON.stringify({ input: "hi" })),
    });
    await expectError(res, 415, "unsupported_media_type", "content-type");
  });

  it("accepts a JSON content type with a charset parameter", async () => {
    const marker = uniqueMarker("charset");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const res = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: JSON.stringify({ input: `go ${marker}` }),
    });
    expect(res.status).toBe(202);
  });

  it("rejects a body over 256 KiB with 413 payload_too_large", async () => {
    const res = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: "x".repeat(256 * 1024) }),
    });
    const body = await expectError(res, 413, "payload_too_large");
    expect(body.error.message).toBe("The body is larger than 262144 bytes.");
  });

  it("rejects a streamed body over 256 KiB that declares no length with 413 payload_too_large", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"input": "'));
        if (sent < 5) controller.enqueue(chunk);
        else {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
        }
        sent += 1;
      },
    });
    const res = await raw("/v1/agents/assistant/tasks", {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: stream,
    });
    await expectError(res, 413, "payload_too_large");
  });
});
