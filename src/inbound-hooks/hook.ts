// Inbound webhooks (POST /v1/hooks/:hook_id): an agent declares hooks, each with the scheme that signs its
// deliveries, the Worker secret that verifies them, and a template that turns a delivery into the task's input.
// A delivery is admitted once: its id (and, for GitHub, the digest of its signed body) names the task, so a repeat
// finds the task the first one started.
import { verify as verifyGithub } from "@octokit/webhooks-methods";
import Mustache from "mustache";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { z } from "zod";
import { secretName } from "../lib/secrets.ts";
import { sha256Hex } from "../lib/sha256.ts";
import { derivedTaskId } from "../tasks/task-ids.ts";
import { DEFAULT_TENANT, TENANT_PATTERN } from "../tenants/api-keys.ts";

export const HOOK_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const HOOK_SCHEMES = ["standard", "github"] as const;
/**
 * Runs a hook may start per minute unless it sets rate_limit_per_minute: the same default as an API key's task
 * creations (DEFAULT_RATE_LIMIT_PER_MINUTE), since each run costs the same whoever starts it.
 */
export const DEFAULT_HOOK_RATE_LIMIT_PER_MINUTE = 60;

const HookDefinitionSchema = z.strictObject({
  /** "standard": Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature); "github": X-Hub-Signature-256. */
  scheme: z.enum(HOOK_SCHEMES),
  /**
   * The name of the Worker secret that verifies deliveries (never the secret itself); never one of Outpost's own, or
   * a hook would prove knowledge of it (src/lib/secrets.ts).
   */
  secret: secretName("GITHUB_WEBHOOK_SECRET"),
  /**
   * A Mustache template rendering the task's input from {payload, event, delivery_id, hook_id}; values are inserted
   * as they are (no HTML escaping).
   */
  input: z
    .string()
    .min(1)
    .max(20_000)
    .superRefine((template, ctx) => {
      const problem = templateProblem(template);
      if (problem) ctx.addIssue({ code: "custom", message: `is not a valid template: ${problem}` });
    }),
  /**
   * GitHub: the X-GitHub-Event values that start a run; others, and a delivery with no X-GitHub-Event at all, are
   * acknowledged and ignored. All if absent.
   */
  events: z.array(z.string().min(1).max(64)).min(1).optional(),
  /** Whose tasks the deliveries start. */
  tenant: z.string().regex(TENANT_PATTERN).default(DEFAULT_TENANT),
  /** Fixed metadata for the tasks it starts (each task also records the delivery as its trigger). */
  metadata: z.record(z.string().min(1).max(64), z.union([z.string().max(2_000), z.number(), z.boolean()])).optional(),
  /** Runs its deliveries may start per minute (a token bucket per hook); DEFAULT_HOOK_RATE_LIMIT_PER_MINUTE if absent. */
  rate_limit_per_minute: z.number().int().min(1).max(100_000).optional(),
});
export type HookDefinition = z.input<typeof HookDefinitionSchema>;
export type HookSpec = z.output<typeof HookDefinitionSchema> & { id: string };

/**
 * An agent's `hooks` (src/agents/definition.ts composes it): by id, each hook's settings, parsed into specs. Whether
 * the agent allows each hook's tenant is checked with the rest of the definition.
 */
export const HooksSchema = z
  .record(z.string().regex(HOOK_ID_PATTERN), HookDefinitionSchema, {
    error: (issue) =>
      issue.code === "invalid_key"
        ? `hook id "${String(issue.input)}" must match ${HOOK_ID_PATTERN} (it is part of a URL)`
        : undefined,
  })
  .transform((hooks): HookSpec[] => Object.entries(hooks).map(([id, hook]) => ({ ...hook, id })));

