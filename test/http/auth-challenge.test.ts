// Every 401 Outpost answers carries its challenge (RFC 9110 §11.6.1: a 401 MUST send WWW-Authenticate): the same
// `Bearer realm="outpost"` on /v1, A2A, MCP and a webhook delivery's refused signature, with no `resource_metadata`
// (Outpost serves no OAuth metadata). The OpenAPI document declares the header on every 401 it documents.
import { describe, expect, it } from "vitest";
import { api, expectError } from "../support/helpers.ts";

const CHALLENGE = 'Bearer realm="outpost"';

/** An MCP request as the SDK's client sends one. */
const mcpInit = (key: string | null): RequestInit & { key: string | null } => ({
  method: "POST",
  key,
  headers: { accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
});

describe("WWW-Authenticate on every 401", () => {
  const refusals: [string, string, RequestInit & { key: string | null }][] = [
    ["a /v1 route without a key", "/v1/agents", { key: null }],
    ["a /v1 route with a key that is not one", "/v1/tasks", { key: "not-a-key" }],
    ["a /v1 route with a malformed Authorization", "/v1/agents", { key: null, headers: { authorization: "Basic x" } }],
    ["an action without a key", "/v1/agents/assistant/tasks", { key: null, method: "POST", body: "{}" }],
    ["A2A's agent list", "/a2a", { key: null }],
    ["an A2A agent card", "/a2a/assistant/.well-known/agent-card.json", { key: "not-a-key" }],
    ["MCP", "/mcp", mcpInit(null)],
    ["MCP with a key that is not one", "/mcp", mcpInit("not-a-key")],
  ];
  for (const [what, path, init] of refusals) {
    it(`answers ${what} with 401 unauthorized and the Bearer challenge`, async () => {
      const res = await api(path, init);
      expect(res.headers.get("www-authenticate")).toBe(CHALLENGE);
      await expectError(res, 401, "unauthorized", "authorization");
    });
  }

  it("answers a webhook delivery without its signature with 401 and the challenge too", async () => {
    const res = await api("/v1/hooks/github-issues", {
      key: null,
      method: "POST",
      headers: { "x-github-event": "issues", "x-github-delivery": crypto.randomUUID() },
      body: "{}",
    });
    expect(res.headers.get("www-authenticate")).toBe(CHALLENGE);
    await expectError(res, 401, "signature_missing", "signature");
  });

  it("sends no challenge with an answer that is not a 401", async () => {
    const res = await api("/v1/tenant", { key: "test-read-key" });
    expect(res.headers.get("www-authenticate")).toBeNull();
    await expectError(res, 403, "insufficient_scope", "authorization");
  });
});

describe("the OpenAPI document", () => {
  it("declares WWW-Authenticate on every 401 it documents", async () => {
    type Responses = Record<string, { headers?: Record<string, { schema?: unknown; description?: string }> }>;
    const document = (await (await api("/openapi.json", { key: null })).json()) as {
      paths: Record<string, Record<string, { responses: Responses }>>;
    };
    const unauthorized = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, op]) => op.responses["401"] !== undefined)
        .map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, response: op.responses["401"] })),
    );
    // Every keyed route and the hooks' deliveries.
    expect(unauthorized.length).toBeGreaterThan(50);
    for (const { at, response } of unauthorized) {
      expect({ at, header: response?.headers?.["www-authenticate"] }).toStrictEqual({
        at,
        header: {
          description: expect.stringContaining(CHALLENGE),
          required: true,
          schema: { type: "string", const: CHALLENGE, description: expect.stringContaining(CHALLENGE) },
        },
      });
    }
  });
});
