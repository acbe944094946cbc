// POST /v1/hooks/:hook_id: a signed webhook delivery starts a run of the agent that declares the hook. The signature
// is the credential here (senders such as GitHub cannot send an API key): nothing is read, rendered or started
// before it is verified. A delivery id is admitted once; a repeat gets the task the first delivery started.
import { Hono } from "hono";
import { registry } from "../../agents/catalog.ts";
import { resolveModel } from "../../config/models.ts";
import { retentionDays, retentionPolicyOrDefault } from "../../config/retention.ts";
import { ApiError } from "../../errors.ts";
import { renderInput, verifyDelivery } from "../../hooks/hook.ts";
import { derivedTaskId } from "../../tasks/task-ids.ts";
import type { AppEnv } from "../app-env.ts";
import { MAX_INPUT_CHARS } from "../schemas.ts";
import { launch } from "../task-creation.ts";
import { bodyText } from "../validation.ts";

/** Webhook payloads are larger than API bodies (a GitHub push lists its commits). */
const MAX_HOOK_BODY_BYTES = 1024 * 1024;

export const hookRoutes = new Hono<AppEnv>().post("/:hook_id", async (c) => {
  const hookId = c.req.param("hook_id");
  const found = registry.findHook(hookId);
  if (!found) throw new ApiError(404, "hook_not_found", `No hook "${hookId}".`, "hook_id");
  const { agent, hook } = found;
  const secret = (c.env as unknown as Record<string, unknown>)[hook.secret];
  if (typeof secret !== "string" || !secret) {
    console.error(`hook ${hookId}: the Worker secret ${hook.secret} is not set`);
    throw new ApiError(503, "hook_not_configured", `The hook "${hookId}" has no verification secret set.`);
  }
  const body = await bodyText(c, MAX_HOOK_BODY_BYTES);
  const verified = await verifyDelivery(hook, secret, body, c.req.raw.headers);
  if ("failure" in verified) throw new ApiError(401, verified.failure, verified.message, "signature");
  if (verified.event === "ping") return c.json({ hook_id: hookId, status: "pong" });
  if (hook.events && verified.event !== null && !hook.events.includes(verified.event)) {
    return c.json({
      hook_id: hookId,
      status: "ignored",
      reason: `the hook does not run on "${verified.event}" events`,
    });
  }
  const payload = parsePayload(body, c.req.header("content-type") ?? "");
  const input = renderInput(hook, {
    payload,
    event: verified.event,
    delivery_id: verified.deliveryId,
    hook_id: hookId,
  }).trim();
  if (!input) {
    throw new ApiError(422, "hook_input_empty", "The hook's input template rendered nothing for this delivery.");
  }
  if (input.length > MAX_INPUT_CHARS) {
    throw new ApiError(
      422,
      "hook_input_too_long",
      `The hook's input template rendered ${input.length} characters; a task's input is at most ${MAX_INPUT_CHARS}.`,
    );
  }
  const tenant = hook.tenant;
  const id = await derivedTaskId("hook", tenant, hookId, verified.deliveryId);
  const { task, replayed } = await launch(c, tenant, {
    id,
    tenant,
    trigger: { hook_id: hookId, delivery_id: verified.deliveryId, event: verified.event },
    agent: agent.name,
    redactionMode: agent.redactionMode,
    input,
    metadata: hook.metadata ?? {},
    model: resolveModel(agent.model, c.env.OUTPOST_DEFAULT_MODEL),
    retentionDays: retentionDays(retentionPolicyOrDefault(c.env.OUTPOST_RETENTION), { explicit: null, tags: [] }),
    retentionExplicit: false,
    tags: [],
    parentTaskId: null,
  });
  // The sender gets a receipt, not the task: its response bodies end up in places like GitHub's delivery log. A
  // repeated delivery is acknowledged (200) with the task the first one started.
  return c.json(
    { hook_id: hookId, delivery_id: verified.deliveryId, task_id: task.id, status: task.status, duplicate: replayed },
    replayed ? 200 : 202,
  );
});

/** JSON, or GitHub's form encoding (payload=<json>); a body that is neither is given to the template as text. */
function parsePayload(body: string, contentType: string): unknown {
  let text = body;
  if (/^application\/x-www-form-urlencoded\b/i.test(contentType)) text = new URLSearchParams(body).get("payload") ?? "";
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "The delivery's payload is not JSON.", "(body)");
  }
}
