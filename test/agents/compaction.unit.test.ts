// Compaction's pure part (src/agents/compaction.ts): what the model is sent under a view, the clearing of old tool
// results (no call parted from its answer), where a summary may cut, the summarizer's reading, and what a provider's
// "too long" refusal says about the window.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import {
  chunksOf,
  clearedToolResults,
  compactedHead,
  contextOf,
  firstText,
  holdsCompaction,
  stretchesOf,
  summaryCut,
  summaryHead,
  tokensOf,
  toldWindow,
  transcriptOf,
} from "../../src/agents/compaction.ts";
import { checkSummarizer } from "../../src/agents/definition-checks.ts";
import { ConfigError } from "../../src/errors.ts";

const use = (id: string, name: string, input: Record<string, unknown>): MessageParam => ({
  role: "assistant",
  content: [{ type: "tool_use", id, name, input }],
});
const result = (id: string, content: string, isError = false): MessageParam => ({
  role: "user",
  content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }],
});

const conversation: MessageParam[] = [
  { role: "user", content: "Read the three notes and sum them up." },
  use("t1", "Read", { file_path: "a.txt" }),
  result("t1", "A".repeat(4000)),
  use("t2", "Read", { file_path: "b.txt" }),
  result("t2", "no such file", true),
  use("t3", "Read", { file_path: "c.txt" }),
  result("t3", "C".repeat(400)),
];

