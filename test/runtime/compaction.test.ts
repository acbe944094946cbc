// A conversation that never outgrows the model's context window (src/agents/context-window.ts), against an emulator
// that refuses a prompt past its window as the Messages API does: tool results cleared and turns summarized past the
// agent's compact_at, a "prompt is too long" answered with one compaction and the call again, a session compacted
// across its turns, and an eviction in the middle of a compaction. The conversation keeps everything throughout.
import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MessageListSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  emulatorRequests,
  events,
  fireTimers,
  modelRequest,
  ofType,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "../support/helpers.ts";

/** A note of about 6,000 characters in lines of 60 (the Read tool cuts long lines). */
const EMULATOR = env.ANTHROPIC_BASE_URL as string;

const note = (letter: string) => `${letter.toUpperCase()}-NOTE\n${`${letter.repeat(59)}\n`.repeat(100)}`;
const files = { "a.txt": note("a"), "b.txt": note("b"), "c.txt": note("c") };
const readAll = [
  { content: [toolUse("Read", { file_path: "a.txt" })], stop_reason: "tool_use" },
  { content: [toolUse("Read", { file_path: "b.txt" })], stop_reason: "tool_use" },
  { content: [toolUse("Read", { file_path: "c.txt" })], stop_reason: "tool_use" },
  { content: [{ type: "text" as const, text: "The three notes are read." }] },
];

/** Every model call the emulator answered or refused for the task, by status. */
async function statuses(id: string): Promise<number[]> {
  return (await emulatorRequests(id)).map((r) => r.status);
}

