// Evaluation runs (seed 004 test cases and evaluations): POST /v1/agents/:name/evaluations starts one over the agent's
// test cases (all, or those named or tagged), each run repeat times as a child task in an evaluation's own Durable
// Object (durable-objects/evaluation-object.ts); GET /v1/evaluations/:id shows its progress and each run's metrics,
// …/report.json and …/report.md the report it wrote to the blob store; GET /v1/agents/:name/evaluations lists the
// agent's, newest first, or with ?compare=a,b compares two. The object's name includes the tenant, so another
// tenant's evaluation id reaches an empty object: 404.
import { type Context, Hono } from "hono";
import type { Agent } from "../../agents/agent.ts";
import { openBlobStore } from "../../blob-store/open-blob-store.ts";
import { ApiError } from "../../errors.ts";
import {
  type EvaluationView,
  evaluationStubFor,
  type GraderSpec,
  MAX_EVALUATION_RUNS,
  reportKeys,
} from "../../evaluation-runs/evaluation.ts";
import { compare } from "../../evaluation-runs/report.ts";
import { graderLlmConfig, type TestCase } from "../../evaluations/config.ts";
import { faultInjectionAllowed, faultInjectionOffMessage } from "../../faults/faults.ts";
import { agentFor } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { listEvaluations, queryObject } from "../listing.ts";
import type { EvaluationComparison, EvaluationReceipt, EvaluationResource } from "../responses.ts";
import { CreateEvaluationBody, EvaluationListQuery, TaskIdParam } from "../schemas.ts";
import { creationRefused, newRun, seedFiles } from "../task-creation.ts";
import { mayRead } from "../task-resource.ts";
import { jsonBody, parseWith } from "../validation.ts";
import { runsToolLoop } from "./agents.ts";

function evaluationNotFound(id: string, field = "id"): ApiError {
  return new ApiError("evaluation_not_found", `No evaluation with id "${id}".`, field);
}

/** The evaluation's view, or 404 (a malformed id too, without touching storage). */
async function evaluationOf(c: Context<AppEnv>, id: string, field = "id"): Promise<EvaluationView> {
  if (!TaskIdParam.safeParse(id).success) throw evaluationNotFound(id, field);
  const view = await evaluationStubFor(c.env, c.get("tenant"), id).get();
  if (!view) throw evaluationNotFound(id, field);
  return view;
}

function evaluationResource(c: Context<AppEnv>, view: EvaluationView): EvaluationResource {
  const origin = new URL(c.req.url).origin;
  const self = `${origin}/v1/evaluations/${view.id}`;
  return {
    ...view,
    links: {
      self,
      report_json: `${self}/report.json`,
      report_markdown: `${self}/report.md`,
      agent: `${origin}/v1/agents/${view.agent}`,
    },
  };
}

/** The evaluation cut to how far it is, for a key that may act but not read (the runs' answers are content). */
function evaluationReceipt(c: Context<AppEnv>, view: EvaluationView): EvaluationResource | EvaluationReceipt {
  const resource = evaluationResource(c, view);
  if (mayRead(c)) return resource;
  const { id, agent, status, progress, links } = resource;
  return { id, agent, status, progress, links };
}

/**
 * The cases a request chooses: every case, or each named one and each one tagged with a given name (in the agent's
 * order). A name that is neither a case nor a tag is a 400 naming it.
 */
function chosenCases(agent: Agent, wanted: readonly string[] | undefined): TestCase[] {
  if (agent.testCases.length === 0) {
    throw new ApiError("validation_failed", `Agent "${agent.name}" has no test_cases to run.`, "name");
  }
  if (wanted === undefined) return [...agent.testCases];
  wanted.forEach((name, index) => {
    if (!agent.testCases.some((c) => c.name === name || c.tags?.includes(name))) {
      throw new ApiError(
        "validation_failed",
        `Invalid cases.${index}: "${name}" is neither a test case of "${agent.name}" nor one of their tags.`,
        `cases.${index}`,
      );
    }
  });
  return agent.testCases.filter((c) => wanted.some((name) => c.name === name || c.tags?.includes(name)));
}

