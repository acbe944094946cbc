// The Messages API's own compaction as the summary step (an agent's contextWindow.summarizer anthropic,
// src/agents/anthropic-compaction.ts), against an emulator that refuses a block not sent back exactly as it signed
// it, or not first: the earlier turns become the API's block, asked for in parts over the agent's own request and
// opened into the kept assistant message; the block goes back verbatim even where redaction hides what it says;
// its cost is the compaction iterations, billed; a session goes on from it; an eviction mid-compaction asks again
// and records one compaction.
import { abortAllDurableObjects } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  api,
  defineAgent,
  events,
  fireTimers,
  modelRequest,
  ofType,
  script,
  startTask,
  textOf,
  toolUse,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "../support/helpers.ts";

interface Billed {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** The emulator's record of a task's model calls: their status and what each was billed. */
async function emulated(taskId: string): Promise<{ status: number; usage: Billed | null }[]> {
  const res = await fetch(`${env.ANTHROPIC_BASE_URL}/_emulator/stats`);
  const body = (await res.json()) as { requests: { task_id: string; status: number; usage: Billed | null }[] };
  return body.requests.filter((r) => r.task_id === taskId);
}

/** A file of the task's run bundle, parsed. */
async function artifact(taskId: string, name: string): Promise<Record<string, unknown>> {
  const res = await api(`/v1/tasks/${taskId}/artifacts/artifacts/llm/${name}`);
  expect(res.status).toBe(200);
  return JSON.parse(await res.text());
}

/** Four turns of long thinking aloud with a small tool call each, then the answer: only a summary makes room. */
const turns = [
  ...Array.from({ length: 4 }, (_, i) => ({
    content: [
      { type: "text" as const, text: `Step ${i}: ${"lorem ipsum dolor ".repeat(260)}` },
      toolUse("Read", { file_path: "s.txt" }),
    ],
    stop_reason: "tool_use",
  })),
  { content: [{ type: "text" as const, text: "Done." }] },
];
const agentOf = () =>
  defineAgent({
    fileSystem: { read: true },
    contextWindow: { tokens: 7000, summarizer: "anthropic" },
    maxTokens: 1000,
    maxTurns: 6,
  });
/** An Anthropic key's shape: redacted from every record, yet inside the block the API signed. */
const KEY = `sk-ant-api03-${"Q".repeat(40)}`;

describe("the Messages API's own compaction", () => {
  it("sends the API's signed block back first and verbatim, redacted only in the record, and bills its iterations", async () => {
    const marker = uniqueMarker("api-compaction");
    await script(marker, turns, { context_window: 7000 });
    const task = await startTask(agentOf(), `${marker} ${KEY} think it through`, { files: { "s.txt": "small" } });
    const done = await waitForTask(task.id, 30);
    expect(done.status).toBe("completed");
    // The emulator refused nothing: every block went back first and exactly as it signed it.
    const calls = await emulated(task.id);
    expect(calls.map((c) => c.status).every((s) => s === 200)).toBe(true);
    const log = await events(task.id);
    const compacted = ofType(log, "context_compacted").map((e) => e.payload);
    expect(compacted.map((c) => c.strategy)).toEqual(["anthropic_compaction"]);
    const c = compacted[0] as {
      turn_index: number;
      summary_calls: number;
      tokens_before: number;
      tokens_after: number;
    };
    const parts = ofType(log, "llm_request_sent").filter((e) => e.payload.call_site === "context_compaction");
    expect(parts).toHaveLength(c.summary_calls);
    // The stretch is longer than half the room: it is compacted in parts.
    expect(c.summary_calls).toBeGreaterThan(1);
    expect(c.tokens_after).toBeLessThan(c.tokens_before);

    // Each part asks for a compaction over the agent's own request; a later part opens with the block before it.
    let block: unknown = null;
    for (let part = 1; part <= c.summary_calls; part++) {
      const name = `context_compaction_turn_${c.turn_index}_part_${part}_attempt_1`;
      const request = await artifact(task.id, `${name}_request.txt`);
      expect(request.compaction).toEqual({ type: "summarize" });
      expect(JSON.stringify(request.system)).toContain("You use tools.");
      const messages = request.messages as { role: string; content: unknown[] }[];
      if (block) expect(messages[0]?.content[0]).toEqual(block);
      const response = await artifact(task.id, `${name}_response.txt`);
      expect(response.stop_reason).toBe("compaction");
      block = (response.content as unknown[])[0];
      expect(block).toMatchObject({ type: "compaction", signature: expect.any(String) });
    }
    // The record is redacted; the block the model was sent is not (the emulator checked its signature).
    expect(JSON.stringify(block)).toContain("[REDACTED]");
    expect(JSON.stringify(log)).not.toContain(KEY);
    const after = await modelRequest(task.id, c.turn_index);
    const opening = after.messages[0] as { role: string; content: { type: string }[] };
    expect(opening.role).toBe("assistant");
    expect(opening.content[0]?.type).toBe("compaction");
    // The task as first asked is no longer sent but inside the summary.
    const asked = after.messages.filter((m) => m.role === "user" && textOf(m.content).includes("think it through"));
    expect(asked).toEqual([]);

    // Billed as the emulator billed it, the compactions' iterations included.
    const sum = (field: keyof Billed) => calls.reduce((total, call) => total + (call.usage?.[field] ?? 0), 0);
    const usage = done.usage as unknown as Billed;
    for (const field of ["input_tokens", "output_tokens", "cache_read_input_tokens"] as const) {
      expect(usage[field]).toBe(sum(field));
    }
    const partUsage = ofType(log, "llm_response_received")
      .filter((e) => e.payload.call_site === "context_compaction")
      .map((e) => (e.payload.meta as { usage: Billed }).usage);
    for (const u of partUsage) expect(u.input_tokens + u.cache_read_input_tokens).toBeGreaterThan(0);
  });

  it("survives an eviction in the middle of the API's compaction: asked again, one compaction on record", async () => {
    const marker = uniqueMarker("api-compaction-evict");
    await script(marker, turns, { context_window: 7000, ttft_ms: 300 });
    const task = await startTask(agentOf(), `${marker} think it through`, { files: { "s.txt": "small" } });
    await waitForEvent(
      task.id,
      (e) => e.event_type === "llm_request_sent" && e.payload.call_site === "context_compaction",
    );
    await abortAllDurableObjects();
    await fireTimers(task.id, ["heartbeat"]);
    const done = await waitForTask(task.id, 30);
    expect(done.status).toBe("completed");
    expect((await emulated(task.id)).every((c) => c.status === 200)).toBe(true);
    const log = await events(task.id);
    expect(ofType(log, "run_resumed")).toHaveLength(1);
    const compacted = ofType(log, "context_compacted");
    expect(compacted.map((e) => e.payload.strategy)).toEqual(["anthropic_compaction"]);
    const parts = ofType(log, "llm_request_sent").filter((e) => e.payload.call_site === "context_compaction");
    expect(parts).toHaveLength(Number(compacted[0]?.payload.summary_calls) + 1);
    expect(ofType(log, "step_resumed").map((e) => e.payload.step)).toContain(
      `turn_${compacted[0]?.payload.turn_index}_compaction_part_1`,
    );
    expect(ofType(log, "tool_call_completed")).toHaveLength(4);
  });

  it("summarizes with Outpost's prompt in the same step when the API's compaction fails", async () => {
    const marker = uniqueMarker("api-compaction-fails");
    await script(marker, turns, { context_window: 7000, compaction_fails: true });
    const task = await startTask(agentOf(), `${marker} think it through`, { files: { "s.txt": "small" } });
    const done = await waitForTask(task.id, 30);
    expect(done.status).toBe("completed");
    expect((await emulated(task.id)).every((c) => c.status === 200)).toBe(true);
    const log = await events(task.id);
    const compacted = ofType(log, "context_compacted").map((e) => e.payload);
    expect(compacted.map((c) => c.strategy)).toEqual(["summarize"]);
    // The API's one failed call, then Outpost's summary calls, numbered on from it.
    const sent = ofType(log, "llm_request_sent").filter((e) => e.payload.call_site === "context_compaction");
    expect(sent).toHaveLength(Number(compacted[0]?.summary_calls));
    const turn = compacted[0]?.turn_index;
    const first = await artifact(task.id, `context_compaction_turn_${turn}_part_1_attempt_1_request.txt`);
    expect(first.compaction).toEqual({ type: "summarize" });
    const second = await artifact(task.id, `context_compaction_turn_${turn}_part_2_attempt_1_request.txt`);
    expect(second.compaction).toBeUndefined();
    expect(JSON.stringify(second.system)).toContain("Summarize the conversation");
    const after = await modelRequest(task.id, Number(turn));
    expect((after.messages[0] as { role: string }).role).toBe("user");
    expect(textOf(after.messages[0]?.content)).toContain("[Summary of the conversation so far");
  });

  it("keeps a session going on from the API's block across its turns", async () => {
    const agent = defineAgent({ contextWindow: { tokens: 8000, summarizer: "anthropic" }, maxTokens: 500 });
    const marker = uniqueMarker("api-compaction-session");
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
      const turn = (await res.json()) as { status: string; result: unknown };
      expect(turn.status).toBe("completed");
      // Each turn's reply is the script's next: the block stands for the turns it summarized.
      expect(JSON.stringify(turn.result)).toContain(`Noted ${i}.`);
    }
    expect((await emulated(session.id)).every((c) => c.status === 200)).toBe(true);
    expect((await api(`/v1/sessions/${session.id}`, { method: "DELETE" })).status).toBe(200);
    const text = await (await api(`/v1/sessions/${session.id}/events`)).text();
    const compactions = [...text.matchAll(/"event_type":"context_compacted"/g)].length;
    expect(compactions).toBeGreaterThanOrEqual(1);
    expect(compactions).toBeLessThan(4);
    expect(text).toContain('"strategy":"anthropic_compaction"');
    expect(text).not.toContain('"strategy":"summarize"');
  });
});
