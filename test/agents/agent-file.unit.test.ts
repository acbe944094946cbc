// Agents as YAML files (seed 004 section 7, the Agent YAML): what a file becomes, how a broken one is refused (its
// path, line and key, as the build prints it), and seed 004's startup validation rules 1–4, each refusing the file or
// warning about it. The shipped files (agents/) are built by scripts/build-agents.ts before every test run, and run
// through the API in every other test that uses assistant, planner, coder or triage.
import { describe, expect, it } from "vitest";
import { type AgentFile, AgentFileError, parseAgentFile } from "../../src/agents/agent-file.ts";
import { registry } from "../../src/agents/catalog.ts";
import { parseDefinition } from "../../src/agents/definition.ts";
import { fileAgentClasses } from "../../src/agents/file-agents.ts";
import { AGENT_FILES } from "../../src/agents/files.generated.ts";
import { DEFAULT_MAX_TOKENS } from "../../src/config/models.ts";
import { errorOf } from "../support/checks.ts";

const PATH = "agents/support.yaml";

/** The agent a file makes, built as the registry builds file agents. */
function agentOf(file: AgentFile) {
  const cls = fileAgentClasses([file])[String(file.definition.name)];
  if (!cls) throw new Error("no class");
  return new cls();
}

/** The error a file is refused with. */
function refusal(source: string): AgentFileError {
  const error = errorOf(() => parseAgentFile(PATH, source));
  expect(error).toBeInstanceOf(AgentFileError);
  return error as AgentFileError;
}

const MINIMAL = "name: support\ninstructions: Help.\n";

