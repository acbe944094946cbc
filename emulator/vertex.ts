// Claude on Google Vertex AI: `POST /v1/projects/<project>/locations/<region>/publishers/anthropic/models/<model>:
// streamRawPredict` (or `:rawPredict`), the Messages API body without `model` and with `anthropic_version:
// vertex-2023-10-16`, a bearer token from Google's token endpoint (google-token.ts), and the Messages API's own JSON
// and SSE in return. Google's own refusals (a bad token) come in Google's error shape.
import type { AuthOutcome } from "./auth.ts";
import { header } from "./auth.ts";
import type { GoogleTokenEndpoint } from "./google-token.ts";
import { messagesCacheView } from "./prompt-units.ts";
import type { Dialect, ErrorSpec } from "./reply.ts";
import { fail, isRecord, parseMessagesRequest } from "./request.ts";
import { anthropic } from "./wire.ts";

const PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(streamRawPredict|rawPredict)$/;
export const VERTEX_VERSION = "vertex-2023-10-16";

function googleError(spec: ErrorSpec): { status: number; body: unknown } {
  const status = spec.status === 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED";
  return { status: spec.status, body: { error: { code: spec.status, message: spec.message ?? status, status } } };
}

export function vertex(tokens: GoogleTokenEndpoint): Dialect {
  return {
    ...anthropic,
    provider: "vertex",
    matches: (path) => PATH.test(path),
    authenticate(context): AuthOutcome {
      const [, project = "", region = ""] = PATH.exec(context.url.pathname) ?? [];
      const bearer = /^Bearer (.+)$/.exec(header(context.headers, "authorization") ?? "")?.[1];
      const issued = bearer ? tokens.lookup(bearer) : null;
      const detail: Record<string, string> = { project, region, token_id: issued?.id ?? "" };
      const record = { scheme: "vertex" as const, verified: issued !== null, principal: issued?.email ?? null, detail };
      if (issued) return { record, failure: null };
      const message = "Request had invalid authentication credentials. Expected OAuth 2 access token.";
      return { record, failure: { status: 401, message } };
    },
    parse(body, context) {
      if (!isRecord(body)) return fail("request body must be a JSON object");
      if ("model" in body) return fail("model: Extra inputs are not permitted (the model is in the path)");
      if (body.anthropic_version !== VERTEX_VERSION) return fail(`anthropic_version: must be ${VERTEX_VERSION}`);
      const [, , , model = "", specifier] = PATH.exec(context.url.pathname) ?? [];
      const { anthropic_version: _version, anthropic_beta: _betas, ...rest } = body;
      const parsed = parseMessagesRequest({ ...rest, model: decodeURIComponent(model) });
      if (!parsed.ok) return parsed;
      // The specifier, not the body, says whether to stream.
      return { ok: true, value: { ...parsed.value, stream: specifier === "streamRawPredict" } };
    },
    // Block-level breakpoints only: the request-level cache_control is Anthropic's own API's.
    cacheView: (body, request) => messagesCacheView(body, request.prompt, { automatic: false }),
    error: (spec) => (spec.status === 401 || spec.status === 403 ? googleError(spec) : anthropic.error(spec)),
  };
}
