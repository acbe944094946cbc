// Declaring MCP servers on an agent (seed 003 MCPServer and Tool): checked when the agent is defined, so a bad
// definition never reaches a run. The stdio transport is refused with what to do instead.
import { describe, expect, it } from "vitest";
import { Agent, type AgentDefinition } from "../../src/agents/agent.ts";
import { ConfigError, InvalidToolError } from "../../src/errors.ts";
import { DEFAULT_TOOL_TIMEOUT_SECONDS } from "../../src/mcp/config.ts";
import { errorOf } from "../support/checks.ts";

class TestAgent extends Agent {}

function define(mcpServers: Record<string, unknown>, extra: Partial<AgentDefinition> = {}): TestAgent {
  return new TestAgent({
    name: "mcp_config_agent",
    systemPrompt: "You use tools.",
    mcpServers: mcpServers as NonNullable<AgentDefinition["mcpServers"]>,
    ...extra,
  });
}

describe("mcpServers", () => {
  it("normalizes a server: Streamable HTTP by default, optional, seed 003 tool defaults", () => {
    const agent = define({
      docs: {
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: { secret: "DOCS_TOKEN", prefix: "Bearer " } },
        tools: { search: { timeout_seconds: 30, fallback_tools: ["mcp__mirror__search"] } },
      },
      mirror: { url: "https://mirror.example.com/sse", transport: "sse", required: true },
    });
    expect(agent.mcpServers).toEqual([
      {
        name: "docs",
        transport: "streamable_http",
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: { secret: "DOCS_TOKEN", prefix: "Bearer " } },
        required: false,
        tools: { search: { timeoutSeconds: 30, fallbackTools: ["mcp__mirror__search"] } },
      },
      {
        name: "mirror",
        transport: "sse",
        url: "https://mirror.example.com/sse",
        headers: {},
        required: true,
        tools: {},
      },
    ]);
    expect(DEFAULT_TOOL_TIMEOUT_SECONDS).toBe(300);
    // Omitted allowed_tools: every tool of every declared server.
    expect(agent.allowedTools).toEqual(["mcp__docs__*", "mcp__mirror__*"]);
  });

  it("rejects the stdio transport when the agent is defined, explaining what to use instead", () => {
    const error = errorOf(() => define({ local: { transport: "stdio", command: "npx", args: ["server"] } }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain("mcpServers.local.transport");
    expect(error.message).toContain("cannot start processes");
    expect(error.message).toContain('transport: "streamable_http"');
  });

  it.each([
    [{ s: { url: "https://x.example/mcp", token: "abc" } }, 'mcpServers.s: unknown key "token"'],
    [
      { s: { url: "https://x.example/mcp", tools: { t: { timeout: 5 } } } },
      'mcpServers.s.tools.t: unknown key "timeout"',
    ],
    [
      { s: { url: "https://x.example/mcp", tools: { t: { timeout_seconds: 0 } } } },
      "mcpServers.s.tools.t.timeout_seconds",
    ],
    [
      { s: { url: "https://x.example/mcp", tools: { t: { timeout_seconds: 1.5 } } } },
      "mcpServers.s.tools.t.timeout_seconds",
    ],
    [{ s: { url: "ftp://x.example/mcp" } }, "mcpServers.s.url"],
    [{ s: {} }, "mcpServers.s.url"],
    [{ s: { url: "https://x.example/mcp", transport: "websocket" } }, "mcpServers.s.transport"],
    [
      { s: { url: "https://x.example/mcp", headers: { Authorization: "Bearer sk-in-code" } } },
      "mcpServers.s.headers.Authorization",
    ],
    [
      { s: { url: "https://x.example/mcp", headers: { Authorization: { secret: "lower-case!" } } } },
      "mcpServers.s.headers.Authorization.secret",
    ],
    [{ bad__name: { url: "https://x.example/mcp" } }, "mcpServers.bad__name: server names"],
  ])("rejects %j with a ConfigError naming the path", (servers, expected) => {
    const error = errorOf(() => define(servers));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(expected);
  });

  it.each(["ANTHROPIC_API_KEY", "OUTPOST_API_KEYS"])(
    "refuses a header taken from Outpost's own secret %s, naming the path to it",
    (secret) => {
      const error = errorOf(() =>
        define({ s: { url: "https://x.example/mcp", headers: { "X-Api-Key": { secret, prefix: "Bearer " } } } }),
      );
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain("mcpServers.s.headers.X-Api-Key.secret");
      expect(error.message).toContain("Outpost's own secrets");
    },
  );

  it("rejects allowed tools and fallbacks that name an undeclared server, and a tool that falls back to itself", () => {
    const undeclared = errorOf(() => define({ a: { url: "https://a.example/mcp" } }, { allowedTools: ["mcp__b__x"] }));
    expect(undeclared).toBeInstanceOf(InvalidToolError);
    expect(undeclared.message).toContain('names the MCP server "b", which this agent does not declare');
    const fallback = errorOf(() =>
      define({ a: { url: "https://a.example/mcp", tools: { x: { fallback_tools: ["mcp__z__x"] } } } }),
    );
    expect(fallback).toBeInstanceOf(InvalidToolError);
    const itself = errorOf(() =>
      define({ a: { url: "https://a.example/mcp", tools: { x: { fallback_tools: ["mcp__a__x"] } } } }),
    );
    expect(itself).toBeInstanceOf(ConfigError);
    expect(itself.message).toContain("lists the tool itself");
  });

  it("accepts a per-server wildcard in allowed tools", () => {
    const agent = define({ a: { url: "https://a.example/mcp" } }, { allowedTools: ["TodoWrite", "mcp__a__*"] });
    expect(agent.allowedTools).toEqual(["TodoWrite", "mcp__a__*"]);
  });
});
