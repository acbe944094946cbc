// Claude on Amazon Bedrock: `POST /model/{model id}/invoke-with-response-stream` (or `/invoke`), signed with AWS
// SigV4, the Messages API body without `model` and `stream` and with `anthropic_version: bedrock-2023-05-31`. The
// signature is checked as AWS does (an unknown key or a wrong signature is a 403), the stream is the AWS event stream
// whose chunks carry the Messages API's stream events as base64 JSON, and errors are AWS's `{message}`.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { type AuthOutcome, type AuthRecord, header } from "./auth.ts";
import { TEST_AWS_ACCESS_KEY_ID, TEST_AWS_SECRET_ACCESS_KEY } from "./credentials.ts";
import { chunkMessage, eventStreamMessage, exceptionMessage } from "./event-stream.ts";
import { messagesCacheView } from "./prompt-units.ts";
import type { Dialect, ErrorSpec, RequestContext } from "./reply.ts";
import { fail, isRecord, parseMessagesRequest } from "./request.ts";
import { errorTypeForStatus, renderReply } from "./wire.ts";

const PATH = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/;
export const BEDROCK_VERSION = "bedrock-2023-05-31";
/** AWS refuses a request signed further than this from its clock. */
const MAX_SKEW_MS = 5 * 60_000;

/** AWS's exception for each error status, the name in x-amzn-errortype and in a stream's exception message. */
const EXCEPTIONS: Record<number, string> = {
  400: "ValidationException",
  403: "AccessDeniedException",
  404: "ResourceNotFoundException",
  429: "ThrottlingException",
  503: "ServiceUnavailableException",
};

function exceptionFor(spec: ErrorSpec): string {
  if (spec.type === "overloaded_error") return "ServiceUnavailableException";
  return EXCEPTIONS[spec.status] ?? "InternalServerException";
}

/** The SigV4 check: null when the signature is good, else AWS's refusal. */
function verify(context: RequestContext): AuthOutcome {
  const authorization = header(context.headers, "authorization") ?? "";
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  const record: AuthRecord = { scheme: "bedrock", verified: false, principal: match?.[1] ?? null, detail: {} };
  const refuse = (message: string): AuthOutcome => ({ record, failure: { status: 403, message } });
  if (!match) return refuse("Missing Authentication Token");
  const [, keyId = "", day = "", region = "", service = "", signedHeaders = "", signature = ""] = match;
  record.detail = { region, service, signed_headers: signedHeaders };
  if (keyId !== TEST_AWS_ACCESS_KEY_ID) return refuse("The security token included in the request is invalid.");
  const amzDate = header(context.headers, "x-amz-date") ?? "";
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (!(Math.abs(Date.now() - signedAt) <= MAX_SKEW_MS) || !amzDate.startsWith(day)) {
    return refuse("Signature expired or not yet current.");
  }
  const names = signedHeaders.split(";");
  if (!names.includes("host") || !names.includes("x-amz-date")) return refuse("Host and x-amz-date must be signed.");
  const encode = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const canonical = [
    "POST",
    context.url.pathname.split("/").map(encode).join("/"),
    [...context.url.searchParams]
      .map(([k, v]) => `${encode(k)}=${encode(v)}`)
      .sort()
      .join("&"),
    names.map((name) => `${name}:${(header(context.headers, name) ?? "").trim().replace(/\s+/g, " ")}\n`).join(""),
    signedHeaders,
    createHash("sha256").update(context.rawBody).digest("hex"),
  ].join("\n");
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", amzDate, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
  let key: Buffer = createHmac("sha256", `AWS4${TEST_AWS_SECRET_ACCESS_KEY}`).update(day).digest();
  for (const part of [region, service, "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
  const expected = createHmac("sha256", key).update(toSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature, "hex"))) {
    return refuse(
      "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
    );
  }
  record.verified = true;
  return { record, failure: null };
}

export const bedrock: Dialect = {
  provider: "bedrock",
  matches: (path) => PATH.test(path),
  missingKey: () => null,
  authenticate: verify,
  parse(body, context) {
    if (!isRecord(body)) return fail("request body must be a JSON object");
    for (const key of ["model", "stream"]) {
      if (key in body) return fail(`${key}: Extraneous key [${key}] is not permitted`);
    }
    if (body.anthropic_version !== BEDROCK_VERSION) return fail(`anthropic_version: must be ${BEDROCK_VERSION}`);
    const [, model = "", action] = PATH.exec(context.url.pathname) ?? [];
    const { anthropic_version: _version, anthropic_beta: _betas, ...rest } = body;
    const parsed = parseMessagesRequest({ ...rest, model: decodeURIComponent(model) });
    if (!parsed.ok) return parsed;
    return { ok: true, value: { ...parsed.value, stream: action === "invoke-with-response-stream" } };
  },
  // Block-level breakpoints only: the request-level cache_control is Anthropic's own API's.
  cacheView: (body, request) => messagesCacheView(body, request.prompt, { automatic: false }),
  ids: { message: "msg_bdrk_", tool: "toolu_bdrk_" },
  headers: (requestId) => ({ "x-amzn-requestid": requestId }),
  streamContentType: "application/vnd.amazon.eventstream",
  render(reply) {
    const rendered = renderReply(reply);
    // Each SSE frame's event, as a chunk of the event stream.
    const frames = rendered.frames.map((frame) => {
      const data = /^data: (.*)$/m.exec(frame.text.toString())?.[1] ?? "{}";
      return { ...frame, text: chunkMessage(JSON.parse(data)) };
    });
    return { ...rendered, frames };
  },
  error: (spec) => ({
    status: spec.status === 529 ? 503 : spec.status,
    body: { message: spec.message ?? errorTypeForStatus(spec.status) },
  }),
  streamError: (spec) => exceptionMessage(exceptionFor(spec), spec.message ?? "The model stream failed."),
  // A chunk whose message checksum is wrong: what a damaged connection would deliver.
  malformedFrame: (() => {
    const message = eventStreamMessage({ ":message-type": "event", ":event-type": "chunk" }, Buffer.from("{}"));
    message.writeUInt32BE((message.readUInt32BE(message.length - 4) + 1) >>> 0, message.length - 4);
    return message;
  })(),
};
