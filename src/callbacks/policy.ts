// Where callbacks may go. Callbacks have a network policy of their own (OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS,
// OUTPOST_HTTP_CALLBACK_HOSTS), never the tools' one: a caller chooses a callback URL, so a host the operator opened
// to agents' tools must not become reachable by naming it as a callback. A task's URL is judged when the task is
// created (400 invalid_callback_url) and again at every attempt, by the policy in force then.
import type { Env } from "../env.ts";
import { ApiError, BlockedUrlError } from "../errors.ts";
import { checkOutboundUrl, type OutboundPolicy, outboundPolicy } from "../net/outbound.ts";

/** Where callbacks may go: the deployment's callback settings, apart from the tools' outbound policy. */
export interface CallbackPolicy {
  /** OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS: private, loopback or link-local hosts callbacks may reach. */
  privateHosts: OutboundPolicy;
  /** OUTPOST_HTTP_CALLBACK_HOSTS: hosts callbacks may reach over plain http ("*": all). */
  httpHosts: ReadonlySet<string>;
}

export function callbackPolicy(
  env: Pick<Env, "OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS" | "OUTPOST_HTTP_CALLBACK_HOSTS">,
): CallbackPolicy {
  return {
    // Same syntax as the tools' OUTPOST_ALLOW_PRIVATE_HOSTS, read from the callbacks' own variable only.
    privateHosts: outboundPolicy(env.OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS),
    httpHosts: outboundPolicy(env.OUTPOST_HTTP_CALLBACK_HOSTS).allowPrivateHosts,
  };
}

/**
 * Whether callbacks may go to `raw`: https only (unless OUTPOST_HTTP_CALLBACK_HOSTS names the host), and never a
 * private, loopback or link-local address unless OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS allows it. `problem` says why
 * not, without the URL (an attempt's log shows it next to the delivery's URL).
 */
export function judgeCallbackUrl(
  raw: string,
  policy: CallbackPolicy,
): { url: URL; problem?: undefined } | { problem: string; url?: undefined } {
  let url: URL;
  try {
    url = checkOutboundUrl(raw, policy.privateHosts);
  } catch (error) {
    if (!(error instanceof BlockedUrlError)) throw error;
    const hint = error.privateHost
      ? "; callbacks to private, loopback and link-local hosts need OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS"
      : "";
    return { problem: `${error.reason}${hint}` };
  }
  const http = policy.httpHosts;
  if (url.protocol !== "https:" && !http.has("*") && !http.has(url.hostname.toLowerCase())) {
    return { problem: "it is not https; callbacks are sent over https (OUTPOST_HTTP_CALLBACK_HOSTS may allow a host)" };
  }
  return { url };
}

/** A task's callback target from the request: 400 invalid_callback_url naming `field` unless judgeCallbackUrl allows it. */
export function checkCallbackUrl(raw: string, policy: CallbackPolicy, field = "webhook.url"): URL {
  const judged = judgeCallbackUrl(raw, policy);
  if (judged.problem !== undefined) {
    throw new ApiError("invalid_callback_url", `${raw} is not allowed: ${judged.problem}.`, field);
  }
  return judged.url;
}
