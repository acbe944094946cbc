// The auth checks of the endpoints that sign or bear credentials, as those endpoints answer them: a Claude OAuth token
// (bearer plus its beta header) on the Messages API, a Foundry key on /anthropic/v1/messages, and, from their own
// modules, Bedrock's SigV4 and Vertex's bearer token. Each request's outcome goes into the emulator's stats
// (`auth`), so a test can assert what the endpoint saw. An API key on the Messages API is not checked, as before.
import type { IncomingHttpHeaders } from "node:http";
import { TEST_FOUNDRY_KEY, TEST_OAUTH_TOKEN } from "./credentials.ts";
import type { ErrorSpec } from "./reply.ts";

export type AuthScheme = "api_key" | "oauth_token" | "foundry" | "bedrock" | "vertex";

/** What the endpoint saw of the caller's credentials. */
export interface AuthRecord {
  scheme: AuthScheme;
  /** Whether the credentials (and the signature, where the endpoint signs) were good. */
  verified: boolean;
  /** Who the credentials say the caller is, when they say (an access key id, a service account), else null. */
  principal: string | null;
  /** The headers or claims the check looked at, with no secret in them (e.g. anthropic-beta, signed headers). */
  detail: Record<string, string>;
}

export interface AuthOutcome {
  record: AuthRecord | null;
  /** The endpoint's refusal, when the credentials are wrong. */
  failure: ErrorSpec | null;
}

export const FOUNDRY_PREFIX = "/anthropic";

export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** The Messages API's own auth: an OAuth bearer token, a Foundry key on Foundry's path, or any x-api-key. */
export function messagesAuth(path: string, headers: IncomingHttpHeaders): AuthOutcome {
  const bearer = /^Bearer (.+)$/.exec(header(headers, "authorization") ?? "")?.[1];
  const beta = header(headers, "anthropic-beta") ?? "";
  if (path.startsWith(`${FOUNDRY_PREFIX}/`)) {
    const key = header(headers, "x-api-key");
    const verified = key === TEST_FOUNDRY_KEY;
    const record: AuthRecord = { scheme: "foundry", verified, principal: null, detail: { header: "x-api-key" } };
    return {
      record,
      failure: verified
        ? null
        : {
            status: 401,
            type: "authentication_error",
            message: "Access denied due to invalid subscription key or wrong API endpoint.",
          },
    };
  }
  // The SDK sends an API key as a bearer too: a token is OAuth by its prefix (sk-ant-oat…) or by the OAuth beta.
  const hasBeta = beta.split(",").some((b) => b.trim() === "oauth-2025-04-20");
  if (bearer === undefined || (!bearer.startsWith("sk-ant-oat") && !hasBeta)) return { record: null, failure: null };
  const verified = bearer === TEST_OAUTH_TOKEN && hasBeta;
  const record: AuthRecord = { scheme: "oauth_token", verified, principal: null, detail: { "anthropic-beta": beta } };
  if (verified) return { record, failure: null };
  const message = hasBeta ? "Invalid bearer token" : "OAuth authentication is currently not supported.";
  return { record, failure: { status: 401, type: "authentication_error", message } };
}
