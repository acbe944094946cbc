// Agents on other model providers (seed 002 ProviderName, seed 003 LLMConfig): an OpenAI-compatible endpoint and
// Gemini, each the emulator speaking that provider's wire format to the official client, through a whole tool-using
// run over HTTP; and the configuration errors a developer or operator can make.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { registry } from "../../src/agents/catalog.ts";
import { SkillAgent } from "../../src/agents/skill-agent.ts";
import { ConfigError } from "../../src/errors.ts";
import { toGeminiRequest } from "../../src/llm/gemini-request.ts";
import { toChatRequest } from "../../src/llm/openai-compatible.ts";
import {
  api,
  defineAgent,
  events,
  ofType,
  pendingRequestId,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const emulator = env.ANTHROPIC_BASE_URL as string;

const providers = [
  ["openai_compatible", { provider: "openai_compatible", endpoint: `${emulator}/v1`, api_key: "TEST_OPENAI_KEY" }],
  ["gemini", { provider: "gemini", endpoint: emulator, api_key: "TEST_GEMINI_KEY" }],
] as const;

describe.each(providers)("an agent on %s", (name, llmConfig) => {
  it("runs a tool-using task to the end, with usage and the provider on record", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], llmConfig });
    const marker = uniqueMarker(`provider-${name}`);
    await script(marker, [
      {
        content: [
          { type: "text", text: "Planning." },
          toolUse("TodoWrite", { todos: [{ content: "Pack food", status: "pending" }] }),
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 120, output_tokens: 30 },
      },
      { content: [{ type: "text", text: `Packed (${name}).` }], usage: { input_tokens: 200, output_tokens: 10 } },
    ]);
    const task = await startTask(agent, `plan ${marker}`);
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    expect(finished.result).toBe(`Packed (${name}).`);
    expect(finished.usage).toMatchObject({ model_calls: 2, input_tokens: 320, output_tokens: 40 });
    const log = await events(task.id);
    expect(ofType(log, "run_started")[0]?.payload.provider).toBe(name);
    expect(ofType(log, "llm_request_sent").map((e) => e.payload.provider)).toEqual([name, name]);
    expect(ofType(log, "todo_list_updated")[0]?.payload.todos).toEqual([{ content: "Pack food", status: "pending" }]);
    // Token deltas reach the event stream in the Messages API shape, whatever the provider.
    expect(
      ofType(log, "llm_text_delta")
        .map((e) => e.payload.text)
        .join(""),
    ).toContain("Packed");
  });

  it("gives a call whose id the provider repeats an id of its own, so a decision on one never answers the other", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual", llmConfig });
    const marker = uniqueMarker(`provider-ids-${name}`);
    const todo = (content: string) => ({
      ...toolUse("TodoWrite", { todos: [{ content, status: "pending" }] }),
      id: "call_0",
    });
    await script(marker, [
      { content: [todo("Read the logs")], stop_reason: "tool_use" },
      { content: [todo("Delete the database")], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Done." }] },
    ]);
    const task = await startTask(agent, `ops ${marker}`);
    const first = await waitForTask(task.id);
    const firstId = pendingRequestId(first);
    expect(firstId).toBe("call_0");
    const approve = JSON.stringify({ request_id: firstId, action: "approve" });
    expect((await api(`/v1/tasks/${task.id}/resume`, { method: "POST", body: approve })).status).toBe(200);
    // The second call, sent with the same id, waits for a decision of its own.
    let second = await waitForTask(task.id);
    for (let i = 0; i < 100 && second.status === "running"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      second = await waitForTask(task.id);
    }
    expect(second.status).toBe("input_required");
    expect(second.pending_input).toMatchObject({ input: { todos: [{ content: "Delete the database" }] } });
    const secondId = pendingRequestId(second);
    expect(secondId).not.toBe(firstId);
    const reject = JSON.stringify({ request_id: secondId, action: "reject" });
    expect((await api(`/v1/tasks/${task.id}/resume`, { method: "POST", body: reject })).status).toBe(200);
    expect((await waitForTask(task.id)).status).toBe("completed");
    expect(ofType(await events(task.id), "todo_list_updated").map((e) => e.payload.todos)).toEqual([
      [{ content: "Read the logs", status: "pending" }],
    ]);
  });

  it("fails the run with the provider's error mapped onto the hierarchy", async () => {
    const agent = defineAgent({ llmConfig });
    const marker = uniqueMarker(`provider-fault-${name}`);
    await script(marker, [{ content: [{ type: "text", text: "x" }], faults: [{ kind: "http", status: 400 }] }]);
    const finished = await waitForTask((await startTask(agent, `fail ${marker}`)).id);
    expect(finished.status).toBe("failed");
    expect(finished.error).toMatchObject({ code: "provider_rejected_request", retryable: false });
  });
});

