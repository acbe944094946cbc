// The agent layer without a model: the registry (FR-010..FR-012), construction-time validation of names, prompts
// and tools (FR-002), text extraction (FR-006), results and usage arithmetic (FR-008, FR-014), prices, the
// default model, and the error classes with their stable codes (FR-007). Model calls are in test/llm/anthropic.test.ts.

import type { Message } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { AGENT_NAME_PATTERN, Agent, type AgentDefinition } from "../../src/agents/agent.ts";
import { AgentRegistry } from "../../src/agents/registry.ts";
import { failureResult, successResult } from "../../src/agents/result.ts";
import { extractAllText, extractText } from "../../src/agents/text.ts";
import { validateToolNames } from "../../src/agents/tool-names.ts";
import { DEFAULT_MAX_TOKENS, DEFAULT_MODEL, resolveModel } from "../../src/config/models.ts";
import { costOf, DEFAULT_PRICES, findPrice, loadPriceTable } from "../../src/config/prices.ts";
import type { AgentRuntime } from "../../src/contracts/runtime.ts";
import { BUILTIN_TOOLS, MCP_TOOL_PATTERN, parseMcpToolName } from "../../src/contracts/tool-names.ts";
import {
  type AgentUsage,
  AgentUsageSchema,
  addCallUsage,
  type CallUsage,
  emptyUsage,
} from "../../src/contracts/usage.ts";
import {
  AgentError,
  AgentNotFoundError,
  ApiError,
  CanceledError,
  ConfigError,
  DuplicateAgentError,
  type ErrorInfo,
  InvalidToolError,
  LimitExceededError,
  MalformedResponseError,
  NetworkError,
  OutpostError,
  ProviderError,
  ProviderNotConfiguredError,
  StreamingError,
  TimeoutError,
  toErrorInfo,
  WorkflowError,
} from "../../src/errors.ts";
import { Redactor } from "../../src/events/redaction.ts";
import { outboundPolicy } from "../../src/net/outbound.ts";
import { todoWrite } from "../../src/tools/todo-write.ts";
import { Toolbox } from "../../src/tools/toolbox.ts";
import { NO_WORKSPACE } from "../support/checks.ts";

/** An agent built from whatever definition a test needs. */
class TestAgent extends Agent {}

/** The built-in tools this deployment runs, as InvalidToolError lists them. */
const RUNNABLE = ["AskUser", "Bash", "Edit", "Glob", "Grep", "Read", "Task", "TodoWrite", "WebFetch", "Write"];

/** MCP servers for tests that name MCP tools: a tool name must name a declared server. */
const SERVERS: AgentDefinition["mcpServers"] = {
  github: { url: "https://mcp.example.com/github" },
  "my-server": { url: "https://mcp.example.com/mine" },
  a_b: { url: "https://mcp.example.com/ab" },
  gh: { url: "https://mcp.example.com/gh" },
};

function agentWith(overrides: Partial<AgentDefinition> = {}): TestAgent {
  return new TestAgent({ name: "test_agent", systemPrompt: "You test things.", ...overrides });
}

/** What construction threw, so a test can assert on the error's fields and not only its class. */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

function invalidToolErrorFor(allowedTools: string[]): InvalidToolError {
  const error = thrownBy(() => agentWith({ allowedTools }));
  expect(error).toBeInstanceOf(InvalidToolError);
  return error as InvalidToolError;
}

function call(overrides: Partial<CallUsage> = {}): CallUsage {
  return {
    model: "claude-sonnet-5-5",
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cost_usd: 0,
    ...overrides,
  };
}

const PRICE_SOURCE = "test contract 2026";

