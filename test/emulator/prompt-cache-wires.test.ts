// Prompt caching on the emulator's other wires: Claude's breakpoints on Bedrock and Vertex (which refuse the
// request-level cache_control, Anthropic's alone), OpenAI's automatic caching (`cached_tokens` from 1,024 tokens in
// steps of 128, partitioned by prompt_cache_key), Gemini's implicit caching (`cachedContentTokenCount`); and what the
// stats record for the benchmark: usage as billed, prompt units, breakpoints, the minimum and the time to first token.
import { env } from "cloudflare:workers";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { TEST_AWS_ACCESS_KEY_ID, TEST_AWS_SECRET_ACCESS_KEY } from "../../emulator/credentials.ts";
import { accessToken, parseServiceAccount } from "../../src/llm/google-token.ts";
import { signRequest } from "../../src/llm/sigv4.ts";
import { outboundPolicy } from "../../src/net/outbound.ts";
import {
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

const openai = new OpenAI({
  apiKey: "test-prompt-cache",
  baseURL: `${emulatorUrl}/v1`,
  fetch: (input, init) => fetch(input, init),
  maxRetries: 0,
});

async function bedrock(body: Record<string, unknown>): Promise<[number, unknown]> {
  const url = new URL(`${emulatorUrl}/model/anthropic.claude-sonnet-4-6-v1%3A0/invoke`);
  const headers = new Headers({ "content-type": "application/json" });
  const text = JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 64, ...body });
  const credentials = { accessKeyId: TEST_AWS_ACCESS_KEY_ID, secretAccessKey: TEST_AWS_SECRET_ACCESS_KEY };
  await signRequest({ method: "POST", url, headers, body: text, region: "us-east-1", service: "bedrock", credentials });
  const res = await fetch(url, { method: "POST", headers, body: text });
  return [res.status, await res.json()];
}

