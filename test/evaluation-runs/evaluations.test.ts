// Evaluation runs through the HTTP API: POST /v1/agents/:name/evaluations runs an agent's test cases as child tasks
// against the emulator, each child reports its ExecutionResult to the evaluation's object when it ends, the object
// grades it (a G-Eval grader included) and writes the report; GET /v1/evaluations/:id shows the runs and the summary,
// the agent's listing and ?compare=a,b show two runs side by side; an eviction of the evaluation's object changes
// nothing; another tenant sees none of it.

import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { evaluationStubFor } from "../../src/evaluation-runs/evaluation.ts";
import {
  type EvaluationComparison,
  EvaluationComparisonSchema,
  EvaluationListSchema,
  EvaluationReceiptSchema,
  type EvaluationResource,
  EvaluationResourceSchema,
  TaskResourceSchema,
} from "../../src/http/responses.ts";
import { DEFAULT_TENANT } from "../../src/tenants/api-keys.ts";
import {
  api,
  apiJson,
  defineAgent,
  expectError,
  parseBody,
  script,
  toolUse,
  uniqueMarker,
} from "../support/helpers.ts";

async function startEvaluation(agent: string, body: Record<string, unknown> = {}, key?: string): Promise<Response> {
  return api(`/v1/agents/${agent}/evaluations`, {
    method: "POST",
    body: JSON.stringify(body),
    ...(key ? { key } : {}),
  });
}

/** Reads the evaluation until it has completed (10 s at most). */
async function completed(id: string): Promise<EvaluationResource> {
  for (let i = 0; i < 200; i++) {
    const view = await apiJson(`/v1/evaluations/${id}`, EvaluationResourceSchema);
    if (view.status === "completed") return view;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`evaluation ${id} did not complete`);
}

/** An agent with two cases, every metric kind among its metrics, and scripts for its runs and its grader. */
async function suite(label: string) {
  const marker = uniqueMarker(label);
  const grader = uniqueMarker(`${label}-grader`);
  const agent = defineAgent({
    allowedTools: ["TodoWrite"],
    testCases: [
      {
        name: "capital",
        input: `What is the capital of France? ${marker}-capital`,
        expected_output: "Paris",
        ground_truth: "The capital of France is Paris.",
        expected_tools: [],
        tags: ["geo"],
      },
      {
        name: "plan",
        input: `Plan the trip. ${marker}-plan`,
        context: [
          { role: "user", content: `We go to Rome. ${marker}-plan` },
          { role: "assistant", content: "Noted." },
        ],
        expected_output: "Planned",
        expected_tools: [{ name: "TodoWrite", arguments: { todos: [{ content: "Book train", status: "pending" }] } }],
      },
    ],
    evaluations: {
      metrics: [
        { type: "contains" },
        { type: "regex", pattern: "^[A-Z]" },
        { type: "tool_calls" },
        { type: "rouge_l", threshold: 0.1 },
        { type: "g_eval", name: "Helpful", criteria: `Is the answer helpful? ${grader}`, threshold: 0.5 },
      ],
    },
  });
  await script(`${marker}-capital`, [
    {
      content: [{ type: "text", text: "The capital of France is Paris." }],
      usage: { input_tokens: 100, output_tokens: 10 },
    },
  ]);
  // The emulator's turn is the number of assistant messages so far: the context's "Noted." is turn 0's.
  await script(`${marker}-plan`, [
    { content: [{ type: "text", text: "Noted." }] },
    {
      content: [toolUse("TodoWrite", { todos: [{ content: "Book train", status: "pending" }] })],
      stop_reason: "tool_use",
    },
    { content: [{ type: "text", text: "Planned: book the train." }] },
  ]);
  // Registered last, so the grader's calls (whose message quotes the case's input) get the grader's script.
  await script(grader, [
    {
      content: [{ type: "text", text: '{"score": 9, "reasoning": "Direct and correct."}' }],
      usage: { input_tokens: 50, output_tokens: 5 },
    },
  ]);
  return { agent, marker };
}

