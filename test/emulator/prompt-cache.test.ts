// The emulator bills prompt caching as Anthropic's Messages API does, seen through the official SDK from inside
// workerd: breakpoints write and read prefixes, the 20-block lookback, the model's minimum cacheable length, TTLs
// aged by the emulator's cache clock, the 1h/5m split, the API's 400s, partitions per credential, and the cache
// diagnostics. Every script opts in (prompt_cache: true) and so has a cache partition of its own: files run in
// parallel against one emulator, and a script without it keeps today's numbers.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import {
  advance,
  anthropicClient,
  billedScript,
  emulatorUrl,
  filler,
  statsOf,
  sum,
  textBlock,
  tokens,
  uniqueMatch,
} from "./prompt-cache-support.ts";

const client = anthropicClient();
const MODEL = "claude-sonnet-4-6"; // 1,024 tokens at least are cached
const MINUTE = 60_000;

type Params = Anthropic.MessageCreateParamsNonStreaming;

/** A cached system prompt of about 1,500 tokens and a short question carrying the marker. */
function request(match: string, ttl: "5m" | "1h" = "5m"): Params {
  return {
    model: MODEL,
    max_tokens: 64,
    system: [textBlock(filler("system", 1500), ttl)],
    messages: [{ role: "user", content: `${match} what now?` }],
  };
}

function usageOf(message: Anthropic.Message) {
  const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, cache_creation } = message.usage;
  return { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, cache_creation };
}

function billed(input: number, written: number, read: number, written1h = 0) {
  return {
    input_tokens: input,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
    cache_creation: { ephemeral_5m_input_tokens: written - written1h, ephemeral_1h_input_tokens: written1h },
  };
}