describe.each(providers)("a skill agent on %s", (name, llmConfig) => {
  it("decides, reads a skill, and synthesizes its answer through the provider", async () => {
    const agent = `skills_on_${name}_${crypto.randomUUID().slice(0, 6)}`;
    registry.register(
      agent,
      class extends SkillAgent {
        constructor() {
          super({ name: agent, systemPrompt: "You help.", llmConfig, skills: ["incident-triage"] });
        }
      },
    );
    const marker = uniqueMarker(`skills-${name}`);
    const decision = (value: unknown) => ({ content: [{ type: "text" as const, text: JSON.stringify(value) }] });
    await script(marker, [
      decision({
        selected_skill: "incident-triage",
        planned_actions: [{ type: "call_skill", params: { skill_name: "incident-triage" } }],
      }),
      decision({ planned_actions: [{ type: "finish", params: { result: "SEV2" } }] }),
      { content: [{ type: "text", text: `SEV2 via ${name}: page the on-call engineer.` }] },
    ]);
    const task = await waitForTask((await startTask(agent, `Checkout is down ${marker}`)).id);
    expect(task.status).toBe("completed");
    expect(task.result).toBe(`SEV2 via ${name}: page the on-call engineer.`);
    const log = await events(task.id);
    expect(ofType(log, "skill_disclosure_loaded")[0]?.payload.paths).toEqual(["incident-triage/SKILL.md"]);
    expect(ofType(log, "llm_request_sent").map((e) => [e.payload.provider, e.payload.call_site])).toEqual([
      [name, "decision_loop"],
      [name, "decision_loop"],
      [name, "final_answer_synthesis"],
    ]);
  });
});

