// The Messages API's explicit compaction (beta compact-2026-09-04) as the emulator plays it (emulator/compaction.ts):
// a request with `compaction: {type: "summarize"}` answered with one signed compaction block (stop_reason compaction,
// streamed as the API streams it), its tokens reported as a compaction iteration and zero at the top level, taking no
// turn of its script but admitted and billed like any request; the block sent back first in place of the messages it
// summarizes, the turn then counted from its summary; and the API's refusals (the beta missing, a block misplaced or
// altered). Seen through the official Anthropic SDK and raw from inside workerd; every test owns a unique marker.
import { BadRequestError } from "@anthropic-ai/sdk";
import type { BetaMessage, BetaMessageParam } from "@anthropic-ai/sdk/resources/beta/messages";
import { describe, expect, it } from "vitest";
import { anthropic, emulatorUrl, rejection, script, statsOf, uniqueMarker } from "./conditions-support.ts";

const BETA = "compact-2026-09-04";
const BASE = { model: "emu-model", max_tokens: 256 };

type Block = { type: "compaction"; content: string; encrypted_content: null; signature: string };

/** One text reply per turn: first, second, third, fourth. */
function replies(marker: string, conditions: Record<string, unknown> = {}): Promise<void> {
  const texts = ["first", "second", "third", "fourth"];
  return script(
    marker,
    conditions,
    texts.map((text) => ({ content: [{ type: "text", text }] })),
  );
}

/** The conversation's start before any compaction: the task, the first reply, and a user message after it. */
function conversation(marker: string): BetaMessageParam[] {
  return [
    { role: "user", content: `${marker} do the thing` },
    { role: "assistant", content: "first" },
    { role: "user", content: "go on" },
  ];
}

function compact(messages: BetaMessageParam[], extra: Record<string, unknown> = {}): Promise<BetaMessage> {
  return anthropic.beta.messages.create({
    ...BASE,
    messages,
    compaction: { type: "summarize" },
    betas: [BETA],
    ...extra,
  });
}

async function reply(messages: BetaMessageParam[]): Promise<string> {
  const message = await anthropic.beta.messages.create({ ...BASE, messages, betas: [BETA] });
  return message.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
}

/** The compaction block of a compaction request's answer. */
function blockOf(message: BetaMessage): Block {
  expect(message.content).toHaveLength(1);
  return message.content[0] as never;
}

/** The invalid_request_error message a request was refused with (400). */
async function refused(promise: Promise<unknown>): Promise<string> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(BadRequestError);
  const { status, error: body } = error as BadRequestError;
  expect(status).toBe(400);
  const { type, error: inner } = body as { type: string; error: { type: string; message: string } };
  expect(type).toBe("error");
  expect(inner.type).toBe("invalid_request_error");
  return inner.message;
}

/** What the summary of `text` says, by the convention of emulator/summarize.ts (start and end quoted past 320). */
function summaryOf(turns: number, text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const quoted = flat.length <= 320 ? flat : `${flat.slice(0, 160)} … ${flat.slice(-160)}`;
  return `Summary of ${turns} agent turns (${flat.length} characters): ${quoted}`;
}

/** The emulator's token estimate of a prompt without caching: the JSON of what the model reads over 4. */
function estimate(messages: BetaMessageParam[]): number {
  return Math.ceil(JSON.stringify({ messages }).length / 4);
}

/** The emulator's output tokens for a text: its words. */
function words(text: string): number {
  return text.trim().split(/\s+/).length;
}

