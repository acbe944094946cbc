// The OpenAPI operations of one resource (Inbound webhooks: signed deliveries that start runs.), assembled by src/http/openapi/operations.ts.
import { z } from "zod";
import { JsonObjectSchema } from "../../../lib/json.ts";
import { HookReceiptSchema, HookResponseSchema } from "../../responses.ts";
import type { OperationSpec } from "./spec.ts";

export const HOOKS: OperationSpec[] = [
  {
    method: "post",
    path: "/v1/hooks/{hook_id}",
    operationId: "receiveHookDelivery",
    tag: "hooks",
    summary: "Deliver a signed webhook that starts a run",
    description:
      "No API key: the delivery's signature authenticates it (GitHub's X-Hub-Signature-256, or Standard Webhooks' webhook-id, webhook-timestamp and webhook-signature, as the hook declares). A delivery is admitted once; a repeat gets the task the first one started. Bodies up to 1 MiB.",
    access: "signature",
    params: { path: z.object({ hook_id: z.string().describe("The hook's id, as its agent declares it.") }) },
    rawBody: {
      description: "The sender's payload: JSON, or GitHub's form encoding (payload=<json>).",
      content: { "application/json": JsonObjectSchema, "application/x-www-form-urlencoded": z.string() },
    },
    answers: {
      200: { description: "A ping, an event the hook ignores, or a repeat.", json: HookResponseSchema },
      202: { description: "The delivery started a task.", json: HookReceiptSchema },
    },
    errors: [
      "hook_not_found",
      "hook_not_configured",
      "signature_missing",
      "signature_invalid",
      "timestamp_out_of_tolerance",
      "payload_too_large",
      "invalid_json",
      "validation_failed",
      "task_expired",
      "hook_input_empty",
      "hook_input_too_long",
      "rate_limited",
    ],
  },
];