describe("provider configuration", () => {
  it("fails a run whose provider key secret is not set, naming the secret", async () => {
    const agent = defineAgent({
      llmConfig: { provider: "openai_compatible", endpoint: `${emulator}/v1`, api_key: "NO_SUCH_KEY" },
    });
    const finished = await waitForTask((await startTask(agent, "hello")).id);
    expect(finished.status).toBe("failed");
    expect(finished.error).toMatchObject({ code: "provider_not_configured" });
    expect(finished.error?.message).toContain("NO_SUCH_KEY");
  });

  it("refuses a private endpoint the operator has not allowed", async () => {
    const agent = defineAgent({
      llmConfig: { provider: "openai_compatible", endpoint: "http://10.1.2.3/v1", api_key: "TEST_OPENAI_KEY" },
    });
    const finished = await waitForTask((await startTask(agent, "hello")).id);
    expect(finished.status).toBe("failed");
    expect(finished.error?.code).toBe("url_not_allowed");
  });

  it("refuses bad llmConfig when the agent is defined", () => {
    class Bad extends Agent {}
    const make = (llmConfig: unknown) => () =>
      new Bad({ name: "bad_llm", systemPrompt: "x", llmConfig: llmConfig as never });
    expect(make({ provider: "mistral" })).toThrow(/llmConfig\.provider/);
    expect(make({ provider: "openai_compatible" })).toThrow(/endpoint is required/);
    expect(make({ provider: "gemini", api_key: "sk-live-123" })).toThrow(/NAME of a Worker secret/);
    expect(make({ provider: "gemini", api_key: "OUTPOST_API_KEYS" })).toThrow(/Outpost's own secrets/);
    expect(make({ provider: "gemini", extra: 1 })).toThrow(ConfigError);
  });

  it("sends the agent's temperature to the providers that take one, and refuses it on an Anthropic agent", async () => {
    class Tempered extends Agent {}
    const make = (extra: Record<string, unknown>) => () =>
      new Tempered({ name: "tempered", systemPrompt: "x", ...extra });
    // Anthropic's current Messages API answers 400 to any sampling parameter, so the definition is refused.
    expect(make({ temperature: 0.3 })).toThrow(/temperature is not taken by Anthropic's models/);
    expect(make({ temperature: 2.5, llmConfig: providers[0][1] })).toThrow(/temperature must be at most 2/);
    expect(make({ temperature: -1, llmConfig: providers[1][1] })).toThrow(/temperature must be at least 0/);
    const agent = make({ temperature: 1.5, role: "planner of picnics", llmConfig: providers[0][1] })();
    expect([agent.temperature, agent.role]).toEqual([1.5, "planner of picnics"]);

    // Over the wire of each provider, and through a whole run against the emulator.
    const params = {
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user" as const, content: "hi" }],
      temperature: 1.5,
    };
    expect(toChatRequest(params)).toMatchObject({ temperature: 1.5 });
    expect(toGeminiRequest(params, { signal: new AbortController().signal }).config).toMatchObject({
      temperature: 1.5,
    });
    const { temperature: _temperature, ...untempered } = params;
    expect(toChatRequest(untempered)).not.toHaveProperty("temperature");
    expect(toGeminiRequest(untempered, { signal: new AbortController().signal }).config).not.toHaveProperty(
      "temperature",
    );
    for (const [name, llmConfig] of providers) {
      const tempered = defineAgent({ llmConfig, temperature: 0.2, role: "tester" });
      const marker = uniqueMarker(`temperature-${name}`);
      await script(marker, [{ content: [{ type: "text", text: "Cool." }] }]);
      const task = await startTask(tempered, `hi ${marker}`);
      expect((await waitForTask(task.id)).status).toBe("completed");
      const request = await api(`/v1/tasks/${task.id}/artifacts`);
      const listed = (await request.json()) as { artifacts: { path: string }[] };
      const sent = listed.artifacts.find((a) => a.path.endsWith("_request.json") || a.path.endsWith("_request.txt"));
      expect(sent).toBeDefined();
      const body = JSON.parse(await (await api(`/v1/tasks/${task.id}/artifacts/${sent?.path}`)).text()) as Record<
        string,
        unknown
      >;
      expect(body.temperature).toBe(0.2);
      const described = (await (await api(`/v1/agents/${tempered}`)).json()) as Record<string, unknown>;
      expect([described.temperature, described.role]).toEqual([0.2, "tester"]);
    }
  });

  it("translates a Messages API request into Chat Completions", () => {
    const request = toChatRequest({
      model: "gpt-x",
      max_tokens: 100,
      system: "Be brief.",
      messages: [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Calling." },
            { type: "tool_use", id: "call_1", name: "TodoWrite", input: { todos: [] } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: "ok", is_error: false },
            { type: "text", text: "And now?" },
          ],
        },
      ],
      tools: [{ name: "TodoWrite", description: "todo", input_schema: { type: "object", properties: {} } }],
    });
    expect(request).toEqual({
      model: "gpt-x",
      max_completion_tokens: 100,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: "Calling.",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "TodoWrite", arguments: '{"todos":[]}' } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "ok" },
        { role: "user", content: "And now?" },
      ],
      tools: [
        {
          type: "function",
          function: { name: "TodoWrite", description: "todo", parameters: { type: "object", properties: {} } },
        },
      ],
    });
  });
});
