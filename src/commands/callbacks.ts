// Attaching a callback to a task, the command behind a /v1 task's `webhook` and A2A's push configs (set with a
// message, or with CreateTaskPushNotificationConfig). A callback carries the task's result, its error and what it
// waits for, another way to read the task: it needs the `read` scope as well as `run`, whichever way it is asked
// for. Its URL is checked now, by the callbacks' own network policy (a host the operator opened to agents' tools is
// not thereby open to callbacks), in a deployment that can sign callbacks, so that a bad one is the client's 400.
import { callbackWebhook } from "../callbacks/payload.ts";
import { callbackPolicy, checkCallbackUrl } from "../callbacks/policy.ts";
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import type { CallbackEvent, TaskWebhook } from "../tasks/task.ts";
import type { Principal } from "./principal.ts";
import { mayRead, requireScope } from "./principal.ts";

/** 403 insufficient_scope, naming `field`, unless the principal may both act and read. */
export function requireCallbackScopes(principal: Principal, field: string): void {
  requireScope(principal, "run");
  if (mayRead(principal)) return;
  throw new ApiError(
    "insufficient_scope",
    "Callbacks carry the task's result and what it waits for; asking for them needs the read scope.",
    field,
  );
}

/** The callbacks a new task asks for (null for none), checked: the scopes, then the URL. */
export function requestedWebhook(
  env: Env,
  principal: Principal,
  webhook: { url: string; events?: readonly CallbackEvent[] | undefined } | undefined,
): TaskWebhook | null {
  if (!webhook) return null;
  requireCallbackScopes(principal, "webhook");
  return callbackWebhook(callbackUrl(env, webhook.url, { url: "webhook.url", secret: "webhook" }), webhook.events);
}

/** A push config's URL (A2A), after the principal's scopes: checked as a task's webhook URL is. */
export function pushConfigUrl(env: Env, principal: Principal, raw: string, field: string): string {
  requireCallbackScopes(principal, field);
  return callbackUrl(env, raw, { url: field, secret: field }).href;
}

/** A callback's URL by the callbacks' policy, in a deployment that signs callbacks; `fields` name it in errors. */
export function callbackUrl(env: Env, raw: string, fields: { url: string; secret: string }): URL {
  const url = checkCallbackUrl(raw, callbackPolicy(env), fields.url);
  if (!env.OUTPOST_WEBHOOK_SECRET) {
    throw new ApiError(
      "callbacks_not_configured",
      "Callbacks are signed with OUTPOST_WEBHOOK_SECRET, which this deployment does not set.",
      fields.secret,
    );
  }
  return url;
}