describe("the compaction request", () => {
  it("is answered with one signed compaction block, its tokens in the iteration, and takes no turn", async () => {
    const marker = uniqueMarker("compact");
    await replies(marker);
    const messages = conversation(marker);
    const answer = await compact(messages);
    const content = summaryOf(1, `${marker} do the thing\nfirst\ngo on`);
    expect(answer.content).toEqual([
      {
        type: "compaction",
        content,
        encrypted_content: null,
        signature: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      },
    ]);
    expect(answer.stop_reason).toBe("compaction");
    expect(answer.stop_sequence).toBeNull();
    const iteration = {
      type: "compaction",
      input_tokens: estimate(messages),
      output_tokens: words(content),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    };
    expect(answer.usage).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      iterations: [iteration],
    });
    // Deterministic: the same conversation compacts to the very same block.
    expect(blockOf(await compact(messages))).toEqual(blockOf(answer));
    // The script's next turn is still the second.
    expect(await reply(messages)).toBe("second");
    const records = (await statsOf(marker)).requests;
    expect(records.map((record) => [record.status, record.turn])).toEqual([
      [200, 1],
      [200, 1],
      [200, 1],
    ]);
    // The stats bill the iteration's tokens once, as billed.
    const { type: _type, cache_creation: _creation, ...counts } = iteration;
    expect(records[0]?.usage).toEqual({
      ...counts,
      cache_creation_5m_input_tokens: 0,
      cache_creation_1h_input_tokens: 0,
    });
  });

  it("streams the block as the API does: its summary in one compaction_delta, then its signature", async () => {
    const marker = uniqueMarker("stream");
    await replies(marker);
    const messages = conversation(marker);
    const whole = blockOf(await compact(messages));
    const response = await fetch(`${emulatorUrl}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "test", "anthropic-beta": `foo-2025-01-01,${BETA}` },
      body: JSON.stringify({
        model: "emu-model",
        max_tokens: 256,
        messages,
        compaction: { type: "summarize" },
        stream: true,
      }),
    });
    expect(response.status).toBe(200);
    const text = await response.text();
    const events = text
      .trim()
      .split("\n\n")
      .map((frame) => {
        const [, event = "", data = ""] = /^event: (.+)\ndata: (.+)$/.exec(frame) ?? [];
        const parsed = JSON.parse(data) as { type: string };
        expect(parsed.type).toBe(event);
        return parsed as Record<string, unknown>;
      });
    const zeros = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const iteration = {
      type: "compaction",
      ...zeros,
      input_tokens: estimate(messages),
      output_tokens: words(whole.content),
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    };
    expect(events).toEqual([
      {
        type: "message_start",
        message: {
          id: expect.stringMatching(/^msg_emu_/),
          type: "message",
          role: "assistant",
          model: "emu-model",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          diagnostics: null,
          usage: zeros,
        },
      },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "compaction", content: null, encrypted_content: null },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "compaction_delta", content: whole.content, encrypted_content: null },
      },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: whole.signature } },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: "compaction", stop_sequence: null },
        usage: { ...zeros, iterations: [iteration] },
      },
      { type: "message_stop" },
    ]);
  });

  it("needs the beta, type summarize, and no context_management", async () => {
    const marker = uniqueMarker("refused");
    await replies(marker);
    const body = { ...BASE, messages: conversation(marker) };
    expect(await refused(anthropic.beta.messages.create({ ...body, compaction: { type: "summarize" } }))).toBe(
      "compaction: Extra inputs are not permitted",
    );
    expect(await refused(compact(body.messages, { compaction: { type: "shorten" } }))).toBe(
      "compaction.type: Input should be 'summarize'",
    );
    expect(await refused(compact(body.messages, { context_management: { edits: [] } }))).toBe(
      "compaction: cannot be combined with context_management",
    );
    // None of them reached the script: its next turn is still the second.
    expect(await reply(body.messages)).toBe("second");
    expect((await statsOf(marker)).requests.map((record) => [record.status, record.turn])).toEqual([[200, 1]]);
  });

  it("is billed by the prompt cache as the same prompt would be, and refused past the model's window", async () => {
    const marker = uniqueMarker("billed");
    await replies(marker, { prompt_cache: true, min_cacheable_tokens: 16 });
    const cached: BetaMessageParam[] = [
      { role: "user", content: [{ type: "text", text: `${marker} ${"context ".repeat(40)}` }] },
      { role: "assistant", content: "first" },
      { role: "user", content: [{ type: "text", text: "go on", cache_control: { type: "ephemeral" } }] },
    ];
    const answer = await compact(cached);
    const [iteration] = answer.usage.iterations ?? [];
    expect(answer.usage).toMatchObject({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    // Top-level cache_creation is zero too; the writes are the iteration's.
    expect(answer.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
    const writes = (iteration as { cache_creation_input_tokens: number }).cache_creation_input_tokens;
    expect(writes).toBeGreaterThan(16);
    expect(iteration).toEqual({
      type: "compaction",
      input_tokens: 0,
      output_tokens: words(blockOf(answer).content),
      cache_creation_input_tokens: writes,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: writes, ephemeral_1h_input_tokens: 0 },
    });
    // The same prompt asked for a reply reads what the compaction request wrote.
    const ordinary = await anthropic.beta.messages.create({ ...BASE, messages: cached });
    expect(ordinary.usage).toMatchObject({
      input_tokens: 0,
      cache_read_input_tokens: writes,
      cache_creation_input_tokens: 0,
    });
    const [compaction] = (await statsOf(marker)).requests;
    expect(compaction?.usage).toEqual({
      input_tokens: 0,
      output_tokens: words(blockOf(answer).content),
      cache_creation_input_tokens: writes,
      cache_read_input_tokens: 0,
      cache_creation_5m_input_tokens: writes,
      cache_creation_1h_input_tokens: 0,
    });

    // Past the window, a compaction request gets the very refusal any request of that prompt gets.
    const narrow = uniqueMarker("window");
    await replies(narrow, { context_window: 100 });
    const long = conversation(narrow);
    const tokens = estimate(long);
    const message = `input length and \`max_tokens\` exceed context limit: ${tokens} + 256 > 100, decrease input length or \`max_tokens\` and try again`;
    expect(await refused(compact(long))).toBe(message);
    expect(await refused(anthropic.messages.create({ ...BASE, messages: long as never }))).toBe(message);
    expect((await statsOf(narrow)).requests.map((record) => record.refusal)).toEqual([
      "context_exceeded",
      "context_exceeded",
    ]);
  });
});

