// Claude on Amazon Bedrock through the Anthropic SDK: a fetch that turns the SDK's Messages API request into Bedrock's
// InvokeModelWithResponseStream (the model into the path, `anthropic_version: bedrock-2023-05-31` and the betas into
// the body), signs it with SigV4 (sigv4.ts), and turns Bedrock's answer back into what the SDK reads: the AWS event
// stream whose chunks carry the Messages API's stream events (base64 JSON) becomes SSE, and AWS's error bodies
// become the API's.
//
// Not the official @anthropic-ai/bedrock-sdk: it does not load in workerd's test pool (its @aws-crypto/sha256-js
// reaches @aws-sdk/util-utf8-browser, whose ESM build the pool cannot resolve), and it would bring
// @aws-sdk/client-bedrock-runtime, @aws-sdk/credential-providers and the smithy event-stream stack (180 packages)
// for a signature and a framing that WebCrypto and the few lines here cover.
import { checkOutboundUrl, type OutboundPolicy } from "../net/outbound.ts";
import { type ClientFactory, type ClientOptions, platformClient } from "./anthropic.ts";
import { decodeEventStream } from "./event-stream.ts";
import { type AwsCredentials, signRequest } from "./sigv4.ts";

export const BEDROCK_VERSION = "bedrock-2023-05-31";

export interface BedrockSetup {
  credentials: AwsCredentials;
  region: string;
  /** Replaces https://bedrock-runtime.<region>.amazonaws.com; already past the outbound guard. */
  endpoint: string | undefined;
  outbound: OutboundPolicy;
}

export function bedrockClient(setup: BedrockSetup): ClientFactory {
  const base =
    setup.endpoint ?? checkOutboundUrl(`https://bedrock-runtime.${setup.region}.amazonaws.com`, setup.outbound).origin;
  // Each request is signed by the fetch (SigV4).
  return (options: ClientOptions) =>
    platformClient(options, base, (input, init) => bedrockFetch(options.fetch, input, init, base, setup));
}

async function bedrockFetch(
  fetch: ClientOptions["fetch"],
  input: string | URL | Request,
  init: RequestInit | undefined,
  base: string,
  setup: BedrockSetup,
): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input);
  if (!url.pathname.endsWith("/v1/messages") || typeof init?.body !== "string") return fetch(input, init);
  const { model, stream, ...body } = JSON.parse(init.body) as Record<string, unknown>;
  const headers = new Headers(init.headers);
  const betas = headers.get("anthropic-beta");
  for (const name of ["anthropic-beta", "authorization", "x-api-key"]) headers.delete(name);
  headers.set("content-type", "application/json");
  headers.set("accept", stream === true ? "application/vnd.amazon.eventstream" : "application/json");
  const sent = JSON.stringify({
    anthropic_version: BEDROCK_VERSION,
    ...(betas ? { anthropic_beta: betas.split(",").map((b) => b.trim()) } : {}),
    ...body,
  });
  const action = stream === true ? "invoke-with-response-stream" : "invoke";
  const target = new URL(`${base}/model/${encodeURIComponent(String(model))}/${action}`);
  await signRequest({
    method: "POST",
    url: target,
    headers,
    body: sent,
    region: setup.region,
    service: "bedrock",
    credentials: setup.credentials,
  });
  const response = await fetch(target, { ...init, headers, body: sent });
  if (!response.ok) return asApiError(response);
  const type = response.headers.get("content-type") ?? "";
  if (!type.startsWith("application/vnd.amazon.eventstream") || !response.body) return response;
  const sse = new Headers(response.headers);
  sse.set("content-type", "text/event-stream");
  sse.delete("content-length");
  return new Response(toSse(response.body), { status: response.status, headers: sse });
}

/** AWS's exception names → the Messages API's error types, which the SDK and the error table understand. */
const ERROR_TYPES: Readonly<Record<string, string>> = {
  throttlingException: "rate_limit_error",
  serviceUnavailableException: "overloaded_error",
  modelNotReadyException: "overloaded_error",
  validationException: "invalid_request_error",
  accessDeniedException: "permission_error",
  resourceNotFoundException: "not_found_error",
};

function errorType(exception: string): string {
  const name = exception.split(":")[0] ?? "";
  return ERROR_TYPES[name.charAt(0).toLowerCase() + name.slice(1)] ?? "api_error";
}

/** An AWS error body ({message}, the exception in x-amzn-errortype) in the Messages API's shape, same status. */
async function asApiError(response: Response): Promise<Response> {
  const text = await response.text();
  let message = text;
  try {
    const parsed = JSON.parse(text) as { message?: unknown; Message?: unknown };
    const found = parsed.message ?? parsed.Message;
    if (typeof found === "string") message = found;
  } catch {
    // Not JSON: the text is the message.
  }
  const type = errorType(response.headers.get("x-amzn-errortype") ?? "");
  return Response.json(
    { type: "error", error: { type, message } },
    { status: response.status, headers: response.headers },
  );
}

/** Bedrock's event stream as the Messages API's SSE: each chunk's event, and an exception as an `error` event. */
function toSse(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const messages = decodeEventStream(body);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await messages.next();
      if (next.done) return controller.close();
      const { headers, payload } = next.value;
      const text = decoder.decode(payload);
      if (headers[":message-type"] === "event" && headers[":event-type"] === "chunk") {
        const { bytes } = JSON.parse(text) as { bytes: string };
        const event = decoder.decode(Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0)));
        const name = (JSON.parse(event) as { type: string }).type;
        controller.enqueue(encoder.encode(`event: ${name}\ndata: ${event}\n\n`));
        return;
      }
      const exception = headers[":exception-type"] ?? headers[":error-code"] ?? "internalServerException";
      const message = (JSON.parse(text || "{}") as { message?: string }).message ?? exception;
      const error = { type: "error", error: { type: errorType(exception), message } };
      controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify(error)}\n\n`));
    },
    async cancel(reason) {
      await messages.return(undefined);
      await body.cancel(reason).catch(() => undefined);
    },
  });
}
