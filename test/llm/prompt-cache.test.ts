// Prompt caching as Outpost asks for it (issue 33, docs/costs.md): where the breakpoints go in a request, what an
// agent's prompt_cache changes, and that the cached prefix is the same bytes for every task of an agent and across
// an eviction. What the provider bills for it is test/llm/prompt-cache-billing.test.ts.

import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { parseAgentFile } from "../../src/agents/agent-file.ts";
import { parseDefinition } from "../../src/agents/definition.ts";
import { ConfigError } from "../../src/errors.ts";
import { CheckpointListSchema, TaskResourceSchema } from "../../src/http/responses.ts";
import { toChatRequest } from "../../src/llm/openai-compatible.ts";
import {
  promptCacheKey,
  promptCacheKeyOf,
  sendsCacheKey,
  withCacheBreakpoints,
  withPromptCacheKey,
} from "../../src/llm/prompt-cache.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  errorOf,
  modelRequest,
  parseBody,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "../support/helpers.ts";

const FIVE_MINUTES = { type: "ephemeral" };
const ONE_HOUR = { type: "ephemeral", ttl: "1h" };

const request = (messages: MessageParam[]): MessageCreateParamsBase => ({
  model: "claude-sonnet-5-5",
  max_tokens: 100,
  system: "You help.",
  messages,
  tools: [{ name: "Read", description: "Reads.", input_schema: { type: "object" } }],
});

const use = (id: string) => ({ type: "tool_use" as const, id, name: "Read", input: {} });
const result = (id: string) => ({ type: "tool_result" as const, tool_use_id: id, content: "text" });

/** Where a request's breakpoints are: "system", or "<message index>.<block index>", each with its cache_control. */
function breakpoints(params: MessageCreateParamsBase): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  const system = Array.isArray(params.system) ? params.system : [];
  for (const block of system) if (block.cache_control) found.system = block.cache_control;
  params.messages.forEach((message, m) => {
    if (typeof message.content === "string") return;
    message.content.forEach((block, b) => {
      const control = (block as { cache_control?: unknown }).cache_control;
      if (control) found[`${m}.${b}`] = control;
    });
  });
  for (const tool of params.tools ?? []) if ("cache_control" in tool && tool.cache_control) found.tools = true;
  return found;
}

/** A request's JSON without its cache markers: the bytes a provider's cache keys on. */
function unmarked(value: unknown): string {
  return JSON.stringify(value, (key, item) => (key === "cache_control" ? undefined : item));
}

