// How an Anthropic agent's model calls are authenticated (seed 004 AuthProvider), in one place: an Anthropic API key,
// a Claude OAuth token, Amazon Bedrock (SigV4), Google Vertex AI (a service account's OAuth token) or Azure AI Foundry
// (its API key). Each reads its credentials from Worker secrets by name, sends them only to its own endpoint (which
// passes the outbound guard), and gives the AnthropicProvider the SDK client that speaks that endpoint.
import Anthropic from "@anthropic-ai/sdk";
import { ProviderNotConfiguredError } from "../errors.ts";
import { lazyModule } from "../lib/lazy-module.ts";
import type { SecretLookup } from "../lib/secrets.ts";
import { checkedEndpoint, checkOutboundUrl, type OutboundPolicy } from "../net/outbound.ts";
import type { ProviderConfig } from "./anthropic.ts";
import type { AuthProvider, LlmConfig } from "./provider.ts";

/** The clients of the cloud platforms are loaded only by the agents that use them. */
const loadBedrock = lazyModule(() => import("./bedrock.ts"));
const loadFoundry = lazyModule(() => import("@anthropic-ai/foundry-sdk"));
const loadVertex = lazyModule(() => import("./vertex.ts"));

/** Claude's OAuth tokens are accepted by the Messages API only with this beta. */
export const OAUTH_BETA = "oauth-2025-04-20";

/** The Worker secret each auth provider reads unless the agent names another. */
export const DEFAULT_AUTH_SECRETS = {
  api_key: "ANTHROPIC_API_KEY",
  oauth_token: "CLAUDE_CODE_OAUTH_TOKEN",
  bedrock_access_key_id: "AWS_ACCESS_KEY_ID",
  bedrock_secret_access_key: "AWS_SECRET_ACCESS_KEY",
  vertex: "GOOGLE_SERVICE_ACCOUNT_JSON",
  foundry: "ANTHROPIC_FOUNDRY_API_KEY",
} as const;

export interface AnthropicAuthEnvironment {
  secret: SecretLookup;
  /** The deployment's Anthropic API key and base URL (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL). */
  anthropic: { apiKey: string | undefined; baseURL: string | undefined };
  outbound: OutboundPolicy;
}

/** The part of the AnthropicProvider's configuration that says where calls go and how they are authenticated. */
export type AnthropicAuth = Pick<ProviderConfig, "apiKey" | "baseURL" | "client" | "authHint" | "diagnostics">;

export async function anthropicAuth(llm: LlmConfig | null, env: AnthropicAuthEnvironment): Promise<AnthropicAuth> {
  const auth: AuthProvider = llm?.auth_provider ?? "api_key";
  // The agent's own endpoint must pass the outbound guard; the deployment's ANTHROPIC_BASE_URL is the operator's.
  const endpoint = llm?.endpoint ? checkedEndpoint(llm.endpoint, env.outbound) : undefined;
  const need = (name: string, what: string): string => {
    const value = env.secret(name, "anthropic_provider");
    if (value) return value;
    throw new ProviderNotConfiguredError(
      "anthropic",
      `The agent's auth_provider ${auth} needs ${what} in the Worker secret ${name} (wrangler secret put ${name}).`,
    );
  };
  switch (auth) {
    case "api_key": {
      const name = llm?.api_key;
      const apiKey = name ? env.secret(name, "anthropic_provider") : env.anthropic.apiKey;
      return {
        apiKey: apiKey || undefined,
        baseURL: endpoint ?? (env.anthropic.baseURL || undefined),
        authHint: `check the ${name ?? DEFAULT_AUTH_SECRETS.api_key} secret`,
        diagnostics: true,
      };
    }
    case "oauth_token": {
      const name = llm?.oauth_token ?? DEFAULT_AUTH_SECRETS.oauth_token;
      const token = need(name, "a Claude OAuth token");
      const baseURL = endpoint ?? (env.anthropic.baseURL || null);
      return {
        apiKey: undefined,
        baseURL: undefined,
        authHint: `check the ${name} secret`,
        diagnostics: true,
        client: (options) =>
          new Anthropic({
            ...options,
            // Explicit nulls: the SDK would otherwise look for ANTHROPIC_API_KEY in process.env.
            apiKey: null,
            authToken: token,
            baseURL,
            fetch: withBeta(options.fetch, OAUTH_BETA),
          }),
      };
    }
    case "foundry": {
      const name = llm?.foundry?.api_key ?? DEFAULT_AUTH_SECRETS.foundry;
      const apiKey = need(name, "the Foundry resource's API key");
      const resource = llm?.foundry?.resource;
      // The official client builds https://<resource>.services.ai.azure.com/anthropic/ itself; checked here first.
      if (!endpoint && resource) checkOutboundUrl(`https://${resource}.services.ai.azure.com/anthropic`, env.outbound);
      const { AnthropicFoundry } = await loadFoundry();
      return {
        apiKey: undefined,
        baseURL: undefined,
        authHint: `check the ${name} secret`,
        client: (options) =>
          // Explicit nulls keep the client's environment variables (ANTHROPIC_FOUNDRY_*) out of it.
          new AnthropicFoundry({
            ...options,
            apiKey,
            ...(endpoint ? { baseURL: `${endpoint}/`, resource: null } : { baseURL: null, resource: resource ?? null }),
          }),
      };
    }
    case "vertex": {
      const settings = llm?.vertex;
      if (!settings) throw new ProviderNotConfiguredError("anthropic", "auth_provider vertex needs llmConfig.vertex.");
      const name = settings.credentials ?? DEFAULT_AUTH_SECRETS.vertex;
      const credentials = need(name, "a service account's JSON key");
      const { vertexClient } = await loadVertex();
      return {
        apiKey: undefined,
        baseURL: undefined,
        authHint: `check the ${name} secret`,
        client: vertexClient({ secretName: name, credentials, settings, endpoint, outbound: env.outbound }),
      };
    }
    case "bedrock": {
      const settings = llm?.bedrock;
      if (!settings)
        throw new ProviderNotConfiguredError("anthropic", "auth_provider bedrock needs llmConfig.bedrock.");
      const idName = settings.access_key_id ?? DEFAULT_AUTH_SECRETS.bedrock_access_key_id;
      const keyName = settings.secret_access_key ?? DEFAULT_AUTH_SECRETS.bedrock_secret_access_key;
      const credentials = {
        accessKeyId: need(idName, "an AWS access key id"),
        secretAccessKey: need(keyName, "an AWS secret access key"),
        sessionToken: settings.session_token ? need(settings.session_token, "an AWS session token") : undefined,
      };
      const { bedrockClient } = await loadBedrock();
      return {
        apiKey: undefined,
        baseURL: undefined,
        authHint: `check the ${idName} and ${keyName} secrets`,
        client: bedrockClient({ credentials, region: settings.region, endpoint, outbound: env.outbound }),
      };
    }
  }
}

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Adds `beta` to the anthropic-beta header of every request, keeping the betas the request already names. */
function withBeta(fetch: Fetch, beta: string): Fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    const betas = (headers.get("anthropic-beta") ?? "")
      .split(",")
      .map((b) => b.trim())
      .filter((b) => b !== "" && b !== beta);
    headers.set("anthropic-beta", [...betas, beta].join(","));
    return fetch(input, { ...init, headers });
  };
}
