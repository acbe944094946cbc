// The emulator's endpoints of Claude's auth providers, spoken to directly from workerd over HTTP: what each refuses as
// the real endpoint does (an unsigned or altered Bedrock request, a Vertex body with the model in it, a JWT signed by
// another key, an OAuth token without its beta), and Bedrock's answer as bytes of the AWS event stream.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TEST_AWS_ACCESS_KEY_ID, TEST_AWS_SECRET_ACCESS_KEY, TEST_OAUTH_TOKEN } from "../../emulator/credentials.ts";
import { decodeEventStream } from "../../src/llm/event-stream.ts";
import { signRequest } from "../../src/llm/sigv4.ts";
import { script, uniqueMarker } from "../support/helpers.ts";

const emulator = env.ANTHROPIC_BASE_URL as string;
const credentials = { accessKeyId: TEST_AWS_ACCESS_KEY_ID, secretAccessKey: TEST_AWS_SECRET_ACCESS_KEY };

function bedrockBody(marker: string): string {
  return JSON.stringify({
    anthropic_version: "bedrock-2023-05-31",
    max_tokens: 64,
    messages: [{ role: "user", content: `${marker} hi` }],
  });
}

/** A Bedrock request signed over `signedBody`, sending `body`. */
async function bedrockRequest(signedBody: string, body = signedBody): Promise<Response> {
  const url = new URL(`${emulator}/model/anthropic.claude-test%3A0/invoke-with-response-stream`);
  const headers = new Headers({ "content-type": "application/json" });
  await signRequest({
    method: "POST",
    url,
    headers,
    body: signedBody,
    region: "us-east-1",
    service: "bedrock",
    credentials,
  });
  return fetch(url, { method: "POST", headers, body });
}

describe("the emulator's Bedrock endpoint", () => {
  it("answers a signed request with the AWS event stream, each chunk a Messages API event in base64 JSON", async () => {
    const marker = uniqueMarker("bedrock-wire");
    await script(marker, [{ content: [{ type: "text", text: "Hi there." }] }]);
    const res = await bedrockRequest(bedrockBody(marker));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/vnd.amazon.eventstream");
    const types: string[] = [];
    let model = "";
    for await (const message of decodeEventStream(res.body as ReadableStream<Uint8Array>)) {
      expect(message.headers).toEqual({
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
      });
      const { bytes } = JSON.parse(new TextDecoder().decode(message.payload)) as { bytes: string };
      const event = JSON.parse(atob(bytes)) as { type: string; message?: { model: string } };
      types.push(event.type);
      if (event.message) model = event.message.model;
    }
    expect(types).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    // The model id comes from the path, percent-decoded.
    expect(model).toBe("anthropic.claude-test:0");
  });

  it("refuses with 403 a request without a signature, and one whose body differs from what was signed", async () => {
    const body = bedrockBody(uniqueMarker("bedrock-unsigned"));
    const unsigned = await fetch(`${emulator}/model/m/invoke`, { method: "POST", body });
    expect([unsigned.status, await unsigned.json()]).toEqual([403, { message: "Missing Authentication Token" }]);
    const altered = await bedrockRequest(body, body.replace("hi", "hello"));
    expect(altered.status).toBe(403);
    expect(((await altered.json()) as { message: string }).message).toMatch(/^The request signature we calculated/);
  });
});

describe("the emulator's Vertex endpoints", () => {
  it("refuses a JWT that the service account's key did not sign, as Google's token endpoint does", async () => {
    const header = btoa(JSON.stringify({ alg: "RS256", typ: "JWT" }));
    const claims = btoa(JSON.stringify({ iss: "x@y", aud: `${emulator}/token`, exp: 9e9, iat: 0 }));
    const res = await fetch(`${emulator}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        assertion: `${header}.${claims}.c2lnbmF0dXJl`,
      }),
    });
    expect([res.status, await res.json()]).toEqual([
      400,
      { error: "invalid_grant", error_description: "Invalid JWT Signature." },
    ]);
  });

  it("refuses a request without an access token it issued, in Google's error shape", async () => {
    const path = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-x:streamRawPredict";
    const res = await fetch(`${emulator}${path}`, {
      method: "POST",
      headers: { authorization: "Bearer ya29.made-up" },
      body: JSON.stringify({ anthropic_version: "vertex-2023-10-16", max_tokens: 8, messages: [] }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
  });
});

describe("the emulator's Messages API with a Claude OAuth token", () => {
  it("refuses the token without the OAuth beta header", async () => {
    const res = await fetch(`${emulator}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_OAUTH_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      type: "error",
      error: { type: "authentication_error", message: "OAuth authentication is currently not supported." },
    });
  });
});