describe("cache breakpoints", () => {
  it("marks the system prompt and the end of the prompt on a run's first call", () => {
    const marked = withCacheBreakpoints(request([{ role: "user", content: "Hello" }]), "5m");
    expect(breakpoints(marked)).toStrictEqual({ system: FIVE_MINUTES, "0.0": FIVE_MINUTES });
    expect(marked.system).toStrictEqual([{ type: "text", text: "You help.", cache_control: FIVE_MINUTES }]);
    expect(marked.messages).toStrictEqual([
      { role: "user", content: [{ type: "text", text: "Hello", cache_control: FIVE_MINUTES }] },
    ]);
  });

  it("marks the end of the previous call's prompt and of this one, however many blocks a turn added", () => {
    const calls = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"];
    const params = request([
      { role: "user", content: "Read them all." },
      { role: "assistant", content: [use("first")] },
      { role: "user", content: [result("first")] },
      { role: "assistant", content: [{ type: "text", text: "Now twelve at once." }, ...calls.map(use)] },
      { role: "user", content: calls.map(result) },
    ]);
    const marked = withCacheBreakpoints(params, "1h");
    // Three of the API's four: the previous write is read at its own breakpoint, 24 blocks back.
    expect(breakpoints(marked)).toStrictEqual({ system: ONE_HOUR, "2.0": ONE_HOUR, "4.11": ONE_HOUR });
    const [first, ...rest] = params.messages;
    expect(unmarked(marked)).toBe(
      unmarked({
        ...params,
        system: [{ type: "text", text: "You help." }],
        messages: [{ role: "user", content: [{ type: "text", text: first?.content }] }, ...rest],
      }),
    );
  });

  it("leaves the caller's request and conversation as they were", () => {
    const messages: MessageParam[] = [{ role: "user", content: [{ type: "text", text: "Hi" }] }];
    const params = request(messages);
    const before = JSON.stringify(params);
    withCacheBreakpoints(params, "5m");
    expect(JSON.stringify(params)).toBe(before);
  });

  it("puts no breakpoint on a thinking block or an empty text, nor on a paused reply sent back as it came", () => {
    const marked = withCacheBreakpoints(
      request([
        {
          role: "user",
          content: [
            { type: "text", text: "Go" },
            { type: "text", text: "" },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm", signature: "sig" },
            { type: "text", text: "Searching." },
          ],
        },
      ]),
      "5m",
    );
    expect(breakpoints(marked)).toStrictEqual({ system: FIVE_MINUTES, "0.0": FIVE_MINUTES });
    expect(marked.messages[1]?.content).toStrictEqual([
      { type: "thinking", thinking: "hmm", signature: "sig" },
      { type: "text", text: "Searching." },
    ]);
  });

  it("adds none to a request that places its own, so the API's limit of four holds", () => {
    const own = request([
      { role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral", ttl: "1h" } }] },
    ]);
    expect(withCacheBreakpoints(own, "5m")).toBe(own);
    const tools = { ...request([{ role: "user", content: "Hi" }]) };
    tools.tools = [{ name: "Read", input_schema: { type: "object" }, cache_control: { type: "ephemeral" } }];
    expect(withCacheBreakpoints(tools, "5m")).toBe(tools);
  });

  it("leaves an empty system prompt as it came", () => {
    const marked = withCacheBreakpoints({ ...request([{ role: "user", content: "Hi" }]), system: "" }, "5m");
    expect(marked.system).toBe("");
    expect(breakpoints(marked)).toStrictEqual({ "0.0": FIVE_MINUTES });
  });
});

describe("an agent's prompt_cache", () => {
  it("is on with 5-minute writes unless the agent says, in a class or a file", () => {
    expect(parseDefinition({ name: "a", systemPrompt: "x" }).promptCache).toStrictEqual({
      ttl: "5m",
      cacheKey: undefined,
    });
    expect(parseDefinition({ name: "a", systemPrompt: "x", promptCache: false }).promptCache).toBeNull();
    const file = parseAgentFile("agents/a.yaml", "name: a\ninstructions: x\nprompt_cache:\n  ttl: 1h\n");
    expect(parseDefinition(file.definition).promptCache).toStrictEqual({ ttl: "1h", cacheKey: undefined });
  });

  it("refuses a TTL the providers do not take, naming the key", () => {
    const error = errorOf(() => parseDefinition({ name: "a", systemPrompt: "x", promptCache: { ttl: "2h" as "1h" } }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe('Agent "a": promptCache.ttl: must be "5m" or "1h".');
    const file = errorOf(() => parseAgentFile("agents/a.yaml", "name: a\ninstructions: x\nprompt_cache: on\n"));
    expect(file.message).toContain("prompt_cache");
  });

  it("sends each call's breakpoints with the agent's TTL, or none when caching is off", async () => {
    const marker = uniqueMarker("cache-ttl");
    await script(marker, [{ content: [toolUse("TodoWrite", { todos: [] })] }, done]);
    const hour = defineAgent({ allowedTools: ["TodoWrite"], promptCache: { ttl: "1h" } });
    const off = defineAgent({ allowedTools: ["TodoWrite"], promptCache: false });
    const [a, b] = await Promise.all([startTask(hour, `plan ${marker}`), startTask(off, `plan ${marker} off`)]);
    await Promise.all([waitForTask(a.id), waitForTask(b.id)]);
    const second = (await modelRequest(a.id, 2)) as unknown as MessageCreateParamsBase;
    expect(breakpoints(second)).toStrictEqual({ system: ONE_HOUR, "0.0": ONE_HOUR, "2.0": ONE_HOUR });
    const uncached = (await modelRequest(b.id, 2)) as unknown as MessageCreateParamsBase;
    expect(breakpoints(uncached)).toStrictEqual({});
    expect(uncached.system).toBe("You use tools.");
  });
});

describe("the cached prefix", () => {
  it("is the same bytes, tools and system prompt, for every task of an agent", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite", "Read", "Glob"], fileSystem: { read: true } });
    const one = uniqueMarker("prefix-one");
    const two = uniqueMarker("prefix-two");
    for (const marker of [one, two]) await script(marker, [done]);
    const tasks = await Promise.all([startTask(agent, `a ${one}`), startTask(agent, `b ${two}`)]);
    await Promise.all(tasks.map((task) => waitForTask(task.id)));
    const [first, second] = await Promise.all(tasks.map((task) => modelRequest(task.id, 1)));
    const prefix = (r: unknown) =>
      JSON.stringify([(r as MessageCreateParamsBase).tools, (r as MessageCreateParamsBase).system]);
    expect(prefix(second)).toBe(prefix(first));
    expect(second?.tools?.map((tool) => tool.name)).toStrictEqual(["TodoWrite", "Read", "Glob"]);
  });

  it("is the same bytes after an eviction: the next call's prompt starts with the previous call's", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"] });
    const marker = uniqueMarker("prefix-evicted");
    await script(marker, [
      { content: [{ type: "text", text: "First." }, toolUse("TodoWrite", { todos: [] })] },
      { content: [toolUse("TodoWrite", { todos: [{ content: "b", status: "pending" }] })] },
      done,
    ]);
    const task = await startTask(agent, `plan ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "tool_call_completed");
    // The instance that made the first call is gone: the rest of the run is built from storage.
    await abortAllDurableObjects();
    expect((await waitForTask(task.id)).status).toBe("completed");
    const calls = (await Promise.all(
      [1, 2, 3].map((turn) => modelRequest(task.id, turn)),
    )) as unknown as MessageCreateParamsBase[];
    for (const [earlier, later] of [
      [calls[0], calls[1]],
      [calls[1], calls[2]],
    ] as const) {
      const sent = unmarked(earlier?.messages);
      expect(unmarked(later?.messages.slice(0, earlier?.messages.length))).toBe(sent);
      expect(unmarked([later?.tools, later?.system])).toBe(unmarked([earlier?.tools, earlier?.system]));
    }
  });

  it("is the same bytes in a fork: its first call sends what its origin's call from that checkpoint sent", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"] });
    const marker = uniqueMarker("prefix-fork");
    await script(marker, [{ content: [toolUse("TodoWrite", { todos: [] })] }, done]);
    const task = await startTask(agent, `plan ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const list = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    const at = list.checkpoints.find((c) => c.position === "turn_1_tools");
    const body = JSON.stringify({ checkpoint_id: at?.checkpoint_id });
    const forked = await parseBody(
      await api(`/v1/tasks/${task.id}/fork`, { method: "POST", body }),
      TaskResourceSchema,
    );
    expect((await waitForTask(forked.id)).status).toBe("completed");
    const [origin, copy] = await Promise.all([modelRequest(task.id, 2), modelRequest(forked.id, 2)]);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(origin));
  });
});

describe("OpenAI's prompt_cache_key", () => {
  it("is one per tenant, agent and version, and never the names themselves", async () => {
    const key = await promptCacheKey("acme", "support", 3);
    expect(key).toMatch(/^outpost-[0-9a-f]{32}$/);
    expect(await promptCacheKey("acme", "support", 3)).toBe(key);
    const others = await Promise.all([
      promptCacheKey("globex", "support", 3),
      promptCacheKey("acme", "support", 4),
      promptCacheKey("acme", "triage", 3),
      promptCacheKey("acme", "support", null),
    ]);
    expect(new Set([key, ...others]).size).toBe(5);
  });

  it("goes to OpenAI itself, and to another compatible server only when the agent asks", () => {
    const on = { ttl: "5m" as const, cacheKey: undefined };
    expect(sendsCacheKey(on, "https://api.openai.com/v1")).toBe(true);
    expect(sendsCacheKey(on, "https://llm.example/v1")).toBe(false);
    expect(sendsCacheKey({ ...on, cacheKey: true }, "https://llm.example/v1")).toBe(true);
    expect(sendsCacheKey({ ...on, cacheKey: false }, "https://api.openai.com/v1")).toBe(false);
    expect(sendsCacheKey(null, "https://api.openai.com/v1")).toBe(false);
  });

  it("is in an OpenAI-compatible agent's requests when it asks, and in no other's", async () => {
    const marker = uniqueMarker("cache-key");
    await script(marker, [done]);
    const llmConfig = {
      provider: "openai_compatible" as const,
      endpoint: `${env.ANTHROPIC_BASE_URL}/v1`,
      api_key: "TEST_OPENAI_KEY",
    };
    const asks = defineAgent({ llmConfig, promptCache: { ttl: "5m", cache_key: true } });
    const quiet = defineAgent({ llmConfig });
    const claude = defineAgent({ promptCache: { ttl: "5m", cache_key: true } });
    const tasks = await Promise.all([asks, quiet, claude].map((agent) => startTask(agent, `hi ${marker}`)));
    await Promise.all(tasks.map((task) => waitForTask(task.id)));
    const [sent, none, anthropic] = (await Promise.all(tasks.map((task) => modelRequest(task.id, 1)))) as unknown as {
      prompt_cache_key?: string;
    }[];
    expect(sent?.prompt_cache_key).toBe(await promptCacheKey("default", asks, null));
    expect(none).not.toHaveProperty("prompt_cache_key");
    expect(anthropic).not.toHaveProperty("prompt_cache_key");
  });

  it("is sent as prompt_cache_key, and the breakpoints are not sent at all", () => {
    const params = withPromptCacheKey(
      withCacheBreakpoints(request([{ role: "user", content: "Hi" }]), "5m"),
      "outpost-0123",
    );
    expect(promptCacheKeyOf(params)).toBe("outpost-0123");
    const chat = toChatRequest(params);
    expect(chat.prompt_cache_key).toBe("outpost-0123");
    expect(JSON.stringify(chat)).not.toContain("cache_control");
    expect(chat.messages).toStrictEqual([
      { role: "system", content: "You help." },
      { role: "user", content: "Hi" },
    ]);
    expect(toChatRequest(request([{ role: "user", content: "Hi" }])).prompt_cache_key).toBeUndefined();
  });
});