describe("an agent file", () => {
  it("makes the agent its keys describe: model, claude settings, MCP tools and Outpost's own settings", () => {
    const file = parseAgentFile(
      PATH,
      `name: support
description: Answers support questions.
role: Support engineer
instructions:
  inline: You answer support questions about the product.
model:
  provider: anthropic
  name: claude-opus-5
  max_tokens: 20000
  auth_provider: api_key
claude:
  working_directory: repo
  permission_mode: acceptEdits
  max_turns: 6
  extended_thinking:
    enabled: true
    budget_tokens: 4000
  bash:
    enabled: true
    excluded_commands: [rm]
  file_system:
    read: true
    write: true
  subagents:
    enabled: true
    max_parallel: 2
    agents: [planner]
  allowed_tools: [Bash, Read, Write, mcp__docs__search]
tools:
  - type: mcp
    name: docs
    url: https://docs.example.com/mcp
    required: true
    headers:
      Authorization:
        secret: DOCS_TOKEN
        prefix: "Bearer "
max_budget_usd: 2.5
redaction_mode: redacted
tenants: [acme]
tool_permissions:
  Bash: ask
approval_timeout_seconds: 600
evaluations:
  metrics:
    - type: contains
test_cases:
  - name: refund
    input: How do I get a refund?
`,
    );
    expect(file.warnings).toEqual([]);
    expect(file.definition.evaluations).toEqual({ metrics: [{ type: "contains" }] });
    expect(file.definition.testCases).toEqual([{ name: "refund", input: "How do I get a refund?" }]);
    const agent = agentOf(file);
    expect(agent.origin).toEqual({ kind: "file", path: PATH, warnings: [] });
    expect({
      name: agent.name,
      description: agent.description,
      role: agent.role,
      systemPrompt: agent.systemPrompt,
      model: agent.model,
      maxTokens: agent.maxTokens,
      thinkingBudget: agent.thinkingBudget,
      maxTurns: agent.maxTurns,
      allowedTools: agent.allowedTools,
      settings: agent.settings,
      permissions: agent.permissions,
      maxBudgetUsd: agent.maxBudgetUsd,
      redactionMode: agent.redactionMode,
      tenants: agent.tenants,
      llmConfig: agent.llmConfig,
    }).toEqual({
      name: "support",
      description: "Answers support questions.",
      role: "Support engineer",
      systemPrompt: "You answer support questions about the product.",
      model: "claude-opus-5",
      maxTokens: 20_000,
      thinkingBudget: 4_000,
      maxTurns: 6,
      allowedTools: ["Bash", "Read", "Write", "mcp__docs__search"],
      settings: {
        bash: { enabled: true, excluded_commands: ["rm"], allow_unsafe: false },
        fileSystem: { read: true, write: true, edit: false },
        webFetch: { enabled: false, max_bytes: 1_048_576, timeout_seconds: 30 },
        subagents: { enabled: true, max_parallel: 2, agents: ["planner"] },
        workingDirectory: "/repo",
      },
      permissions: { mode: "acceptEdits", rules: { Bash: "ask" }, timeoutSeconds: 600, onTimeout: "reject" },
      maxBudgetUsd: 2.5,
      redactionMode: "redacted",
      tenants: ["acme"],
      llmConfig: null,
    });
    expect(agent.mcpServers).toEqual([
      {
        name: "docs",
        transport: "streamable_http",
        url: "https://docs.example.com/mcp",
        headers: { Authorization: { secret: "DOCS_TOKEN", prefix: "Bearer " } },
        required: true,
        tools: {},
      },
    ]);
  });

  it("leaves what a file does not say to the definition's defaults: least privilege", () => {
    const agent = agentOf(parseAgentFile(PATH, MINIMAL));
    expect(agent.allowedTools).toEqual([]);
    expect(agent.settings.bash.enabled).toBe(false);
    expect(agent.maxTokens).toBe(DEFAULT_MAX_TOKENS);
    expect(agent.maxTurns).toBe(10);
    expect(agent.llmConfig).toBeNull();
    expect(agent.description).toBe("");
  });

  it("is checked once, not at every construction: each request and run builds its agent from the same spec", () => {
    const file = parseAgentFile(PATH, "name: support\ninstructions: Help.\nclaude:\n  allowed_tools: [TodoWrite]\n");
    const cls = fileAgentClasses([file]).support;
    if (!cls) throw new Error("no class");
    const first = new cls();
    const second = new cls();
    expect(second.allowedTools).toEqual(["TodoWrite"]);
    // The same checked arrays, not a second parse's copies.
    expect(second.allowedTools).toBe(first.allowedTools);
    expect(second.settings).toBe(first.settings);
    // Another file is another definition, with its own spec.
    expect(agentOf(parseAgentFile(PATH, MINIMAL)).allowedTools).not.toBe(first.allowedTools);
  });

  it("runs an OpenAI-compatible or Gemini model with its endpoint, key secret and temperature", () => {
    const agent = agentOf(
      parseAgentFile(
        PATH,
        `${MINIMAL}model:\n  provider: openai_compatible\n  name: gpt-5\n  endpoint: https://llm.example.com/v1\n  api_key: LLM_KEY\n  temperature: 0.2\n`,
      ),
    );
    expect(agent.llmConfig).toEqual({
      provider: "openai_compatible",
      endpoint: "https://llm.example.com/v1",
      api_key: "LLM_KEY",
    });
    expect(agent.temperature).toBe(0.2);
    expect(agent.model).toBe("gpt-5");
  });

  it("is what the shipped agents are: every file of agents/ is built in, named after its file", () => {
    expect(AGENT_FILES.map((f) => f.path)).toEqual([
      "agents/assistant.yaml",
      "agents/coder.yaml",
      "agents/librarian.yaml",
      "agents/planner.yaml",
      "agents/router.yaml",
      "agents/triage.yaml",
    ]);
    for (const file of AGENT_FILES) {
      const agent = registry.create(String(file.definition.name));
      expect(agent.origin).toEqual({ kind: "file", path: file.path, warnings: [] });
      expect(file.path).toBe(`agents/${agent.name}.yaml`);
    }
    expect(registry.create("operator").origin).toEqual({ kind: "typescript" });
  });
});