describe("AgentRegistry", () => {
  class AlphaAgent extends Agent {
    constructor() {
      super({ name: "alpha", systemPrompt: "Alpha." });
    }
  }
  class BetaAgent extends Agent {
    constructor() {
      super({ name: "beta", systemPrompt: "Beta." });
    }
  }

  it("returns the class registered under a name by register(name, cls)", () => {
    const registry = new AgentRegistry();
    registry.register("alpha", AlphaAgent);
    expect(registry.get("alpha")).toBe(AlphaAgent);
    expect(registry.has("alpha")).toBe(true);
    expect(registry.has("beta")).toBe(false);
  });

  it("register(name) returns a class decorator that registers the class and returns it unchanged", () => {
    // The decorator syntax itself is exercised in registry-decorator.unit.test.ts; this is the same function
    // applied the way a TC39 class decorator is applied, so this file still loads where the syntax is not lowered.
    const registry = new AgentRegistry();
    const decorate = registry.register("alpha");
    expect(decorate(AlphaAgent)).toBe(AlphaAgent);
    expect(registry.get("alpha")).toBe(AlphaAgent);
  });

  it("throws DuplicateAgentError at once when a second class registers a taken name", () => {
    const registry = new AgentRegistry();
    registry.register("alpha", AlphaAgent);
    const error = thrownBy(() => registry.register("alpha", BetaAgent));
    expect(error).toBeInstanceOf(DuplicateAgentError);
    expect(error).toMatchObject({
      code: "duplicate_agent",
      agentName: "alpha",
      message: 'An agent named "alpha" is already registered; agent names must be unique.',
    });
    expect(registry.get("alpha")).toBe(AlphaAgent);
  });

  it("throws DuplicateAgentError when a decorator registers a taken name", () => {
    const registry = new AgentRegistry();
    registry.register("alpha", AlphaAgent);
    const decorate = registry.register("alpha");
    expect(() => decorate(BetaAgent)).toThrow(DuplicateAgentError);
    expect(registry.get("alpha")).toBe(AlphaAgent);
  });

  it("throws AgentNotFoundError listing the registered agents when a name is unknown", () => {
    const registry = AgentRegistry.from({ beta: BetaAgent, alpha: AlphaAgent });
    const error = thrownBy(() => registry.get("gamma"));
    expect(error).toBeInstanceOf(AgentNotFoundError);
    expect(error).toMatchObject({
      code: "agent_not_found",
      agentName: "gamma",
      availableAgents: ["alpha", "beta"],
      message: 'No agent named "gamma". Registered agents: alpha, beta.',
    });
  });

  it("says no agents are registered when an empty registry is asked for one", () => {
    const error = thrownBy(() => new AgentRegistry().get("alpha"));
    expect(error).toMatchObject({ availableAgents: [], message: 'No agent named "alpha". Registered agents: none.' });
  });

  it("lists registered names in sorted order whatever the registration order", () => {
    const registry = new AgentRegistry();
    registry.register("beta", BetaAgent);
    registry.register("alpha", AlphaAgent);
    expect(registry.list()).toEqual(["alpha", "beta"]);
  });

  it("creates an instance of the class registered under a name", () => {
    const registry = AgentRegistry.from({ alpha: AlphaAgent });
    const agent = registry.create("alpha");
    expect(agent).toBeInstanceOf(AlphaAgent);
    expect(agent.name).toBe("alpha");
  });

  it("throws AgentNotFoundError when asked to create an unknown agent", () => {
    expect(() => new AgentRegistry().create("alpha")).toThrow(AgentNotFoundError);
  });

  it("throws ConfigError when the registered name differs from the name the agent is built with", () => {
    const registry = new AgentRegistry();
    registry.register("other", AlphaAgent);
    const error = thrownBy(() => registry.create("other"));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({
      code: "config_error",
      message: 'The class registered as "other" builds an agent named "alpha"; use one name.',
    });
  });

  it("builds a registry from a literal of names to classes", () => {
    const registry = AgentRegistry.from({ alpha: AlphaAgent, beta: BetaAgent });
    expect(registry.list()).toEqual(["alpha", "beta"]);
    expect(registry.get("beta")).toBe(BetaAgent);
  });
});

