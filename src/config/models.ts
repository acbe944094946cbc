// The one place that chooses the default model. The seed's claude-sonnet-4-5-20250929 reaches end of life on
// 2026-11-30 (the SDK's deprecation table), so the default is the current Sonnet from the SDK's `Model` type.
import type { Model } from "@anthropic-ai/sdk/resources/messages";

export const DEFAULT_MODEL: Model = "claude-sonnet-5-5";

/** Default output budget per model call; agents may override it. */
export const DEFAULT_MAX_TOKENS = 4096;

/** Model precedence: the agent's own pin, then the OUTPOST_DEFAULT_MODEL var, then DEFAULT_MODEL. */
export function resolveModel(agentModel: string | undefined, configuredDefault: string | undefined): string {
  if (agentModel) return agentModel;
  if (configuredDefault?.trim()) return configuredDefault.trim();
  return DEFAULT_MODEL;
}