describe("POST /v1/agents/:name/evaluations", () => {
  it("runs every case, grades every metric of each run, and completes with the summary", async () => {
    const { agent } = await suite("eval-all");
    const res = await startEvaluation(agent);
    expect(res.status).toBe(201);
    const started = await parseBody(res, EvaluationResourceSchema);
    expect(res.headers.get("location")).toBe(`https://outpost.test/v1/evaluations/${started.id}`);
    expect(started).toMatchObject({ agent, status: "running", selection: null, repeat: 1 });
    expect(started.progress.total).toBe(2);

    const done = await completed(started.id);
    expect(done.passed).toBe(true);
    expect(done.progress).toEqual({ total: 2, pending: 0, running: 0, graded: 2 });
    expect(done.runs.map((r) => [r.case, r.repetition, r.status, r.passed, r.reason])).toEqual([
      ["capital", 1, "graded", true, null],
      ["plan", 1, "graded", true, null],
    ]);
    const capital = done.runs[0];
    expect(capital?.metrics.map((m) => [m.metric, m.score, m.passed])).toEqual([
      ["contains", 1, true],
      ["regex", 1, true],
      ["tool_calls", 1, true],
      ["rouge_l", 1, true],
      ["Helpful", 0.9, true],
    ]);
    expect(capital?.metrics.at(-1)?.reason).toBe("Direct and correct.");
    expect(done.runs[1]?.metrics.find((m) => m.metric === "tool_calls")).toMatchObject({
      score: 1,
      reason: "1 of 1 expected calls made in order",
    });
    expect(done.runs[1]?.num_turns).toBe(2);
    expect(done.summary).toMatchObject({
      runs: 2,
      passed: 2,
      failed: 0,
      pass_rate: 1,
      cases: [
        { case: "capital", runs: 1, passed: 1, pass_rate: 1 },
        { case: "plan", runs: 1, passed: 1, pass_rate: 1 },
      ],
      tokens: { grader_input: 100, grader_output: 10 },
    });
    expect(done.summary.metrics.find((m) => m.metric === "Helpful")).toEqual({
      metric: "Helpful",
      type: "g_eval",
      threshold: 0.5,
      runs: 2,
      passed: 2,
      pass_rate: 1,
      scores: { min: 0.9, mean: 0.9, median: 0.9, max: 0.9, histogram: [0, 0, 0, 0, 2] },
    });

    // Each run is an ordinary task on a fresh conversation, its trigger naming the evaluation.
    const task = await apiJson(`/v1/tasks/${capital?.task_id}`, TaskResourceSchema);
    expect(task.trigger).toEqual({ kind: "evaluation", evaluation_id: started.id, case: "capital", repetition: 1 });
    expect(task.result).toBe("The capital of France is Paris.");
  });

  it("writes the report, JSON and Markdown, to the blob store when it completes", async () => {
    const { agent } = await suite("eval-report");
    const started = await parseBody(await startEvaluation(agent, { cases: ["capital"] }), EvaluationResourceSchema);
    const done = await completed(started.id);
    const json = await api(`/v1/evaluations/${started.id}/report.json`);
    expect(json.status).toBe(200);
    expect(json.headers.get("content-type")).toBe("application/json");
    const { links: _links, ...view } = done;
    expect(await json.json()).toEqual(view);
    const markdown = await api(`/v1/evaluations/${started.id}/report.md`);
    expect(markdown.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    const text = await markdown.text();
    expect(text).toContain(`# Evaluation ${started.id}`);
    expect(text).toContain("**passed**, 1 of 1 runs passed (100%).");
    expect(text).toContain("| capital | 1 | 1 | 100% |");
    expect(text).toContain("| Helpful | g_eval | 0.5 | 100% | 0.9 | 0.9 | 0.9 | 0.9 |");
  });

  it("fails a run below a threshold and one that used all its turns, saying why", async () => {
    const marker = uniqueMarker("eval-fail");
    const agent = defineAgent({
      allowedTools: ["TodoWrite"],
      maxTurns: 2,
      testCases: [
        { name: "wrong", input: `Capital? ${marker}-wrong`, expected_output: "Paris" },
        { name: "loops", input: `Loop. ${marker}-loops`, expected_output: "Done" },
      ],
      evaluations: { metrics: [{ type: "contains" }] },
    });
    await script(`${marker}-wrong`, [{ content: [{ type: "text", text: "Lyon." }] }]);
    const todo = toolUse("TodoWrite", { todos: [{ content: "again", status: "pending" }] });
    await script(`${marker}-loops`, [
      { content: [todo], stop_reason: "tool_use" },
      { content: [todo], stop_reason: "tool_use" },
    ]);
    const started = await parseBody(await startEvaluation(agent), EvaluationResourceSchema);
    const done = await completed(started.id);
    expect(done.passed).toBe(false);
    expect(done.runs.map((r) => [r.case, r.passed, r.reason, r.num_turns])).toEqual([
      ["wrong", false, "below threshold: contains 0 < 1", 1],
      ["loops", false, "max_turns limit reached", 2],
    ]);
    expect(done.summary).toMatchObject({ runs: 2, passed: 0, failed: 2, pass_rate: 0 });
  });

  it("runs the cases named or tagged, each `repeat` times", async () => {
    const { agent } = await suite("eval-repeat");
    const started = await parseBody(
      await startEvaluation(agent, { cases: ["geo"], repeat: 3 }),
      EvaluationResourceSchema,
    );
    expect(started.selection).toEqual(["geo"]);
    const done = await completed(started.id);
    expect(done.runs.map((r) => [r.case, r.repetition])).toEqual([
      ["capital", 1],
      ["capital", 2],
      ["capital", 3],
    ]);
    expect(new Set(done.runs.map((r) => r.task_id)).size).toBe(3);
    expect(done.summary.cases).toEqual([{ case: "capital", runs: 3, passed: 3, pass_rate: 1 }]);
  });

  it("refuses an unknown case or tag, an agent without cases, and a bad repeat, naming the field", async () => {
    const { agent } = await suite("eval-refusals");
    await expectError(
      await startEvaluation(agent, { cases: ["capital", "nope"] }),
      400,
      "validation_failed",
      "cases.1",
    );
    await expectError(await startEvaluation(agent, { repeat: 11 }), 400, "validation_failed", "repeat");
    await expectError(await startEvaluation(agent, { nope: 1 }), 400, "validation_failed", "nope");
    const bare = defineAgent({});
    await expectError(await startEvaluation(bare), 400, "validation_failed", "name");
  });

  it("answers a key that may run but not read with the evaluation's progress only", async () => {
    const { agent } = await suite("eval-run-scope");
    const res = await startEvaluation(agent, { cases: ["capital"] }, "test-run-key");
    expect(res.status).toBe(201);
    const receipt = await parseBody(res, EvaluationReceiptSchema);
    expect(Object.keys(receipt).sort()).toEqual(["agent", "id", "links", "progress", "status"]);
    await completed(receipt.id);
  });

  it("replays the evaluation to a repeat of the request under the same Idempotency-Key", async () => {
    const { agent } = await suite("eval-idempotent");
    const headers = { "idempotency-key": `eval-${crypto.randomUUID()}` };
    const body = JSON.stringify({ cases: ["capital"] });
    const first = await api(`/v1/agents/${agent}/evaluations`, { method: "POST", body, headers });
    const again = await api(`/v1/agents/${agent}/evaluations`, { method: "POST", body, headers });
    const a = await parseBody(first, EvaluationResourceSchema);
    const b = await parseBody(again, EvaluationResourceSchema);
    expect(b.id).toBe(a.id);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const other = await api(`/v1/agents/${agent}/evaluations`, { method: "POST", body: "{}", headers });
    await expectError(other, 422, "idempotency_key_reused", "idempotency-key");
    await completed(a.id);
  });
});

describe("an evaluation's object", () => {
  it("completes after an eviction while its runs are under way, each run started and graded once", async () => {
    const marker = uniqueMarker("eval-evict");
    const agent = defineAgent({
      testCases: [1, 2, 3, 4, 5, 6].map((n) => ({
        name: `c${n}`,
        input: `Case ${n} ${marker}`,
        expected_output: "ok",
      })),
      evaluations: { metrics: [{ type: "contains" }] },
    });
    // Slow answers: the runs are still going when the object is evicted.
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }], { ttft_ms: 300 });
    const started = await parseBody(await startEvaluation(agent), EvaluationResourceSchema);
    // Four at a time: two wait for a place.
    expect(started.runs.map((r) => r.status)).toEqual([
      "running",
      "running",
      "running",
      "running",
      "pending",
      "pending",
    ]);
    const stub = evaluationStubFor(env, DEFAULT_TENANT, started.id);
    await evictDurableObject(stub);
    const done = await completed(started.id);
    expect(done.runs.map((r) => [r.case, r.status, r.passed])).toEqual(
      [1, 2, 3, 4, 5, 6].map((n) => [`c${n}`, "graded", true]),
    );
    const rows = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM evaluation_runs WHERE status = 'graded'").one(),
    );
    expect(rows.n).toBe(6);
  });

  it("ignores a run's report once it has recorded it", async () => {
    const { agent } = await suite("eval-repeat-report");
    const started = await parseBody(await startEvaluation(agent, { cases: ["capital"] }), EvaluationResourceSchema);
    const done = await completed(started.id);
    const run = done.runs[0];
    if (!run) throw new Error("no run");
    const stub = evaluationStubFor(env, DEFAULT_TENANT, started.id);
    await stub.runEnded({
      task_id: run.task_id,
      result: {
        response: "",
        tool_calls: [],
        tool_results: [],
        token_usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        structured_output: null,
        num_turns: 9,
        is_error: true,
        error_reason: "late",
      },
      usage: null,
      duration_ms: null,
    });
    const after = await apiJson(`/v1/evaluations/${started.id}`, EvaluationResourceSchema);
    expect(after.runs).toEqual(done.runs);
    expect(after.summary.passed).toBe(1);
  });
});

