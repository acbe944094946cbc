// The OpenAPI operations of one resource (Evaluation runs of an agent's test cases.), assembled by src/http/openapi/operations.ts.
import { z } from "zod";
import {
  EvaluationComparisonSchema,
  EvaluationListSchema,
  EvaluationResourceSchema,
  EvaluationResponseSchema,
} from "../../responses.ts";
import { CreateEvaluationBody, EvaluationListQuery } from "../../schemas.ts";
import { AgentName, Created, CreationHeaders, EvaluationId, type OperationSpec } from "./spec.ts";

export const EVALUATIONS: OperationSpec[] = [
  {
    method: "post",
    path: "/v1/agents/{name}/evaluations",
    operationId: "startEvaluation",
    tag: "evaluations",
    summary: "Run the agent's test cases and grade them (an evaluation run)",
    description:
      "Runs each chosen case (all, or those named or tagged in `cases`) `repeat` times, each run a task on a fresh conversation (`trigger.kind: evaluation`), a few at a time, and grades each with the agent's `evaluations` metrics as it ends. Read its progress and results at the `Location`.",
    access: "run",
    params: { path: AgentName, header: CreationHeaders },
    body: CreateEvaluationBody,
    answers: { 201: { description: "The evaluation, started.", json: EvaluationResponseSchema, headers: Created } },
    errors: [
      "agent_not_found",
      "agent_version_invalid",
      "agent_not_conversational",
      "rate_limited",
      "idempotency_key_reused",
      "workspace_full",
    ],
  },
  {
    method: "get",
    path: "/v1/agents/{name}/evaluations",
    operationId: "listEvaluations",
    tag: "evaluations",
    summary: "List the agent's evaluations, newest first, or compare two (?compare=a,b)",
    access: "read",
    params: { path: AgentName, query: EvaluationListQuery },
    answers: {
      200: {
        description:
          "One page (next_cursor continues it); with `compare`, evaluation b against a, per case and metric.",
        json: z.union([EvaluationListSchema, EvaluationComparisonSchema]),
      },
    },
    errors: ["agent_not_found", "evaluation_not_found"],
  },
  {
    method: "get",
    path: "/v1/evaluations/{id}",
    operationId: "getEvaluation",
    tag: "evaluations",
    summary: "Read an evaluation: its progress, each run's metrics, the summary",
    access: "read",
    params: { path: EvaluationId },
    answers: { 200: { description: "The evaluation.", json: EvaluationResourceSchema } },
    errors: ["evaluation_not_found"],
  },
  {
    method: "get",
    path: "/v1/evaluations/{id}/report.json",
    operationId: "getEvaluationReport",
    tag: "evaluations",
    summary: "The report of a completed evaluation, as JSON (the evaluation as it completed)",
    access: "read",
    params: { path: EvaluationId },
    answers: { 200: { description: "The report.", json: EvaluationResourceSchema.omit({ links: true }) } },
    errors: ["evaluation_not_found", "evaluation_not_completed"],
  },
  {
    method: "get",
    path: "/v1/evaluations/{id}/report.md",
    operationId: "getEvaluationMarkdown",
    tag: "evaluations",
    summary: "The report of a completed evaluation, as Markdown",
    access: "read",
    params: { path: EvaluationId },
    answers: { 200: { description: "The report.", raw: { "text/markdown": z.string() } } },
    errors: ["evaluation_not_found", "evaluation_not_completed"],
  },
];
