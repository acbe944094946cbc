// What a run costs with prompt caching (issue 33, docs/costs.md), against the emulator billing as the providers do
// (its scripts' prompt_cache: docs/development/emulator.md): each call reads what the one before it wrote, a second
// task reads its agent's prefix, the 1-hour TTL is priced apart, OpenAI's and Gemini's cached tokens are cache reads,
// and a miss comes back with the provider's reason in the call's event.

import { env } from "cloudflare:workers";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { Agent, type AgentDefinition } from "../../src/agents/agent.ts";
import { registry } from "../../src/agents/catalog.ts";
import type { AgentContext } from "../../src/agents/context.ts";
import { type AgentResult, successResult } from "../../src/agents/result.ts";
import { costOf, DEFAULT_PRICES } from "../../src/config/prices.ts";
import type { CallUsage } from "../../src/contracts/usage.ts";
import {
  api,
  done,
  events,
  ofType,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const emulator = env.ANTHROPIC_BASE_URL as string;
const MODEL = "claude-sonnet-5-5";

/** A system prompt of about 1,200 tokens (the emulator counts 4 bytes a token), opening with the test's marker. */
function longPrompt(marker: string): string {
  const rules = Array.from({ length: 40 }, (_, i) => `Rule ${i + 1}: plan before acting, and say what you changed.`);
  return [`You plan work ${marker}.`, ...rules, ...rules].join("\n");
}

let agents = 0;

/** Registers an agent with a long system prompt, as an author writes one. */
function agentWith(systemPrompt: string, definition: Omit<AgentDefinition, "name" | "systemPrompt">): string {
  const name = `cache_agent_${++agents}`;
  registry.register(
    name,
    class extends Agent {
      constructor() {
        super({ name, systemPrompt, maxTurns: 4, allowedTools: ["TodoWrite"], ...definition });
      }
    },
  );
  return name;
}

/** The usage of each of a task's model calls, in order, from its llm_response_received events. */
async function calls(id: string): Promise<CallUsage[]> {
  return ofType(await events(id), "llm_response_received").map((e) => (e.payload.meta as { usage: CallUsage }).usage);
}

const twoTools = [
  { content: [toolUse("TodoWrite", { todos: [{ content: "a", status: "pending" }] })] },
  { content: [toolUse("TodoWrite", { todos: [{ content: "a", status: "completed" }] })] },
  done,
];

describe("a run's cost with prompt caching", () => {
  it("reads at each call what the call before it wrote, and a second task reads its agent's prefix", async () => {
    const marker = uniqueMarker("billed");
    await script(marker, twoTools, { prompt_cache: true, min_cacheable_tokens: 1024 });
    const agent = agentWith(longPrompt(marker), {});
    const first = await startTask(agent, "Plan the move.");
    expect((await waitForTask(first.id)).status).toBe("completed");
    const [one, two, three] = await calls(first.id);
    // Each prompt is cached to its end: nothing is plain input.
    for (const call of [one, two, three]) expect(call?.input_tokens).toBe(0);
    expect(one?.cache_read_input_tokens).toBe(0);
    expect(one?.cache_creation_input_tokens).toBeGreaterThan(1024);
    expect(two?.cache_read_input_tokens).toBe(one?.cache_creation_input_tokens);
    expect(two?.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(three?.cache_read_input_tokens).toBe(
      (two?.cache_read_input_tokens ?? 0) + (two?.cache_creation_input_tokens ?? 0),
    );
    const task = await waitForTask(first.id);
    const cost = [one, two, three].reduce(
      (sum, call) => sum + (costOf(DEFAULT_PRICES, MODEL, call as CallUsage) ?? 0),
      0,
    );
    expect(task.usage.total_cost_usd).toBeCloseTo(cost, 9);
    for (const call of [one, two, three]) expect(call?.cost_usd).toBe(costOf(DEFAULT_PRICES, MODEL, call as CallUsage));
    // The run bundle says how the input was billed.
    const { cache_creation_input_tokens: writes, cache_read_input_tokens: reads } = task.usage;
    const share = Math.round((100 * reads) / (writes + reads));
    const summary = await (await api(`/v1/tasks/${first.id}/artifacts/final_summary.md`)).text();
    expect(summary).toContain(
      `\n- Input tokens: 0 plain, ${writes} cache write, ${reads} cache read (cache ${share}%)\n`,
    );

    // The same agent's next task: its first call reads the tools and the system prompt, written by the first task.
    const second = await startTask(agent, "Plan the party, which is another task entirely.");
    expect((await waitForTask(second.id)).status).toBe("completed");
    const [next] = await calls(second.id);
    expect(next?.cache_read_input_tokens).toBeGreaterThan(1024);
    expect(next?.cache_read_input_tokens).toBeLessThan(one?.cache_creation_input_tokens ?? 0);
    expect((next?.cache_read_input_tokens ?? 0) + (next?.cache_creation_input_tokens ?? 0)).toBeGreaterThan(
      one?.cache_creation_input_tokens ?? 0,
    );
  });

  it("bills every input token in full when the agent turns caching off, at several times the cost", async () => {
    const marker = uniqueMarker("uncached");
    await script(marker, twoTools, { prompt_cache: true, min_cacheable_tokens: 1024 });
    const cached = agentWith(longPrompt(marker), {});
    const uncached = agentWith(longPrompt(marker), { promptCache: false });
    const a = await startTask(cached, "Plan the move.");
    await waitForTask(a.id);
    const b = await startTask(uncached, "Plan the move.");
    const task = await waitForTask(b.id);
    for (const call of await calls(b.id)) {
      expect(call).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
      expect(call.input_tokens).toBeGreaterThan(1024);
    }
    const withCache = (await waitForTask(a.id)).usage.total_cost_usd ?? 0;
    expect(task.usage.total_cost_usd ?? 0).toBeGreaterThan(1.5 * withCache);
  });

  it("counts 1-hour writes apart and prices them at twice the input price", async () => {
    const marker = uniqueMarker("hour");
    await script(marker, [done], { prompt_cache: true, min_cacheable_tokens: 1024 });
    const agent = agentWith(longPrompt(marker), { promptCache: { ttl: "1h" } });
    const task = await waitForTask((await startTask(agent, "Plan the move.")).id);
    const writes = task.usage.cache_creation_input_tokens;
    expect(writes).toBeGreaterThan(1024);
    expect(task.usage.cache_creation_1h_input_tokens).toBe(writes);
    const price = DEFAULT_PRICES[MODEL];
    const expected = (writes * (price?.input ?? 0) * 2 + task.usage.output_tokens * (price?.output ?? 0)) / 1e6;
    expect(task.usage.total_cost_usd).toBeCloseTo(expected, 9);
  });
});

/** Claude on each host Outpost serves it from, with the test deployment's credentials (test/llm/auth-providers.test.ts). */
const claudeHosts = [
  ["anthropic", { provider: "anthropic", auth_provider: "oauth_token", oauth_token: "TEST_OAUTH_TOKEN" }],
  [
    "bedrock",
    {
      provider: "anthropic",
      auth_provider: "bedrock",
      endpoint: emulator,
      bedrock: {
        region: "us-east-1",
        access_key_id: "TEST_AWS_ACCESS_KEY_ID",
        secret_access_key: "TEST_AWS_SECRET_ACCESS_KEY",
      },
    },
  ],
  [
    "vertex",
    {
      provider: "anthropic",
      auth_provider: "vertex",
      endpoint: emulator,
      vertex: { region: "us-east5", credentials: "TEST_VERTEX_CREDENTIALS" },
    },
  ],
  [
    "foundry",
    {
      provider: "anthropic",
      auth_provider: "foundry",
      endpoint: `${emulator}/anthropic`,
      foundry: { api_key: "TEST_FOUNDRY_KEY" },
    },
  ],
] as const;

describe.each(claudeHosts)("Claude on %s", (host, llmConfig) => {
  it("takes the breakpoints and bills the previous call's prompt as cache reads", async () => {
    const marker = uniqueMarker(`host-${host}`);
    await script(marker, twoTools, { prompt_cache: true, min_cacheable_tokens: 1024 });
    const agent = agentWith(longPrompt(marker), { llmConfig });
    const task = await waitForTask((await startTask(agent, "Plan the move.")).id);
    expect(task.status).toBe("completed");
    const [one, two] = await calls(task.id);
    expect(one?.cache_creation_input_tokens).toBeGreaterThan(1024);
    expect(two?.cache_read_input_tokens).toBe(one?.cache_creation_input_tokens);
    expect(task.usage.cache_read_input_tokens).toBeGreaterThan(2 * 1024);
  });
});

const otherProviders = [
  ["openai_compatible", { provider: "openai_compatible", endpoint: `${emulator}/v1`, api_key: "TEST_OPENAI_KEY" }],
  ["gemini", { provider: "gemini", endpoint: emulator, api_key: "TEST_GEMINI_KEY" }],
] as const;

describe.each(otherProviders)("an agent on %s", (name, llmConfig) => {
  it("counts the tokens the provider read from its cache as cache reads, not plain input", async () => {
    const marker = uniqueMarker(`cached-${name}`);
    await script(marker, twoTools, { prompt_cache: true, min_cacheable_tokens: 1024 });
    const agent = agentWith(longPrompt(marker), { llmConfig });
    const task = await waitForTask((await startTask(agent, "Plan the move.")).id);
    expect(task.status).toBe("completed");
    const [one, two] = await calls(task.id);
    expect(one).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    // The second call's prompt starts with the first's: the provider read most of it from its cache.
    expect(two?.cache_read_input_tokens).toBeGreaterThan(1024);
    expect(two?.input_tokens).toBeLessThan(two?.cache_read_input_tokens ?? 0);
    expect((two?.input_tokens ?? 0) + (two?.cache_read_input_tokens ?? 0)).toBeGreaterThan(one?.input_tokens ?? 0);
    if (name === "openai_compatible") expect((two?.cache_read_input_tokens ?? 0) % 128).toBe(0);
    expect(task.usage.cache_read_input_tokens).toBeGreaterThan(1024);
  });
});

describe("a cache miss", () => {
  it("comes back with the provider's reason in the call's event", async () => {
    const marker = uniqueMarker("miss");
    await script(marker, [done, done], { prompt_cache: true, min_cacheable_tokens: 1024 });
    const prompt = longPrompt(marker);
    const name = `cache_miss_agent_${++agents}`;
    // A custom agent that changes its system prompt between two calls, as one that puts the time in it would.
    registry.register(
      name,
      class extends Agent {
        constructor() {
          super({ name, systemPrompt: prompt });
        }
        override async execute(context: AgentContext): Promise<AgentResult> {
          const messages: MessageParam[] = [{ role: "user", content: context.input }];
          for (const [turn, system] of [prompt, `${prompt}\nIt is now later.`].entries()) {
            const request = this.requestFor(context, messages, system, []);
            for await (const _item of context.runtime.streamModel(request, { turnIndex: turn + 1 })) {
              // Each call is recorded as it streams; nothing to read here.
            }
          }
          return successResult("done", context.runtime.usage());
        }
      },
    );
    const task = await waitForTask((await startTask(name, "Twice, please.")).id);
    expect(task.status).toBe("completed");
    const metas = ofType(await events(task.id), "llm_response_received").map((e) => e.payload.meta as object);
    expect(metas[0]).not.toHaveProperty("cache_miss_reason");
    expect(metas[1]).toMatchObject({
      cache_miss_reason: { type: "system_changed", cache_missed_input_tokens: expect.any(Number) },
    });
    const [, second] = await calls(task.id);
    expect(second?.cache_read_input_tokens).toBe(0);
  });
});
