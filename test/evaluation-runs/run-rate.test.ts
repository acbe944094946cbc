// An evaluation's runs count against the key that started it (issue 36, stored work): each run takes a token of that
// key's creation rate before its task starts, and a run that finds no room waits, pending, until the key has room
// again (it does not fail): the evaluation's alarm comes back when the bucket will have a token. A run not yet
// started when its key is gone from OUTPOST_API_KEYS fails, saying so, and the evaluation still completes. The key is
// "limited" (3 tasks a minute, vitest.config.ts); its bucket is set directly, as a minute passing would leave it.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { evaluationStubFor } from "../../src/evaluation-runs/evaluation.ts";
import { type EvaluationResource, EvaluationResourceSchema } from "../../src/http/responses.ts";
import { api, apiJson, defineAgent, parseBody, script, uniqueMarker, waitForTask } from "../support/helpers.ts";

const KEY = "test-limited-key";
const TENANT = "limits";

/** The key's creation bucket (durable-objects/rate-limiter.ts) holding `tokens` as of now. */
async function setBucket(tokens: number): Promise<void> {
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("key:limited"));
  await runInDurableObject(limiter, (_instance, state) => {
    state.storage.sql.exec("INSERT OR REPLACE INTO bucket (id, tokens, at) VALUES (1, ?, ?)", tokens, Date.now());
  });
}

/** An agent with three cases, each answered "ok" at once. */
async function threeCases(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  const names = ["a", "b", "c"];
  const agent = defineAgent({
    testCases: names.map((name) => ({ name, input: `Say ok. ${marker}-${name}`, expected_output: "ok" })),
    evaluations: { metrics: [{ type: "contains" }] },
  });
  for (const name of names) await script(`${marker}-${name}`, [{ content: [{ type: "text", text: "ok" }] }]);
  return agent;
}

async function startEvaluation(agent: string): Promise<EvaluationResource> {
  const res = await api(`/v1/agents/${agent}/evaluations`, { method: "POST", body: "{}", key: KEY });
  if (res.status !== 201) throw new Error(`evaluation refused: ${res.status} ${await res.text()}`);
  return parseBody(res, EvaluationResourceSchema);
}

function view(id: string): Promise<EvaluationResource> {
  return apiJson(`/v1/evaluations/${id}`, EvaluationResourceSchema, { key: KEY });
}

/** Reads the evaluation until `done` holds of it (10 s at most). */
async function until(id: string, done: (e: EvaluationResource) => boolean): Promise<EvaluationResource> {
  for (let i = 0; i < 200; i++) {
    const now = await view(id);
    if (done(now)) return now;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`evaluation ${id} never reached the awaited state`);
}

function stub(id: string) {
  return evaluationStubFor(env, TENANT, id);
}

describe("an evaluation's runs and its key's creation rate", () => {
  it("starts a run only with a token of the key's rate; one without room waits, pending, and starts once there is", async () => {
    const agent = await threeCases("eval-rate");
    await setBucket(3);
    // The creation takes one token; the first two runs take the other two; the third finds none.
    const started = await startEvaluation(agent);
    expect(started.runs.map((r) => r.status)).toEqual(["running", "running", "pending"]);
    for (const run of started.runs.slice(0, 2))
      expect((await waitForTask(run.task_id, 20, KEY)).status).toBe("completed");
    const graded = await until(started.id, (e) => e.progress.graded === 2);
    // It waits, not fails: still pending, and the alarm comes back when the bucket has a token (20 s at 3 a minute),
    // not at once.
    expect([graded.status, graded.runs[2]?.status, graded.progress.pending]).toEqual(["running", "pending", 1]);
    const alarm = await runInDurableObject(stub(started.id), (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThan(Date.now() + 5_000);
    expect(alarm).toBeLessThanOrEqual(Date.now() + 20_000);

    // A minute on, the bucket has room: the alarm starts the third run, which takes its token.
    await setBucket(3);
    expect(await runDurableObjectAlarm(stub(started.id))).toBe(true);
    const done = await until(started.id, (e) => e.status === "completed");
    expect(done.runs.map((r) => [r.case, r.status, r.passed])).toEqual([
      ["a", "graded", true],
      ["b", "graded", true],
      ["c", "graded", true],
    ]);
    const left = await runInDurableObject(env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("key:limited")), (_i, s) =>
      Math.floor(s.storage.sql.exec<{ tokens: number }>("SELECT tokens FROM bucket").one().tokens),
    );
    expect(left).toBe(2);
  });

  it("fails the runs not yet started once the key that started it is gone, and completes", async () => {
    const agent = await threeCases("eval-revoked");
    await setBucket(2);
    const started = await startEvaluation(agent);
    expect(started.runs.map((r) => r.status)).toEqual(["running", "pending", "pending"]);
    // The operator removes the key from OUTPOST_API_KEYS (here: the evaluation's record of it names one not listed).
    await runInDurableObject(stub(started.id), (_instance, state) => {
      const row = state.storage.sql.exec<{ spec: string }>("SELECT spec FROM evaluation_spec").one();
      const spec = { ...JSON.parse(row.spec), keyId: "retired-key" };
      state.storage.sql.exec("UPDATE evaluation_spec SET spec = ?", JSON.stringify(spec));
    });
    await setBucket(3);
    expect(await runDurableObjectAlarm(stub(started.id))).toBe(true);
    const done = await until(started.id, (e) => e.status === "completed");
    const reason =
      "The run's task could not be started: the API key that started the evaluation (retired-key) is no longer listed.";
    expect(done.runs.map((r) => [r.case, r.status, r.passed, r.reason])).toEqual([
      ["a", "graded", true, null],
      ["b", "graded", false, reason],
      ["c", "graded", false, reason],
    ]);
  });
});