describe("compaction's pure part", () => {
  it("sends the head in place of the messages before `through`, and ignores a view past the conversation", () => {
    const head: MessageParam[] = [{ role: "user", content: "summary" }];
    expect(contextOf(conversation, { through: 5, head })).toEqual([head[0], conversation[5], conversation[6]]);
    expect(contextOf(conversation.slice(0, 3), { through: 5, head })).toEqual(conversation.slice(0, 3));
    expect(contextOf(conversation, null)).toEqual(conversation);
  });

  it("clears tool results into notes naming the tool and the size, keeping every block in place, once", () => {
    const { messages, cleared } = clearedToolResults(conversation.slice(0, 5));
    expect(cleared).toBe(2);
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(messages[1]).toEqual(conversation[1]);
    type Block = { tool_use_id: string; content: string; is_error: boolean };
    const blocksOf = (index: number) => (messages[index]?.content ?? []) as Block[];
    const note = blocksOf(2)[0];
    expect(note?.tool_use_id).toBe("t1");
    expect(note?.content).toMatch(/^\[Tool result cleared .*Read returned 4000 characters\. Call it again/);
    expect(blocksOf(4)[0]?.content).toMatch(/returned 12 characters \(an error\)/);
    expect(tokensOf(messages)).toBeLessThan(tokensOf(conversation.slice(0, 5)) / 3);
    // A cleared result is not cleared again.
    expect(clearedToolResults(messages).cleared).toBe(0);
  });

  it("cuts a summary at an assistant message whose tail fits, never after the last one", () => {
    // Everything from the last assistant message on fits 200 tokens; from t2 on, it does too; from t1 on, not.
    expect(summaryCut(conversation, 1, 300)).toBe(3);
    expect(summaryCut(conversation, 1, 50)).toBe(5);
    expect(summaryCut(conversation, 1, 100_000)).toBe(1);
    // From index 4 on, the earliest assistant message is 5.
    expect(summaryCut(conversation, 4, 100_000)).toBe(5);
    expect(summaryCut([{ role: "user", content: "hi" }], 1, 100)).toBe(-1);
  });

  it("reads the conversation for the summarizer as text, with each call and what it returned", () => {
    const text = transcriptOf(conversation.slice(0, 5));
    expect(text).toContain("USER: Read the three notes and sum them up.");
    expect(text).toContain('AGENT: [called Read with {"file_path":"a.txt"}]');
    expect(text).toContain("[Read returned an error: no such file]");
    const chunks = chunksOf(text, 1500);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((chunk) => chunk.length <= 1500)).toBe(true);
    // Nothing is lost but the blank lines the pieces were cut at.
    expect(chunks.join("").replace(/\n/g, "")).toBe(text.replace(/\n/g, ""));
  });

  it("heads the summary with the task as first asked", () => {
    expect(firstText(conversation)).toBe("Read the three notes and sum them up.");
    const [head] = summaryHead("Do it.", "It was done.");
    expect(head?.role).toBe("user");
    expect(head?.content).toMatch(/^The task, as first asked:\nDo it\.\n\n\[Summary of the conversation so far/);
  });

  it("reads the prompt's size and the window from each provider's refusal", () => {
    expect(toldWindow("prompt is too long: 20512 tokens > 16000 maximum")).toEqual({ tokens: 20512, window: 16000 });
    expect(
      toldWindow("input length and `max_tokens` exceed context limit: 15000 + 4096 > 16000, decrease input length"),
    ).toEqual({ tokens: 15000, window: 16000 });
    expect(
      toldWindow(
        "This model's maximum context length is 16000 tokens. However, your messages resulted in 20512 tokens.",
      ),
    ).toEqual({ tokens: 20512, window: 16000 });
    expect(toldWindow("The input token count (20512) exceeds the maximum number of tokens allowed (16000).")).toEqual({
      tokens: 20512,
      window: 16000,
    });
    expect(toldWindow("something else")).toBeNull();
  });

  it("opens the kept assistant message with the API's block, its own blocks following as they were", () => {
    const block = { type: "compaction" as const, content: "Summary of 2 agent turns", signature: "c2ln" };
    const kept = conversation[3] as MessageParam;
    const [head] = compactedHead(block, kept);
    expect(head).toEqual({ role: "assistant", content: [block, ...(kept.content as unknown[])] });
    // A kept message of plain text becomes its text block.
    expect(compactedHead(block, { role: "assistant", content: "ok" })[0]?.content).toEqual([
      block,
      { type: "text", text: "ok" },
    ]);
    expect(holdsCompaction([head as MessageParam])).toBe(true);
    expect(holdsCompaction(conversation)).toBe(false);
    // Outpost's summarizer reads a block as the text it is.
    expect(transcriptOf([head as MessageParam])).toContain("AGENT: Summary of 2 agent turns");
  });

  it("cuts what the API compacts into stretches that each begin at an assistant message", () => {
    const stretches = stretchesOf(conversation, 600);
    expect(stretches.flat()).toEqual(conversation);
    expect(stretches.length).toBeGreaterThan(1);
    for (const stretch of stretches.slice(1)) expect(stretch[0]?.role).toBe("assistant");
    // The 4,000-character result is over 600 tokens alone: its stretch is the only one past the limit.
    expect(stretches.filter((s) => tokensOf(s) > 600)).toEqual([conversation.slice(0, 3)]);
    expect(stretchesOf(conversation, 100_000)).toEqual([conversation]);
  });

  it("takes summarizer anthropic only for Claude on Anthropic's own API", () => {
    expect(() => checkSummarizer("a", "anthropic", undefined)).not.toThrow();
    expect(() =>
      checkSummarizer("a", "anthropic", { provider: "anthropic", auth_provider: "oauth_token" }),
    ).not.toThrow();
    expect(() => checkSummarizer("a", "outpost", { provider: "gemini" })).not.toThrow();
    expect(() => checkSummarizer("a", "anthropic", { provider: "gemini" })).toThrow(
      new ConfigError(
        "Agent \"a\": contextWindow.summarizer anthropic is the Messages API's own compaction, on Anthropic's own API only (an API key or an OAuth token); this agent uses provider gemini. Use summarizer outpost.",
      ),
    );
    expect(() => checkSummarizer("a", "anthropic", { provider: "anthropic", auth_provider: "bedrock" })).toThrow(
      /this agent uses Claude through auth_provider bedrock/,
    );
  });
});