/** Why a template cannot be rendered, or null when it can. */
function templateProblem(template: string): string | null {
  try {
    Mustache.parse(template);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export type VerifyFailure = "signature_missing" | "signature_invalid" | "timestamp_out_of_tolerance";

export interface VerifiedDelivery {
  deliveryId: string;
  event: string | null;
}

/** Checks a delivery's signature by the hook's scheme; returns its delivery id and event, or why it is refused. */
export async function verifyDelivery(
  hook: HookSpec,
  secret: string,
  body: string,
  headers: Headers,
): Promise<VerifiedDelivery | { failure: VerifyFailure; message: string }> {
  if (hook.scheme === "standard") {
    const id = headers.get("webhook-id");
    const timestamp = headers.get("webhook-timestamp");
    const signature = headers.get("webhook-signature");
    if (!id || !timestamp || !signature) {
      return {
        failure: "signature_missing",
        message: "Standard Webhooks deliveries carry webhook-id, webhook-timestamp and webhook-signature headers.",
      };
    }
    try {
      // ±5 minutes around now (the library's tolerance), and only a signature by this hook's secret.
      new Webhook(secret).verify(
        body,
        {
          "webhook-id": id,
          "webhook-timestamp": timestamp,
          "webhook-signature": signature,
        },
        // The payload is parsed later, by its content type; a parse error is not a signature failure.
        { jsonParse: false },
      );
    } catch (error) {
      const text = error instanceof WebhookVerificationError ? error.message : "";
      if (/timestamp/i.test(text)) {
        return {
          failure: "timestamp_out_of_tolerance",
          message: "webhook-timestamp is more than 5 minutes from now; the delivery may be a replay.",
        };
      }
      return { failure: "signature_invalid", message: "webhook-signature does not match this hook's secret." };
    }
    return { deliveryId: id, event: null };
  }
  const signature = headers.get("x-hub-signature-256");
  const delivery = headers.get("x-github-delivery");
  if (!signature || !delivery) {
    return {
      failure: "signature_missing",
      message: "GitHub deliveries carry X-Hub-Signature-256 and X-GitHub-Delivery headers; set the hook's secret.",
    };
  }
  let ok = false;
  try {
    ok = await verifyGithub(secret, body, signature);
  } catch {
    ok = false;
  }
  if (!ok) return { failure: "signature_invalid", message: "X-Hub-Signature-256 does not match this hook's secret." };
  return { deliveryId: delivery, event: headers.get("x-github-event") };
}

/** The task input for a delivery: the hook's template over {payload, event, delivery_id, hook_id}. */
export function renderInput(hook: HookSpec, view: Record<string, unknown>): string {
  // Prompts are not HTML: values go in as they are.
  return Mustache.render(hook.input, view, undefined, { escape: (value: unknown) => String(value) });
}

/** Whether a hook starts a run on a delivery of `event` (null: the sender named none). */
export function runsOn(hook: HookSpec, event: string | null): boolean {
  // An events filter admits only what it names: a delivery without X-GitHub-Event (the header is not signed, so a
  // replay can drop it) must not get past the filter by naming nothing.
  return hook.events === undefined || (event !== null && hook.events.includes(event));
}

/**
 * Where a delivery's task lives (`id`, the task a first delivery creates), and every id a repeat of it may find an
 * earlier task under (`seen`, `id` first).
 *
 * GitHub signs only the body: X-GitHub-Delivery is not signed, so a captured delivery replayed under a new
 * delivery id still verifies. Its task is therefore named by the SHA-256 of the signed body, and the same signed
 * bytes never start a second run, under any delivery id, for as long as the task is kept and, after that, its
 * tombstone. GitHub's own redeliver (same id, same body) finds the task by either name; two different deliveries
 * have different bodies (a payload carries its own ids and timestamps) and start two runs. The delivery id is
 * looked up too, so a task named by it (before bodies named tasks) still answers its redelivery.
 *
 * Standard Webhooks needs no body digest: the signature covers id, timestamp and body, so a replay can change none
 * of them. Within the 5 minutes the timestamp is accepted, it carries the original id and finds the original task
 * (kept for days); later, verification refuses it (timestamp_out_of_tolerance).
 */
export async function deliveryTaskIds(
  hook: HookSpec,
  delivery: VerifiedDelivery,
  body: string,
): Promise<{ id: string; seen: string[] }> {
  const byDelivery = await derivedTaskId("hook", hook.tenant, hook.id, delivery.deliveryId);
  if (hook.scheme !== "github") return { id: byDelivery, seen: [byDelivery] };
  // A prefix of its own, so a body's name can never equal a delivery id's.
  const byBody = await derivedTaskId("hook-body", hook.tenant, hook.id, await sha256Hex(body));
  return { id: byBody, seen: [byBody, byDelivery] };
}
