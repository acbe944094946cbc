// Seed 004's embedding_provider: the provider that turns documents and queries into vectors for the knowledge tools,
// OpenAI or Azure OpenAI only (as the seed says), called through the official `openai` client. Its key is read from a
// Worker secret by name (as a model provider's is), and every URL it reaches passes the outbound guard. A collection
// records the provider and model its chunks were embedded with, so a query embedded with another is refused rather
// than compared across two vector spaces.
import { z } from "zod";
import { lazyModule } from "../lib/lazy-module.ts";
import { secretName } from "../lib/secrets.ts";
import { checkedEndpoint, checkOutboundUrl, type OutboundPolicy } from "../net/outbound.ts";

export const EMBEDDING_PROVIDERS = ["openai", "azure_openai"] as const;
export type EmbeddingProviderName = (typeof EMBEDDING_PROVIDERS)[number];

const DEFAULT_MODEL = "text-embedding-3-small";
const OPENAI_ENDPOINT = "https://api.openai.com/v1";
/** Azure OpenAI's GA data-plane API version that serves embeddings. */
const AZURE_API_VERSION = "2024-10-21";
/** The Worker secret each provider reads its key from unless the definition names another. */
const DEFAULT_KEY_SECRETS: Readonly<Record<EmbeddingProviderName, string>> = {
  openai: "OPENAI_API_KEY",
  azure_openai: "AZURE_OPENAI_API_KEY",
};
/** Texts per embeddings request: well under OpenAI's 2,048 inputs, so one request stays small and quick. */
const BATCH = 96;

/**
 * Seed 004 LLMProvider as an embedding_provider: `provider` openai or azure_openai, `name` the model (Azure: the
 * deployment unless `deployment` says), `endpoint` (absent: the deployment's OPENAI_BASE_URL, else api.openai.com; for
 * Azure its AZURE_OPENAI_ENDPOINT), `api_key` the NAME of the Worker secret holding the key (absent: OPENAI_API_KEY,
 * AZURE_OPENAI_API_KEY), and optionally the vectors' `dimensions`. What a tenant sends at runtime (a collection's
 * put, a tenant's own agent) may not name an endpoint or a secret: those would send the deployment's key elsewhere.
 */
export const EmbeddingProviderSchema = z
  .strictObject({
    provider: z.enum(
      EMBEDDING_PROVIDERS,
      'must be "openai" or "azure_openai" (seed 004: embeddings come from them only)',
    ),
    name: z.string().min(1).max(200).default(DEFAULT_MODEL),
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    api_key: secretName("OPENAI_API_KEY").optional(),
    /** Azure only: the deployment of the model (default: `name`). */
    deployment: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, "must be an Azure deployment name")
      .optional(),
    /** Azure only: the API version (default 2024-10-21). */
    api_version: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/, "must be an API version such as 2024-10-21")
      .optional(),
    /** The vectors' length, for models that can shorten them (text-embedding-3-*); absent: the model's own. */
    dimensions: z.number().int().min(1).max(3072).optional(),
  })
  .superRefine((spec, ctx) => {
    for (const key of ["deployment", "api_version"] as const) {
      if (spec.provider !== "azure_openai" && spec[key] !== undefined) {
        ctx.addIssue({ code: "custom", path: [key], message: "is for azure_openai only" });
      }
    }
  });
export type EmbeddingProviderInput = z.input<typeof EmbeddingProviderSchema>;
export type EmbeddingProvider = z.output<typeof EmbeddingProviderSchema>;

/** Which vector space a provider's vectors are in: the same string for the same provider, model and dimensions. */
export function embeddingModelId(spec: EmbeddingProvider): string {
  const model = spec.provider === "azure_openai" ? (spec.deployment ?? spec.name) : spec.name;
  return `${spec.provider}:${model}${spec.dimensions ? `:${spec.dimensions}` : ""}`;
}

/** Why embeddings could not be made: no key (its secret is unset), no endpoint, a refused endpoint, a failure. */
export type EmbeddingFailure = "no_key" | "no_endpoint" | "blocked" | "failed";

export class EmbeddingError extends Error {
  readonly reason: EmbeddingFailure;
  constructor(reason: EmbeddingFailure, message: string) {
    super(message);
    this.reason = reason;
    this.name = "EmbeddingError";
  }
}