describe("a broken agent file", () => {
  it("is refused with its path, the line and the whole key of an unknown key", () => {
    const error = refusal(`${MINIMAL}claude:\n  max_turns: 3\n  extended_thinkng:\n    enabled: true\n`);
    expect(error.message).toBe("agents/support.yaml:5: claude.extended_thinkng: unknown key");
    expect([error.line, error.key]).toEqual([5, "claude.extended_thinkng"]);
  });

  it("is refused with the line and key of a value out of range, in the schema's words", () => {
    const error = refusal(`${MINIMAL}claude:\n  extended_thinking:\n    enabled: true\n    budget_tokens: 10\n`);
    expect(error.message).toBe(
      "agents/support.yaml:6: claude.extended_thinking.budget_tokens: must be at least 1,024 (the Messages API's minimum)",
    );
  });

  it("is refused at an item of a list by its index", () => {
    const error = refusal(`${MINIMAL}tools:\n  - type: mcp\n    name: docs\n    url: not-a-url\n`);
    expect(error.key).toBe("tools.0.url");
    expect(error.line).toBe(6);
  });

  it("is refused when it is not YAML, or holds a key twice, at the line of the problem", () => {
    expect(refusal("name: support\ninstructions: [unclosed\n").message).toMatch(
      /^agents\/support\.yaml:\d+: not valid YAML/,
    );
    const twice = refusal("name: support\ninstructions: Help.\nname: other\n");
    expect(twice.message).toMatch(/^agents\/support\.yaml:3: not valid YAML: Map keys must be unique/);
  });

  it("is refused without instructions, or with a name that is not an agent name", () => {
    expect(refusal("name: support\n").key).toBe("instructions");
    expect(refusal("name: Support Bot\ninstructions: Help.\n").key).toBe("name");
  });

  it("is refused when two keys disagree, in the file's terms and at the line of the key at fault", () => {
    const error = refusal(
      `${MINIMAL}model:\n  max_tokens: 2000\nclaude:\n  extended_thinking:\n    enabled: true\n    budget_tokens: 4000\n`,
    );
    expect(error.message).toBe(
      "agents/support.yaml:4: model.max_tokens (2000) must be more than claude.extended_thinking.budget_tokens (4000): the thinking counts against each call's output.",
    );
    const temperature = refusal(`${MINIMAL}model:\n  temperature: 0.5\n`);
    expect(temperature.message).toMatch(
      /^agents\/support\.yaml:4: model\.temperature is not taken by Anthropic's models/,
    );
    const summarizer = refusal(
      `${MINIMAL}model:\n  provider: gemini\n  api_key: GEMINI_API_KEY\ncontext_window:\n  summarizer: anthropic\n`,
    );
    expect(summarizer.message).toMatch(
      /^agents\/support\.yaml:\d+: context_window\.summarizer anthropic is the Messages API's own compaction, on Anthropic's own API only .* this agent uses provider gemini\./,
    );
  });

  it("is refused when a tool names a capability the file leaves off", () => {
    const error = refusal(`${MINIMAL}claude:\n  allowed_tools: [Bash]\n`);
    expect(error.message).toContain("Bash");
    expect(error.message).toContain("claude.bash.enabled");
  });
});

