// Collections of documents (src/knowledge/): collections, documents, chunks and the result of a put.

import { z } from "zod";
import { EmbeddingProviderSchema } from "../../knowledge/embedding.ts";
import { Count, Timestamp } from "./common.ts";

// ---- Collections (src/knowledge/) --------------------------------------------------------------------------------

const MetadataSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

/** A collection (GET /v1/collections/:name, and each of GET /v1/collections). */
export const CollectionSchema = z.strictObject({
  name: z.string(),
  /** The provider and model its chunks were embedded with, e.g. "openai:text-embedding-3-small". */
  embedding_model: z.string(),
  /** The embedding provider it was created with: secret names only, never values. */
  embedding_provider: EmbeddingProviderSchema,
  dimensions: Count,
  document_count: Count,
  chunk_count: Count,
  /** Where its chunks are searched: exact cosine in SQLite, or the Vectorize index. */
  backend: z.enum(["sqlite", "vectorize"]),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type CollectionResource = z.infer<typeof CollectionSchema>;

export const CollectionListSchema = z.strictObject({ collections: z.array(CollectionSchema) });
export type CollectionList = z.infer<typeof CollectionListSchema>;

export const DocumentSummarySchema = z.strictObject({
  id: z.string(),
  title: z.string().nullable(),
  source: z.string().nullable(),
  metadata: MetadataSchema,
  chars: Count,
  chunk_count: Count,
  created_at: Timestamp,
  updated_at: Timestamp,
});

/** GET /v1/collections/:name/documents: every document of the collection, by id. */
/** GET /v1/collections/:name/documents: a page of the collection's documents, by id. */
export const DocumentListSchema = z.strictObject({
  collection: z.string(),
  documents: z.array(DocumentSummarySchema),
  /** Pass as ?cursor= for the next page; null on the last. */
  next_cursor: z.string().nullable(),
});
export type DocumentList = z.infer<typeof DocumentListSchema>;

export const ChunkSchema = z.strictObject({
  chunk_id: z.string(),
  /** Position in the document, from 0. */
  index: Count,
  /** The Markdown headings above the chunk, outermost first. */
  heading_path: z.array(z.string()),
  text: z.string(),
});

/** GET /v1/collections/:name/documents/:id: the document, its text and its chunks in order. */
export const DocumentSchema = DocumentSummarySchema.extend({ text: z.string(), chunks: z.array(ChunkSchema) });
export type DocumentResource = z.infer<typeof DocumentSchema>;

/** PUT /v1/collections/:name/documents: the collection after the put, and the documents put. */
export const PutDocumentsResultSchema = z.strictObject({
  collection: CollectionSchema,
  documents: z.array(DocumentSummarySchema),
});
export type PutDocumentsResult = z.infer<typeof PutDocumentsResultSchema>;
