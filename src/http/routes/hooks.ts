// POST /v1/hooks/:hook_id: a signed webhook delivery starts a run of the agent that declares the hook. The signature
// is the credential here (senders such as GitHub cannot send an API key): nothing is read, rendered or started
// before it is verified. A delivery is admitted once; a repeat gets the task the first delivery started.
//
// The order, each step only for what passed the one before: the signature (an unsigned flood costs a lookup and an
// HMAC, and never a hook's tokens); ping and the events filter (they start nothing); the earlier task of a repeat or
// replay (it starts nothing either, so it spends no token: a captured delivery replayed in a loop cannot use up
// the hook's budget and lock its real sender out); the input; then one token from the hook's bucket; then the start.
import { type Context, Hono } from "hono";
import { registry } from "../../agents/catalog.ts";
import type { CommandContext } from "../../commands/context.ts";
import { hookPrincipal, keptPrincipal } from "../../commands/principal.ts";
import { requireCreationToken } from "../../commands/rate.ts";
import { launchRun } from "../../commands/runs.ts";
import type { Env } from "../../env.ts";
import { ApiError } from "../../errors.ts";
import {
  DEFAULT_HOOK_RATE_LIMIT_PER_MINUTE,
  deliveryTaskIds,
  renderInput,
  runsOn,
  verifyDelivery,
} from "../../inbound-hooks/hook.ts";
import { readSecret } from "../../lib/secrets.ts";
import type { TaskView } from "../../tasks/task.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import { taskInit } from "../../tasks/task-init.ts";
import type { AppEnv } from "../app-env.ts";
import type { HookIgnored, HookPong, HookReceipt } from "../responses.ts";
import { MAX_INPUT_CHARS } from "../schemas.ts";
import { tokenHeaders } from "../task-creation.ts";
import { bodyText, jsonBodyProblem } from "../validation.ts";

/** Webhook payloads are larger than API bodies (a GitHub push lists its commits). */
const MAX_HOOK_BODY_BYTES = 1024 * 1024;

export const hookRoutes = new Hono<AppEnv>().post("/:hook_id", async (c) => {
  const hookId = c.req.param("hook_id");
  const found = registry.findHook(hookId);
  if (!found) throw new ApiError("hook_not_found", `No hook "${hookId}".`, "hook_id");
  const { agent, hook } = found;
  const secret = readSecret(c.env, hook.secret);
  if (!secret) {
    console.error(`hook ${hookId}: the Worker secret ${hook.secret} is not set`);
    throw new ApiError("hook_not_configured", `The hook "${hookId}" has no verification secret set.`);
  }
  const body = await bodyText(c, MAX_HOOK_BODY_BYTES);
  const verified = await verifyDelivery(hook, secret, body, c.req.raw.headers);
  if ("failure" in verified) throw new ApiError(verified.failure, verified.message, "signature");
  if (verified.event === "ping") return c.json({ hook_id: hookId, status: "pong" } satisfies HookPong);
  if (!runsOn(hook, verified.event)) {
    return c.json({
      hook_id: hookId,
      status: "ignored",
      reason:
        verified.event === null
          ? "the delivery names no event (X-GitHub-Event), and the hook runs only on the events it lists"
          : `the hook does not run on "${verified.event}" events`,
    } satisfies HookIgnored);
  }
  const tenant = hook.tenant;
  const { id, seen } = await deliveryTaskIds(hook, verified, body);
  const earlier = await earlierTask(c.env, tenant, seen);
  if (earlier === "expired") {
    throw new ApiError(
      "task_expired",
      "The task this delivery started has expired under the retention policy; a repeat of it does not run again.",
    );
  }
  if (earlier) return receipt(c, hookId, verified.deliveryId, earlier, true);
  const payload = parsePayload(body, c.req.header("content-type") ?? "");
  const input = renderInput(hook, {
    payload,
    event: verified.event,
    delivery_id: verified.deliveryId,
    hook_id: hookId,
  }).trim();
  if (!input) {
    throw new ApiError("hook_input_empty", "The hook's input template rendered nothing for this delivery.");
  }
  if (input.length > MAX_INPUT_CHARS) {
    throw new ApiError(
      "hook_input_too_long",
      `The hook's input template rendered ${input.length} characters; a task's input is at most ${MAX_INPUT_CHARS}.`,
    );
  }
  const perMinute = hook.rate_limit_per_minute ?? DEFAULT_HOOK_RATE_LIMIT_PER_MINUTE;
  // The delivery acts as the hook (its signature authenticated it): the hook's runs, at the hook's rate.
  const ctx: CommandContext = {
    env: c.env,
    principal: hookPrincipal(tenant, hookId, perMinute),
    onToken: tokenHeaders(c),
  };
  await requireCreationToken(ctx);
  // A copy that arrived since the lookup above lands on the same object and gets its task (replayed).
  const { task, replayed } = await launchRun(
    ctx,
    taskInit(c.env, {
      id,
      tenant,
      trigger: { hook_id: hookId, delivery_id: verified.deliveryId, event: verified.event },
      agent,
      input,
      metadata: hook.metadata ?? {},
      // Its sub-agents count against the hook's runs, as the run itself does.
      principal: keptPrincipal(ctx.principal),
    }),
  );
  return receipt(c, hookId, verified.deliveryId, task, replayed);
});

/**
 * The sender gets a receipt, not the task: its response bodies end up in places like GitHub's delivery log. A
 * repeated delivery is acknowledged (200) with the task the first one started.
 */
function receipt(c: Context<AppEnv>, hookId: string, deliveryId: string, task: TaskView, duplicate: boolean) {
  return c.json(
    {
      hook_id: hookId,
      delivery_id: deliveryId,
      task_id: task.id,
      status: task.status,
      duplicate,
    } satisfies HookReceipt,
    duplicate ? 200 : 202,
  );
}

/** The task an earlier copy of the delivery started under one of `ids` (first found), "expired", or null. */
async function earlierTask(env: Env, tenant: string, ids: readonly string[]): Promise<TaskView | "expired" | null> {
  const found = await Promise.all(
    ids.map(async (id): Promise<TaskView | "expired" | null> => {
      const stub = taskStubFor(env, tenant, id);
      const task = await stub.get();
      if (task) return task;
      return (await stub.expired()) ? "expired" : null;
    }),
  );
  return (
    found.find((f): f is TaskView => f !== null && f !== "expired") ?? (found.includes("expired") ? "expired" : null)
  );
}

/**
 * JSON, or GitHub's form encoding (payload=<json>); a body that is neither is given to the template as text. The
 * payload is held to the API's own rules for JSON (jsonBodyProblem): it becomes the task's input.
 */
function parsePayload(body: string, contentType: string): unknown {
  let text = body;
  if (/^application\/x-www-form-urlencoded\b/i.test(contentType)) text = new URLSearchParams(body).get("payload") ?? "";
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_json", "The delivery's payload is not JSON.", "(body)");
  }
  const problem = jsonBodyProblem(payload);
  if (problem) {
    throw new ApiError("validation_failed", `Invalid ${problem.field}: ${problem.message}.`, problem.field);
  }
  return payload;
}
