// Model providers (seed 002 ProviderName, seed 003 LLMConfig). Outpost's own format for model calls is the
// Anthropic Messages API: agents build MessageCreateParams and the runtime consumes its stream events, whatever the
// provider. Each other provider translates at the edge: the request into its own wire format, its stream back into
// Messages API stream events and a final Message, its usage into input/output tokens, its errors onto the hierarchy.
import type { Message, MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import type { AgentMessage } from "../contracts/runtime.ts";
import { isRetryable, type ProviderFailureCode, providerText } from "../errors/codes.ts";
import { ProviderError } from "../errors.ts";
import { isReservedSecret, RESERVED_SECRET_MESSAGE, secretNameFormat } from "../lib/secrets.ts";

export const PROVIDER_NAMES = ["anthropic", "gemini", "openai_compatible"] as const;

/**
 * The sampling temperature a request carries for a provider that takes one (seed 003 Agent.temperature). The
 * Messages API dropped temperature from its current version (it answers 400), so the type Outpost's requests are
 * written in has no such field, and an Anthropic agent may not set one (src/agents/definition.ts).
 */
export function temperatureOf(params: MessageCreateParamsBase): number | undefined {
  const value = (params as { temperature?: unknown }).temperature;
  return typeof value === "number" ? value : undefined;
}
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** One HTTP attempt made by the SDK, reported as soon as its response headers arrive. */
export interface HttpAttempt {
  attempt: number;
  /** Null when the connection failed before any response. */
  status: number | null;
  request_id: string | null;
  /** Seconds from the retry-after header (else a 429's rate-limit reset), when the provider sent one. */
  retry_after_seconds: number | null;
  /** A 429's exhausted rate limits: seconds until they are back in full, when the provider says (its reset headers). */
  limit_reset_seconds?: number | null;
}

/** A fetch as the SDKs take one: a provider's transport (the global fetch, or fault injection's in front of it). */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface StreamOptions {
  signal: AbortSignal;
  headers?: Record<string, string>;
  onAttempt?: (attempt: HttpAttempt) => void;
}

export interface ModelProvider {
  readonly name: ProviderName;
  /** Streams one call; yields every event (Messages API shape), then the final message. Errors are Outpost errors. */
  stream(params: MessageCreateParamsBase, options: StreamOptions): AsyncGenerator<AgentMessage, Message>;
}

/**
 * How an Anthropic agent's calls are authenticated (seed 004 AuthProvider): an Anthropic API key (the default), a
 * Claude OAuth token, or Claude on Amazon Bedrock, Google Vertex AI or Azure AI Foundry. src/llm/anthropic-auth.ts
 * dispatches on it; docs/providers.md describes each.
 */
export const AUTH_PROVIDERS = ["api_key", "oauth_token", "bedrock", "vertex", "foundry"] as const;
export type AuthProvider = (typeof AUTH_PROVIDERS)[number];

/** A region or project as the clouds spell them: lower case, digits and '-' (so it is safe inside a host name). */
const cloudName = (example: string) =>
  z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, `must be lower case letters, digits and '-' (e.g. ${example})`);

/** Claude on Amazon Bedrock: the region, and the NAMES of the Worker secrets holding the AWS credentials. */
const BedrockSchema = z.strictObject({
  region: cloudName("us-east-1"),
  /** Default AWS_ACCESS_KEY_ID. */
  access_key_id: secretNameFormat("AWS_ACCESS_KEY_ID").optional(),
  /** Default AWS_SECRET_ACCESS_KEY. */
  secret_access_key: secretNameFormat("AWS_SECRET_ACCESS_KEY").optional(),
  /** Temporary credentials only; no default. */
  session_token: secretNameFormat("AWS_SESSION_TOKEN").optional(),
});

/** Claude on Google Vertex AI: the region and project, and the NAME of the secret holding a service account's key. */
const VertexSchema = z.strictObject({
  region: cloudName("us-east5"),
  /** Default: the service account's project_id. */
  project_id: cloudName("my-project").optional(),
  /** The service account's JSON key file, whole. Default GOOGLE_SERVICE_ACCOUNT_JSON. */
  credentials: secretNameFormat("GOOGLE_SERVICE_ACCOUNT_JSON").optional(),
});

/** Claude on Azure AI Foundry: the resource, and the NAME of the secret holding its API key. */
const FoundrySchema = z.strictObject({
  /** https://<resource>.services.ai.azure.com/anthropic; `endpoint` replaces it. */
  resource: cloudName("my-resource").optional(),
  /** Default ANTHROPIC_FOUNDRY_API_KEY. */
  api_key: secretNameFormat("ANTHROPIC_FOUNDRY_API_KEY").optional(),
});

/** The settings block each auth provider reads; a block for another auth provider is refused. */
const AUTH_SETTINGS = ["oauth_token", "bedrock", "vertex", "foundry"] as const;

