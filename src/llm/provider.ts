// Model providers (seed 002 ProviderName, seed 003 LLMConfig). Outpost's own format for model calls is the
// Anthropic Messages API: agents build MessageCreateParams and the runtime consumes its stream events, whatever the
// provider. Each other provider translates at the edge: the request into its own wire format, its stream back into
// Messages API stream events and a final Message, its usage into input/output tokens, its errors onto the hierarchy.
import type { Message, MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages";
import type { AgentMessage, StreamOptions } from "./anthropic.ts";

export const PROVIDER_NAMES = ["anthropic", "gemini", "openai_compatible"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface ModelProvider {
  readonly name: ProviderName;
  /** Streams one call; yields every event (Messages API shape), then the final message. Errors are Outpost errors. */
  stream(params: MessageCreateParamsBase, options: StreamOptions): AsyncGenerator<AgentMessage, Message>;
}

/**
 * An agent's model endpoint (seed 003 LLMConfig): which provider, its base URL, and the Worker secret holding its
 * key. Absent: Anthropic, configured by ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL.
 */
export interface LlmConfig {
  provider: ProviderName;
  /** Base URL: required for openai_compatible (e.g. https://api.openai.com/v1); Gemini defaults to Google's. */
  endpoint?: string | undefined;
  /** The NAME of the Worker secret holding the API key (seed 003 api_key "from environment"). */
  api_key?: string | undefined;
}

/** The Worker secret each provider reads its key from unless the agent names another. */
export const DEFAULT_KEY_SECRETS: Readonly<Record<ProviderName, string>> = {
  anthropic: "ANTHROPIC_API_KEY",
  gemini: "GEMINI_API_KEY",
  openai_compatible: "OPENAI_API_KEY",
};
