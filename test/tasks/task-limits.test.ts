// A task's limits and redaction mode only tighten its agent's (src/tasks/task-limits.ts): a request that would
// loosen one is refused naming the field, and a run never goes past the limits of the agent it runs, even after a
// fork hands it to a stricter agent.
import { describe, expect, it } from "vitest";
import { CheckpointListSchema, type TaskResource, TaskResourceSchema } from "../../src/http/responses.ts";
import { derivedTaskId } from "../../src/tasks/task-ids.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  events,
  expectError,
  ofType,
  parseBody,
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

/** POSTs a task under an Idempotency-Key, so that the test can tell afterwards whether a task was created. */
async function create(agent: string, extra: Record<string, unknown>): Promise<{ res: Response; key: string }> {
  const key = `limits-${crypto.randomUUID()}`;
  const res = await api(`/v1/agents/${agent}/tasks`, {
    method: "POST",
    headers: { "idempotency-key": key },
    body: JSON.stringify({ input: "Never run: limits", dry_run: true, ...extra }),
  });
  return { res, key };
}

async function expectNoTask(key: string): Promise<void> {
  const res = await api(`/v1/tasks/${await derivedTaskId("idempotency", "default", key)}`);
  expect(res.status).toBe(404);
  await res.body?.cancel();
}

/** A completed run of `agent` over four model turns, and its first checkpoint (before any turn). */
async function finishedRun(
  agent: string,
  label: string,
  extra: Record<string, unknown> = {},
): Promise<{ task: TaskResource; start: string }> {
  const marker = uniqueMarker(label);
  await script(marker, [todo(1), todo(2), todo(3), done]);
  const task = await startTask(agent, `loop ${marker}`, extra);
  expect((await waitForTask(task.id)).status).toBe("completed");
  const list = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
  const start = list.checkpoints.find((c) => c.position === "start")?.checkpoint_id;
  if (!start) throw new Error("the run has no start checkpoint");
  return { task, start };
}

describe("a task's limits", () => {
  it("refuses a max_turns or max_iterations above the agent's maxTurns, naming the field and the agent's limit, and accepts them at it", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], maxTurns: 3 });
    for (const field of ["max_turns", "max_iterations"]) {
      const { res, key } = await create(agent, { [field]: 4 });
      const body = await expectError(res, 400, "validation_failed", field);
      expect(body.error.message).toBe(
        `${field} is 4, above the 3 model turns of the agent "${agent}" (its maxTurns); a task may lower its agent's limits, never raise them.`,
      );
      await expectNoTask(key);
    }
    const { res } = await create(agent, { max_turns: 3, max_iterations: 3 });
    expect(res.status).toBe(202);
    expect((await parseBody(res, TaskResourceSchema)).limits).toEqual({ max_turns: 3 });
  });

  it("refuses a max_budget_usd above the agent's maxBudgetUsd, naming the field and the agent's budget, and accepts its equal with any max_tokens", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], maxBudgetUsd: 2, maxTokens: 100 });
    const { res, key } = await create(agent, { max_budget_usd: 1000 });
    const body = await expectError(res, 400, "validation_failed", "max_budget_usd");
    expect(body.error.message).toBe(
      `max_budget_usd is 1000, above the $2 budget of the agent "${agent}" (its maxBudgetUsd); a task may lower its agent's limits, never raise them.`,
    );
    await expectNoTask(key);
    // A task's max_tokens counts every token of every call; the agent's maxTokens is one call's output, a different
    // limit, so it does not cap it.
    const accepted = await create(agent, { max_budget_usd: 2, max_tokens: 50_000 });
    expect(accepted.res.status).toBe(202);
    expect((await parseBody(accepted.res, TaskResourceSchema)).limits).toEqual({
      max_budget_usd: 2,
      max_tokens: 50_000,
    });
  });

  it("runs a fork handed to a stricter agent within that agent's limits, not the looser ones it inherited", async () => {
    const loose = defineAgent({ allowedTools: ["TodoWrite"], maxTurns: 10 });
    const strict = defineAgent({ allowedTools: ["TodoWrite"], maxTurns: 2, maxBudgetUsd: 1 });
    const { task: origin, start } = await finishedRun(loose, "fork-limits", { max_turns: 8, max_budget_usd: 50 });
    const res = await api(`/v1/tasks/${origin.id}/fork`, {
      method: "POST",
      body: JSON.stringify({ checkpoint_id: start, state_updates: { current_agent: strict } }),
    });
    expect(res.status).toBe(202);
    const forked = await parseBody(res, TaskResourceSchema);
    // The fork records what it inherited; the run enforces the smaller of that and its agent's.
    expect(forked.limits).toEqual({ max_turns: 8, max_budget_usd: 50 });
    const finished = await waitForTask(forked.id);
    expect(finished.status).toBe("failed");
    expect(finished.error?.message).toMatch(/^max_turns limit reached \(2 model turns\)/);
    const log = await events(forked.id);
    expect(ofType(log, "run_started")[0]?.payload).toMatchObject({ max_turns: 2, max_budget_usd: 1, max_tokens: null });
    expect(ofType(log, "llm_request_sent")).toHaveLength(2);
  });
});

describe("a task's redaction mode", () => {
  it("cannot be full on an agent that redacts: 400 naming redaction_mode, and no task", async () => {
    const agent = defineAgent({ redactionMode: "redacted" });
    const { res, key } = await create(agent, { redaction_mode: "full" });
    const body = await expectError(res, 400, "validation_failed", "redaction_mode");
    expect(body.error.message).toBe(
      `The agent "${agent}" keeps prompts and responses out of its tasks' events (redactionMode "redacted"); a task cannot ask for "full".`,
    );
    await expectNoTask(key);
  });

  it("stays redacted on a fork handed to an agent that redacts, though its origin was full", async () => {
    const full = defineAgent({ allowedTools: ["TodoWrite"] });
    const redacting = defineAgent({ allowedTools: ["TodoWrite"], redactionMode: "redacted" });
    const { task, start } = await finishedRun(full, "fork-redaction");
    expect(task.redaction_mode).toBe("full");
    const res = await api(`/v1/tasks/${task.id}/fork`, {
      method: "POST",
      body: JSON.stringify({ checkpoint_id: start, state_updates: { current_agent: redacting } }),
    });
    expect(res.status).toBe(202);
    const forked = await parseBody(res, TaskResourceSchema);
    expect(forked.redaction_mode).toBe("redacted");
    await waitForTask(forked.id);
    expect((await events(forked.id)).every((e) => e.redaction_mode === "redacted")).toBe(true);
  });
});
