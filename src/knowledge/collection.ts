// Collections of documents (issue 17 §4): the wire types of PUT /v1/collections/:name/documents and the views the
// routes answer with, the limits on names, sizes and counts, and the narrow interface the knowledge tools search
// through (KnowledgeSearch), which the task's object binds to its tenant so a tool never reaches another tenant's
// collections. The storage is src/knowledge/knowledge-store.ts in a tenant's KnowledgeObject.
import { z } from "zod";
import { type Embedder, type EmbeddingProvider, EmbeddingProviderSchema } from "./embedding.ts";

/** A collection's name: it appears in URLs and in agents' tool settings. */
export const COLLECTION_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
/** A document's id, chosen by the uploader (a path or slug): URL-safe, so GET …/documents/:id needs no escaping. */
export const DOCUMENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** Characters of one document's text (the whole body is also capped at 256 KiB). */
export const MAX_DOCUMENT_CHARS = 100_000;
/** Documents one PUT may carry. */
export const MAX_DOCUMENTS_PER_REQUEST = 20;
/** Documents a collection may hold. */
export const MAX_DOCUMENTS_PER_COLLECTION = 1_000;
/** Chunks one document may make (100,000 characters in sections of 200 or more fit). */
export const MAX_CHUNKS_PER_DOCUMENT = 500;
/**
 * Chunks one put may make: each is embedded before anything is stored (11 requests of 96 texts at most), and all their
 * vectors cross to the object in one call (at 3,072 dimensions, 12 MiB of the 32 MiB an RPC call may carry).
 */
export const MAX_CHUNKS_PER_REQUEST = 1_000;
/**
 * Chunks a collection may hold: the SQLite backend's exact search reads every chunk's vector of the collection for
 * each query (at 1,536 dimensions, 60 MiB for 10,000 chunks), so the chunk count, not the document count, bounds it.
 */
export const MAX_CHUNKS_PER_COLLECTION = 10_000;
/** Collections a tenant may have. */
export const MAX_COLLECTIONS = 100;
/** Best chunks a search may return. */
export const MAX_TOP_K = 20;

export const CollectionNameSchema = z
  .string()
  .regex(COLLECTION_NAME_PATTERN, `must match ${COLLECTION_NAME_PATTERN} (lower case, digits, _ and -)`);

const DocumentSchema = z.strictObject({
  id: z.string().regex(DOCUMENT_ID_PATTERN, `must match ${DOCUMENT_ID_PATTERN}`),
  /** The document's text, Markdown or plain. */
  text: z
    .string()
    .refine((t) => t.trim() !== "", "must not be empty")
    .refine(
      (t) => t.length <= MAX_DOCUMENT_CHARS,
      `must be at most ${MAX_DOCUMENT_CHARS.toLocaleString("en")} characters`,
    ),
  title: z.string().min(1).max(200).optional(),
  /** Where the document comes from (a URL, a path), returned with every chunk so an answer can cite it. */
  source: z.string().min(1).max(2048).optional(),
  metadata: z
    .record(z.string().max(64), z.union([z.string().max(1024), z.number(), z.boolean()]))
    .refine((m) => Object.keys(m).length <= 20, "must have at most 20 keys")
    .optional(),
});

/**
 * PUT /v1/collections/:name/documents: documents added or replaced by id (a document put again has its chunks
 * replaced). `embedding_provider` is required to create the collection and, when given later, must be the one it was
 * created with: every chunk of a collection is in one vector space.
 */
export const PutDocumentsBody = z.strictObject({
  documents: z
    .array(DocumentSchema)
    .min(1, "must list at least one document")
    .max(MAX_DOCUMENTS_PER_REQUEST, `must list at most ${MAX_DOCUMENTS_PER_REQUEST} documents per request`)
    .refine((docs) => new Set(docs.map((d) => d.id)).size === docs.length, "must not list a document id twice"),
  embedding_provider: EmbeddingProviderSchema.optional(),
});
export type PutDocumentsInput = z.output<typeof PutDocumentsBody>;
export type NewDocument = PutDocumentsInput["documents"][number];

/** A chunk ready to store: its text, heading path and L2-normalised vector. */
export interface IndexedChunk {
  index: number;
  headingPath: string[];
  text: string;
  vector: Float32Array;
}

export interface IndexedDocument {
  id: string;
  title: string | null;
  source: string | null;
  metadata: Record<string, string | number | boolean>;
  text: string;
  chunks: IndexedChunk[];
}

export interface CollectionView {
  name: string;
  /** The provider and model the chunks were embedded with (embeddingModelId), e.g. "openai:text-embedding-3-small". */
  embedding_model: string;
  /** The embedding provider as the collection was created with it (secret names only, never values). */
  embedding_provider: EmbeddingProvider;
  dimensions: number;
  document_count: number;
  chunk_count: number;
  /** "sqlite" (exact cosine search in the tenant's object) or "vectorize" (the KNOWLEDGE_INDEX binding). */
  backend: "sqlite" | "vectorize";
  created_at: string;
  updated_at: string;
}

export interface DocumentView {
  id: string;
  title: string | null;
  source: string | null;
  metadata: Record<string, string | number | boolean>;
  chars: number;
  chunk_count: number;
  created_at: string;
  updated_at: string;
}

export interface ChunkView {
  chunk_id: string;
  index: number;
  heading_path: string[];
  text: string;
}

export interface DocumentDetail extends DocumentView {
  text: string;
  chunks: ChunkView[];
}

/** A search hit: the chunk, where it comes from, and its cosine similarity to the query (−1 to 1). */
export interface SearchHit extends ChunkView {
  document_id: string;
  title: string | null;
  source: string | null;
  score: number;
}

/** A section of a document around one chunk: the chunks sharing its heading path, with `neighbours` on either side. */
export interface SectionView {
  document_id: string;
  title: string | null;
  source: string | null;
  heading_path: string[];
  chunks: ChunkView[];
}

/** How a search is asked: the query's vector, the model that made it (it must be the collection's), how many hits. */
export interface SearchRequest {
  vector: Float32Array;
  model: string;
  topK: number;
  minScore: number | null;
}

/** Why a search or a section lookup found nothing to return. */
export type SearchRefusal =
  | { error: "collection_not_found" }
  | { error: "embedding_mismatch"; collectionModel: string }
  | { error: "chunk_not_found" };

/**
 * What a knowledge tool reaches: one tenant's collections, searched, and the deployment's embedding providers. The
 * task's object binds it to the task's tenant (src/task-host), so a tool names collections and never a tenant.
 */
export interface KnowledgeSearch {
  /** The Embedder of an agent's embedding_provider; throws EmbeddingError (a missing secret, a refused endpoint). */
  embedder(spec: EmbeddingProvider): Embedder;
  search(collection: string, request: SearchRequest): Promise<{ hits: SearchHit[] } | SearchRefusal>;
  section(collection: string, chunkId: string, neighbours: number): Promise<{ section: SectionView } | SearchRefusal>;
}
