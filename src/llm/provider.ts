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
  /** Seconds from the retry-after header, when the provider sent one. */
  retry_after_seconds: number | null;
}

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
 * An agent's model endpoint (seed 003 LLMConfig): which provider, its base URL, and the Worker secret holding its
 * key. Absent: Anthropic, configured by ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL. src/agents/definition.ts composes it.
 */
export const LlmConfigSchema = z
  .strictObject({
    provider: z.enum(PROVIDER_NAMES),
    /** Base URL: required for openai_compatible (e.g. https://api.openai.com/v1); Gemini defaults to Google's. */
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    /**
     * The NAME of the Worker secret holding the API key (seed 003 api_key "from environment"); only the Anthropic
     * provider may name one of Outpost's Anthropic secrets (src/lib/secrets.ts).
     */
    api_key: secretNameFormat("OPENAI_API_KEY").optional(),
  })
  .superRefine((config, ctx) => {
    const reader = config.provider === "anthropic" ? "anthropic_provider" : "other";
    if (config.api_key && isReservedSecret(config.api_key, reader)) {
      ctx.addIssue({ code: "custom", path: ["api_key"], message: RESERVED_SECRET_MESSAGE });
    }
    if (config.provider === "openai_compatible" && !config.endpoint) {
      ctx.addIssue({ code: "custom", message: "endpoint is required for openai_compatible (its base URL)" });
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