describe("tool names (FR-002)", () => {
  it("accepts a built-in tool this deployment can run", () => {
    expect(agentWith({ allowedTools: ["TodoWrite"] }).allowedTools).toEqual(["TodoWrite"]);
  });

  it("accepts mcp__<server>__<tool> names, with single underscores and dashes inside the parts", () => {
    const tools = ["mcp__github__create_issue", "mcp__my-server__do-thing", "mcp__a_b__c_d"];
    expect(agentWith({ allowedTools: tools, mcpServers: SERVERS }).allowedTools).toEqual(tools);
  });

  it("keeps a frozen copy of the allowed tools", () => {
    const tools = ["TodoWrite"];
    const agent = agentWith({ allowedTools: tools });
    tools.push("mcp__late__addition");
    expect(agent.allowedTools).toEqual(["TodoWrite"]);
    expect(Object.isFrozen(agent.allowedTools)).toBe(true);
  });

  it("allows an agent with no tools", () => {
    expect(agentWith().allowedTools).toEqual([]);
  });

  it("rejects an unknown tool with InvalidToolError naming it and listing the available tools", () => {
    const error = invalidToolErrorFor(["TodoWrite", "Foo"]);
    expect(error.code).toBe("invalid_tool");
    expect(error.toolName).toBe("Foo");
    expect(error.availableTools).toEqual(RUNNABLE);
    expect(error.message).toBe(
      `Unknown tool "Foo". Available tools: ${RUNNABLE.join(", ")}; MCP tools are named mcp__<server>__<tool>.`,
    );
  });

  it.each([
    ["mcp__bad", "no tool part"],
    ["mcp__a__", "an empty tool"],
    ["mcp____x", "an empty server"],
    ["mcp__a___b", "a server or tool ending or starting with an underscore next to the separator"],
    ["mcp__a__b__c", "a separator inside the tool, which makes the split ambiguous"],
    ["mcp__a b__c", "a space"],
    ["MCP__a__b", "an upper-case prefix"],
    ["todowrite", "the wrong case of a built-in"],
    ["", "an empty name"],
  ])("rejects %j (%s) with InvalidToolError", (name) => {
    const error = invalidToolErrorFor([name]);
    expect(error.toolName).toBe(name);
    expect(error.availableTools).toEqual(RUNNABLE);
  });

  it("rejects a seed built-in that this deployment cannot run yet, saying why", () => {
    const error = invalidToolErrorFor(["NotebookEdit"]);
    expect(error.toolName).toBe("NotebookEdit");
    expect(error.message).toBe(
      `Tool "NotebookEdit" is not available in this deployment yet. Available tools: ${RUNNABLE.join(", ")}; ` +
        "MCP tools are named mcp__<server>__<tool>.",
    );
  });

  it("rejects a tool listed twice", () => {
    const error = thrownBy(() =>
      agentWith({ allowedTools: ["TodoWrite", "mcp__gh__x", "TodoWrite"], mcpServers: SERVERS }),
    ) as InvalidToolError;
    expect(error.toolName).toBe("TodoWrite");
    expect(error.message).toContain('Tool "TodoWrite" is listed twice.');
  });

  it("rejects an MCP tool listed twice", () => {
    expect(invalidToolErrorFor(["mcp__gh__x", "mcp__gh__x"]).toolName).toBe("mcp__gh__x");
  });

  it("reports the first invalid name in list order", () => {
    expect(invalidToolErrorFor(["Nope", "NotebookEdit"]).toolName).toBe("Nope");
  });

  it("lists the runnable set it is given, sorted, as the available tools", () => {
    const error = thrownBy(() => validateToolNames(["Zap"], new Set(["Write", "Read", "TodoWrite"])));
    expect(error).toMatchObject({ toolName: "Zap", availableTools: ["Read", "TodoWrite", "Write"] });
  });

  it("keeps all sixteen seed built-in names", () => {
    expect([...BUILTIN_TOOLS].sort()).toEqual([
      "Bash",
      "BashOutput",
      "Edit",
      "ExitPlanMode",
      "Glob",
      "Grep",
      "KillBash",
      "ListMcpResources",
      "NotebookEdit",
      "Read",
      "ReadMcpResource",
      "Task",
      "TodoWrite",
      "WebFetch",
      "WebSearch",
      "Write",
    ]);
  });

  it("splits an MCP tool name into its server and tool", () => {
    expect(parseMcpToolName("mcp__my-server__create_issue")).toEqual({ server: "my-server", tool: "create_issue" });
  });

  it("parses nothing from a name that is not an MCP tool name", () => {
    expect(parseMcpToolName("mcp__a__b__c")).toBeNull();
    expect(parseMcpToolName("TodoWrite")).toBeNull();
  });

  it("anchors MCP_TOOL_PATTERN at both ends", () => {
    expect(MCP_TOOL_PATTERN.test("mcp__a__b")).toBe(true);
    expect(MCP_TOOL_PATTERN.test("xmcp__a__b")).toBe(false);
    expect(MCP_TOOL_PATTERN.test("mcp__a__b ")).toBe(false);
  });

  it("offers the model the definitions of the runnable built-ins the agent allows", () => {
    const agent = agentWith({ allowedTools: ["TodoWrite"] });
    const runtime = {} as AgentRuntime;
    const tools = new Toolbox(agent.toolDeclaration(), {
      taskId: "t",
      runtime,
      secret: () => undefined,
      outbound: outboundPolicy(""),
      workspace: NO_WORKSPACE,
      redactor: new Redactor([]),
    });
    expect(tools.definitions()).toEqual([
      { name: "TodoWrite", description: todoWrite.description, input_schema: todoWrite.inputSchema },
    ]);
  });
});

