// The way to a tenant's KnowledgeObject and to the deployment's embedding providers: the only functions that name the
// object, so every route and every task's tool reaches the object of the tenant it acts for and no other, and the
// one place the Worker's environment (secrets, outbound policy, default endpoints) becomes an Embedder.
import type { Env } from "../env.ts";
import { secretLookup } from "../lib/secrets.ts";
import { outboundPolicy } from "../net/outbound.ts";
import type { KnowledgeSearch } from "./collection.ts";
import { createEmbedder, type Embedder, type EmbeddingProvider } from "./embedding.ts";

/** The KnowledgeObject holding `tenant`'s collections. */
export function knowledgeStubFor(env: Pick<Env, "KNOWLEDGE">, tenant: string) {
  return env.KNOWLEDGE.get(env.KNOWLEDGE.idFromName(`knowledge:${tenant}`));
}

/** An Embedder for `spec` under the deployment's configuration; throws EmbeddingError (e.g. its secret is unset). */
export function deploymentEmbedder(env: Env, spec: EmbeddingProvider): Embedder {
  return createEmbedder(spec, {
    secret: secretLookup(env),
    outbound: outboundPolicy(env.OUTPOST_ALLOW_PRIVATE_HOSTS),
    endpoints: { openai: env.OPENAI_BASE_URL || undefined, azure_openai: env.AZURE_OPENAI_ENDPOINT || undefined },
  });
}

/** What a knowledge tool of a task of `tenant` reaches: that tenant's collections only, and the embedders. */
export function knowledgeSearchFor(env: Env, tenant: string): KnowledgeSearch {
  const stub = knowledgeStubFor(env, tenant);
  return {
    embedder: (spec) => deploymentEmbedder(env, spec),
    search: async (collection, request) => await stub.search(collection, request),
    section: async (collection, chunkId, neighbours) => await stub.section(collection, chunkId, neighbours),
  };
}
