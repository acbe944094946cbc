// Evaluations (src/evaluation-runs/): the resource, its receipt and the listing.

import { z } from "zod";
import {
  EVALUATION_STATUSES,
  EvaluationComparisonSchema,
  EvaluationViewSchema,
} from "../../evaluation-runs/evaluation.ts";
import { TaskId, Timestamp } from "./common.ts";

// ---- Evaluations (src/evaluation-runs/) ------------------------------------------------------------------------

export const EvaluationLinksSchema = z.strictObject({
  self: z.url(),
  /** The report, once the evaluation has completed (409 evaluation_not_completed before). */
  report_json: z.url(),
  report_markdown: z.url(),
  agent: z.url(),
});

/** An evaluation as GET /v1/evaluations/:id answers (and POST /v1/agents/:name/evaluations, to a key that may read). */
export const EvaluationResourceSchema = EvaluationViewSchema.unwrap().extend({ links: EvaluationLinksSchema });
export type EvaluationResource = z.infer<typeof EvaluationResourceSchema>;

/** What POST /v1/agents/:name/evaluations answers a key that may act but not read: how far it is, never the runs'. */
export const EvaluationReceiptSchema = EvaluationViewSchema.unwrap()
  .pick({ id: true, agent: true, status: true, progress: true })
  .extend({ links: EvaluationLinksSchema });
export type EvaluationReceipt = z.infer<typeof EvaluationReceiptSchema>;

export const EvaluationResponseSchema = z.union([EvaluationResourceSchema, EvaluationReceiptSchema]);

/** What GET /v1/agents/:name/evaluations shows of each (src/tenants/evaluation-directory.ts); its own URL has the rest. */
export const EvaluationSummaryEntrySchema = z.strictObject({
  id: TaskId,
  agent: z.string(),
  status: z.enum(EVALUATION_STATUSES),
  /** Runs in all (cases × repetitions), graded so far, and passed of those. */
  total: z.number().int().nonnegative(),
  graded: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Timestamp.nullable(),
  links: z.strictObject({ self: z.url() }),
});

/** GET /v1/agents/:name/evaluations: one page, newest first; next_cursor continues it (null on the last page). */
export const EvaluationListSchema = z.strictObject({
  evaluations: z.array(EvaluationSummaryEntrySchema),
  next_cursor: z.string().nullable(),
});
export type EvaluationList = z.infer<typeof EvaluationListSchema>;

export { EvaluationComparisonSchema };
export type EvaluationComparison = z.infer<typeof EvaluationComparisonSchema>;
