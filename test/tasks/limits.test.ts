// Per-task limits (seed 004 max_turns, seed 003 max_iterations, cost and token budgets): set in the POST body or
// the agent's definition, recorded on the task and in run_started, and ending the run cleanly with a clear reason.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { ConfigError } from "../../src/errors.ts";
import {
  api,
  defineAgent,
  done,
  events,
  expectError,
  ofType,
  type ScriptTurn,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const todo = (n: number): ScriptTurn => ({
  content: [toolUse("TodoWrite", { todos: [{ content: `step ${n}`, status: "pending" }] })],
  stop_reason: "tool_use",
  usage: { input_tokens: 100, output_tokens: 50 },
});

describe("task limits", () => {
  it("ends a run at the task's max_turns with reason max_turns limit reached, keeping what it did", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"] });
    const marker = uniqueMarker("max-turns");
    await script(marker, [todo(1), todo(2), todo(3), done]);
    const task = await startTask(agent, `loop ${marker}`, { max_turns: 2 });
    expect(task.limits).toEqual({ max_turns: 2 });
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("failed");
    expect(finished.error).toMatchObject({ code: "max_turns" });
    expect(finished.error?.message).toMatch(/^max_turns limit reached \(2 model turns\)/);
    const log = await events(task.id);
    expect(ofType(log, "run_started")[0]?.payload).toMatchObject({
      max_turns: 2,
      max_budget_usd: null,
      max_tokens: null,
    });
    expect(ofType(log, "llm_request_sent")).toHaveLength(2);
    expect(ofType(log, "todo_list_updated")).toHaveLength(2);
    expect(ofType(log, "run_failed")[0]?.payload.reason).toMatch(/^max_turns limit reached/);
  });

  it("treats seed 003 max_iterations as the same limit, the smaller of the two applying", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"] });
    const marker = uniqueMarker("max-iterations");
    await script(marker, [todo(1), todo(2), done]);
    const task = await startTask(agent, `loop ${marker}`, { max_turns: 3, max_iterations: 1 });
    expect(task.limits).toEqual({ max_turns: 1 });
    const finished = await waitForTask(task.id);
    expect(finished.error).toMatchObject({ code: "max_turns" });
    expect(ofType(await events(task.id), "llm_request_sent")).toHaveLength(1);
  });

  it("ends a run when its token budget is used up, after recording the call that used it", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"] });
    const marker = uniqueMarker("max-tokens");
    await script(marker, [todo(1), todo(2), todo(3), done]);
    const task = await startTask(agent, `tokens ${marker}`, { max_tokens: 250 });
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("failed");
    expect(finished.error).toMatchObject({ code: "max_tokens" });
    expect(finished.error?.message).toBe("max_tokens limit reached: the task's model calls used 300 tokens of 250.");
    expect(finished.usage).toMatchObject({ total_tokens: 300, model_calls: 2 });
    const log = await events(task.id);
    // The second call completed and is on record; nothing ran after it.
    expect(ofType(log, "llm_response_received")).toHaveLength(2);
    expect(ofType(log, "llm_request_failed")).toHaveLength(0);
    expect(ofType(log, "todo_list_updated")).toHaveLength(1);
  });

  it("ends a run when its cost budget is reached, from the task or else the agent's definition", async () => {
    const expensive: ScriptTurn = { ...todo(1), usage: { input_tokens: 200_000, output_tokens: 10_000 } };
    const marker = uniqueMarker("max-budget");
    await script(marker, [expensive, expensive, done]);
    const fromTask = await startTask(defineAgent({ allowedTools: ["TodoWrite"] }), `cost ${marker}`, {
      max_budget_usd: 0.5,
    });
    const failed = await waitForTask(fromTask.id);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({ code: "max_budget_usd" });
    expect(failed.error?.message).toMatch(
      /^max_budget_usd limit reached: the task's model calls cost \$0\.\d+ of \$0\.5\.$/,
    );
    expect(failed.usage.model_calls).toBe(1);

    const fromAgent = await startTask(
      defineAgent({ allowedTools: ["TodoWrite"], maxBudgetUsd: 0.5 }),
      `cost ${marker}`,
    );
    const failedToo = await waitForTask(fromAgent.id);
    expect(failedToo.error).toMatchObject({ code: "max_budget_usd" });
    expect(ofType(await events(fromAgent.id), "run_started")[0]?.payload.max_budget_usd).toBe(0.5);
  });

  it("refuses a cost budget for a model without a price, and invalid limits, naming the field", async () => {
    const unpriced = defineAgent({ model: "model-with-no-price" });
    const body = (extra: Record<string, unknown>) => JSON.stringify({ input: "x", ...extra });
    await expectError(
      await api(`/v1/agents/${unpriced}/tasks`, { method: "POST", body: body({ max_budget_usd: 1 }) }),
      400,
      "validation_failed",
      "max_budget_usd",
    );
    for (const [field, value] of [
      ["max_turns", 0],
      ["max_turns", 1.5],
      ["max_iterations", 5000],
      ["max_budget_usd", -1],
      ["max_tokens", 0],
    ] as const) {
      await expectError(
        await api("/v1/agents/assistant/tasks", { method: "POST", body: body({ [field]: value }) }),
        400,
        "validation_failed",
        field,
      );
    }
  });

  it("refuses an agent whose maxBudgetUsd is not a positive amount", () => {
    class Bad extends Agent {}
    expect(() => new Bad({ name: "bad_budget", systemPrompt: "x", maxBudgetUsd: 0 })).toThrow(ConfigError);
  });

  it("keeps a final answer that reaches the budget: the run completes, and only a further call is stopped", async () => {
    const agent = defineAgent({});
    const marker = uniqueMarker("budget-final");
    await script(marker, [
      { content: [{ type: "text", text: "All done." }], usage: { input_tokens: 500, output_tokens: 50 } },
    ]);
    const task = await startTask(agent, `answer ${marker}`, { max_tokens: 100 });
    const finished = await waitForTask(task.id);
    expect(finished.status).toBe("completed");
    expect(finished.result).toBe("All done.");
  });
});