describe("agent definition", () => {
  it("fills in the defaults: no description, no pinned model, 10 turns, the default output budget", () => {
    const agent = agentWith();
    expect({
      name: agent.name,
      description: agent.description,
      systemPrompt: agent.systemPrompt,
      model: agent.model,
      maxTurns: agent.maxTurns,
      maxTokens: agent.maxTokens,
    }).toEqual({
      name: "test_agent",
      description: "",
      systemPrompt: "You test things.",
      model: undefined,
      maxTurns: 10,
      maxTokens: DEFAULT_MAX_TOKENS,
    });
  });

  it("keeps a pinned model and explicit limits", () => {
    const agent = agentWith({ model: "claude-opus-5", maxTurns: 3, maxTokens: 512, description: "d" });
    expect([agent.model, agent.maxTurns, agent.maxTokens, agent.description]).toEqual(["claude-opus-5", 3, 512, "d"]);
  });

  it.each(["Bad-Name", "1abc", "_x", "Upper", "", "a b"])("rejects the agent name %j with ConfigError", (name) => {
    const error = thrownBy(() => agentWith({ name }));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      `Agent name "${name}" must match ${AGENT_NAME_PATTERN} (lowercase, digits, _).`,
    );
  });

  it("accepts lowercase names with digits and underscores", () => {
    expect(agentWith({ name: "code_reviewer_2" }).name).toBe("code_reviewer_2");
  });

  it("rejects a blank system prompt with ConfigError", () => {
    const error = thrownBy(() => agentWith({ systemPrompt: "  \n " }));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('Agent "test_agent" needs a system prompt.');
  });

  it.each([0, -1, 1.5, Number.NaN])("rejects maxTurns %s with ConfigError", (maxTurns) => {
    const error = thrownBy(() => agentWith({ maxTurns }));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe('Agent "test_agent": maxTurns must be a positive integer.');
  });
});

describe("extractText (FR-006)", () => {
  it("returns string content as it is", () => {
    expect(extractText("plain answer")).toBe("plain answer");
  });

  it("returns the text of a single text block", () => {
    expect(extractText([{ type: "text", text: "only block" }])).toBe("only block");
  });

  it("joins text blocks separated by tool calls and thinking with blank lines, skipping the rest", () => {
    expect(
      extractText([
        { type: "thinking", thinking: "Let me think.", signature: "sig" },
        { type: "text", text: "First part." },
        { type: "tool_use", id: "toolu_1", name: "TodoWrite", input: { todos: [] } },
        { type: "redacted_thinking", data: "xyz" },
        { type: "text", text: "Second part." },
      ]),
    ).toBe("First part.\n\nSecond part.");
  });

  it("skips empty text blocks rather than adding blank separators", () => {
    expect(
      extractText([
        { type: "text", text: "" },
        { type: "text", text: "kept" },
        { type: "text", text: "" },
      ]),
    ).toBe("kept");
  });

  it("returns an empty string for empty content and for content without text", () => {
    expect(extractText([])).toBe("");
    expect(extractText("")).toBe("");
    expect(extractText([{ type: "tool_use", id: "toolu_1", name: "TodoWrite", input: {} }])).toBe("");
  });

  it("reads the content of an assistant Message", () => {
    const message: Message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-5-5",
      content: [
        { type: "text", text: "Hello", citations: null },
        { type: "tool_use", id: "toolu_1", name: "TodoWrite", input: {}, caller: { type: "direct" } },
        { type: "text", text: "world", citations: null },
      ],
      stop_reason: "end_turn",
      stop_sequence: null,
      container: null,
      stop_details: null,
      usage: {
        input_tokens: 1,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: null,
        inference_geo: null,
        server_tool_use: null,
        service_tier: null,
      },
    } as Message;
    expect(extractText(message)).toBe("Hello\n\nworld");
  });

  it("reads a message param whose content is a string", () => {
    expect(extractText({ role: "user", content: "a question" })).toBe("a question");
  });

  it("collects the text of the assistant messages of a conversation in order", () => {
    expect(
      extractAllText([
        { role: "user", content: "question" },
        { role: "assistant", content: [{ type: "text", text: "answer one" }] },
        { role: "user", content: "follow-up" },
        { role: "assistant", content: "answer two" },
      ]),
    ).toEqual(["answer one", "answer two"]);
  });
});

