// A developer can override execute() with custom logic built from the same durable primitives as the default loop
// (SC-001, SC-007). The agent is registered into the Worker's compiled registry for this test file's isolate.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { registry } from "../../src/agents/catalog.ts";
import type { AgentContext } from "../../src/agents/context.ts";
import { type AgentResult, successResult } from "../../src/agents/result.ts";
import { extractText } from "../../src/agents/text.ts";
import { api, readSse, script, startTask, uniqueMarker, waitForTask } from "../support/helpers.ts";

/** Outlines, then expands the outline: two model calls in two steps, with its own call sites. */
class OutlineAgent extends Agent {
  constructor() {
    super({ name: "outliner", systemPrompt: "You write outlines, then expand them.", maxTurns: 2 });
  }

  override async execute(context: AgentContext): Promise<AgentResult> {
    const ask = (prompt: string, turnIndex: number) =>
      context.runtime.step(`ask_${turnIndex}`, async (info) => {
        let text = "";
        for await (const m of this.query(prompt, context, { turnIndex, attempt: info.attempt, spanId: info.spanId })) {
          if (m.type === "assistant") text = extractText(m.message.content);
        }
        return text;
      });
    const outline = await ask(`Outline: ${context.input}`, 1);
    const expanded = await ask(`Expand this outline: ${outline}`, 2);
    return successResult(`${outline}\n---\n${expanded}`, context.runtime.usage(), { custom: true });
  }
}

registry.register("outliner", OutlineAgent);

describe("an agent with its own execute()", () => {
  it("runs through the API with its steps recorded like the default loop's", async () => {
    const marker = uniqueMarker("outline");
    // The emulator picks the turn by the number of assistant messages; each custom call starts a new
    // conversation, so both calls are turn 0 of scripts matched by their own prompt text.
    const outline = `1. Intro 2. Usage ${marker}`;
    await script(`Outline: write docs ${marker}`, [{ content: [{ type: "text", text: outline }] }]);
    await script(`Expand this outline: ${outline}`, [{ content: [{ type: "text", text: "Full docs." }] }]);
    const task = await startTask("outliner", `write docs ${marker}`);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    expect(done.result).toBe(`${outline}\n---\nFull docs.`);
    expect(done.usage.model_calls).toBe(2);
    const frames = await readSse(await api(`/v1/tasks/${task.id}/events`));
    const sent = frames
      .filter((f) => f.event === "llm_request_sent")
      .map((f) => (JSON.parse(f.data) as { payload: { turn_index: number } }).payload.turn_index);
    expect(sent).toEqual([1, 2]);
    const finished = JSON.parse(frames.at(-1)?.data ?? "{}") as { event_type: string; payload: { metadata: unknown } };
    expect(finished.event_type).toBe("run_finished");
    expect(finished.payload.metadata).toEqual({ custom: true });
  });
});