export interface Embedder {
  /** embeddingModelId of its provider. */
  readonly model: string;
  /** One L2-normalised vector per text, in order. Throws EmbeddingError. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

export interface EmbedderEnvironment {
  secret: (name: string) => string | undefined;
  outbound: OutboundPolicy;
  /** The deployment's endpoints for a provider the spec gives none: OPENAI_BASE_URL, AZURE_OPENAI_ENDPOINT. */
  endpoints: { openai: string | undefined; azure_openai: string | undefined };
}

/** The openai client, loaded on first use: a Worker whose agents embed nothing never evaluates it. */
const loadOpenAi = lazyModule(() => import("openai"));

/** An Embedder for `spec`; its key is read now, so a missing secret fails here with the secret's name. */
export function createEmbedder(spec: EmbeddingProvider, env: EmbedderEnvironment): Embedder {
  const secret = spec.api_key ?? DEFAULT_KEY_SECRETS[spec.provider];
  const apiKey = env.secret(secret);
  if (!apiKey) {
    throw new EmbeddingError(
      "no_key",
      `The embedding provider (${spec.provider}) needs its API key in the Worker secret ${secret} (wrangler secret put ${secret}).`,
    );
  }
  const configured =
    spec.endpoint ?? (env.endpoints[spec.provider] || (spec.provider === "openai" ? OPENAI_ENDPOINT : undefined));
  if (!configured) {
    throw new EmbeddingError(
      "no_endpoint",
      "An azure_openai embedding provider needs its endpoint (the agent's embedding_provider.endpoint, or the deployment's AZURE_OPENAI_ENDPOINT).",
    );
  }
  let endpoint: string;
  try {
    endpoint = checkedEndpoint(configured, env.outbound);
  } catch (error) {
    throw new EmbeddingError("blocked", error instanceof Error ? error.message : String(error));
  }
  const model = embeddingModelId(spec);
  // Every request the client makes passes the guard again, and is never redirected elsewhere.
  const guarded = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = input instanceof Request ? input.url : input;
    checkOutboundUrl(url, env.outbound);
    return fetch(input, { ...init, redirect: "manual" });
  };
  return {
    model,
    async embed(texts, signal) {
      if (texts.length === 0) return [];
      const { default: OpenAI, AzureOpenAI } = await loadOpenAi();
      const client =
        spec.provider === "azure_openai"
          ? new AzureOpenAI({
              apiKey,
              // As a base URL, not `endpoint`: under nodejs_compat the client also reads OPENAI_BASE_URL from
              // process.env (the Worker's vars), and refuses an endpoint beside a base URL.
              baseURL: `${endpoint}/openai`,
              apiVersion: spec.api_version ?? AZURE_API_VERSION,
              deployment: spec.deployment ?? spec.name,
              maxRetries: 2,
              fetch: guarded,
            })
          : new OpenAI({ apiKey, baseURL: endpoint, maxRetries: 2, fetch: guarded });
      const vectors: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += BATCH) {
        const batch = texts.slice(start, start + BATCH);
        let data: { index: number; embedding: number[] }[];
        try {
          const response = await client.embeddings.create(
            {
              model: spec.provider === "azure_openai" ? (spec.deployment ?? spec.name) : spec.name,
              input: [...batch],
              encoding_format: "float",
              ...(spec.dimensions ? { dimensions: spec.dimensions } : {}),
            },
            signal ? { signal } : {},
          );
          data = response.data;
        } catch (error) {
          if (signal?.aborted) throw error;
          throw new EmbeddingError(
            "failed",
            `The embedding provider (${spec.provider}, ${spec.name}) failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
        const ordered = [...data].sort((a, b) => a.index - b.index);
        if (ordered.length !== batch.length) {
          throw new EmbeddingError(
            "failed",
            `The embedding provider returned ${ordered.length} vectors for ${batch.length} texts.`,
          );
        }
        for (const item of ordered) vectors.push(normalised(item.embedding));
      }
      return vectors;
    },
  };
}

/** The vector scaled to length 1, so that cosine similarity is a dot product. */
export function normalised(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values as ArrayLike<number>);
  let norm = 0;
  for (const value of vector) norm += value * value;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] ?? 0) * scale;
  return vector;
}