describe("compaction", () => {
  it("past compact_at, compacts before the call that would not fit, and the run ends within the window", async () => {
    const agent = defineAgent({ fileSystem: { read: true }, contextWindow: { tokens: 6000 }, maxTokens: 1000 });
    const marker = uniqueMarker("compact-threshold");
    await script(marker, readAll, { context_window: 6000 });
    const task = await startTask(agent, `Read the notes ${marker}`, { files });
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    // The emulator refused nothing: no prompt went past its window.
    expect((await statuses(task.id)).every((s) => s === 200)).toBe(true);
    const log = await events(task.id);
    const compacted = ofType(log, "context_compacted").map((e) => e.payload);
    expect(compacted.length).toBeGreaterThanOrEqual(1);
    for (const c of compacted) {
      expect(c.reason).toBe("threshold");
      expect(c.tokens_after).toBeLessThan(Number(c.tokens_before));
    }
    // The last call was sent the latest read as it was, and not the first note.
    const last = JSON.stringify((await modelRequest(task.id, 4)).messages);
    expect(last).toContain("C-NOTE");
    expect(last).not.toContain("A-NOTE");
    // The conversation keeps every result whole.
    const conversation = JSON.stringify((await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema)).messages);
    for (const name of ["A-NOTE", "B-NOTE", "C-NOTE"]) expect(conversation).toContain(name);
    // The transcript marks each compaction between the call before it and the call after it.
    const transcript = await (await api(`/v1/tasks/${task.id}/artifacts/llm_transcript.log`)).text();
    const first = compacted[0] as { turn_index: number; strategy: string };
    const mark = `### context compacted before turn ${first.turn_index} (${first.strategy}, threshold)`;
    const at = transcript.indexOf(mark);
    expect(at).toBeGreaterThan(transcript.indexOf(`=== decision_loop turn ${first.turn_index - 1} `));
    expect(at).toBeLessThan(transcript.indexOf(`=== decision_loop turn ${first.turn_index} `));
    expect(transcript.split(mark)).toHaveLength(2);
  });

  it.each([
    ["anthropic", undefined],
    ["openai_compatible", { provider: "openai_compatible", endpoint: `${EMULATOR}/v1`, api_key: "TEST_OPENAI_KEY" }],
    ["gemini", { provider: "gemini", endpoint: EMULATOR, api_key: "TEST_GEMINI_KEY" }],
  ] as const)("answers %s's own 'too long' refusal with one compaction and the call again", async (name, llmConfig) => {
    // The agent does not know its model's window is small: the provider's refusal says it.
    const agent = defineAgent({ fileSystem: { read: true }, maxTokens: 500, ...(llmConfig ? { llmConfig } : {}) });
    const marker = uniqueMarker(`compact-too-long-${name}`);
    await script(marker, readAll, { context_window: 5000 });
    const task = await startTask(agent, `Read the notes ${marker}`, { files });
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    const log = await events(task.id);
    const refused = ofType(log, "llm_request_failed").map((e) => (e.payload.error as { code: string }).code);
    expect(refused).toEqual(["context_window_exceeded"]);
    expect(ofType(log, "context_compacted").map((e) => e.payload.reason)).toContain("prompt_too_long");
    expect((await statuses(task.id)).filter((s) => s !== 200)).toEqual([400]);
  });

  it("keeps a session's every turn inside a small window, summarizing earlier turns once and going on from it", async () => {
    const agent = defineAgent({ contextWindow: { tokens: 8000 }, maxTokens: 500 });
    const marker = uniqueMarker("compact-session");
    const replies = Array.from({ length: 8 }, (_, i) => ({
      content: [{ type: "text" as const, text: `Noted ${i}.` }],
    }));
    await script(marker, replies, { context_window: 8000 });
    const created = await api(`/v1/agents/${agent}/sessions`, { method: "POST", body: "{}" });
    const session = (await created.json()) as { id: string };
    for (let i = 0; i < 7; i++) {
      const message = `${i === 0 ? marker : `Message ${i}`}: ${"lorem ipsum ".repeat(500)}`;
      const res = await api(`/v1/sessions/${session.id}/messages?wait=20`, {
        method: "POST",
        body: JSON.stringify({ message }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { status: string }).status).toBe("completed");
    }
    const records = await emulatorRequests(session.id);
    expect(records.every((r) => r.status === 200)).toBe(true);
    // Closed, its event stream ends.
    expect((await api(`/v1/sessions/${session.id}`, { method: "DELETE" })).status).toBe(200);
    const frames = await api(`/v1/sessions/${session.id}/events`);
    const text = await frames.text();
    const compactions = [...text.matchAll(/"event_type":"context_compacted"/g)].length;
    expect(compactions).toBeGreaterThanOrEqual(1);
    // Far fewer compactions than turns: each goes down to compact_to, and the next turn goes on from it.
    expect(compactions).toBeLessThan(4);
    expect(text).toContain('"strategy":"summarize"');
  });

  it("survives an eviction in the middle of a summary: the conversation whole, one compaction on record", async () => {
    const agent = defineAgent({ fileSystem: { read: true }, contextWindow: { tokens: 6000 }, maxTokens: 1000 });
    const marker = uniqueMarker("compact-evict");
    await script(marker, readAll, { context_window: 6000, ttft_ms: 300 });
    const task = await startTask(agent, `Read the notes ${marker}`, { files });
    // Evicted while the summary's call waits for its first token.
    await waitForEvent(
      task.id,
      (e) => e.event_type === "llm_request_sent" && e.payload.call_site === "context_compaction",
    );
    await abortAllDurableObjects();
    await fireTimers(task.id, ["heartbeat"]);
    const done = await waitForTask(task.id, 30);
    expect(done.status).toBe("completed");
    const log = await events(task.id);
    expect(ofType(log, "run_resumed")).toHaveLength(1);
    // The interrupted summary was asked again; its compaction is on record once, as is every later one.
    const summaries = ofType(log, "llm_request_sent").filter((e) => e.payload.call_site === "context_compaction");
    const compacted = ofType(log, "context_compacted");
    expect(summaries.length).toBe(compacted.length + 1);
    expect(compacted).toHaveLength(new Set(compacted.map((e) => e.payload.turn_index)).size);
    expect(ofType(log, "step_resumed").map((e) => e.payload.step)).toContain(
      `turn_${compacted[0]?.payload.turn_index}_compaction_part_1`,
    );
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i + 1));
    const conversation = JSON.stringify((await apiJson(`/v1/tasks/${task.id}/messages`, MessageListSchema)).messages);
    for (const name of ["A-NOTE", "B-NOTE", "C-NOTE"]) expect(conversation).toContain(name);
    expect(ofType(log, "tool_call_completed")).toHaveLength(3);
  });
});
