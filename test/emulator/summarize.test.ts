// The emulator as a model asked to summarize (emulator/summarize.ts): a request whose system prompt begins
// "Summarize the conversation" gets a summary that says how many agent turns it stands for, takes no turn of the
// script its conversation matches, and a compacted conversation that carries such a summary gets the reply of the
// turn it is at. Seen through the official Anthropic SDK from inside workerd.
import { env } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { describe, expect, it } from "vitest";
import { SUMMARY_SYSTEM } from "../../src/agents/compaction.ts";

const client = new Anthropic({
  apiKey: "test",
  baseURL: env.ANTHROPIC_BASE_URL ?? "",
  fetch: (input, init) => fetch(input, init),
  maxRetries: 0,
});

async function register(match: string, replies: string[]): Promise<void> {
  const turns = replies.map((text) => ({ content: [{ type: "text", text }] }));
  const res = await fetch(`${env.ANTHROPIC_BASE_URL}/_emulator/scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ match, turns }),
  });
  expect(res.status).toBe(201);
}

async function reply(messages: MessageParam[], system?: string): Promise<string> {
  const message = await client.messages.create({
    model: "emu-model",
    max_tokens: 256,
    messages,
    ...(system ? { system } : {}),
  });
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

describe("the emulator asked to summarize", () => {
  it("answers with a summary counting the agent's turns, and takes no turn of the script", async () => {
    const match = `[summarize-${crypto.randomUUID()}]`;
    await register(match, ["first", "second", "third"]);
    const task = `${match} do the thing`;
    expect(await reply([{ role: "user", content: task }])).toBe("first");
    const transcript = `USER: ${task}\n\nAGENT: first\n\nUSER: go on`;
    const summary = await reply([{ role: "user", content: transcript }], SUMMARY_SYSTEM);
    expect(summary).toMatch(/^Summary of 1 agent turns \(\d+ characters\): USER: \[summarize-/);
    // The script's next turn is still the second.
    const next: MessageParam[] = [
      { role: "user", content: task },
      { role: "assistant", content: "first" },
      { role: "user", content: "go on" },
    ];
    expect(await reply(next)).toBe("second");
    // A compacted conversation: the summary in place of the first turn, then the latest turns as they were.
    const compacted: MessageParam[] = [
      {
        role: "user",
        content: `The task, as first asked:\n${task}\n\n[Summary of the conversation so far]\n${summary}`,
      },
      { role: "assistant", content: "second" },
      { role: "user", content: "and on" },
    ];
    expect(await reply(compacted)).toBe("third");
    // A summary of a summary counts the turns the first one stood for.
    const again = await reply([{ role: "user", content: `${compacted[0]?.content}\n\nAGENT: second` }], SUMMARY_SYSTEM);
    expect(again).toMatch(/^Summary of 2 agent turns/);
  });
});