async function errorOf(body: Record<string, unknown>): Promise<[number, unknown]> {
  const res = await fetch(`${emulatorUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "test-prompt-cache" },
    body: JSON.stringify(body),
  });
  return [res.status, await res.json()];
}

describe("emulator: Anthropic prompt caching", () => {
  it("writes a breakpoint's prefix on the first call and reads it on the second", async () => {
    const match = uniqueMatch("write-read");
    await billedScript(match);
    const params = request(match);
    const system = sum(params.system as unknown[]);
    const question = tokens(params.messages[0]?.content);
    expect(usageOf(await client.messages.create(params))).toEqual(billed(question, system, 0));
    expect(usageOf(await client.messages.create(params))).toEqual(billed(question, 0, system));
  });

  it("streams the input side of usage in message_start and the running totals in message_delta", async () => {
    const match = uniqueMatch("stream");
    await billedScript(match);
    const params = request(match);
    const system = sum(params.system as unknown[]);
    const question = tokens(params.messages[0]?.content);
    await client.messages.create(params);
    const events: Anthropic.RawMessageStreamEvent[] = [];
    // Copies: the SDK's stream goes on to update the message it started with.
    for await (const event of client.messages.stream(params)) events.push(structuredClone(event));
    const start = events.find((event) => event.type === "message_start");
    const delta = events.find((event) => event.type === "message_delta");
    expect(start?.message.usage).toMatchObject({ ...billed(question, 0, system), output_tokens: 1 });
    expect(delta?.usage).toEqual({
      input_tokens: question,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: system,
      output_tokens: 2,
    });
  });

  it("reads a prefix at the 20th block boundary a breakpoint checks (its own first), not at the 21st", async () => {
    // A cached system block, then 25 small blocks in one message: the system block is unit 0, block k is unit k+1.
    const blocks = (match: string) =>
      Array.from({ length: 25 }, (_, k) => textBlock(`${k === 0 ? match : ""} part ${k}`));
    const system = [textBlock(filler("system", 1200))];
    const ask = (match: string, breakpointAt: number | null): Params => ({
      model: MODEL,
      max_tokens: 64,
      system: breakpointAt === null ? [textBlock(filler("system", 1200), "5m")] : system,
      messages: [
        {
          role: "user",
          content: blocks(match).map((block, k) =>
            k + 1 === breakpointAt ? { ...block, cache_control: { type: "ephemeral" } } : block,
          ),
        },
      ],
    });
    const units = (match: string) => [...system, ...blocks(match)];
    const upTo = (match: string, unit: number) => sum(units(match).slice(0, unit + 1));
    const all = (match: string) => sum(units(match));

    const within = uniqueMatch("lookback-19");
    await billedScript(within);
    await client.messages.create(ask(within, null));
    // The breakpoint on unit 19 checks units 19, 18, … 0: the 20th boundary is the system block's.
    expect(usageOf(await client.messages.create(ask(within, 19)))).toEqual(
      billed(all(within) - upTo(within, 19), upTo(within, 19) - upTo(within, 0), upTo(within, 0)),
    );

    const beyond = uniqueMatch("lookback-20");
    await billedScript(beyond);
    await client.messages.create(ask(beyond, null));
    // The breakpoint on unit 20 checks units 20 … 1 and stops: the system block's prefix is not found.
    expect(usageOf(await client.messages.create(ask(beyond, 20)))).toEqual(
      billed(all(beyond) - upTo(beyond, 20), upTo(beyond, 20), 0),
    );
  });

  it("neither writes nor reads a prefix shorter than the model's minimum, which a script may lower", async () => {
    const match = uniqueMatch("minimum");
    await billedScript(match);
    // Claude Haiku 4.5 caches 4,096 tokens at least: a 3,000-token system prompt is plain input, every time.
    const params = { ...request(match), model: "claude-haiku-4-5", system: [textBlock(filler("system", 3000), "5m")] };
    const all = sum([...params.system, params.messages[0]?.content]);
    expect(usageOf(await client.messages.create(params))).toEqual(billed(all, 0, 0));
    expect(usageOf(await client.messages.create(params))).toEqual(billed(all, 0, 0));

    const lowered = uniqueMatch("minimum-lowered");
    await billedScript(lowered, { min_cacheable_tokens: 2000 });
    const again = { ...params, messages: [{ role: "user" as const, content: `${lowered} what now?` }] };
    const system = sum(params.system);
    const question = tokens(again.messages[0]?.content);
    expect(usageOf(await client.messages.create(again))).toEqual(billed(question, system, 0));
    expect((await statsOf(match)).map((record) => record.min_cacheable_tokens)).toEqual([4096, 4096]);
    expect((await statsOf(lowered)).map((record) => record.min_cacheable_tokens)).toEqual([2000]);
  });

  it("expires an entry 5 minutes after its write or last read, on the emulator's cache clock", async () => {
    const match = uniqueMatch("ttl");
    await billedScript(match);
    const params = request(match);
    const system = sum(params.system as unknown[]);
    // Later calls ask other questions with a breakpoint of their own: they read the system prompt's entry through
    // the lookback, which refreshes it, and write entries nothing reads again.
    const ask = (question: string): Params => ({
      ...params,
      system: [textBlock(filler("system", 1500))],
      messages: [{ role: "user", content: [textBlock(`${match} ${question}`, "5m")] }],
    });
    const question = (text: string) => tokens(textBlock(`${match} ${text}`));
    await client.messages.create(params);
    expect(await advance(4 * MINUTE, match)).toEqual({ match, ms: 4 * MINUTE, partitions: 1, entries: 1, expired: 0 });
    expect(usageOf(await client.messages.create(ask("two")))).toEqual(billed(0, question("two"), system));
    // 8 minutes after the write, 4 after the read that refreshed it.
    await advance(4 * MINUTE, match);
    expect(usageOf(await client.messages.create(ask("three")))).toEqual(billed(0, question("three"), system));
    expect(await advance(5 * MINUTE, match)).toEqual({ match, ms: 5 * MINUTE, partitions: 1, entries: 3, expired: 3 });
    expect(usageOf(await client.messages.create(ask("four")))).toEqual(billed(0, system + question("four"), 0));
  });

  it("splits writes by TTL, and keeps a 1h entry that outlives the 5m one after it", async () => {
    const match = uniqueMatch("ttl-split");
    await billedScript(match);
    const tool = (name: string, cached: boolean): Anthropic.Tool => ({
      name,
      description: filler(name, 600),
      input_schema: { type: "object", properties: { query: { type: "string" } } },
      ...(cached ? { cache_control: { type: "ephemeral" as const, ttl: "1h" as const } } : {}),
    });
    const tools = [tool("search", false), tool("fetch", true)];
    const params: Params = { ...request(match), system: [textBlock(filler("system", 700), "5m")], tools };
    const long = sum(tools);
    const short = sum(params.system as unknown[]);
    const question = tokens(params.messages[0]?.content);
    expect(usageOf(await client.messages.create(params))).toEqual(billed(question, long + short, 0, long));
    await advance(10 * MINUTE, match);
    expect(usageOf(await client.messages.create(params))).toEqual(billed(question, short, long));
  });

  it("refuses a fifth breakpoint, and a 1h breakpoint after a 5m one, in the API's words", async () => {
    const five = Array.from({ length: 5 }, (_, k) => textBlock(`part ${k}`, "5m"));
    expect(await errorOf({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: five }] })).toEqual([
      400,
      {
        type: "error",
        error: {
          type: "invalid_request_error",
          message: "A maximum of 4 blocks with cache_control may be provided. Found 5.",
        },
      },
    ]);
    const system = [textBlock("You are terse.", "5m")];
    const messages = [{ role: "user", content: [textBlock("hello", "1h")] }];
    expect(await errorOf({ model: MODEL, max_tokens: 8, system, messages })).toEqual([
      400,
      {
        type: "error",
        error: {
          type: "invalid_request_error",
          message:
            "messages.0.content.0.cache_control.ttl: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.",
        },
      },
    ]);
  });

  it("caches up to the last block under the request-level cache_control", async () => {
    const match = uniqueMatch("automatic");
    await billedScript(match);
    const params: Params = {
      ...request(match),
      system: [textBlock(filler("system", 1500))],
      cache_control: { type: "ephemeral" },
    };
    const all = sum([...(params.system as unknown[]), params.messages[0]?.content]);
    expect(usageOf(await client.messages.create(params))).toEqual(billed(0, all, 0));
    expect(usageOf(await client.messages.create(params))).toEqual(billed(0, 0, all));
    expect((await statsOf(match)).map((record) => record.breakpoints)).toEqual([[1], [1]]);
  });

  it("keeps each credential's cache apart", async () => {
    const match = uniqueMatch("credentials");
    await billedScript(match);
    const params = request(match);
    const system = sum(params.system as unknown[]);
    const question = tokens(params.messages[0]?.content);
    const other = anthropicClient("test-prompt-cache-other-key");
    expect(usageOf(await client.messages.create(params))).toEqual(billed(question, system, 0));
    expect(usageOf(await other.messages.create(params))).toEqual(billed(question, system, 0));
    expect(usageOf(await client.messages.create(params))).toEqual(billed(question, 0, system));
  });

  it("gives a script without prompt_cache today's usage, breakpoints or not", async () => {
    const match = uniqueMatch("opt-out");
    const res = await fetch(`${emulatorUrl}/_emulator/scripts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ match, turns: [{ content: [{ type: "text", text: "one two" }] }] }),
    });
    expect(res.status).toBe(201);
    const params = request(match);
    const { system, messages } = params;
    const today = {
      input_tokens: Math.ceil(JSON.stringify({ system, messages }).length / 4),
      output_tokens: 2,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    expect((await client.messages.create(params)).usage).toEqual(today);
    expect((await client.messages.create(params)).usage).toEqual(today);
  });
});
