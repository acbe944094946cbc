// The Messages API's compaction on the wire (src/llm/anthropic-compaction.ts), through AnthropicProvider over real
// HTTP against the emulator, which refuses the request and the block without their beta and a block that is not as
// it signed it: the compaction request names its beta and comes back as one signed block built from its deltas; a
// conversation that opens with that block, sent back as it came, is answered; a call is billed its compaction
// iterations beside its top-level usage.
import { env } from "cloudflare:workers";
import type { Message, MessageCreateParamsBase, Usage } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.ts";
import { AnthropicProvider } from "../../src/llm/anthropic.ts";
import {
  billedTokens,
  COMPACTION_BETA,
  needsCompactionBeta,
  withBetaHeader,
} from "../../src/llm/anthropic-compaction.ts";
import { script, uniqueMarker } from "../support/helpers.ts";

const MODEL = "claude-sonnet-5-5";

async function call(params: MessageCreateParamsBase): Promise<Message> {
  const provider = new AnthropicProvider({ apiKey: "k", baseURL: env.ANTHROPIC_BASE_URL, maxRetries: 0 });
  const stream = provider.stream(params, { signal: new AbortController().signal });
  for (;;) {
    const next = await stream.next();
    if (next.done) return next.value;
  }
}

const usage = (fields: Partial<Usage> & { iterations?: unknown }): Usage =>
  ({
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    ...fields,
  }) as Usage;

describe("the Messages API's compaction on the wire", () => {
  it("names its beta for a compaction request and for a conversation that opens with a block, keeping other betas", () => {
    const base = { model: MODEL, max_tokens: 100, messages: [{ role: "user" as const, content: "hi" }] };
    expect(needsCompactionBeta(base)).toBe(false);
    expect(needsCompactionBeta({ ...base, compaction: { type: "summarize" } } as MessageCreateParamsBase)).toBe(true);
    const opened = {
      ...base,
      messages: [
        { role: "assistant", content: [{ type: "compaction", content: "s", signature: "x" }] },
        ...base.messages,
      ],
    } as MessageCreateParamsBase;
    expect(needsCompactionBeta(opened)).toBe(true);
    expect(withBetaHeader({ "x-a": "1", "anthropic-beta": "oauth-2025-04-20" }, COMPACTION_BETA)).toEqual({
      "x-a": "1",
      "anthropic-beta": `oauth-2025-04-20,${COMPACTION_BETA}`,
    });
    expect(withBetaHeader(undefined, COMPACTION_BETA)).toEqual({ "anthropic-beta": COMPACTION_BETA });
  });

  it("bills a call its top-level usage and its compaction iterations, not its message iterations twice", () => {
    const iterations = [
      {
        type: "compaction",
        input_tokens: 900,
        output_tokens: 120,
        cache_creation_input_tokens: 10,
        cache_read_input_tokens: 2000,
        cache_creation: { ephemeral_5m_input_tokens: 4, ephemeral_1h_input_tokens: 6 },
      },
      {
        type: "message",
        input_tokens: 50,
        output_tokens: 7,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    ];
    expect(billedTokens(usage({ input_tokens: 50, output_tokens: 7, iterations }))).toEqual({
      input_tokens: 950,
      output_tokens: 127,
      cache_creation_input_tokens: 10,
      cache_read_input_tokens: 2000,
      cache_creation_1h_input_tokens: 6,
    });
    expect(billedTokens(usage({ input_tokens: 5, output_tokens: 1 }))).toEqual({
      input_tokens: 5,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_1h_input_tokens: 0,
    });
  });

  it("gets one signed block back, and the block sent back first and as it came is answered", async () => {
    const marker = uniqueMarker("wire-compaction");
    // The conversation below is the script's first two turns; the summary stands for the first of them.
    const said = ["First answer.", "Second answer.", "After the summary."];
    await script(
      marker,
      said.map((text) => ({ content: [{ type: "text" as const, text }] })),
    );
    const conversation = [
      { role: "user" as const, content: `${marker} first question` },
      { role: "assistant" as const, content: "First answer." },
      { role: "user" as const, content: "Second question" },
    ];
    const compacted = await call({
      model: MODEL,
      max_tokens: 500,
      messages: conversation,
      compaction: { type: "summarize" },
    } as MessageCreateParamsBase);
    expect(compacted.stop_reason as string).toBe("compaction");
    expect(compacted.content).toHaveLength(1);
    const block = compacted.content[0] as unknown as { type: string; content: string; signature: string };
    expect(block.type).toBe("compaction");
    expect(block.content).toMatch(/^Summary of 1 agent turns/);
    expect(block.signature).toEqual(expect.any(String));
    // Its tokens are in its compaction iteration, and billed.
    const billed = billedTokens(compacted.usage);
    expect(compacted.usage.input_tokens).toBe(0);
    expect(billed.input_tokens + billed.cache_read_input_tokens + billed.cache_creation_input_tokens).toBeGreaterThan(
      0,
    );
    expect(billed.output_tokens).toBeGreaterThan(0);

    const next = (content: unknown) =>
      call({
        model: MODEL,
        max_tokens: 500,
        messages: [
          { role: "assistant", content: [content, { type: "text", text: "Second answer." }] },
          { role: "user", content: "Third question" },
        ],
      } as MessageCreateParamsBase);
    const answer = await next(block);
    expect(answer.content).toEqual([{ type: "text", text: "After the summary." }]);
    // One character changed, and the API refuses the block.
    const refused = await next({ ...block, content: `${block.content}.` }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ProviderError);
    expect((refused as ProviderError).status).toBe(400);
    expect((refused as ProviderError).message).toContain("compaction_signature_invalid");
  });
});
