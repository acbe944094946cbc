// Runs end to end through the HTTP API, the task's Durable Object and the Anthropic SDK against the emulator:
// transport retries, provider failures mid-run, thinking, tool denial, invalid tool input and max_turns.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { ConfigError } from "../../src/errors.ts";
import { MessageListSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  blocksOfType,
  defineAgent,
  emulatorRequests,
  parseEvent,
  readSse,
  type ScriptTurn,
  script,
  startTask,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

interface Event {
  seq: number;
  event_type: string;
  payload: Record<string, unknown>;
}

async function events(id: string): Promise<Event[]> {
  const frames = await readSse(await api(`/v1/tasks/${id}/events`));
  return frames.map((f) => parseEvent(f.data));
}

async function artifact(id: string, path: string): Promise<string> {
  const res = await api(`/v1/tasks/${id}/artifacts/${path}`);
  expect(res.status).toBe(200);
  return res.text();
}

async function run(agent: string, turns: ScriptTurn[], label: string) {
  const marker = uniqueMarker(label);
  await script(marker, turns);
  const task = await startTask(agent, `do it ${marker}`);
  const done = await waitForTask(task.id);
  return { id: task.id, done, events: await events(task.id) };
}

const todo = (content: string) => ({ todos: [{ content, status: "pending" }] });

describe("model calls inside a run", () => {
  it("tries a call refused with 429 again after half a second, on record, and completes the run", async () => {
    const {
      id,
      done,
      events: log,
    } = await run(
      "assistant",
      [{ content: [{ type: "text", text: "after retry" }], faults: [{ kind: "http", status: 429, retry_after: 0 }] }],
      "retry-429",
    );
    expect(done.status).toBe("completed");
    expect(done.result).toBe("after retry");
    const retries = log.filter((e) => e.event_type === "llm_retry_scheduled");
    expect(retries.map((e) => [e.payload.status, e.payload.http_attempt, e.payload.delay_seconds])).toEqual([
      [429, 2, 0.5],
    ]);
    // The runtime's retry is the step's second attempt: each try has its request on record.
    const sent = log.filter((e) => e.event_type === "llm_request_sent").map((e) => e.payload.attempt);
    expect(sent).toEqual([1, 2]);
    expect(log.filter((e) => e.event_type === "step_resumed").map((e) => e.payload)).toEqual([
      { step: "turn_1_model", attempt: 2, reason: "provider_retry", delay_ms: 500 },
    ]);
    expect((await emulatorRequests(id)).map((r) => r.status)).toEqual([429, 200]);
    expect(done.usage.model_calls).toBe(1);
  });

  it("fails the run with provider_overloaded once the call's horizon has passed, keeping the bundle", async () => {
    const overloaded = { kind: "http", status: 529, retry_after: 0 };
    // A one-second horizon: a try at once, one 0.5 s later, and one at the horizon (fewer on a slow machine).
    const agent = defineAgent({ providerWaitSeconds: 1 });
    const {
      id,
      done,
      events: log,
    } = await run(
      agent,
      [{ content: [{ type: "text", text: "never" }], faults: Array(8).fill(overloaded) }],
      "overloaded",
    );
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("provider_overloaded");
    const types = log.map((e) => e.event_type);
    const tries = types.filter((t) => t === "llm_request_sent").length;
    expect(tries).toBeGreaterThanOrEqual(2);
    expect(types.filter((t) => t === "llm_request_failed")).toHaveLength(tries);
    expect(types.filter((t) => t === "llm_retry_scheduled")).toHaveLength(tries - 1);
    // Inside a one-second horizon nothing is parked.
    expect(types).not.toContain("provider_wait_started");
    expect(types.at(-1)).toBe("run_failed");
    expect(log.at(-1)?.payload.reason).toBe(done.error?.message);
    expect((await emulatorRequests(id)).map((r) => r.status)).toEqual(Array(tries).fill(529));
    expect(await artifact(id, "artifacts/llm/decision_loop_turn_1_attempt_1_response.txt")).toContain(
      "REQUEST FAILED: provider_overloaded",
    );
    expect(await artifact(id, "final_summary.md")).toContain("provider_overloaded");
    expect(await artifact(id, "llm_transcript.log")).toContain("request_failed");
  });

  it("fails with streaming_error on an error event mid-stream that may not be repeated, keeping the text that arrived", async () => {
    const {
      id,
      done,
      events: log,
    } = await run(
      "assistant",
      [
        {
          content: [{ type: "text", text: "one two three four five six" }],
          // Not a server error: the turn is not run again (a retryable one is: test/faults/faults.test.ts).
          faults: [{ kind: "stream_error", after_deltas: 3, error_type: "invalid_request_error" }],
        },
      ],
      "midstream",
    );
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("streaming_error");
    const partial = log
      .filter((e) => e.event_type === "llm_text_delta")
      .map((e) => e.payload.text)
      .join("");
    expect(partial).toBe("one two three ");
    expect(await artifact(id, "artifacts/llm/decision_loop_turn_1_attempt_1_response.txt")).toContain(
      "--- partial text ---\none two three ",
    );
    const failed = log.filter((e) => e.event_type === "llm_request_failed");
    expect(failed.map((e) => e.payload.retryable)).toEqual([false]);
    expect(log.filter((e) => e.event_type === "step_resumed")).toEqual([]);
  });

  it("fails with streaming_error naming the bad JSON when the provider sends a malformed frame", async () => {
    const { done } = await run(
      "assistant",
      [{ content: [{ type: "text", text: "hello there" }], faults: [{ kind: "malformed", after_deltas: 0 }] }],
      "malformed",
    );
    expect(done.status).toBe("failed");
    // message_start and the block start had arrived, so it is a mid-stream failure whose cause is the bad JSON.
    expect(done.error?.code).toBe("streaming_error");
    expect(done.error?.message).toMatch(/^The model stream broke after 2 events: .*not valid JSON/);
  });

  it("streams thinking as deltas and sends the signed thinking block back on the next turn", async () => {
    const {
      id,
      done,
      events: log,
    } = await run(
      "planner",
      [
        {
          content: [
            { type: "thinking", thinking: "The user wants a plan.", signature: "sig-abc" },
            { type: "tool_use", name: "TodoWrite", input: todo("Plan") },
          ],
        },
        { content: [{ type: "text", text: "Planned." }] },
      ],
      "thinking",
    );
    expect(done.status).toBe("completed");
    const thinking = log
      .filter((e) => e.event_type === "llm_thinking_delta")
      .map((e) => e.payload.thinking)
      .join("");
    expect(thinking).toBe("The user wants a plan.");
    const request = JSON.parse(await artifact(id, "artifacts/llm/decision_loop_turn_2_attempt_1_request.txt")) as {
      messages: { role: string; content: { type: string; thinking?: string; signature?: string }[] }[];
    };
    expect(request.messages[1]?.content[0]).toEqual({
      type: "thinking",
      thinking: "The user wants a plan.",
      signature: "sig-abc",
    });
  });
});

describe("extended thinking (seed 004 ExtendedThinkingConfig)", () => {
  it("asks for thinking within the agent's budget, with room left for the answer, and keeps it signed", async () => {
    const thinker = defineAgent({
      allowedTools: ["TodoWrite"],
      extendedThinking: { enabled: true, budget_tokens: 2048 },
    });
    const { id, done } = await run(
      thinker,
      [
        {
          content: [
            { type: "thinking", thinking: "Think first.", signature: "sig-think" },
            { type: "tool_use", name: "TodoWrite", input: todo("Think") },
          ],
        },
        { content: [{ type: "text", text: "Thought it through." }] },
      ],
      "extended-thinking",
    );
    expect(done.status).toBe("completed");
    for (const turn of [1, 2]) {
      const request = JSON.parse(
        await artifact(id, `artifacts/llm/decision_loop_turn_${turn}_attempt_1_request.txt`),
      ) as {
        thinking?: unknown;
        max_tokens: number;
        messages: { role: string; content: unknown }[];
      };
      expect(request.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
      // maxTokens was left out: raised past the budget by the default answer's room.
      expect(request.max_tokens).toBe(2048 + 4096);
    }
    const second = JSON.parse(await artifact(id, "artifacts/llm/decision_loop_turn_2_attempt_1_request.txt")) as {
      messages: { content: { type: string }[] }[];
    };
    expect(second.messages[1]?.content[0]).toEqual({
      type: "thinking",
      thinking: "Think first.",
      signature: "sig-think",
    });
    // GET /v1/agents/:name says so.
    const described = (await (await api(`/v1/agents/${thinker}`)).json()) as Record<string, unknown>;
    expect([described.thinking_budget_tokens, described.max_tokens]).toEqual([2048, 2048 + 4096]);
  });

  it("refuses a budget outside 1,024–100,000, a maxTokens within it, and thinking on another provider", () => {
    class Thinker extends Agent {}
    const make = (extra: Record<string, unknown>) => () =>
      new Thinker({ name: "thinker", systemPrompt: "x", ...extra });
    expect(make({ extendedThinking: { enabled: true, budget_tokens: 1000 } })).toThrow(
      /budget_tokens must be at least 1,024/,
    );
    expect(make({ extendedThinking: { enabled: true, budget_tokens: 200_000 } })).toThrow(/at most 100,000/);
    expect(make({ extendedThinking: { enabled: true, budget_tokens: 8000 }, maxTokens: 8000 })).toThrow(
      /maxTokens \(8000\) must be more than extendedThinking.budget_tokens \(8000\)/,
    );
    expect(
      make({
        extendedThinking: { enabled: true },
        llmConfig: { provider: "gemini", endpoint: "https://example.com", api_key: "TEST_GEMINI_KEY" },
      }),
    ).toThrow(/extendedThinking is for Anthropic's models/);
    expect(make({ extendedThinking: { enabled: true, depth: 3 } })).toThrow(ConfigError);
    // The seed's snake_case spelling is pointed at the camelCase key.
    expect(make({ extended_thinking: { enabled: true } })).toThrow(/extendedThinking/);
    const off = make({ extendedThinking: { enabled: false, budget_tokens: 5000 } })();
    expect([off.thinkingBudget, off.maxTokens]).toEqual([null, 4096]);
  });
});

describe("tools inside a run", () => {
  it("denies a tool the agent may not use, tells the model, and continues", async () => {
    const {
      id,
      done,
      events: log,
    } = await run(
      "planner",
      [
        { content: [{ type: "tool_use", name: "Bash", input: { command: "rm -rf /" } }] },
        { content: [{ type: "text", text: "I cannot run commands." }] },
      ],
      "denied",
    );
    expect(done.status).toBe("completed");
    expect(done.result).toBe("I cannot run commands.");
    const denied = log.find((e) => e.event_type === "tool_denied");
    expect(denied?.payload).toMatchObject({ tool_name: "Bash", reason: "not_allowed", turn_index: 1 });
    expect(log.some((e) => e.event_type === "tool_call_started")).toBe(false);
    const messages = await apiJson(`/v1/tasks/${id}/messages`, MessageListSchema);
    const [result] = blocksOfType(messages.messages[2], "tool_result");
    expect(result?.is_error).toBe(true);
    expect(result?.content).toBe('Tool "Bash" is not available to this agent. Available tools: TodoWrite.');
  });

  it("returns invalid TodoWrite input to the model as an actionable error", async () => {
    const { id, done } = await run(
      "planner",
      [
        { content: [{ type: "tool_use", name: "TodoWrite", input: { todos: [{ content: "x", status: "later" }] } }] },
        { content: [{ type: "text", text: "ok" }] },
      ],
      "bad-input",
    );
    expect(done.status).toBe("completed");
    const messages = await apiJson(`/v1/tasks/${id}/messages`, MessageListSchema);
    const [result] = blocksOfType(messages.messages[2], "tool_result");
    expect(result?.is_error).toBe(true);
    expect(result?.content).toMatch(/^Invalid TodoWrite input at todos\.0\.status: /);
  });

  it("ends the run with max_turns when the model keeps calling tools", async () => {
    const turn = { content: [{ type: "tool_use" as const, name: "TodoWrite", input: todo("again") }] };
    const { done, events: log } = await run("planner", [turn, turn, turn, turn, turn], "max-turns");
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("max_turns");
    expect(done.error?.message).toMatch(/^max_turns limit reached/);
    expect(log.filter((e) => e.event_type === "llm_request_sent")).toHaveLength(4);
    expect(log.at(-1)?.event_type).toBe("run_failed");
  });
});
