// Which provider serves an agent's model calls (seed 002 ProviderName, seed 003 LLMConfig): Anthropic unless the
// agent's llmConfig says gemini or openai_compatible, authenticated as its auth_provider says (anthropic-auth.ts).
// Keys come from Worker secrets by name; endpoints pass the outbound guard. Built per run, inside it, so a missing
// key fails that run with a clear error.
import { ProviderNotConfiguredError } from "../errors.ts";
import { lazyModule } from "../lib/lazy-module.ts";
import { type SecretLookup, secretLookup } from "../lib/secrets.ts";
import { checkedEndpoint, type OutboundPolicy, outboundPolicy } from "../net/outbound.ts";
import { AnthropicProvider } from "./anthropic.ts";
import { anthropicAuth } from "./anthropic-auth.ts";
import { DEFAULT_KEY_SECRETS, type Fetch, type LlmConfig, type ModelProvider } from "./provider.ts";

/**
 * The other providers' clients are loaded only when an agent uses them: the Worker never evaluates what it does not
 * use (and, in the test pool, evaluating the openai client at startup made a later task's shell command resume in
 * another Durable Object's context; loaded on use, it does not).
 */
const loadGemini = lazyModule(() => import("./gemini.ts"));
const loadOpenAi = lazyModule(() => import("./openai-compatible.ts"));

export interface ProviderEnvironment {
  /** A Worker secret by name, under the rule of src/lib/secrets.ts. */
  secret: SecretLookup;
  anthropic: { apiKey: string | undefined; baseURL: string | undefined };
  outbound: OutboundPolicy;
  maxRetries: number;
  /** What sends the model's HTTP requests; the global fetch when absent (a run with faults: src/faults/). */
  transport?: Fetch | undefined;
}

/**
 * The environment of the Worker's model calls, from its bindings: secrets by name, the deployment's Anthropic key and
 * endpoint, the outbound guard's policy. A task's runs and an evaluation's grader build their providers with it.
 */
export function workerProviderEnvironment(
  env: { ANTHROPIC_API_KEY?: string; ANTHROPIC_BASE_URL?: string; OUTPOST_ALLOW_PRIVATE_HOSTS?: string },
  maxRetries: number,
): ProviderEnvironment {
  return {
    secret: secretLookup(env),
    anthropic: { apiKey: env.ANTHROPIC_API_KEY || undefined, baseURL: env.ANTHROPIC_BASE_URL || undefined },
    outbound: outboundPolicy(env.OUTPOST_ALLOW_PRIVATE_HOSTS),
    maxRetries,
  };
}

export async function createProvider(llm: LlmConfig | null, env: ProviderEnvironment): Promise<ModelProvider> {
  if (!llm || llm.provider === "anthropic") {
    return new AnthropicProvider({
      ...(await anthropicAuth(llm, env)),
      maxRetries: env.maxRetries,
      transport: env.transport,
    });
  }
  const secretName = llm.api_key ?? DEFAULT_KEY_SECRETS[llm.provider];
  const apiKey = env.secret(secretName);
  if (!apiKey) {
    throw new ProviderNotConfiguredError(
      llm.provider,
      `The agent's ${llm.provider} provider needs its API key in the Worker secret ${secretName} (wrangler secret put ${secretName}).`,
    );
  }
  if (llm.provider === "openai_compatible") {
    if (!llm.endpoint) {
      throw new ProviderNotConfiguredError(llm.provider, "An openai_compatible provider needs llmConfig.endpoint.");
    }
    const endpoint = checkedEndpoint(llm.endpoint, env.outbound);
    const { OpenAiCompatibleProvider } = await loadOpenAi();
    return new OpenAiCompatibleProvider({ apiKey, endpoint, maxRetries: env.maxRetries, transport: env.transport });
  }
  const endpoint = llm.endpoint ? checkedEndpoint(llm.endpoint, env.outbound) : undefined;
  const { GeminiProvider } = await loadGemini();
  return new GeminiProvider({
    apiKey,
    ...(endpoint ? { endpoint } : {}),
    maxRetries: env.maxRetries,
    transport: env.transport,
  });
}