describe("GET /v1/agents/:name/evaluations", () => {
  it("lists the agent's evaluations newest first, and compares two case by case and metric by metric", async () => {
    const marker = uniqueMarker("eval-compare");
    const agent = defineAgent({
      testCases: [
        { name: "a", input: `A ${marker}-a`, expected_output: "yes" },
        { name: "b", input: `B ${marker}-b`, expected_output: "yes" },
      ],
      evaluations: { metrics: [{ type: "contains" }, { type: "rouge_l", threshold: 0.5 }] },
    });
    await script(`${marker}-a`, [{ content: [{ type: "text", text: "yes" }] }]);
    await script(`${marker}-b`, [{ content: [{ type: "text", text: "no" }] }]);
    const first = await parseBody(await startEvaluation(agent), EvaluationResourceSchema);
    await completed(first.id);
    // The agent's answer to b improves between the two runs.
    await script(`${marker}-b`, [{ content: [{ type: "text", text: "yes" }] }]);
    const second = await parseBody(await startEvaluation(agent), EvaluationResourceSchema);
    await completed(second.id);

    let list = await apiJson(`/v1/agents/${agent}/evaluations`, EvaluationListSchema);
    for (let i = 0; i < 50 && list.evaluations[0]?.status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      list = await apiJson(`/v1/agents/${agent}/evaluations`, EvaluationListSchema);
    }
    expect(list.evaluations.map((e) => [e.id, e.status, e.total, e.graded, e.passed])).toEqual([
      [second.id, "completed", 2, 2, 2],
      [first.id, "completed", 2, 2, 1],
    ]);
    const page = await apiJson(`/v1/agents/${agent}/evaluations?limit=1`, EvaluationListSchema);
    expect(page.evaluations.map((e) => e.id)).toEqual([second.id]);
    const rest = await apiJson(
      `/v1/agents/${agent}/evaluations?limit=1&cursor=${page.next_cursor}`,
      EvaluationListSchema,
    );
    expect(rest.evaluations.map((e) => e.id)).toEqual([first.id]);

    const comparison: EvaluationComparison = await apiJson(
      `/v1/agents/${agent}/evaluations?compare=${first.id},${second.id}`,
      EvaluationComparisonSchema,
    );
    expect(comparison).toEqual({
      a: first.id,
      b: second.id,
      pass_rate: { a: 0.5, b: 1, delta: 0.5 },
      cases: [
        {
          case: "a",
          a: 1,
          b: 1,
          delta: 0,
          change: "same",
          metrics: [
            { metric: "contains", a: 1, b: 1, delta: 0 },
            { metric: "rouge_l", a: 1, b: 1, delta: 0 },
          ],
        },
        {
          case: "b",
          a: 0,
          b: 1,
          delta: 1,
          change: "improved",
          metrics: [
            { metric: "contains", a: 0, b: 1, delta: 1 },
            { metric: "rouge_l", a: 0, b: 1, delta: 1 },
          ],
        },
      ],
    });
  });

  it("refuses to compare an unknown evaluation or another agent's", async () => {
    const { agent } = await suite("eval-compare-other");
    const other = await suite("eval-compare-other-2");
    const mine = await parseBody(await startEvaluation(agent, { cases: ["capital"] }), EvaluationResourceSchema);
    const theirs = await parseBody(
      await startEvaluation(other.agent, { cases: ["capital"] }),
      EvaluationResourceSchema,
    );
    const unknown = crypto.randomUUID();
    await expectError(
      await api(`/v1/agents/${agent}/evaluations?compare=${mine.id},${unknown}`),
      404,
      "evaluation_not_found",
      "compare",
    );
    await expectError(
      await api(`/v1/agents/${agent}/evaluations?compare=${mine.id},${theirs.id}`),
      404,
      "evaluation_not_found",
      "compare",
    );
    await expectError(
      await api(`/v1/agents/${agent}/evaluations?compare=${mine.id}`),
      400,
      "validation_failed",
      "compare",
    );
    await completed(mine.id);
    await completed(theirs.id);
  });
});