/**
 * An agent's model endpoint (seed 003 LLMConfig): which provider, its base URL, the Worker secret holding its
 * key, and for Anthropic's models how calls are authenticated (seed 004 auth_provider) with that method's settings.
 * Absent: Anthropic with an API key, configured by ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL.
 * src/agents/definition.ts composes it.
 */
export const LlmConfigSchema = z
  .strictObject({
    provider: z.enum(PROVIDER_NAMES),
    /**
     * Base URL: required for openai_compatible (e.g. https://api.openai.com/v1); Gemini defaults to Google's. For
     * Anthropic it replaces the auth provider's own (api.anthropic.com, bedrock-runtime.<region>.amazonaws.com,
     * <region>-aiplatform.googleapis.com, <resource>.services.ai.azure.com/anthropic).
     */
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * The NAME of the Worker secret holding the API key (seed 003 api_key "from environment"); only the Anthropic
     * provider may name one of Outpost's Anthropic secrets (src/lib/secrets.ts).
     */
    api_key: secretNameFormat("OPENAI_API_KEY").optional(),
    /** Seed 004 auth_provider, Anthropic only. Absent: api_key. */
    auth_provider: z.enum(AUTH_PROVIDERS).optional(),
    /** auth_provider oauth_token: the NAME of the secret holding the token. Default CLAUDE_CODE_OAUTH_TOKEN. */
    oauth_token: secretNameFormat("CLAUDE_CODE_OAUTH_TOKEN").optional(),
    bedrock: BedrockSchema.optional(),
    vertex: VertexSchema.optional(),
    foundry: FoundrySchema.optional(),
  })
  .superRefine((config, ctx) => {
    const reader = config.provider === "anthropic" ? "anthropic_provider" : "other";
    if (config.api_key && isReservedSecret(config.api_key, reader)) {
      ctx.addIssue({ code: "custom", path: ["api_key"], message: RESERVED_SECRET_MESSAGE });
    }
    if (config.provider === "openai_compatible" && !config.endpoint) {
      ctx.addIssue({ code: "custom", message: "endpoint is required for openai_compatible (its base URL)" });
    }
    const named: [PropertyKey[], string | undefined][] = [
      [["oauth_token"], config.oauth_token],
      [["bedrock", "access_key_id"], config.bedrock?.access_key_id],
      [["bedrock", "secret_access_key"], config.bedrock?.secret_access_key],
      [["bedrock", "session_token"], config.bedrock?.session_token],
      [["vertex", "credentials"], config.vertex?.credentials],
      [["foundry", "api_key"], config.foundry?.api_key],
    ];
    for (const [path, name] of named) {
      if (name && isReservedSecret(name, "anthropic_provider")) {
        ctx.addIssue({ code: "custom", path, message: RESERVED_SECRET_MESSAGE });
      }
    }
    const auth = config.auth_provider ?? "api_key";
    if (auth !== "api_key" && config.provider !== "anthropic") {
      ctx.addIssue({ code: "custom", path: ["auth_provider"], message: "is for Anthropic's models only" });
    }
    if (auth !== "api_key" && config.api_key !== undefined) {
      const where = auth === "foundry" ? "; name Foundry's key in foundry.api_key" : "";
      ctx.addIssue({ code: "custom", path: ["api_key"], message: `is for auth_provider api_key${where}` });
    }
    for (const block of AUTH_SETTINGS) {
      if (config[block] !== undefined && auth !== block) {
        ctx.addIssue({ code: "custom", path: [block], message: `is for auth_provider ${block}` });
      }
    }
    if ((auth === "bedrock" || auth === "vertex") && config[auth] === undefined) {
      ctx.addIssue({ code: "custom", path: [auth], message: `is required for auth_provider ${auth} (its region)` });
    }
    if (auth === "foundry" && !config.foundry?.resource && !config.endpoint) {
      ctx.addIssue({
        code: "custom",
        path: ["foundry"],
        message: "needs resource (or endpoint) for auth_provider foundry",
      });
    }
  })
  .transform((config) => Object.freeze(config));
export type LlmConfig = z.output<typeof LlmConfigSchema>;

/** The Worker secret each provider reads its key from unless the agent names another. */
export const DEFAULT_KEY_SECRETS: Readonly<Record<ProviderName, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  gemini: "GEMINI_API_KEY",
  openai_compatible: "OPENAI_API_KEY",
};

/**
 * A ProviderError with the shared wording: `<what happened>[; <hint>]: <the provider's own message>`. The codes every
 * provider's errors are mapped onto, their texts and whether each is worth retrying are in the registry
 * (src/errors/codes.ts, the codes with a `provider` text). `retryable` overrides the registry for an error whose
 * class alone does not say (an error event inside a 200 stream).
 */
export function providerFailure(
  code: ProviderFailureCode,
  detail: string,
  base: { status: number | null; requestId: string | null; cause: unknown },
  options: { hint?: string; retryable?: boolean } = {},
): ProviderError {
  return new ProviderError(code, `${providerText(code)}${options.hint ? `; ${options.hint}` : ""}: ${detail}`, {
    ...base,
    retryable: options.retryable ?? isRetryable(code),
  });
}
