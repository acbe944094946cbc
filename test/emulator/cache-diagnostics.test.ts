// The emulator's cache diagnostics, as the Messages API gives them: a request naming the message that answered the
// previous one (`diagnostics.previous_message_id`) learns why its prompt could not reuse that request's prefix, in
// the SDK's CacheMissReason shapes, with the tokens that request had asked the cache to keep beyond the shared prefix.
import type Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { anthropicClient, billedScript, filler, sum, textBlock, tokens, uniqueMatch } from "./prompt-cache-support.ts";

const client = anthropicClient();

type Params = Anthropic.MessageCreateParamsNonStreaming;

function tool(name: string, description = filler(name, 300)): Anthropic.Tool {
  return { name, description, input_schema: { type: "object", properties: { query: { type: "string" } } } };
}

/**
 * A conversation's first call and its second (after the scripted reply "reply 0"), cached up to the last block by
 * the request-level cache_control; `total` is every token of the second's prompt, `tools` those of its tools.
 */
function conversation(match: string) {
  const tools = [tool("search"), tool("fetch")];
  const system = [textBlock(filler("system", 1200))];
  const first: Params = {
    model: "claude-sonnet-4-6",
    max_tokens: 64,
    tools,
    system,
    cache_control: { type: "ephemeral" },
    messages: [{ role: "user", content: `${match} first question` }],
  };
  const second: Params = {
    ...first,
    messages: [...first.messages, { role: "assistant", content: "reply 0" }, { role: "user", content: "and then?" }],
  };
  const total = sum([...tools, ...system, ...second.messages.map((message) => message.content)]);
  return { first, second, total, tools: sum(tools), system: sum(system) };
}

describe("emulator: cache diagnostics", () => {
  it("answers null when the named request's prefix was reused, or when there is none to compare", async () => {
    const match = uniqueMatch("diag-null");
    await billedScript(match);
    const { first, second, tools, system } = conversation(match);
    const opened = await client.messages.create({ ...first, diagnostics: { previous_message_id: null } });
    expect(opened.diagnostics).toBeNull();
    const next = await client.messages.create({ ...second, diagnostics: { previous_message_id: opened.id } });
    expect(next.diagnostics).toBeNull();
    // The second call read all of the first's prompt.
    expect(next.usage.cache_read_input_tokens).toBe(tools + system + tokens(first.messages[0]?.content));
  });

  it("names what changed since the named request, with the tokens it had cached beyond the shared prefix", async () => {
    const match = uniqueMatch("diag-reasons");
    await billedScript(match);
    const { first, second, total, tools, system } = conversation(match);
    await client.messages.create(first);
    const base = await client.messages.create(second);
    /** The diagnostics of `variant` against `base`, re-sent first so that its message id names `second` again. */
    const against = async (variant: Params) => {
      await client.messages.create(second);
      return (await client.messages.create({ ...variant, diagnostics: { previous_message_id: base.id } })).diagnostics;
    };
    const edited = second.messages.map((message, at) =>
      at === 0 ? { ...message, content: `${message.content} (edited)` } : message,
    );
    expect(await against({ ...second, messages: edited })).toEqual({
      cache_miss_reason: { type: "messages_changed", cache_missed_input_tokens: total - tools - system },
    });
    expect(await against({ ...second, system: [textBlock(filler("other system", 1200))] })).toEqual({
      cache_miss_reason: { type: "system_changed", cache_missed_input_tokens: total - tools },
    });
    const retooled = [tool("search", "Searches the web."), tool("fetch")];
    expect(await against({ ...second, tools: retooled })).toEqual({
      cache_miss_reason: { type: "tools_changed", cache_missed_input_tokens: total },
    });
    expect(await against({ ...second, model: "claude-opus-4-8" })).toEqual({
      cache_miss_reason: { type: "model_changed", cache_missed_input_tokens: total },
    });
    expect(await against({ ...second, tool_choice: { type: "any" } })).toEqual({
      cache_miss_reason: { type: "unavailable" },
    });
  });

  it("answers previous_message_not_found for an id it never sent, or another credential's", async () => {
    const match = uniqueMatch("diag-not-found");
    await billedScript(match);
    const { first, second } = conversation(match);
    const unknown = await client.messages.create({ ...first, diagnostics: { previous_message_id: "msg_emu_unknown" } });
    expect(unknown.diagnostics).toEqual({ cache_miss_reason: { type: "previous_message_not_found" } });
    const other = anthropicClient("test-prompt-cache-other-key");
    const theirs = await other.messages.create(first);
    const mine = await client.messages.create({ ...second, diagnostics: { previous_message_id: theirs.id } });
    expect(mine.diagnostics).toEqual({ cache_miss_reason: { type: "previous_message_not_found" } });
  });

  it("carries the diagnostics in a stream's message_start", async () => {
    const match = uniqueMatch("diag-stream");
    await billedScript(match);
    const { first, second, total, tools } = conversation(match);
    const opened = await client.messages.create(first);
    const events: Anthropic.RawMessageStreamEvent[] = [];
    const changed = { ...second, system: [textBlock(filler("another system", 1200))] };
    for await (const event of client.messages.stream({ ...changed, diagnostics: { previous_message_id: opened.id } })) {
      events.push(structuredClone(event));
    }
    const start = events.find((event) => event.type === "message_start");
    // The first call had cached its whole prompt: all of it but the tools is missed.
    const cached = total - tokens("reply 0") - tokens("and then?");
    expect(start?.message.diagnostics).toEqual({
      cache_miss_reason: { type: "system_changed", cache_missed_input_tokens: cached - tools },
    });
  });
});
