// The mistakes a new user makes in an agent's definition, each refused where the agent is defined: by PUT
// /v1/agents/:name with a 400 naming the key, and by the build of agents/ with the same key and its line. Tools that do
// not exist, a YAML alias bomb, MCP servers of the same name, budgets past any model's, sub-agents that do not exist or
// lead back to the agent, and web search domains that are no domain. The agents are the "authors" tenant's own.
import { describe, expect, it } from "vitest";
import { AgentFileError, parseAgentFile } from "../../src/agents/agent-file.ts";
import { AgentSchema } from "../../src/http/responses.ts";
import { api, errorOf, expectError, parseBody } from "../support/helpers.ts";

const ADMIN = "test-author-key";

function agentName(label: string): string {
  return `${label}_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;
}

function put(name: string, body: string) {
  return api(`/v1/agents/${name}`, {
    method: "PUT",
    body,
    headers: { "content-type": "application/yaml" },
    key: ADMIN,
  });
}

const fileOf = (name: string, extra: string) => `name: ${name}\ninstructions: Help.\n${extra}`;

/** What PUT answers for the file, and what the build says of it (as scripts/build-agents.ts prints it). */
async function refusedBoth(
  name: string,
  extra: string,
  field: string,
): Promise<{ put: string; build: AgentFileError }> {
  const body = await expectError(await put(name, fileOf(name, extra)), 400, "validation_failed", field);
  const build = errorOf(() => parseAgentFile(`agents/${name}.yaml`, fileOf(name, extra)));
  expect(build).toBeInstanceOf(AgentFileError);
  expect((build as AgentFileError).field).toBe(field);
  return { put: body.error.message, build: build as AgentFileError };
}

describe("a definition's tools", () => {
  it.each([
    ["NoSuchTool", 'Unknown tool "NoSuchTool"'],
    ["''", 'Unknown tool ""'],
    ["mcp__nope__x", 'Tool "mcp__nope__x" names the MCP server "nope", which this agent does not declare'],
  ])(
    "refuses %s in claude.allowed_tools with 400 naming its index, and the build names its line",
    async (tool, text) => {
      const name = agentName("tools");
      const { put: message, build } = await refusedBoth(
        name,
        `claude:\n  allowed_tools:\n    - TodoWrite\n    - ${tool}\n`,
        "claude.allowed_tools.1",
      );
      expect(message).toContain(text);
      expect(build.line).toBe(6);
      expect(build.message).toContain(`agents/${name}.yaml:6: `);
    },
  );

  it("refuses two MCP servers of the same name, at the second", async () => {
    const name = agentName("servers");
    const servers =
      "tools:\n  - {type: mcp, name: docs, url: 'https://a.example.com/mcp'}\n  - {type: mcp, name: docs, url: 'https://b.example.com/mcp'}\n";
    const { put: message, build } = await refusedBoth(name, servers, "tools.1.name");
    expect(message).toContain('"docs" is the name of tools.0 too');
    expect(build.line).toBe(5);
  });

  it("refuses a fallback tool of a server it does not declare, naming the fallback", async () => {
    const name = agentName("fallback");
    const servers =
      "tools:\n  - type: mcp\n    name: docs\n    url: https://a.example.com/mcp\n    tools:\n      search:\n        fallback_tools: [mcp__other__search]\n";
    const { build } = await refusedBoth(name, servers, "tools.0.tools.search.fallback_tools.0");
    expect(build.line).toBe(9);
  });
});

describe("a YAML alias bomb", () => {
  it("is refused with 400 naming the key where the aliases run past the limit, as the build does with its line", async () => {
    const name = agentName("bomb");
    const bomb =
      "x-a: &a [x, x, x, x, x, x, x, x, x]\nx-b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nx-c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n";
    // The parser counts each alias by what it expands to: the sixth *b is the first past the limit.
    const { put: message, build } = await refusedBoth(name, bomb, "x-c.5");
    expect(message).toContain("aliases expand past 50");
    expect(build.line).toBe(5);
  });

  it("refuses an alias of no anchor, naming its key", async () => {
    const name = agentName("alias");
    await refusedBoth(name, "description: *nowhere\n", "description");
  });
});

describe("a definition's budgets", () => {
  it("bounds max_tokens at 128,000 and max_turns at 1,000, and takes the bounds themselves", async () => {
    const name = agentName("budgets");
    const big = await refusedBoth(name, "model:\n  max_tokens: 1000000000000\n", "model.max_tokens");
    expect(big.put).toContain("must be at most 128,000");
    const turns = await refusedBoth(name, "claude:\n  max_turns: 1000000000\n", "claude.max_turns");
    expect(turns.put).toContain("must be at most 1,000");
    const ok = await put(name, fileOf(name, "model:\n  max_tokens: 128000\nclaude:\n  max_turns: 1000\n"));
    expect(ok.status).toBe(201);
    expect(await parseBody(ok, AgentSchema)).toMatchObject({ max_tokens: 128_000, max_turns: 1_000 });
  });

  it("names the key at fault when two keys disagree, not the whole body", async () => {
    const name = agentName("disagree");
    const { build } = await refusedBoth(
      name,
      "model:\n  max_tokens: 2000\nclaude:\n  extended_thinking:\n    enabled: true\n    budget_tokens: 4000\n",
      "model.max_tokens",
    );
    expect(build.line).toBe(4);
  });
});

describe("a definition's sub-agents", () => {
  it("refuses the agent itself, and an agent listed twice", async () => {
    const name = agentName("selfish");
    const self = await refusedBoth(
      name,
      `claude:\n  subagents:\n    enabled: true\n    agents: [planner, ${name}]\n`,
      "claude.subagents.agents.1",
    );
    expect(self.put).toContain("is this agent itself");
    await refusedBoth(
      name,
      "claude:\n  subagents:\n    enabled: true\n    agents: [planner, planner]\n",
      "claude.subagents.agents.1",
    );
  });

  it("refuses at PUT an agent the tenant cannot run, and one that leads back to the agent through others", async () => {
    const lead = agentName("lead");
    const helper = agentName("helper");
    const missing = await expectError(
      await put(lead, fileOf(lead, `claude:\n  subagents:\n    enabled: true\n    agents: [${helper}]\n`)),
      400,
      "validation_failed",
      "claude.subagents.agents.0",
    );
    expect(missing.error.message).toContain(`"${helper}" is no agent this tenant can run`);
    // Another tenant's agents are not this tenant's to name either.
    expect((await put(helper, fileOf(helper, ""))).status).toBe(201);
    expect(
      (await put(lead, fileOf(lead, `claude:\n  subagents:\n    enabled: true\n    agents: [${helper}]\n`))).status,
    ).toBe(201);
    const cycle = await expectError(
      await put(helper, fileOf(helper, `claude:\n  subagents:\n    enabled: true\n    agents: [planner, ${lead}]\n`)),
      400,
      "validation_failed",
      "claude.subagents.agents.1",
    );
    expect(cycle.error.message).toContain(`${helper} → ${lead} → ${helper}`);
  });
});

describe("web search domains", () => {
  it.each([
    ["'*'", "allowed_domains"],
    ["'*.example.com'", "allowed_domains"],
    ["'https://example.com'", "blocked_domains"],
    ["'example'", "allowed_domains"],
    ["'exa mple.com'", "blocked_domains"],
  ])("refuses %s in %s, naming its index", async (domain, list) => {
    const name = agentName("search");
    const { put: message } = await refusedBoth(
      name,
      `claude:\n  web_search:\n    ${list}: [docs.python.org, ${domain}]\n`,
      `claude.web_search.${list}.1`,
    );
    expect(message).toContain("must be a domain such as example.com");
  });

  it("refuses a domain listed twice, and takes a domain with a path", async () => {
    const name = agentName("search");
    await refusedBoth(
      name,
      "claude:\n  web_search:\n    allowed_domains: [docs.python.org, docs.python.org]\n",
      "claude.web_search.allowed_domains.1",
    );
    const ok = await put(name, fileOf(name, "claude:\n  web_search:\n    allowed_domains: [example.com/blog/*]\n"));
    expect(ok.status).toBe(201);
  });
});
