// /v1/collections: a tenant's collections of documents for the knowledge tools (issue 17 §4, docs/knowledge.md).
// PUT …/documents chunks each document (Markdown-aware, src/knowledge/chunker.ts), embeds the chunks here in the
// Worker with the collection's embedding provider (through the outbound guard, its key from a Worker secret), and
// stores them in the tenant's KnowledgeObject; the other routes read (documents a page at a time, by id) and delete. Reading needs `read`; writing needs
// `admin` (every agent of the tenant trusts these documents, as it trusts the tenant's own agents, which PUT
// /v1/agents/:name writes with `admin`); every route reaches only the key's own tenant's object.
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { PutRefusal } from "../../../durable-objects/knowledge-object.ts";
import type { RpcFailure } from "../../contracts/rpc.ts";
import { ApiError } from "../../errors.ts";
import { Redactor } from "../../events/redaction.ts";
import { type Chunk, chunkMarkdown } from "../../knowledge/chunker.ts";
import {
  CollectionNameSchema,
  DOCUMENT_ID_PATTERN,
  type IndexedDocument,
  MAX_CHUNKS_PER_DOCUMENT,
  MAX_CHUNKS_PER_REQUEST,
  PutDocumentsBody,
  type PutDocumentsInput,
} from "../../knowledge/collection.ts";
import { type Embedder, EmbeddingError, type EmbeddingProvider, embeddingModelId } from "../../knowledge/embedding.ts";
import { deploymentEmbedder, knowledgeStubFor } from "../../knowledge/knowledge-stub.ts";
import type { AppEnv } from "../app-env.ts";
import { requireAdmin } from "../auth.ts";
import { endpointAndKeyRefusals, refuseDeploymentSettings } from "../deployment-settings.ts";
import { opaqueCursor, queryObject, readCursor } from "../listing.ts";
import type { CollectionList, DocumentList, PutDocumentsResult } from "../responses.ts";
import { DocumentListQuery } from "../schemas.ts";
import { jsonBody, parseWith } from "../validation.ts";

/** A page of documents ends at a document: its cursor is [that id]. */
const DocumentCursorSchema = z.tuple([z.string().regex(DOCUMENT_ID_PATTERN)]);

function collectionNotFound(name: string): ApiError {
  return new ApiError("collection_not_found", `No collection named "${name}".`, "name");
}

/** The collection's name from the path (400 when malformed), and the tenant's object. */
function collectionOf(c: Context<AppEnv>) {
  const name = c.req.param("name") ?? "";
  const parsed = CollectionNameSchema.safeParse(name);
  if (!parsed.success) {
    throw new ApiError("validation_failed", `Invalid name: ${parsed.error.issues[0]?.message ?? "malformed"}.`, "name");
  }
  return { name, stub: knowledgeStubFor(c.env, c.get("tenant")) };
}

/**
 * The document's id from the path. A malformed one is asked for like any other: the object answers
 * collection_not_found first, then document_not_found (no document can have it).
 */
function documentIdOf(c: Context<AppEnv>): string {
  return c.req.param("id") ?? "";
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

type ChunkedDocument = { doc: PutDocumentsInput["documents"][number]; chunks: Chunk[] };

/** The documents chunked, within the per-document and per-request limits (checked before anything is embedded). */
function chunkDocuments(documents: PutDocumentsInput["documents"]): ChunkedDocument[] {
  let total = 0;
  return documents.map((doc, i) => {
    const chunks = chunkMarkdown(doc.text);
    if (chunks.length === 0) {
      throw new ApiError("validation_failed", "must hold some text besides headings", `documents.${i}.text`);
    }
    if (chunks.length > MAX_CHUNKS_PER_DOCUMENT) {
      throw new ApiError(
        "collection_limit_reached",
        `Document "${doc.id}" makes ${chunks.length.toLocaleString("en")} chunks; a document may make at most ${MAX_CHUNKS_PER_DOCUMENT} (split it into several documents, or write longer sections).`,
        `documents.${i}.text`,
      );
    }
    total += chunks.length;
    if (total > MAX_CHUNKS_PER_REQUEST) {
      throw new ApiError(
        "collection_limit_reached",
        `These documents make more than ${MAX_CHUNKS_PER_REQUEST.toLocaleString("en")} chunks, the most one put may make: put them in several requests.`,
        "documents",
      );
    }
    return { doc, chunks };
  });
}

/** The chunked documents embedded, ready for the object. */
async function embedDocuments(
  c: Context<AppEnv>,
  chunked: readonly ChunkedDocument[],
  embedder: Embedder,
): Promise<IndexedDocument[]> {
  const texts = chunked.flatMap(({ doc, chunks }) =>
    chunks.map((k) => embeddingText(doc.title, k.headingPath, k.text)),
  );
  let vectors: Float32Array[];
  try {
    vectors = await embedder.embed(texts, c.req.raw.signal);
  } catch (error) {
    if (error instanceof EmbeddingError) {
      // The provider's words may quote the key (OpenAI's 401 names it): they pass the deployment's redactor.
      throw new ApiError("embedding_failed", Redactor.fromEnv(c.env).text(error.message), "embedding_provider");
    }
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

function refused(error: RpcFailure<PutRefusal | "collection_not_found" | "document_not_found">): ApiError {
  if (error.code === "embedding_mismatch") return new ApiError(error.code, error.message, "embedding_provider");
  const field = typeof error.details?.field === "string" ? error.details.field : undefined;
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
    const { limit, cursor } = parseWith(DocumentListQuery, queryObject(c), "(query)");
    const after = cursor === undefined ? null : readCursor(cursor, DocumentCursorSchema)[0];
    const page = await stub.documents(name, after, limit);
    if (!page) throw collectionNotFound(name);
    const next_cursor = page.next === null ? null : opaqueCursor([page.next]);
    return c.json({ collection: name, documents: page.documents, next_cursor } satisfies DocumentList);
  })
  .delete("/:name", requireAdmin, async (c) => {
    const { name, stub } = collectionOf(c);
    const deleted = await stub.deleteCollection(name);
    if (deleted.error) throw refused(deleted.error);
    return c.body(null, 204);
  })
  .put("/:name/documents", requireAdmin, async (c) => {
    const { name, stub } = collectionOf(c);
    const body = await jsonBody(c, PutDocumentsBody);
    refuseDeploymentSettings(
      endpointAndKeyRefusals(body.embedding_provider, "embedding_provider", "embeddings"),
      "a request",
    );
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
    const chunked = chunkDocuments(body.documents);
    const admitted = await stub.admit(
      name,
      model,
      chunked.map(({ doc, chunks }) => ({ id: doc.id, chunks: chunks.length })),
    );
    if (admitted.error) throw refused(admitted.error);
    const documents = await embedDocuments(c, chunked, embedderFor(c, spec));
    const stored = await stub.putDocuments(name, existing?.embedding ?? spec, model, documents);
    if (stored.error) throw refused(stored.error);
    return c.json(stored.value satisfies PutDocumentsResult);
  })
  .get("/:name/documents/:id", async (c) => {
    const { name, stub } = collectionOf(c);
    const id = documentIdOf(c);
    const document = await stub.document(name, id);
    if (document.error) throw refused(document.error);
    return c.json(document.value);
  })
  .delete("/:name/documents/:id", requireAdmin, async (c) => {
    const { name, stub } = collectionOf(c);
    const id = documentIdOf(c);
    const deleted = await stub.deleteDocument(name, id);
    if (deleted.error) throw refused(deleted.error);
    return c.body(null, 204);
  });
