// Faulted test cases (issue 17 §2) in evaluation runs: each repetition of a case with `faults` runs twice, with the
// faults and without them (its baseline); the faulted run is graded by the metrics, the baseline only compared with
// it, and the report says whether the answer and tool effects came out the same and what the recovery cost.
import { describe, expect, it } from "vitest";
import { type EvaluationResource, EvaluationResourceSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  expectError,
  parseBody,
  type ScriptTurn,
  script,
  toolUse,
  uniqueMarker,
} from "../support/helpers.ts";

/** Reads the evaluation until it has completed (30 s at most). */
async function completed(id: string): Promise<EvaluationResource> {
  for (let i = 0; i < 300; i++) {
    const view = await apiJson(`/v1/evaluations/${id}`, EvaluationResourceSchema);
    if (view.status === "completed") return view;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`evaluation ${id} did not complete`);
}

/** Two TodoWrite calls, then the answer: three model calls, six checkpoints. */
function planScript(): ScriptTurn[] {
  const todo = (content: string, status: string) => ({ todos: [{ content, status }] });
  return [
    { content: [toolUse("TodoWrite", todo("Pack", "pending"))], stop_reason: "tool_use" },
    { content: [toolUse("TodoWrite", todo("Pack", "completed"))], stop_reason: "tool_use" },
    { content: [{ type: "text", text: "Planned: pack, then go." }], usage: { input_tokens: 100, output_tokens: 10 } },
  ];
}

async function faultedSuite(label: string) {
  const marker = uniqueMarker(label);
  const cases = {
    steady: undefined,
    overloaded: { model_fault: { kind: "529", call: 2 } },
    evicted: { evict_after_step: 3 },
    dropped: { drop_client: true },
    broken: { model_fault: { kind: "malformed", call: 3 } },
  } as const;
  const agent = defineAgent({
    allowedTools: ["TodoWrite"],
    testCases: Object.entries(cases).map(([name, faults]) => ({
      name,
      input: `Plan it. ${marker}-${name}`,
      expected_output: "Planned",
      expected_tools: ["TodoWrite", "TodoWrite"],
      ...(faults ? { faults } : {}),
    })),
    evaluations: { metrics: [{ type: "contains" }, { type: "tool_calls" }] },
  });
  for (const name of Object.keys(cases)) await script(`${marker}-${name}`, planScript());
  return agent;
}

describe("an evaluation's faulted cases", () => {
  it("runs each with its faults and without, grades the faulted run, and reports what the faults changed", async () => {
    const agent = await faultedSuite("eval-faults");
    const res = await api(`/v1/agents/${agent}/evaluations`, { method: "POST", body: "{}" });
    expect(res.status).toBe(201);
    const started = await parseBody(res, EvaluationResourceSchema);
    // Five cases, four of them faulted: nine runs.
    expect(started.progress.total).toBe(9);
    const done = await completed(started.id);

    expect(done.runs.map((r) => [r.case, r.baseline, r.passed])).toEqual([
      ["steady", false, true],
      ["overloaded", false, true],
      ["overloaded", true, true],
      ["evicted", false, true],
      ["evicted", true, true],
      ["dropped", false, true],
      ["dropped", true, true],
      ["broken", false, false],
      ["broken", true, true],
    ]);
    // Baselines are compared with, not counted: five runs, one failed.
    expect(done.summary).toMatchObject({ runs: 5, passed: 4, failed: 1 });
    expect(done.summary.cases.map((c) => [c.case, c.runs])).toEqual([
      ["steady", 1],
      ["overloaded", 1],
      ["evicted", 1],
      ["dropped", 1],
      ["broken", 1],
    ]);
    expect(done.passed).toBe(false);
    const byCase = (name: string, baseline = false) =>
      done.runs.find((r) => r.case === name && r.baseline === baseline);
    expect(byCase("steady")?.fault).toBeNull();
    expect(byCase("overloaded", true)?.fault).toBeNull();

    const same = { same_status: true, same_answer: true, same_tool_effects: true, differences: [] };
    const overloaded = byCase("overloaded")?.fault;
    expect(overloaded).toMatchObject({
      faults: { model_fault: { kind: "529", call: 2 } },
      baseline_task_id: byCase("overloaded", true)?.task_id,
      injected: [{ fault: "model_fault", kind: "529", call: 2, step: null, server: null, tool: null }],
      ...same,
      client: null,
    });
    // The SDK's retry happened before any token was counted: the recovery cost time only.
    expect(overloaded?.recovery).toMatchObject({ model_calls: 0, tokens: 0, retried_calls: 0, retried_tokens: 0 });

    expect(byCase("evicted")?.fault).toMatchObject({
      injected: [{ fault: "evict_after_step", kind: "evict", step: 3 }],
      ...same,
      recovery: { model_calls: 0, tokens: 0 },
    });

    const dropped = byCase("dropped")?.fault;
    expect(dropped).toMatchObject({ injected: [{ fault: "drop_client", kind: "drop", step: 2 }], ...same });
    expect(dropped?.client?.gapless).toBe(true);
    expect(dropped?.client?.resumed_events).toBeGreaterThan(3);
    expect(dropped?.client?.dropped_after_seq).toBeGreaterThan(0);

    const broken = byCase("broken")?.fault;
    expect(broken).toMatchObject({
      injected: [{ fault: "model_fault", kind: "malformed", call: 3 }],
      same_status: false,
      same_answer: false,
      same_tool_effects: true,
    });
    expect(broken?.differences).toEqual([
      expect.stringMatching(/^Without the fault the run succeeded; with it, it failed \(.*\)\.$/),
      "The answer differs from the one without the fault.",
    ]);
    // The broken run made its third call and lost its answer: fewer tokens than the baseline's.
    expect(broken?.recovery?.tokens).toBeLessThan(0);

    const text = await (await api(`/v1/evaluations/${started.id}/report.md`)).text();
    expect(text).toContain("## Faults");
    expect(text).toContain("| overloaded | #1 | model_fault 529 | yes | yes | yes | 0 | 0 |");
    expect(text).toContain("| broken | #1 | model_fault malformed | **no** | **no** | yes |");
    expect(text).toContain("- broken #1: The answer differs from the one without the fault.");
  });

  it("refuses faulted cases where fault injection is off for the tenant, but runs its other cases", async () => {
    const agent = await faultedSuite("eval-faults-off");
    const refused = await api(`/v1/agents/${agent}/evaluations`, {
      method: "POST",
      key: "test-beta-key",
      body: JSON.stringify({ cases: ["overloaded"] }),
    });
    const body = await expectError(refused, 403, "fault_injection_disabled", "cases");
    expect(body.error.message).toContain('Case "overloaded" asks for faults.');
    // The tenant may still run the cases without faults.
    const allowed = await api(`/v1/agents/${agent}/evaluations`, {
      method: "POST",
      key: "test-beta-key",
      body: JSON.stringify({ cases: ["steady"] }),
    });
    expect(allowed.status).toBe(201);
  });
});