describe("a compaction block sent back", () => {
  it("opens a compacted conversation, which continues at the script's turn and compacts again", async () => {
    const marker = uniqueMarker("follow");
    await replies(marker);
    const block = blockOf(await compact(conversation(marker)));
    // The block alone in its assistant message: it stands for the first turn, and is no reply itself.
    const alone: BetaMessageParam[] = [
      { role: "assistant", content: [block] },
      { role: "user", content: "go on" },
    ];
    expect(await reply(alone)).toBe("second");
    // The block opening the kept assistant message, as Outpost sends it: that message is the second turn.
    const opened: BetaMessageParam[] = [
      { role: "assistant", content: [block, { type: "text", text: "second" }] },
      { role: "user", content: "and on" },
    ];
    expect(await reply(opened)).toBe("third");
    // Its script was found by the summary's quote of the task (the first user message is gone).
    expect((await statsOf(marker)).requests.map((record) => [record.status, record.turn])).toEqual([
      [200, 1],
      [200, 1],
      [200, 2],
    ]);
    // Compacting the compacted conversation: two turns, and the task still quoted first.
    const again = blockOf(await compact(opened));
    const quoted = block.content.replace(/^Summary of 1 agent turns \(\d+ characters\): /, "");
    expect(again.content).toBe(summaryOf(2, `${quoted}\nsecond\nand on`));
    expect(again.content).toContain(`: ${marker} do the thing`);
    expect(
      await reply([
        { role: "assistant", content: [again] },
        { role: "user", content: "more" },
      ]),
    ).toBe("third");
  });

  it("is refused altered, misplaced, or without the beta; a failed one (no content) is a no-op", async () => {
    const marker = uniqueMarker("checks");
    await replies(marker);
    const block = blockOf(await compact(conversation(marker)));
    const send = (messages: BetaMessageParam[], betas = [BETA]) =>
      anthropic.beta.messages.create({ ...BASE, messages, betas });
    const altered = { ...block, content: `${block.content.slice(0, -1)}!` };
    expect(
      await refused(
        send([
          { role: "assistant", content: [altered] },
          { role: "user", content: "go" },
        ]),
      ),
    ).toBe(
      "compaction_signature_invalid: messages.0.content.0: the signature does not match the compaction block's content",
    );
    const encrypted = { ...block, encrypted_content: "x" } as never;
    expect(
      await refused(
        send([
          { role: "assistant", content: [encrypted] },
          { role: "user", content: "go" },
        ]),
      ),
    ).toMatch(/^compaction_signature_invalid: messages\.0\.content\.0:/);
    const later: BetaMessageParam[] = [...conversation(marker), { role: "assistant", content: [block] }];
    expect(await refused(send(later))).toBe(
      "compaction_block_misplaced: messages.3.content.0: a compaction block may only be the first content block of the first message, which must be an assistant message",
    );
    const second: BetaMessageParam[] = [
      { role: "assistant", content: [{ type: "text", text: "first" }, block] },
      { role: "user", content: "go" },
    ];
    expect(await refused(send(second))).toMatch(/^compaction_block_misplaced: messages\.0\.content\.1:/);
    const user: BetaMessageParam[] = [{ role: "user", content: [block as never] }];
    expect(await refused(send(user))).toMatch(/^compaction_block_misplaced: messages\.0\.content\.0:/);
    expect(
      await refused(
        send(
          [
            { role: "assistant", content: [block] },
            { role: "user", content: "go" },
          ],
          [],
        ),
      ),
    ).toBe("messages.0.content.0: Input tag 'compaction' found using 'type' does not match any of the expected tags");
    // A tool call in the block's message is still to be answered in the next one.
    const call = { type: "tool_use" as const, id: "toolu_1", name: "look", input: {} };
    expect(
      await refused(
        send([
          { role: "assistant", content: [block, call] },
          { role: "user", content: "go" },
        ]),
      ),
    ).toBe(
      "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    );
    // A failed compaction is accepted wherever it comes back, and changes nothing: the turn is still the second.
    const failed = { type: "compaction" as const, content: null, encrypted_content: null };
    const withFailed: BetaMessageParam[] = [
      { role: "user", content: `${marker} do the thing` },
      { role: "assistant", content: [failed, { type: "text", text: "first" }] },
      { role: "user", content: "go on" },
    ];
    expect(await reply(withFailed)).toBe("second");
    // Counted toward the prompt like text: its JSON over 4, as count_tokens says.
    const compacted: BetaMessageParam[] = [
      { role: "assistant", content: [block] },
      { role: "user", content: "go" },
    ];
    const counted = await anthropic.beta.messages.countTokens({
      model: "emu-model",
      messages: compacted,
      betas: [BETA],
    });
    expect(counted.input_tokens).toBe(estimate(compacted));
  });
});