describe("AgentResult (FR-008)", () => {
  const usage: AgentUsage = { ...emptyUsage(), input_tokens: 3, output_tokens: 4, total_tokens: 7, model_calls: 1 };

  it("builds a successful result with no errors and empty metadata by default", () => {
    expect(successResult("done", usage)).toEqual({ success: true, output: "done", metadata: {}, errors: [], usage });
  });

  it("keeps the metadata given to a successful result", () => {
    expect(successResult("", usage, { turns: 2 }).metadata).toEqual({ turns: 2 });
  });

  it("builds a failed result whose errors are ErrorInfo values with their codes", () => {
    const result = failureResult([new TimeoutError("The model provider did not answer in time.")], usage, {
      turns: 1,
    });
    expect(result).toEqual({
      success: false,
      output: "",
      metadata: { turns: 1 },
      errors: [
        {
          code: "timeout",
          message: "The model provider did not answer in time.",
          type: "TimeoutError",
          retryable: true,
        },
      ],
      usage,
    });
  });

  it("keeps partial output on a failed result when given", () => {
    const result = failureResult([new NetworkError("lost")], usage, {}, "partial answer");
    expect(result.output).toBe("partial answer");
  });

  it("refuses to build a failed result without an error, since it would not be actionable", () => {
    expect(() => failureResult([], usage)).toThrow(new TypeError("failureResult needs at least one error (FR-008)."));
  });

  it("turns a plain Error into an internal_error ErrorInfo and passes ErrorInfo values through", () => {
    const info: ErrorInfo = { code: "config_error", message: "m", type: "Custom", retryable: false, hint: "h" };
    const result = failureResult([new RangeError("out of range"), info], usage);
    expect(result.errors).toEqual([
      {
        code: "internal_error",
        message: "The run failed on an internal error (RangeError); the operator's logs have the details.",
        type: "RangeError",
        retryable: false,
      },
      info,
    ]);
  });

  it("serialises subclass details into the error info", () => {
    const result = failureResult([new InvalidToolError("Foo", ["Bar"])], usage);
    expect(result.errors[0]).toMatchObject({ code: "invalid_tool", tool_name: "Foo", available_tools: ["Bar"] });
  });
});

describe("usage arithmetic (FR-014)", () => {
  it("starts from zero with a known cost of zero", () => {
    expect(emptyUsage()).toEqual({
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
    });
    expect(AgentUsageSchema.parse(emptyUsage())).toEqual(emptyUsage());
  });

  it("sums the token counts of each call and counts the calls", () => {
    const total = addCallUsage(
      addCallUsage(emptyUsage(), call({ input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 100 })),
      call({ input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 1000 }),
    );
    expect(total).toMatchObject({
      input_tokens: 17,
      output_tokens: 8,
      cache_creation_input_tokens: 100,
      cache_read_input_tokens: 1000,
      model_calls: 2,
    });
  });

  it("counts cache writes and reads in total_tokens", () => {
    const total = addCallUsage(
      emptyUsage(),
      call({ input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 30, cache_read_input_tokens: 400 }),
    );
    expect(total.total_tokens).toBe(433);
  });

  it("sums costs exactly, without binary floating-point residue", () => {
    const total = addCallUsage(addCallUsage(emptyUsage(), call({ cost_usd: 0.1 })), call({ cost_usd: 0.2 }));
    expect(total.total_cost_usd).toBe(0.3);
  });

  it("leaves duration to the caller", () => {
    const total = addCallUsage({ ...emptyUsage(), duration_ms: 1234 }, call({ cost_usd: 0.5 }));
    expect(total.duration_ms).toBe(1234);
  });

  it("makes the total cost unknown and names the model when a call has no price", () => {
    const total = addCallUsage(
      addCallUsage(emptyUsage(), call({ cost_usd: 0.25 })),
      call({ model: "mystery-1", cost_usd: null }),
    );
    expect(total.total_cost_usd).toBeNull();
    expect(total.unpriced_models).toEqual(["mystery-1"]);
  });

  it("lists each unpriced model once and keeps the cost unknown after later priced calls", () => {
    let total = emptyUsage();
    for (const c of [
      call({ model: "mystery-1", cost_usd: null }),
      call({ model: "mystery-1", cost_usd: null }),
      call({ model: "mystery-2", cost_usd: null }),
      call({ cost_usd: 1 }),
    ]) {
      total = addCallUsage(total, c);
    }
    expect(total.unpriced_models).toEqual(["mystery-1", "mystery-2"]);
    expect(total.total_cost_usd).toBeNull();
    expect(total.model_calls).toBe(4);
  });

  it("does not change the total it is given", () => {
    const before = emptyUsage();
    addCallUsage(before, call({ input_tokens: 5, model: "mystery-1", cost_usd: null }));
    expect(before).toEqual(emptyUsage());
  });
});