describe("an evaluation of another tenant", () => {
  it("is not found, nor its report, nor listed", async () => {
    const { agent } = await suite("eval-tenant");
    const started = await parseBody(await startEvaluation(agent, { cases: ["capital"] }), EvaluationResourceSchema);
    await completed(started.id);
    const beta = "test-beta-key";
    await expectError(await api(`/v1/evaluations/${started.id}`, { key: beta }), 404, "evaluation_not_found", "id");
    await expectError(
      await api(`/v1/evaluations/${started.id}/report.json`, { key: beta }),
      404,
      "evaluation_not_found",
      "id",
    );
    const list = await apiJson(`/v1/agents/${agent}/evaluations`, EvaluationListSchema, { key: beta });
    expect(list.evaluations).toEqual([]);
  });

  it("answers 404 for a malformed id, and 409 for the report of one still running", async () => {
    await expectError(await api("/v1/evaluations/not-an-id"), 404, "evaluation_not_found", "id");
    const marker = uniqueMarker("eval-running");
    const agent = defineAgent({
      testCases: [{ name: "slow", input: `Slow ${marker}`, expected_output: "ok" }],
      evaluations: { metrics: [{ type: "contains" }] },
    });
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }], { ttft_ms: 1_000 });
    const started = await parseBody(await startEvaluation(agent), EvaluationResourceSchema);
    await expectError(await api(`/v1/evaluations/${started.id}/report.md`), 409, "evaluation_not_completed", "id");
    await completed(started.id);
  });
});