async function vertex(body: Record<string, unknown>): Promise<[number, unknown]> {
  const secrets = env as unknown as Record<string, string | undefined>;
  const account = parseServiceAccount("TEST_VERTEX_CREDENTIALS", secrets.TEST_VERTEX_CREDENTIALS ?? "");
  const token = await accessToken(account, outboundPolicy("127.0.0.1"));
  const path = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-6:rawPredict";
  const res = await fetch(`${emulatorUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ anthropic_version: "vertex-2023-10-16", max_tokens: 64, ...body }),
  });
  return [res.status, await res.json()];
}

async function gemini(model: string, system: string, question: string): Promise<Record<string, number>> {
  const res = await fetch(`${emulatorUrl}/v1beta/models/${model}:generateContent`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "test-prompt-cache" },
    body: JSON.stringify({
      systemInstruction: { parts: [{ text: system }] },
      contents: [{ role: "user", parts: [{ text: question }] }],
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { usageMetadata: Record<string, number> }).usageMetadata;
}

describe("emulator: prompt caching on Bedrock and Vertex", () => {
  it("bills block-level breakpoints on Bedrock, with the model id normalised for its minimum", async () => {
    const match = uniqueMatch("bedrock");
    await billedScript(match);
    const system = [textBlock(filler("system", 1500), "5m")];
    const messages = [{ role: "user", content: `${match} go` }];
    const [, first] = await bedrock({ system, messages });
    const [, second] = await bedrock({ system, messages });
    const cached = sum(system);
    expect((first as { usage: object }).usage).toMatchObject({ cache_creation_input_tokens: cached });
    expect((second as { usage: object }).usage).toMatchObject({ cache_read_input_tokens: cached });
    expect((await statsOf(match)).map((record) => record.min_cacheable_tokens)).toEqual([1024, 1024]);
  });

  it("refuses the request-level cache_control on Bedrock and on Vertex", async () => {
    const body = { cache_control: { type: "ephemeral" }, messages: [{ role: "user", content: "hello" }] };
    const message = "cache_control: Extra inputs are not permitted";
    expect(await bedrock(body)).toEqual([400, { message }]);
    expect(await vertex(body)).toEqual([400, { type: "error", error: { type: "invalid_request_error", message } }]);
  });
});

describe("emulator: OpenAI's and Gemini's automatic prompt caching", () => {
  it("reports cached_tokens in steps of 128 from 1,024, for the longest prefix already seen", async () => {
    const match = uniqueMatch("openai");
    await billedScript(match);
    const system = { role: "system" as const, content: filler("system", 1500) };
    const ask = (question: string) => ({
      model: "gpt-5.2",
      messages: [system, { role: "user" as const, content: question }],
    });
    const usage = async (question: string) => (await openai.chat.completions.create(ask(question))).usage;
    const total = (question: string) => tokens(system) + tokens({ role: "user", content: question });
    const steps = (prefix: number) => Math.floor(prefix / 128) * 128;
    expect(await usage(`${match} one`)).toMatchObject({
      prompt_tokens: total(`${match} one`),
      prompt_tokens_details: { cached_tokens: 0 },
    });
    expect(await usage(`${match} one`)).toMatchObject({
      prompt_tokens: total(`${match} one`),
      prompt_tokens_details: { cached_tokens: steps(total(`${match} one`)) },
    });
    // Another question shares the system message only.
    expect(await usage(`${match} two`)).toMatchObject({
      prompt_tokens_details: { cached_tokens: steps(tokens(system)) },
    });
    expect(steps(tokens(system))).toBeGreaterThanOrEqual(1024);

    const short = { model: "gpt-5.2", messages: [{ role: "user" as const, content: `${match} short` }] };
    await openai.chat.completions.create(short);
    expect((await openai.chat.completions.create(short)).usage?.prompt_tokens_details?.cached_tokens).toBe(0);
  });

  it("keeps prompts of different prompt_cache_keys apart", async () => {
    const match = uniqueMatch("openai-key");
    await billedScript(match);
    const messages = [
      { role: "system" as const, content: filler("system", 1500) },
      { role: "user" as const, content: `${match} go` },
    ];
    const cached = async (key: string) =>
      (await openai.chat.completions.create({ model: "gpt-5.2", messages, prompt_cache_key: key })).usage
        ?.prompt_tokens_details?.cached_tokens;
    expect(await cached("tenant-a")).toBe(0);
    expect(await cached("tenant-b")).toBe(0);
    expect(await cached("tenant-a")).toBe(Math.floor(sum(messages) / 128) * 128);
  });

  it("reports Gemini's cachedContentTokenCount from the model's minimum", async () => {
    const match = uniqueMatch("gemini");
    await billedScript(match);
    const system = filler("system", 2500);
    const question = `${match} go`;
    const total = tokens({ text: system }) + tokens({ text: question });
    expect(await gemini("gemini-2.5-flash", system, question)).toEqual({
      promptTokenCount: total,
      candidatesTokenCount: 2,
      totalTokenCount: total + 2,
    });
    expect(await gemini("gemini-2.5-flash", system, question)).toMatchObject({
      promptTokenCount: total,
      cachedContentTokenCount: total,
    });
    // Gemini 3.5 Flash caches 4,096 tokens at least.
    await gemini("gemini-3.5-flash", system, question);
    expect(await gemini("gemini-3.5-flash", system, question)).not.toHaveProperty("cachedContentTokenCount");
  });
});

describe("emulator: what the stats record of billing", () => {
  it("records usage as billed, the prompt's units with prefix hashes, its breakpoints and the minimum", async () => {
    const match = uniqueMatch("stats");
    await billedScript(match);
    const client = anthropicClient();
    const system = [textBlock(filler("system", 1500), "1h")];
    const first = {
      model: "claude-sonnet-4-6",
      max_tokens: 64,
      system,
      messages: [{ role: "user" as const, content: `${match} go` }],
    };
    const reply = { role: "assistant" as const, content: "reply 0" };
    const second = { ...first, messages: [...first.messages, reply, { role: "user" as const, content: "more" }] };
    await client.messages.create(first);
    await client.messages.create(second);
    await openai.chat.completions.create({ model: "gpt-5.2", messages: [{ role: "user", content: `${match} hi` }] });
    const [one, two, three] = await statsOf(match);
    expect(one?.usage).toEqual({
      input_tokens: tokens(`${match} go`),
      output_tokens: 2,
      cache_creation_input_tokens: sum(system),
      cache_read_input_tokens: 0,
      cache_creation_5m_input_tokens: 0,
      cache_creation_1h_input_tokens: sum(system),
    });
    expect(one?.prompt_units.map((unit) => unit.tokens)).toEqual([sum(system), tokens(`${match} go`)]);
    expect(two?.prompt_units.map((unit) => unit.tokens)).toEqual([
      sum(system),
      tokens(`${match} go`),
      tokens("reply 0"),
      tokens("more"),
    ]);
    // The two prompts share their first two units, and hashes agree exactly there.
    expect(two?.prompt_units.slice(0, 2)).toEqual(one?.prompt_units);
    expect(new Set(two?.prompt_units.map((unit) => unit.prefix_hash)).size).toBe(4);
    expect([one?.breakpoints, two?.breakpoints, three?.breakpoints]).toEqual([[0], [0], []]);
    expect([one?.min_cacheable_tokens, three?.min_cacheable_tokens]).toEqual([1024, 1024]);
    expect(three?.provider).toBe("openai");
    expect(three?.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_1h_input_tokens: 0 });
  });

  it("adds the prefill of uncached input to the time to first token", async () => {
    const match = uniqueMatch("ttft");
    await billedScript(match, { ttft_ms: 5, prefill_ms_per_1k_tokens: 10 });
    const client = anthropicClient();
    const system = [textBlock(filler("system", 1500), "5m")];
    const params = {
      model: "claude-sonnet-4-6",
      max_tokens: 64,
      system,
      messages: [{ role: "user" as const, content: `${match} go` }],
    };
    await client.messages.create(params);
    await client.messages.create(params);
    const ttft = (uncached: number) => Math.round((5 + (uncached / 1000) * 10) * 100) / 100;
    const question = tokens(`${match} go`);
    // The first call processes (and writes) the system prompt; the second reads it.
    expect((await statsOf(match)).map((record) => record.ttft_ms)).toEqual([
      ttft(sum(system) + question),
      ttft(question),
    ]);

    const unbilled = uniqueMatch("ttft-unbilled");
    await billedScript(unbilled, { ttft_ms: 5, prompt_cache: false });
    await client.messages.create({ ...params, messages: [{ role: "user", content: `${unbilled} go` }] });
    expect((await statsOf(unbilled)).map((record) => record.ttft_ms)).toEqual([5]);
  });

  it("refuses a script whose prompt_cache is not a boolean, naming the field", async () => {
    const res = await fetch(`${emulatorUrl}/_emulator/scripts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ match: uniqueMatch("bad"), turns: [], prompt_cache: "yes" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "script.prompt_cache: must be a boolean (true or false)" },
    });
  });
});
