// Seed 004 web search through the HTTP API, against the emulator over real HTTP: an agent with webSearch offers
// Anthropic's server tool beside its own tools; the searches the API runs inside a model call (server_tool_use,
// web_search_tool_result) and the citations on the answer appear in events, the transcript, the conversation and the
// ExecutionResult, are sent back unchanged on the next call (the emulator refuses an altered result), are never run
// as client tool calls, and a pause_turn continues the run. Also: the definition's and the agent file's settings,
// and the refusals.
import { describe, expect, it } from "vitest";
import { parseAgentFile } from "../../src/agents/agent-file.ts";
import { parseDefinition } from "../../src/agents/definition.ts";
import { SkillAgent } from "../../src/agents/skill-agent.ts";
import { costOf, DEFAULT_PRICES } from "../../src/config/prices.ts";
import { ExecutionResultSchema } from "../../src/contracts/execution-result.ts";
import { ConfigError } from "../../src/errors.ts";
import { AgentSchema, InvocationSchema, MessageListSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  errorOf,
  events,
  modelRequest,
  ofType,
  parseBody,
  type ScriptTurn,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const WEB_SEARCH_TOOL = { type: "web_search_20250305", name: "web_search" };
const searcher = defineAgent({ webSearch: true });

const BURJ = { url: "https://towers.example/burj", title: "Burj Khalifa", page_age: "2 days ago" };
const LIST = { url: "https://towers.example/list", title: "Tallest towers" };

/** A reply that searches, then answers with a cited passage. */
const searchAndAnswer: ScriptTurn = {
  content: [
    { type: "text", text: "Let me look that up." },
    { type: "web_search", query: "tallest building", results: [BURJ, LIST] },
    { type: "text", text: "The tallest building is " },
    {
      type: "text",
      text: "the Burj Khalifa",
      citations: [{ url: BURJ.url, title: BURJ.title, cited_text: "The Burj Khalifa is 828 m tall." }],
    },
    { type: "text", text: "." },
  ],
};

async function artifact(id: string, path: string): Promise<string> {
  const res = await api(`/v1/tasks/${id}/artifacts/${path}`);
  expect(res.status).toBe(200);
  return res.text();
}

async function run(agent: string, turns: ScriptTurn[], label: string) {
  const marker = uniqueMarker(label);
  await script(marker, turns);
  const task = await startTask(agent, `What is the tallest building? ${marker}`);
  return waitForTask(task.id);
}

describe("web search", () => {
  it("offers the server tool, and shows the search, its results and the citations in events and the transcript", async () => {
    const task = await run(searcher, [searchAndAnswer], "ws-run");
    expect(task.status).toBe("completed");
    // The cited passage runs on in its sentence; text on the other side of the search is a paragraph of its own.
    expect(task.result).toBe("Let me look that up.\n\nThe tallest building is the Burj Khalifa.");

    const request = (await modelRequest(task.id, 1)) as unknown as { tools: unknown[] };
    expect(request.tools).toEqual([WEB_SEARCH_TOOL]);

    const log = await events(task.id);
    const started = ofType(log, "web_search_started");
    const toolUseId = started[0]?.payload.tool_use_id;
    expect(toolUseId).toMatch(/^srvtoolu_emu_/);
    expect(started.map((e) => e.payload)).toEqual([
      { turn_index: 1, index: 1, tool_use_id: toolUseId, query: "tallest building" },
    ]);
    expect(ofType(log, "web_search_completed").map((e) => e.payload)).toEqual([
      {
        turn_index: 1,
        index: 2,
        tool_use_id: toolUseId,
        query: "tallest building",
        results: [BURJ, { ...LIST, page_age: null }],
        error_code: null,
      },
    ]);
    expect(ofType(log, "llm_citation").map((e) => e.payload)).toEqual([
      { turn_index: 1, index: 4, url: BURJ.url, title: BURJ.title, cited_text: "The Burj Khalifa is 828 m tall." },
    ]);
    const order = log
      .map((e) => e.event_type)
      .filter((t) => t.startsWith("web_search") || t === "llm_citation" || t === "llm_response_received");
    expect(order).toEqual(["web_search_started", "web_search_completed", "llm_citation", "llm_response_received"]);
    // Anthropic ran the search: Outpost ran no tool.
    expect(ofType(log, "tool_call_started")).toEqual([]);

    // The search is counted, and billed at $10 per 1,000 searches on top of the tokens.
    const meta = ofType(log, "llm_response_received")[0]?.payload.meta as {
      usage: { input_tokens: number; output_tokens: number; web_search_requests?: number; cost_usd: number | null };
    };
    expect(meta.usage.web_search_requests).toBe(1);
    expect(task.usage.web_search_requests).toBe(1);
    const tokens = { ...meta.usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const tokenCost = costOf(DEFAULT_PRICES, task.model, { ...tokens, web_search_requests: 0 });
    expect(tokenCost).not.toBeNull();
    expect(meta.usage.cost_usd).toBeCloseTo((tokenCost ?? 0) + 0.01, 9);

    const transcript = await artifact(task.id, "llm_transcript.log");
    const record = JSON.parse(transcript.split("\n")[1] ?? "{}");
    expect(record.web_searches).toEqual([
      { id: toolUseId, query: "tallest building", results: [BURJ, { ...LIST, page_age: null }], error_code: null },
    ]);
    expect(record.citations).toEqual([
      { url: BURJ.url, title: BURJ.title, cited_text: "The Burj Khalifa is 828 m tall." },
    ]);
  });

  it("keeps the search in the conversation and sends it back unchanged, running only the client tool call", async () => {
    const agent = defineAgent({ webSearch: { max_uses: 2 }, allowedTools: ["TodoWrite", "WebSearch"] });
    const task = await run(
      agent,
      [
        {
          content: [
            ...searchAndAnswer.content,
            toolUse("TodoWrite", { todos: [{ content: "Visit it", status: "pending" }] }),
          ],
        },
        { content: [{ type: "text", text: "On the list." }] },
      ],
      "ws-send-back",
    );
    expect(task.status).toBe("completed");
    const first = (await modelRequest(task.id, 1)) as unknown as { tools: { name: string }[] };
    expect(first.tools.map((t) => t.name)).toEqual(["TodoWrite", "web_search"]);
    expect(first.tools[1]).toEqual({ ...WEB_SEARCH_TOOL, max_uses: 2 });

    // The next call carries the reply exactly as it came: the emulator refuses a result whose encrypted_content or a
    // citation whose encrypted_index was changed, so the run could not have completed otherwise.
    const response = JSON.parse(await artifact(task.id, "artifacts/llm/decision_loop_turn_1_attempt_1_response.txt"));
    const second = await modelRequest(task.id, 2);
    expect(second.messages[1]).toEqual({ role: "assistant", content: response.content });
    const types = (response.content as { type: string }[]).map((b) => b.type);
    expect(types).toEqual(["text", "server_tool_use", "web_search_tool_result", "text", "text", "text", "tool_use"]);
    const log = await events(task.id);
    expect(ofType(log, "tool_call_started").map((e) => e.payload.tool_name)).toEqual(["TodoWrite"]);

    // The conversation shows the blocks as they are.
    const { messages } = await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema);
    expect(messages[1]?.content).toEqual(response.content);
  });

  it("continues a turn the API paused: the paused reply goes back as it is and the run goes on", async () => {
    const task = await run(
      searcher,
      [
        { content: [{ type: "web_search", query: "tallest building", results: [BURJ] }], stop_reason: "pause_turn" },
        { content: searchAndAnswer.content.slice(2) },
      ],
      "ws-pause",
    );
    expect(task.status).toBe("completed");
    expect(task.result).toBe("The tallest building is the Burj Khalifa.");
    const log = await events(task.id);
    expect(
      ofType(log, "llm_response_received").map((e) => (e.payload.meta as { stop_reason: string }).stop_reason),
    ).toEqual(["pause_turn", "end_turn"]);
    const paused = JSON.parse(await artifact(task.id, "artifacts/llm/decision_loop_turn_1_attempt_1_response.txt"));
    const continued = await modelRequest(task.id, 2);
    expect(continued.messages.at(-1)).toEqual({ role: "assistant", content: paused.content });
    expect(ofType(log, "tool_call_started")).toEqual([]);
  });

  it("shows a search the API answered with an error, and lists searches in the ExecutionResult", async () => {
    const marker = uniqueMarker("ws-error");
    await script(marker, [
      {
        content: [
          { type: "web_search", query: "tallest building", error_code: "unavailable" },
          { type: "web_search", query: "tallest tower", results: [BURJ] },
          { type: "text", text: "It is the Burj Khalifa." },
        ],
      },
    ]);
    const res = await api(`/v1/agents/${searcher}/invoke`, {
      method: "POST",
      body: JSON.stringify({ message: `Which is tallest? ${marker}` }),
    });
    expect(res.status).toBe(200);
    const body = await parseBody(res, InvocationSchema);
    const result = ExecutionResultSchema.parse(body.result);
    const [failed, found] = result.tool_calls;
    expect(result.tool_calls).toEqual([
      { name: "web_search", arguments: { query: "tallest building" }, call_id: failed?.call_id },
      { name: "web_search", arguments: { query: "tallest tower" }, call_id: found?.call_id },
    ]);
    expect(result.tool_results).toEqual([
      { call_id: failed?.call_id, result: "web search failed: unavailable", is_error: true },
      { call_id: found?.call_id, result: `Burj Khalifa <${BURJ.url}>`, is_error: false },
    ]);
    const completed = ofType(await events(body.task_id), "web_search_completed").map((e) => e.payload);
    expect(completed[0]).toMatchObject({ query: "tallest building", results: [], error_code: "unavailable" });
    // Only the search that ran is billed.
    expect((await waitForTask(body.task_id)).usage.web_search_requests).toBe(1);
  });

  it("shows the server tool in the agent's description and its tool list", async () => {
    const agent = defineAgent({ webSearch: { allowed_domains: ["towers.example"], user_location: { country: "AE" } } });
    const described = await apiJson(`/v1/agents/${agent}`, AgentSchema);
    expect(described.allowed_tools).toEqual(["WebSearch"]);
    expect(described.capabilities.web_search).toEqual({
      ...WEB_SEARCH_TOOL,
      allowed_domains: ["towers.example"],
      user_location: { type: "approximate", country: "AE" },
    });
    expect((await apiJson(`/v1/agents/${searcher}`, AgentSchema)).capabilities.web_search).toEqual(WEB_SEARCH_TOOL);
  });
});

describe("web search settings", () => {
  const base = { name: "searcher", systemPrompt: "Search." };
  const refused = (definition: Record<string, unknown>) => {
    const error = errorOf(() => parseDefinition({ ...base, ...definition } as Parameters<typeof parseDefinition>[0]));
    expect(error).toBeInstanceOf(ConfigError);
    return error.message;
  };

  it("turns search on with true or an object, and leaves it off with false or enabled: false", () => {
    const tool = (webSearch: unknown) => parseDefinition({ ...base, webSearch } as never).webSearch;
    expect(tool(true)).toEqual(WEB_SEARCH_TOOL);
    expect(tool({ max_uses: 3, blocked_domains: ["spam.example"] })).toEqual({
      ...WEB_SEARCH_TOOL,
      max_uses: 3,
      blocked_domains: ["spam.example"],
    });
    expect(tool(false)).toBeNull();
    expect(tool({ enabled: false, max_uses: 3 })).toBeNull();
    expect(parseDefinition({ ...base, webSearch: true }).allowedTools).toEqual(["WebSearch"]);
  });

  it("refuses search on another provider, both domain lists, and allowedTools that disagree with it", () => {
    expect(refused({ webSearch: true, llmConfig: { provider: "gemini" } })).toBe(
      `Agent "searcher": webSearch is Anthropic's server-side tool; this agent's provider is gemini.`,
    );
    expect(refused({ webSearch: { allowed_domains: ["a.example"], blocked_domains: ["b.example"] } })).toBe(
      `Agent "searcher": webSearch.allowed_domains and webSearch.blocked_domains cannot both be set (the API refuses it).`,
    );
    expect(refused({ webSearch: true, allowedTools: ["TodoWrite"] })).toBe(
      `Agent "searcher": webSearch is on but allowedTools does not list WebSearch: add it, or turn webSearch off.`,
    );
    expect(refused({ allowedTools: ["WebSearch"] })).toBe(
      `Agent "searcher": allowedTools lists WebSearch, which needs webSearch: true in the agent's definition.`,
    );
    expect(refused({ webSearch: true, toolPermissions: { WebSearch: "ask" } })).toBe(
      `Agent "searcher": toolPermissions.WebSearch: web search runs inside the model call, where no person can review it.`,
    );
    expect(refused({ webSearch: { max_uses: 0 } })).toBe(
      `Agent "searcher": webSearch.max_uses must be a positive integer.`,
    );
    expect(refused({ webSearch: "yes" })).toBe(
      `Agent "searcher": webSearch must be true, false or an object of web search settings.`,
    );
  });

  it("refuses search on a skill agent", () => {
    const error = errorOf(() => new SkillAgent({ ...base, webSearch: true }));
    expect(error.message).toBe(`Agent "searcher": webSearch is for agents of the default tool loop, not skill agents.`);
  });

  it("builds an agent file with claude.web_search: true, or its settings, and ignores it on another provider", () => {
    const minimal = "name: searcher\ninstructions: Search.\n";
    const on = parseAgentFile("agents/searcher.yaml", `${minimal}claude:\n  web_search: true\n`);
    expect(on.definition.webSearch).toBe(true);
    expect(parseDefinition(on.definition).webSearch).toEqual(WEB_SEARCH_TOOL);
    const limited = parseAgentFile("agents/searcher.yaml", `${minimal}claude:\n  web_search:\n    max_uses: 2\n`);
    expect(parseDefinition(limited.definition).webSearch).toEqual({ ...WEB_SEARCH_TOOL, max_uses: 2 });
    const gemini = parseAgentFile(
      "agents/searcher.yaml",
      `${minimal}model:\n  provider: gemini\nclaude:\n  web_search: true\n`,
    );
    expect(gemini.warnings).toEqual([
      "the claude: block applies to Anthropic agents only; this agent's provider is gemini, so it is ignored (rule 3).",
    ]);
    expect(parseDefinition(gemini.definition).webSearch).toBeNull();
    expect(
      errorOf(() => parseAgentFile("agents/searcher.yaml", `${minimal}claude:\n  web_search:\n    max_uses: 0\n`))
        .message,
    ).toBe("agents/searcher.yaml:5: claude.web_search.max_uses: must be a positive integer");
  });
});