describe("seed 004's startup validation rules", () => {
  it("rule 1: refuses a knowledge tool on an Anthropic agent without an embedding provider", () => {
    const tool = "tools:\n  - type: vectorstore\n    name: kb\n    collection: handbook\n";
    expect(refusal(`${MINIMAL}${tool}`).message).toBe(
      "agents/support.yaml:4: tools.0: a knowledge tool on an Anthropic agent needs embedding_provider (rule 1)",
    );
    // With one, the file makes an agent with the tool, its defaults, and the provider that embeds its queries.
    const file = parseAgentFile(
      PATH,
      `${MINIMAL}embedding_provider:\n  provider: openai\n  name: text-embedding-3-small\n  api_key: TEST_OPENAI_KEY\n${tool}`,
    );
    const agent = agentOf(file);
    expect(agent.knowledgeTools).toEqual([{ type: "vectorstore", name: "kb", collection: "handbook", top_k: 5 }]);
    expect(agent.embeddingProvider).toEqual({
      provider: "openai",
      name: "text-embedding-3-small",
      api_key: "TEST_OPENAI_KEY",
    });
    expect(agent.allowedTools).toEqual(["kb"]);
  });

  it("rule 1 holds for a TypeScript agent too, and an embedding provider must be OpenAI's or Azure's", () => {
    const tool = { type: "hierarchical_document" as const, name: "docs", collection: "handbook" };
    const agent = { name: "kb_agent", systemPrompt: "Answer.", knowledgeTools: [tool] };
    expect(errorOf(() => parseDefinition(agent)).message).toBe(
      'Agent "kb_agent": knowledge tools on an Anthropic agent need embeddingProvider (seed 004 startup rule 1: Anthropic has no embeddings; openai or azure_openai).',
    );
    const gemini = { ...agent, embeddingProvider: { provider: "gemini" } };
    expect(errorOf(() => parseDefinition(gemini as never)).message).toBe(
      'Agent "kb_agent": embeddingProvider.provider: must be "openai" or "azure_openai" (seed 004: embeddings come from them only).',
    );
    const deployment = { ...agent, embeddingProvider: { provider: "openai" as const, deployment: "emb" } };
    expect(errorOf(() => parseDefinition(deployment)).message).toBe(
      'Agent "kb_agent": embeddingProvider.deployment: is for azure_openai only.',
    );
    const spec = parseDefinition({ ...agent, embeddingProvider: { provider: "openai" } });
    expect(spec.knowledgeTools).toEqual([{ ...tool, top_k: 5, neighbours: 1 }]);
  });

  it("rule 2: clears tool_filtering on an Anthropic agent with a warning", () => {
    const file = parseAgentFile(PATH, `${MINIMAL}tool_filtering:\n  top_k: 5\n`);
    expect(file.warnings).toEqual(["tool_filtering is ignored for Anthropic agents and was cleared (rule 2)."]);
    expect(agentOf(file).origin).toEqual({ kind: "file", path: PATH, warnings: file.warnings });
  });

  it("rule 3: ignores the claude: block of another provider's agent, with a warning", () => {
    const file = parseAgentFile(
      PATH,
      `${MINIMAL}model:\n  provider: gemini\n  auth_provider: vertex\nclaude:\n  bash:\n    enabled: true\n`,
    );
    expect(file.warnings).toEqual([
      "the claude: block applies to Anthropic agents only; this agent's provider is gemini, so it is ignored (rule 3).",
      "model.auth_provider applies to Anthropic agents only and is ignored for gemini.",
    ]);
    expect(agentOf(file).settings.bash.enabled).toBe(false);
  });

  it("maps model.auth_provider and its settings onto the agent's llmConfig, secrets by name", () => {
    const llmOf = (model: string) => parseAgentFile(PATH, `${MINIMAL}model:\n${model}`).definition.llmConfig;
    expect(llmOf("  auth_provider: oauth_token\n  oauth_token: MY_CLAUDE_TOKEN\n")).toEqual({
      provider: "anthropic",
      auth_provider: "oauth_token",
      oauth_token: "MY_CLAUDE_TOKEN",
    });
    expect(
      llmOf("  auth_provider: bedrock\n  bedrock:\n    region: eu-west-1\n    session_token: AWS_SESSION_TOKEN\n"),
    ).toEqual({
      provider: "anthropic",
      auth_provider: "bedrock",
      bedrock: { region: "eu-west-1", session_token: "AWS_SESSION_TOKEN" },
    });
    expect(llmOf("  auth_provider: vertex\n  vertex:\n    region: us-east5\n    project_id: my-project\n")).toEqual({
      provider: "anthropic",
      auth_provider: "vertex",
      vertex: { region: "us-east5", project_id: "my-project" },
    });
    expect(llmOf("  auth_provider: foundry\n  foundry:\n    resource: my-resource\n")).toEqual({
      provider: "anthropic",
      auth_provider: "foundry",
      foundry: { resource: "my-resource" },
    });
    // api_key is the default: the agent needs no llmConfig for it.
    expect(llmOf("  auth_provider: api_key\n")).toBeUndefined();
  });

  it("refuses an auth provider's settings that are missing, misplaced or a secret's value, naming the key", () => {
    expect(refusal(`${MINIMAL}model:\n  auth_provider: bedrock\n`).message).toBe(
      "agents/support.yaml:3: model.bedrock: is required for auth_provider bedrock (its region).",
    );
    expect(refusal(`${MINIMAL}model:\n  auth_provider: foundry\n`).message).toBe(
      "agents/support.yaml:3: model.foundry: needs resource (or endpoint) for auth_provider foundry.",
    );
    expect(refusal(`${MINIMAL}model:\n  vertex:\n    region: us-east5\n`).message).toBe(
      "agents/support.yaml:4: model.vertex: is for auth_provider vertex.",
    );
    expect(refusal(`${MINIMAL}model:\n  auth_provider: oauth_token\n  api_key: MY_KEY\n`).message).toBe(
      "agents/support.yaml:5: model.api_key: is for auth_provider api_key.",
    );
    const value = refusal(`${MINIMAL}model:\n  auth_provider: oauth_token\n  oauth_token: sk-ant-oat01-abc\n`);
    expect(value.key).toBe("model.oauth_token");
    expect(value.message).toContain("must be the NAME of a Worker secret");
    expect(refusal(`${MINIMAL}model:\n  bedrock:\n    region: us-east-1\n    profile: x\n`).key).toBe(
      "model.bedrock.profile",
    );
    expect(
      refusal(
        `${MINIMAL}model:\n  auth_provider: vertex\n  vertex:\n    region: us-east5\n    credentials: OUTPOST_API_KEYS\n`,
      ).message,
    ).toContain("cannot be one of Outpost's own secrets");
  });

  it("refuses tool filtering on another provider's agent, by name, rather than ignoring it", () => {
    expect(refusal(`${MINIMAL}model:\n  provider: gemini\ntool_filtering: {}\n`).key).toBe("tool_filtering");
  });
});