/** Routes under /v1/agents (mounted by routes/agents.ts). */
export const agentEvaluationRoutes = new Hono<AppEnv>()
  .post("/:name/evaluations", async (c) => {
    const agent = await agentFor(c, c.req.param("name"));
    const body = await jsonBody(c, CreateEvaluationBody);
    const cases = chosenCases(agent, body.cases);
    const repeat = body.repeat ?? 1;
    // A faulted case's repetition runs twice: with its faults, and without them to compare.
    const runs = cases.reduce((sum, tc) => sum + (tc.faults ? 2 : 1), 0) * repeat;
    if (runs > MAX_EVALUATION_RUNS) {
      throw new ApiError(
        "validation_failed",
        `Invalid repeat: ${cases.length} cases × ${repeat} is ${runs} runs (a faulted case runs twice), more than ${MAX_EVALUATION_RUNS}.`,
        "repeat",
      );
    }
    const faulted = cases.find((tc) => tc.faults);
    if (faulted && !faultInjectionAllowed(c.env.OUTPOST_FAULT_INJECTION, c.get("tenant"))) {
      throw new ApiError(
        "fault_injection_disabled",
        `Case "${faulted.name}" asks for faults. ${faultInjectionOffMessage(c.get("tenant"))} Name other cases in "cases".`,
        "cases",
      );
    }
    // A case with context continues a conversation: the default tool loop's to continue (as POST …/invoke).
    if (cases.some((c) => (c.context?.length ?? 0) > 0) && !runsToolLoop(agent)) {
      throw new ApiError(
        "agent_not_conversational",
        `Agent "${agent.name}" does not run the default tool loop, so it cannot continue a case's context.`,
        "name",
      );
    }
    const seeded = cases.map((c) => (c.files ? { ...c, files: seedFiles(c.files) } : c));
    // Each run's task as a task creation builds it (limits, rate limit, Idempotency-Key); the evaluation's id is the
    // creation's, and each run gets its own.
    const {
      id,
      fingerprint,
      tenant,
      input: _input,
      trigger: _none,
      files: _files,
      ...template
    } = await newRun(c, agent, body, { input: cases[0]?.input ?? "" });
    const stub = evaluationStubFor(c.env, tenant, id);
    const created = await stub.create({
      id,
      tenant,
      fingerprint: fingerprint ?? null,
      // Its runs take this key's creation tokens, one each, as they start (src/commands/stored-work.ts).
      keyId: c.get("apiKey").id,
      agent: agent.name,
      agentVersion: agent.runtime?.version ?? null,
      selection: body.cases ?? null,
      repeat,
      cases: seeded,
      evaluations: agent.evaluations,
      maxTurns: template.limits?.max_turns ?? agent.maxTurns,
      responseFormat: agent.responseFormat,
      grader: graderOf(agent, template.model),
      template,
    });
    if (!created.evaluation) throw creationRefused({ outcome: created.outcome });
    const resource = evaluationReceipt(c, created.evaluation);
    c.header("Location", resource.links.self);
    if (created.outcome === "replayed") c.header("Idempotent-Replayed", "true");
    return c.json(resource, 201);
  })
  .get("/:name/evaluations", async (c) => {
    const agent = await agentFor(c, c.req.param("name"));
    const query = parseWith(EvaluationListQuery, queryObject(c), "(query)");
    if (query.compare) {
      const [a, b] = query.compare;
      const views = [await evaluationOf(c, a, "compare"), await evaluationOf(c, b, "compare")];
      // Another agent's evaluation is not this agent's to compare: answered like an unknown id.
      for (const view of views) if (view.agent !== agent.name) throw evaluationNotFound(view.id, "compare");
      return c.json(compare(views[0] as EvaluationView, views[1] as EvaluationView) satisfies EvaluationComparison);
    }
    return c.json(await listEvaluations(c, agent.name, query));
  });

/** The grader of g_eval metrics: the evaluation's own model if it names one, else the agent's. */
function graderOf(agent: Agent, taskModel: string): GraderSpec {
  const model = agent.evaluations?.model;
  if (!model) return { llm: agent.llmConfig, model: taskModel };
  const checked = graderLlmConfig(model);
  // parseDefinition refused an unusable grader when the agent was built.
  return { llm: checked.ok ? checked.llm : null, model: model.name ?? taskModel };
}

/** Routes under /v1/evaluations. */
export const evaluationRoutes = new Hono<AppEnv>()
  .get("/:id", async (c) => c.json(evaluationResource(c, await evaluationOf(c, c.req.param("id")))))
  .get("/:id/report.json", async (c) => reportResponse(c, "json"))
  .get("/:id/report.md", async (c) => reportResponse(c, "markdown"));

async function reportResponse(c: Context<AppEnv>, format: "json" | "markdown"): Promise<Response> {
  const view = await evaluationOf(c, c.req.param("id") ?? "");
  if (view.status !== "completed") {
    throw new ApiError(
      "evaluation_not_completed",
      `Evaluation ${view.id} is still running (${view.progress.graded} of ${view.progress.total} runs graded); its report is written when it completes.`,
      "id",
    );
  }
  const key = reportKeys(c.get("tenant"), view.id)[format];
  const blob = await openBlobStore(c.env).get(key);
  if (!blob) throw evaluationNotFound(view.id);
  const type = format === "json" ? "application/json" : "text/markdown; charset=utf-8";
  return new Response(blob.body, { headers: { "content-type": type } });
}