describe("prices", () => {
  it("prices claude-sonnet-5-5 at 2 / 10 / 2.5 / 0.2 USD per million input, output, cache write, cache read", () => {
    const tokens = {
      input_tokens: 1234,
      output_tokens: 567,
      cache_creation_input_tokens: 89,
      cache_read_input_tokens: 4321,
    };
    // 1234×2 + 567×10 + 89×2.5 + 4321×0.2 = 9224.7 micro-USD.
    expect(costOf(DEFAULT_PRICES, "claude-sonnet-5-5", tokens)).toBe(0.0092247);
  });

  it("prices 1-hour cache writes at the table's 1-hour rate, and the other writes at the 5-minute rate", () => {
    const tokens = {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 1_000_000,
      cache_creation_1h_input_tokens: 400_000,
      cache_read_input_tokens: 0,
    };
    // 600,000 × 2.5 + 400,000 × 4 = 3.1 USD.
    expect(DEFAULT_PRICES["claude-sonnet-5-5"]?.cache_write_1h).toBe(4);
    expect(costOf(DEFAULT_PRICES, "claude-sonnet-5-5", tokens)).toBe(3.1);
  });

  it("prices an hour's write at twice the input where OUTPOST_PRICES gives no cache_write_1h", () => {
    const mine = { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3, source: PRICE_SOURCE };
    const table = loadPriceTable(JSON.stringify({ "my-model": mine }));
    const tokens = {
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 1_000_000,
      cache_creation_1h_input_tokens: 1_000_000,
      cache_read_input_tokens: 0,
    };
    expect(costOf(table, "my-model", tokens)).toBe(6);
    const priced = loadPriceTable(JSON.stringify({ "my-model": { ...mine, cache_write_1h: 5 } }));
    expect(costOf(priced, "my-model", tokens)).toBe(5);
  });

  it("prices a dated model id as its alias", () => {
    const tokens = {
      input_tokens: 1_000_000,
      output_tokens: 1_000_000,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    expect(findPrice(DEFAULT_PRICES, "claude-haiku-4-5-20251001")).toBe(DEFAULT_PRICES["claude-haiku-4-5"]);
    expect(costOf(DEFAULT_PRICES, "claude-haiku-4-5-20251001", tokens)).toBe(6);
  });

  it("prefers an entry for the dated id itself over its alias", () => {
    const dated = { input: 9, output: 9, cache_write: 9, cache_read: 9, source: PRICE_SOURCE };
    const table = { ...DEFAULT_PRICES, "claude-haiku-4-5-20251001": dated };
    expect(findPrice(table, "claude-haiku-4-5-20251001")).toBe(dated);
  });

  it("returns no cost for a model without a price", () => {
    const tokens = { input_tokens: 10, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    expect(costOf(DEFAULT_PRICES, "mystery-1", tokens)).toBeNull();
  });

  it("uses the default table when OUTPOST_PRICES is unset or blank", () => {
    expect(loadPriceTable(undefined)).toBe(DEFAULT_PRICES);
    expect(loadPriceTable("")).toBe(DEFAULT_PRICES);
    expect(loadPriceTable("  \n")).toBe(DEFAULT_PRICES);
  });

  it("adds a model and overrides another from OUTPOST_PRICES, keeping the rest of the defaults", () => {
    const mine = { input: 1, output: 5, cache_write: 1.25, cache_read: 0.1, source: PRICE_SOURCE };
    const sonnet = { input: 1.5, output: 7.5, cache_write: 1.875, cache_read: 0.15, source: PRICE_SOURCE };
    const table = loadPriceTable(JSON.stringify({ "my-model": mine, "claude-sonnet-5-5": sonnet }));
    expect(table).toEqual({ ...DEFAULT_PRICES, "my-model": mine, "claude-sonnet-5-5": sonnet });
  });

  it("rejects OUTPOST_PRICES that is not JSON with ConfigError", () => {
    const error = thrownBy(() => loadPriceTable("{"));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe("OUTPOST_PRICES is not valid JSON.");
    expect((error as ConfigError).cause).toBeInstanceOf(SyntaxError);
  });

  it("rejects a negative price with ConfigError naming the model and field", () => {
    const bad = { m: { input: -1, output: 1, cache_write: 1, cache_read: 1, source: PRICE_SOURCE } };
    const error = thrownBy(() => loadPriceTable(JSON.stringify(bad)));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe("OUTPOST_PRICES.m.input: Too small: expected number to be >=0");
  });

  it("rejects a price without a source with ConfigError naming the field", () => {
    const bad = { m: { input: 1, output: 1, cache_write: 1, cache_read: 1 } };
    expect(() => loadPriceTable(JSON.stringify(bad))).toThrow(
      "OUTPOST_PRICES.m.source: Invalid input: expected string, received undefined",
    );
  });

  it("rejects an unknown field in a price with ConfigError", () => {
    const bad = { m: { input: 1, output: 1, cache_write: 1, cache_read: 1, source: PRICE_SOURCE, batch: 1 } };
    expect(() => loadPriceTable(JSON.stringify(bad))).toThrow('OUTPOST_PRICES.m: Unrecognized key: "batch"');
  });

  it("rejects OUTPOST_PRICES that is not an object with ConfigError naming the variable alone", () => {
    const error = thrownBy(() => loadPriceTable("[1]"));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe("OUTPOST_PRICES: Invalid input: expected record, received array");
  });
});

describe("model choice", () => {
  it("defaults to claude-sonnet-5-5, not the seed's end-of-life claude-sonnet-4-5-20250929", () => {
    expect(DEFAULT_MODEL).toBe("claude-sonnet-5-5");
  });

  it("has a price for the default model", () => {
    expect(findPrice(DEFAULT_PRICES, DEFAULT_MODEL)).toBeDefined();
  });

  it("prefers the agent's pinned model over the configured default", () => {
    expect(resolveModel("claude-opus-5", "claude-haiku-4-5")).toBe("claude-opus-5");
  });

  it("uses the configured default, trimmed, when the agent pins none", () => {
    expect(resolveModel(undefined, "  claude-haiku-4-5 ")).toBe("claude-haiku-4-5");
    expect(resolveModel("", "claude-haiku-4-5")).toBe("claude-haiku-4-5");
  });

  it("falls back to DEFAULT_MODEL when neither the agent nor the configuration names a model", () => {
    expect(resolveModel(undefined, undefined)).toBe(DEFAULT_MODEL);
    expect(resolveModel(undefined, "   ")).toBe(DEFAULT_MODEL);
  });
});

describe("error classes (FR-007)", () => {
  it.each([
    { error: new ConfigError("c"), name: "ConfigError", code: "config_error", retryable: false },
    { error: new WorkflowError("w"), name: "WorkflowError", code: "workflow_error", retryable: false },
    {
      error: new WorkflowError("w", "step_attempts_exhausted"),
      name: "WorkflowError",
      code: "step_attempts_exhausted",
      retryable: false,
    },
    {
      error: new ProviderNotConfiguredError("anthropic", "p"),
      name: "ProviderNotConfiguredError",
      code: "provider_not_configured",
      retryable: false,
    },
    { error: new TimeoutError("t"), name: "TimeoutError", code: "timeout", retryable: true },
    { error: new NetworkError("n"), name: "NetworkError", code: "network_error", retryable: true },
    { error: new StreamingError("s", []), name: "StreamingError", code: "streaming_error", retryable: true },
    {
      error: new MalformedResponseError("m", "raw"),
      name: "MalformedResponseError",
      code: "malformed_response",
      retryable: false,
    },
    { error: new InvalidToolError("X", []), name: "InvalidToolError", code: "invalid_tool", retryable: false },
    { error: new DuplicateAgentError("a"), name: "DuplicateAgentError", code: "duplicate_agent", retryable: false },
    { error: new AgentNotFoundError("a", []), name: "AgentNotFoundError", code: "agent_not_found", retryable: false },
    {
      error: new LimitExceededError("max_turns", "l"),
      name: "LimitExceededError",
      code: "max_turns",
      retryable: false,
    },
    { error: new CanceledError(), name: "CanceledError", code: "canceled", retryable: false },
    { error: new ApiError("task_not_found", "a"), name: "ApiError", code: "task_not_found", retryable: false },
  ])("gives $name the stable code $code (retryable: $retryable)", ({ error, name, code, retryable }) => {
    expect({ name: error.name, code: error.code, retryable: error.retryable }).toEqual({ name, code, retryable });
  });

  it("makes every agent failure an AgentError, and cancellation not one", () => {
    const agentErrors = [
      new ProviderNotConfiguredError("anthropic", "p"),
      new TimeoutError("t"),
      new NetworkError("n"),
      new ProviderError("rate_limited", "r", { status: 429, requestId: null, retryable: true }),
      new StreamingError("s", []),
      new MalformedResponseError("m", ""),
      new InvalidToolError("X", []),
      new DuplicateAgentError("a"),
      new AgentNotFoundError("a", []),
      new LimitExceededError("max_turns", "l"),
    ];
    expect(agentErrors.map((e) => e instanceof AgentError && e instanceof OutpostError && e instanceof Error)).toEqual(
      agentErrors.map(() => true),
    );
    expect(new CanceledError()).not.toBeInstanceOf(AgentError);
    expect(new ConfigError("c")).not.toBeInstanceOf(AgentError);
  });

  it("serialises InvalidToolError with the tool name and a copy of the available tools", () => {
    const available = ["TodoWrite"];
    const json = new InvalidToolError("Foo", available).toJSON();
    expect(json).toEqual({
      code: "invalid_tool",
      message: 'Unknown tool "Foo". Available tools: TodoWrite; MCP tools are named mcp__<server>__<tool>.',
      type: "InvalidToolError",
      retryable: false,
      tool_name: "Foo",
      available_tools: ["TodoWrite"],
    });
    expect(json.available_tools).not.toBe(available);
  });

  it("serialises MalformedResponseError with the raw response, cut to 2000 characters", () => {
    expect(new MalformedResponseError("bad", '{"type":').toJSON()).toEqual({
      code: "malformed_response",
      message: "bad",
      type: "MalformedResponseError",
      retryable: false,
      raw_response: '{"type":',
    });
    expect(new MalformedResponseError("bad", "x".repeat(5000)).toJSON().raw_response).toBe("x".repeat(2000));
  });

  it("keeps the whole raw response on the MalformedResponseError itself", () => {
    expect(new MalformedResponseError("bad", "x".repeat(5000)).rawResponse).toHaveLength(5000);
  });

  it("serialises StreamingError with the number of partial messages, not the messages", () => {
    const partial = [{ type: "stream_event" }, { type: "stream_event" }, { type: "stream_event" }];
    const error = new StreamingError("broke", partial);
    expect(error.partialMessages).toBe(partial);
    expect(error.toJSON()).toEqual({
      code: "streaming_error",
      message: "broke",
      type: "StreamingError",
      retryable: true,
      partial_message_count: 3,
    });
  });

  it("serialises ProviderError with its HTTP status and request id", () => {
    const error = new ProviderError("rate_limited", "slow down", { status: 429, requestId: "req_1", retryable: true });
    expect(error.toJSON()).toEqual({
      code: "rate_limited",
      message: "slow down",
      type: "ProviderError",
      retryable: true,
      status: 429,
      request_id: "req_1",
    });
  });

  it("names the provider on ProviderNotConfiguredError", () => {
    expect(new ProviderNotConfiguredError("anthropic", "p").provider).toBe("anthropic");
  });

  it("keeps the cause of a wrapped error", () => {
    const cause = new Error("socket closed");
    expect(new NetworkError("lost", { cause }).cause).toBe(cause);
    expect(new TimeoutError("late").cause).toBeUndefined();
  });

  it("keeps the status and field of an ApiError", () => {
    const error = new ApiError("idempotency_key_reused", "input is required", "input");
    expect([error.status, error.field]).toEqual([422, "input"]);
  });

  it("turns anything thrown into an ErrorInfo without a stack or internal details", () => {
    expect(toErrorInfo(new DuplicateAgentError("a"))).toEqual({
      code: "duplicate_agent",
      message: 'An agent named "a" is already registered; agent names must be unique.',
      type: "DuplicateAgentError",
      retryable: false,
      agent_name: "a",
    });
    // Anything that is not an Outpost error may carry internals (a storage path, a query): only its class is shown.
    expect(toErrorInfo(new TypeError("secret /internal/path"))).toEqual({
      code: "internal_error",
      message: "The run failed on an internal error (TypeError); the operator's logs have the details.",
      type: "TypeError",
      retryable: false,
    });
    expect(toErrorInfo("a string")).toEqual({
      code: "internal_error",
      message: "The run failed on an internal error (Error); the operator's logs have the details.",
      type: "Error",
      retryable: false,
    });
  });
});
