// Claude on Google Vertex AI through the Anthropic SDK: a fetch that turns the SDK's Messages API request into
// Vertex's (the model moves from the body into the path, `anthropic_version: vertex-2023-10-16` joins the body) and
// authenticates it with the service account's access token (google-token.ts). Vertex answers in the Messages API's
// own JSON and SSE, so nothing else changes.
//
// Not the official @anthropic-ai/vertex-sdk: it authenticates through google-auth-library, which in workerd sends the
// token exchange through node-fetch over node:http, to Google's fixed token URL rather than the key's token_uri, so
// neither the outbound guard nor the emulator can stand in front of it; and it would bundle google-auth-library and
// gaxios for nothing else. The rewrite it does is the few lines below.
import { ProviderNotConfiguredError } from "../errors.ts";
import { checkOutboundUrl, type OutboundPolicy } from "../net/outbound.ts";
import { type ClientFactory, type ClientOptions, platformClient } from "./anthropic.ts";
import { accessToken, parseServiceAccount, type ServiceAccount, TokenRefusedError } from "./google-token.ts";
import type { LlmConfig } from "./provider.ts";

export const VERTEX_VERSION = "vertex-2023-10-16";

export interface VertexSetup {
  /** The name of the secret holding the service account's key, for messages. */
  secretName: string;
  credentials: string;
  settings: NonNullable<LlmConfig["vertex"]>;
  /** Replaces https://<region>-aiplatform.googleapis.com; already past the outbound guard. */
  endpoint: string | undefined;
  outbound: OutboundPolicy;
}

/** Vertex's host for a region: "global" and the multi-regions "us" and "eu" have their own (as the official client). */
export function vertexBaseUrl(region: string): string {
  if (region === "global") return "https://aiplatform.googleapis.com";
  if (region === "us" || region === "eu") return `https://aiplatform.${region}.rep.googleapis.com`;
  return `https://${region}-aiplatform.googleapis.com`;
}

export function vertexClient(setup: VertexSetup): ClientFactory {
  const account = parseServiceAccount(setup.secretName, setup.credentials);
  const project = setup.settings.project_id ?? account.project_id;
  if (!project) {
    throw new ProviderNotConfiguredError(
      "anthropic",
      `auth_provider vertex needs vertex.project_id (the service account in ${setup.secretName} names no project_id).`,
    );
  }
  const base = setup.endpoint ?? checkOutboundUrl(vertexBaseUrl(setup.settings.region), setup.outbound).origin;
  const target = { base, project, region: setup.settings.region };
  // Each request carries the service account's access token, added by the fetch.
  return (options: ClientOptions) =>
    platformClient(options, base, (input, init) =>
      vertexFetch(options.fetch, input, init, target, account, setup.outbound),
    );
}

async function vertexFetch(
  fetch: ClientOptions["fetch"],
  input: string | URL | Request,
  init: RequestInit | undefined,
  target: { base: string; project: string; region: string },
  account: ServiceAccount,
  outbound: OutboundPolicy,
): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : input);
  if (!url.pathname.endsWith("/v1/messages") || typeof init?.body !== "string") return fetch(input, init);
  const { model, ...body } = JSON.parse(init.body) as Record<string, unknown>;
  const headers = new Headers(init.headers);
  // Vertex takes the betas in the body (as the official client sends them).
  const betas = headers.get("anthropic-beta");
  headers.delete("anthropic-beta");
  headers.delete("x-api-key");
  let token: string;
  try {
    token = await accessToken(account, outbound);
  } catch (error) {
    if (!(error instanceof TokenRefusedError)) throw error;
    // The SDK maps a 401 onto AuthenticationError, so a refused account fails the run like a refused key.
    const message = `Google's token endpoint refused the service account ${account.client_email} (HTTP ${error.status}): ${error.message}`;
    return Response.json({ type: "error", error: { type: "authentication_error", message } }, { status: 401 });
  }
  headers.set("authorization", `Bearer ${token}`);
  const specifier = body.stream === true ? "streamRawPredict" : "rawPredict";
  const path = `/v1/projects/${target.project}/locations/${target.region}/publishers/anthropic/models/${encodeURIComponent(String(model))}:${specifier}`;
  const sent = {
    anthropic_version: VERTEX_VERSION,
    ...(betas ? { anthropic_beta: betas.split(",").map((b) => b.trim()) } : {}),
    ...body,
  };
  return fetch(`${target.base}${path}`, { ...init, headers, body: JSON.stringify(sent) });
}
