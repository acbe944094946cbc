// /v1/collections: a tenant's collections of documents for the knowledge tools (issue 17 §4, docs/knowledge.md).
// PUT …/documents chunks each document (Markdown-aware, src/knowledge/chunker.ts), embeds the chunks here in the
// Worker with the collection's embedding provider (through the outbound guard, its key from a Worker secret), and
// stores them in the tenant's KnowledgeObject; the other routes read and delete. Reading needs `read`, writing `run`
// (the method's scope); every route reaches only the key's own tenant's object.
import { type Context, Hono } from "hono";
import { ApiError } from "../../errors.ts";
import { chunkMarkdown } from "../../knowledge/chunker.ts";
import {
  CollectionNameSchema,
  DOCUMENT_ID_PATTERN,
  type IndexedDocument,
  PutDocumentsBody,
  type PutDocumentsInput,
} from "../../knowledge/collection.ts";
import { type Embedder, EmbeddingError, type EmbeddingProvider, embeddingModelId } from "../../knowledge/embedding.ts";
import { deploymentEmbedder, knowledgeStubFor } from "../../knowledge/knowledge-stub.ts";
import type { AppEnv } from "../app-env.ts";
import type { CollectionList, DocumentList, PutDocumentsResult } from "../responses.ts";
import { jsonBody } from "../validation.ts";

function collectionNotFound(name: string): ApiError {
  return new ApiError("collection_not_found", `No collection named "${name}".`, "name");
}

/** The collection's name from the path, and the tenant's object; a malformed name is answered like an unknown one. */
function collectionOf(c: Context<AppEnv>) {
  const name = c.req.param("name") ?? "";
  if (!CollectionNameSchema.safeParse(name).success) throw collectionNotFound(name);
  return { name, stub: knowledgeStubFor(c.env, c.get("tenant")) };
}

function documentIdOf(c: Context<AppEnv>): string {
  const id = c.req.param("id") ?? "";
  if (!DOCUMENT_ID_PATTERN.test(id)) throw documentNotFound(id);
  return id;
}

function documentNotFound(id: string): ApiError {
  return new ApiError("document_not_found", `No document with id "${id}" in this collection.`, "document_id");
}

/**
 * A request's embedding provider may choose the provider and the model, never an endpoint or a secret: the
 * deployment's key would go to that endpoint, or the named secret to the provider (as for a tenant's own agent).
 */
function refuseDeploymentSettings(spec: EmbeddingProvider | undefined): void {
  for (const key of ["endpoint", "api_key"] as const) {
    if (spec?.[key] !== undefined) {
      throw new ApiError(
        "validation_failed",
        `Invalid embedding_provider.${key}: not for a request; the deployment's endpoint (OPENAI_BASE_URL, AZURE_OPENAI_ENDPOINT) and key (OPENAI_API_KEY, AZURE_OPENAI_API_KEY) are used.`,
        `embedding_provider.${key}`,
      );
    }
  }
}

/** The Embedder of a provider, or the 4xx/5xx the deployment's configuration calls for. */
function embedderFor(c: Context<AppEnv>, spec: EmbeddingProvider): Embedder {
  try {
    return deploymentEmbedder(c.env, spec);
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    if (error.reason === "no_key") {
      throw new ApiError("embedding_not_configured", error.message, "embedding_provider.api_key");
    }
    throw new ApiError("embedding_not_configured", error.message, "embedding_provider.endpoint");
  }
}

/** What embedding a chunk sees: where it is (title and headings) and its text, so a heading's words count too. */
function embeddingText(title: string | undefined, headingPath: readonly string[], text: string): string {
  const where = [title, ...headingPath].filter((part) => part !== undefined && part !== "").join(" › ");
  return where ? `${where}\n\n${text}` : text;
}

/** The documents chunked and embedded, ready for the object. */
async function indexDocuments(
  documents: PutDocumentsInput["documents"],
  embedder: Embedder,
  signal: AbortSignal,
): Promise<IndexedDocument[]> {
  const chunked = documents.map((doc, i) => {
    const chunks = chunkMarkdown(doc.text);
    if (chunks.length === 0) {
      throw new ApiError("validation_failed", "must hold some text besides headings", `documents.${i}.text`);
    }
    return { doc, chunks };
  });
  const texts = chunked.flatMap(({ doc, chunks }) =>
    chunks.map((k) => embeddingText(doc.title, k.headingPath, k.text)),
  );
  let vectors: Float32Array[];
  try {
    vectors = await embedder.embed(texts, signal);
  } catch (error) {
    if (error instanceof EmbeddingError) throw new ApiError("embedding_failed", error.message, "embedding_provider");
    throw error;
  }
  let next = 0;
  return chunked.map(({ doc, chunks }) => ({
    id: doc.id,
    title: doc.title ?? null,
    source: doc.source ?? null,
    metadata: doc.metadata ?? {},
    text: doc.text,
    chunks: chunks.map((chunk) => ({ ...chunk, vector: vectors[next++] ?? new Float32Array() })),
  }));
}

function putRefused(error: {
  code: "embedding_mismatch" | "collection_limit_reached";
  message: string;
  details?: unknown;
}) {
  if (error.code === "embedding_mismatch") return new ApiError(error.code, error.message, "embedding_provider");
  const field = (error.details as { field?: string } | undefined)?.field ?? "documents";
  return new ApiError(error.code, error.message, field);
}

export const collectionRoutes = new Hono<AppEnv>()
  .get("/", async (c) => {
    const stub = knowledgeStubFor(c.env, c.get("tenant"));
    return c.json({ collections: await stub.collections() } satisfies CollectionList);
  })
  .get("/:name", async (c) => {
    const { name, stub } = collectionOf(c);
    const collection = await stub.collectionView(name);
    if (!collection) throw collectionNotFound(name);
    return c.json(collection);
  })
  .get("/:name/documents", async (c) => {
    const { name, stub } = collectionOf(c);
    const documents = await stub.documents(name);
    if (!documents) throw collectionNotFound(name);
    return c.json({ collection: name, documents } satisfies DocumentList);
  })
  .put("/:name/documents", async (c) => {
    const { name, stub } = collectionOf(c);
    const body = await jsonBody(c, PutDocumentsBody);
    refuseDeploymentSettings(body.embedding_provider);
    const existing = await stub.collection(name);
    const spec = body.embedding_provider ?? existing?.embedding;
    if (!spec) {
      throw new ApiError(
        "validation_failed",
        `Collection "${name}" does not exist yet: embedding_provider is required to create it.`,
        "embedding_provider",
      );
    }
    const model = embeddingModelId(spec);
    const admitted = await stub.admit(
      name,
      model,
      body.documents.map((d) => d.id),
    );
    if (admitted.error) throw putRefused(admitted.error);
    const documents = await indexDocuments(body.documents, embedderFor(c, spec), c.req.raw.signal);
    const stored = await stub.putDocuments(name, existing?.embedding ?? spec, model, documents);
    if (stored.error) throw putRefused(stored.error);
    return c.json(stored.value satisfies PutDocumentsResult);
  })
  .get("/:name/documents/:id", async (c) => {
    const { name, stub } = collectionOf(c);
    const id = documentIdOf(c);
    const document = await stub.document(name, id);
    if (!document) throw documentNotFound(id);
    return c.json(document);
  })
  .delete("/:name/documents/:id", async (c) => {
    const { name, stub } = collectionOf(c);
    const id = documentIdOf(c);
    if (!(await stub.deleteDocument(name, id))) throw documentNotFound(id);
    return c.body(null, 204);
  });
