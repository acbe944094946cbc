// The emulator's web search (emulator/web-search.ts) seen through the official Anthropic SDK from inside workerd, and
// as raw SSE frames: a scripted search streams as the API's server_tool_use and web_search_tool_result blocks, cited
// text as citations_delta events, usage counts the searches, pause_turn is a stop reason, and the API's refusals
// (the tool not offered, both domain lists, a result sent back altered) are 400 invalid_request_error. Every test
// owns a unique `match` string: all test files share one emulator.
import { env } from "cloudflare:workers";
import Anthropic, { BadRequestError } from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";

const baseURL = env.ANTHROPIC_BASE_URL ?? "";
const client = new Anthropic({ apiKey: "test", baseURL, fetch: (input, init) => fetch(input, init), maxRetries: 0 });

const WEB_SEARCH = { type: "web_search_20250305", name: "web_search" } as const;

function uniqueMatch(label: string): string {
  return `emu-ws-${label}-${crypto.randomUUID()}`;
}

async function registerScript(script: Record<string, unknown>): Promise<Response> {
  return fetch(`${baseURL}/_emulator/scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(script),
  });
}

function ask(match: string, extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) {
  return {
    model: "emu-model",
    max_tokens: 256,
    messages: [{ role: "user" as const, content: `${match} go` }],
    tools: [WEB_SEARCH],
    ...extra,
  } satisfies Anthropic.MessageCreateParamsNonStreaming;
}

async function rawFrames(body: Record<string, unknown>): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const response = await fetch(`${baseURL}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "whatever" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((frame) => {
      const [eventLine = "", dataLine = ""] = frame.split("\n");
      return { event: eventLine.slice("event: ".length), data: JSON.parse(dataLine.slice("data: ".length)) };
    });
}

const searchTurn = {
  content: [
    { type: "text", text: "Searching." },
    {
      type: "web_search",
      query: "tallest tower",
      results: [
        { url: "https://towers.example/burj", title: "Burj Khalifa", page_age: "2 days ago" },
        { url: "https://towers.example/list", title: "Tallest towers" },
      ],
    },
    { type: "text", text: "The tallest is " },
    {
      type: "text",
      text: "Burj Khalifa",
      citations: [{ url: "https://towers.example/burj", title: "Burj Khalifa", cited_text: "Burj Khalifa is 828 m" }],
    },
  ],
};

describe("emulator: web search", () => {
  it("streams a search, its results and a cited passage as the Messages API does, and counts the search", async () => {
    const match = uniqueMatch("stream");
    expect((await registerScript({ match, turns: [searchTurn] })).status).toBe(201);

    const frames = await rawFrames(ask(match));
    const starts = frames.filter((f) => f.event === "content_block_start").map((f) => f.data.content_block);
    const serverToolUse = starts[1] as { id: string };
    expect(serverToolUse.id).toMatch(/^srvtoolu_emu_[0-9a-f]{24}$/);
    expect(starts).toEqual([
      { type: "text", text: "" },
      { type: "server_tool_use", id: serverToolUse.id, name: "web_search", input: {}, caller: { type: "direct" } },
      {
        type: "web_search_tool_result",
        tool_use_id: serverToolUse.id,
        content: [
          {
            type: "web_search_result",
            title: "Burj Khalifa",
            url: "https://towers.example/burj",
            encrypted_content: expect.stringMatching(/^enc_emu_/),
            page_age: "2 days ago",
          },
          {
            type: "web_search_result",
            title: "Tallest towers",
            url: "https://towers.example/list",
            encrypted_content: expect.stringMatching(/^enc_emu_/),
            page_age: null,
          },
        ],
        caller: { type: "direct" },
      },
      { type: "text", text: "" },
      { type: "text", text: "", citations: [] },
    ]);
    const deltasOf = (index: number) =>
      frames.filter((f) => f.event === "content_block_delta" && f.data.index === index).map((f) => f.data.delta);
    expect(
      deltasOf(1)
        .map((d) => (d as { partial_json: string }).partial_json)
        .join(""),
    ).toBe('{"query":"tallest tower"}');
    expect(deltasOf(2)).toEqual([]);
    expect(deltasOf(4)).toEqual([
      {
        type: "citations_delta",
        citation: {
          type: "web_search_result_location",
          cited_text: "Burj Khalifa is 828 m",
          url: "https://towers.example/burj",
          title: "Burj Khalifa",
          encrypted_index: expect.stringMatching(/^idx_emu_/),
        },
      },
      { type: "text_delta", text: "Burj " },
      { type: "text_delta", text: "Khalifa" },
    ]);
    expect(frames.at(-2)?.data).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 10, server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 } },
    });
    // The searches are counted once the reply is done, not in message_start.
    const start = frames[0]?.data.message as { usage: object } | undefined;
    expect(start?.usage).not.toHaveProperty("server_tool_use");

    // The SDK assembles the same blocks, streamed or not.
    const streamed = await client.messages.stream(ask(match)).finalMessage();
    const created = await client.messages.create(ask(match));
    expect(created.content).toEqual(streamed.content);
    expect(created.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
    expect(streamed.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
    expect(streamed.content.map((b) => b.type)).toEqual([
      "text",
      "server_tool_use",
      "web_search_tool_result",
      "text",
      "text",
    ]);
    expect(streamed.content[1]).toMatchObject({ input: { query: "tallest tower" } });
  });

  it("answers a search with the API's error_code, and searches past max_uses with max_uses_exceeded", async () => {
    const match = uniqueMatch("errors");
    const search = (query: string) => ({
      type: "web_search",
      query,
      results: [{ url: "https://a.example", title: "A" }],
    });
    await registerScript({
      match,
      turns: [
        {
          content: [
            { type: "web_search", query: "busy", error_code: "too_many_requests" },
            search("one"),
            search("two"),
            { type: "text", text: "Done." },
          ],
        },
      ],
    });
    const message = await client.messages.create(ask(match, { tools: [{ ...WEB_SEARCH, max_uses: 2 }] }));
    const results = message.content.filter((b) => b.type === "web_search_tool_result").map((b) => b.content);
    expect(results[0]).toEqual({ type: "web_search_tool_result_error", error_code: "too_many_requests" });
    expect(Array.isArray(results[1])).toBe(true);
    expect(results[2]).toEqual({ type: "web_search_tool_result_error", error_code: "max_uses_exceeded" });
    // Only the search that ran is a request: the error and the one refused for max_uses are not.
    expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1, web_fetch_requests: 0 });
  });

  it("refuses a scripted search when the request does not offer the web_search tool", async () => {
    const match = uniqueMatch("not-offered");
    await registerScript({ match, turns: [searchTurn] });
    const error = await client.messages.create(ask(match, { tools: [] })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).error).toEqual({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: `tools: emulator script "${match}" turn 0 searches the web or cites a search, but the request does not offer the web_search tool`,
      },
    });
  });

  it("refuses a web_search tool with both allowed_domains and blocked_domains, as the API does", async () => {
    const tools = [{ ...WEB_SEARCH, allowed_domains: ["a.example"], blocked_domains: ["b.example"] }];
    const error = await client.messages.create(ask(uniqueMatch("domains"), { tools })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message).toContain(
      "tools.0: cannot specify both allowed_domains and blocked_domains",
    );
  });

  it("takes the reply back unchanged in the next request, and refuses a result or citation altered", async () => {
    const match = uniqueMatch("send-back");
    await registerScript({ match, turns: [searchTurn, { content: [{ type: "text", text: "Anything else?" }] }] });
    const first = await client.messages.create(ask(match));
    const next = (content: Anthropic.ContentBlockParam[]) =>
      client.messages.create(
        ask(match, {
          messages: [
            { role: "user", content: `${match} go` },
            { role: "assistant", content },
            { role: "user", content: "thanks" },
          ],
        }),
      );
    const asSent = first.content as unknown as Anthropic.ContentBlockParam[];
    expect((await next(asSent)).content).toEqual([{ type: "text", text: "Anything else?" }]);

    const altered = structuredClone(asSent) as unknown as Record<string, unknown>[];
    const result = altered[2] as { content: { encrypted_content: string }[] };
    (result.content[0] as { encrypted_content: string }).encrypted_content = "tampered";
    const error = await next(altered as unknown as Anthropic.ContentBlockParam[]).catch((e: unknown) => e);
    expect((error as BadRequestError).message).toContain(
      "messages.1.content.2.content.0.encrypted_content: invalid encrypted content",
    );

    const uncited = structuredClone(asSent) as unknown as Record<string, unknown>[];
    const cited = uncited[4] as { citations: { encrypted_index: string }[] };
    (cited.citations[0] as { encrypted_index: string }).encrypted_index = "tampered";
    const citationError = await next(uncited as unknown as Anthropic.ContentBlockParam[]).catch((e: unknown) => e);
    expect((citationError as BadRequestError).message).toContain(
      "messages.1.content.4.citations.0.encrypted_index: invalid encrypted index",
    );
  });

  it("stops with pause_turn when scripted, and counts a continuation joined onto the paused reply as a turn", async () => {
    const match = uniqueMatch("pause");
    await registerScript({
      match,
      turns: [
        { content: [{ type: "web_search", query: "q", results: [] }], stop_reason: "pause_turn" },
        { content: [{ type: "text", text: "Continued." }] },
        { content: [{ type: "text", text: "Third." }] },
      ],
    });
    const paused = await client.messages.create(ask(match));
    expect(paused.stop_reason).toBe("pause_turn");
    const sentBack = paused.content as unknown as Anthropic.ContentBlockParam[];
    // The paused reply goes back as the last message: the API continues it (turn 1).
    const continued = await client.messages.create(
      ask(match, {
        messages: [
          { role: "user", content: `${match} go` },
          { role: "assistant", content: sentBack },
        ],
      }),
    );
    expect(continued.content).toEqual([{ type: "text", text: "Continued." }]);
    // The client joins the continuation onto the paused reply: one assistant message holding two replies (turn 2).
    const third = await client.messages.create(
      ask(match, {
        messages: [
          { role: "user", content: `${match} go` },
          { role: "assistant", content: [...sentBack, { type: "text", text: "Continued." }] },
          { role: "user", content: "more" },
        ],
      }),
    );
    expect(third.content).toEqual([{ type: "text", text: "Third." }]);
  });

  it("refuses scripts whose web_search or citations are malformed", async () => {
    const cases: [unknown, string][] = [
      [{ type: "web_search", query: "" }, "turns.0.content.0.query: must be a non-empty string"],
      [{ type: "web_search", query: "q" }, "turns.0.content.0.results: must be an array (or give error_code)"],
      [{ type: "web_search", query: "q", error_code: "nope" }, "turns.0.content.0.error_code: must be one of"],
      [{ type: "web_search", query: "q", results: [{ url: "u" }] }, "turns.0.content.0.results.0: must be an object"],
      [{ type: "text", text: "t", citations: [] }, "turns.0.content.0.citations: must be a non-empty array"],
    ];
    for (const [block, message] of cases) {
      const response = await registerScript({ match: uniqueMatch("bad"), turns: [{ content: [block] }] });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { type: string; message: string } };
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.message).toContain(message);
    }
  });
});
