// One Durable Object per tenant: its collections of documents (PUT /v1/collections/:name/documents), their chunks and
// the search the knowledge tools run. Per tenant rather than per collection so that listing a tenant's collections
// and keeping tenants apart are both a matter of which object is asked: a route and a task's tool only ever get their
// own tenant's stub. Documents arrive chunked and embedded (the Worker calls the embedding provider; an object does no
// outbound I/O while it writes): the object stores them in SQLite and their vectors in the VectorIndex, exact cosine
// in SQLite, or Cloudflare Vectorize when the KNOWLEDGE_INDEX binding is configured (src/knowledge/vector-index.ts).
import { DurableObject } from "cloudflare:workers";
import type { RpcFailure, RpcResult } from "../src/contracts/rpc.ts";
import type { Env } from "../src/env.ts";
import {
  type CollectionView,
  type DocumentDetail,
  type DocumentView,
  type IndexedDocument,
  MAX_CHUNKS_PER_COLLECTION,
  MAX_COLLECTIONS,
  MAX_DOCUMENTS_PER_COLLECTION,
  type SearchHit,
  type SearchRefusal,
  type SearchRequest,
  type SectionView,
} from "../src/knowledge/collection.ts";
import type { EmbeddingProvider } from "../src/knowledge/embedding.ts";
import { type CollectionRecord, KnowledgeStore } from "../src/knowledge/knowledge-store.ts";
import { SqliteVectorIndex, type VectorChanges, VectorizeIndex } from "../src/knowledge/vector-index.ts";
import { KNOWLEDGE_MIGRATIONS } from "../src/storage/knowledge-migrations.ts";
import { migrate } from "../src/storage/migrations.ts";

/** The codes a put can be refused with, for its route to map. */
export type PutRefusal = "embedding_mismatch" | "collection_limit_reached" | "index_unavailable";

/** A document a put would store: its id and how many chunks it makes (what the limits count). */
export interface DocumentSize {
  id: string;
  chunks: number;
}

export class KnowledgeObject extends DurableObject<Env> {
  private readonly store: KnowledgeStore;
  private readonly index: SqliteVectorIndex | VectorizeIndex;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, KNOWLEDGE_MIGRATIONS);
    this.store = new KnowledgeStore(ctx.storage.sql);
    const binding = env.KNOWLEDGE_INDEX;
    this.index = binding
      ? new VectorizeIndex(binding, (collection) => vectorizeNamespace(ctx.id.toString(), collection))
      : new SqliteVectorIndex(ctx.storage.sql);
  }

  /** The collection's record (its embedding provider), or null: what the Worker embeds a put's documents with. */
  async collection(name: string): Promise<CollectionRecord | null> {
    return this.store.collection(name);
  }

  /**
   * Whether a put of these documents would be refused: another embedding model than the collection's, or past a limit.
   * Asked before the Worker pays for embeddings; putDocuments checks again.
   */
  async admit(name: string, model: string, documents: readonly DocumentSize[]): Promise<RpcResult<null, PutRefusal>> {
    const refusal = this.refusal(name, model, documents);
    return refusal ? { ok: false, error: refusal } : { ok: true, value: null };
  }

  /**
   * Adds or replaces the documents (a replaced document loses all its old chunks), creating the collection. Every
   * vector must have the collection's dimensions. Under SQLite the chunks and their vectors commit in one
   * transaction; under Vectorize the vectors are written after the chunks commit, and a failure answers
   * index_unavailable: the same put again repairs the documents.
   */
  async putDocuments(
    name: string,
    embedding: EmbeddingProvider,
    model: string,
    documents: readonly IndexedDocument[],
  ): Promise<RpcResult<{ collection: CollectionView; documents: DocumentView[] }, PutRefusal>> {
    const refusal = this.refusal(
      name,
      model,
      documents.map((d) => ({ id: d.id, chunks: d.chunks.length })),
    );
    if (refusal) return { ok: false, error: refusal };
    const dimensions = this.store.collection(name)?.dimensions ?? documents[0]?.chunks[0]?.vector.length ?? 0;
    const odd = documents.flatMap((d) => d.chunks).find((chunk) => chunk.vector.length !== dimensions);
    if (odd || dimensions === 0) {
      return {
        ok: false,
        error: {
          code: "embedding_mismatch",
          message: `Collection "${name}" holds vectors of ${dimensions} dimensions; the embedding provider returned ${odd?.vector.length ?? 0}.`,
        },
      };
    }
    const now = new Date().toISOString();
    const changes: { removed: string[]; added: { id: string; vector: Float32Array }[] } = { removed: [], added: [] };
    const local = this.index instanceof SqliteVectorIndex ? this.index : null;
    this.ctx.storage.transactionSync(() => {
      if (!this.store.collection(name)) this.store.createCollection({ name, embedding, model, dimensions }, now);
      for (const doc of documents) {
        const ids = doc.chunks.map(() => crypto.randomUUID());
        changes.removed.push(...this.store.putDocument(name, doc, ids, now));
        doc.chunks.forEach((chunk, i) => {
          changes.added.push({ id: ids[i] ?? "", vector: chunk.vector });
        });
      }
      local?.write(name, changes);
    });
    const failed = await this.writeOutside(name, changes);
    if (failed) return { ok: false, error: failed };
    const put = new Set(documents.map((d) => d.id));
    const stored = this.store.documents(name).filter((view) => put.has(view.id));
    return { ok: true, value: { collection: this.view(name) as CollectionView, documents: stored } };
  }

  async collections(): Promise<CollectionView[]> {
    return this.store.collections(this.index.backend);
  }

  async collectionView(name: string): Promise<CollectionView | null> {
    return this.view(name);
  }

  /**
   * A page of the collection's documents by id: up to `limit` after the id `after`, and the id the next page starts
   * after (null on the last page); null when there is no such collection.
   */
  async documents(
    name: string,
    after: string | null,
    limit: number,
  ): Promise<{ documents: DocumentView[]; next: string | null } | null> {
    if (!this.store.collection(name)) return null;
    // One more than asked: whether a next page exists, without a second query.
    const found = this.store.documentPage(name, after, limit + 1);
    const documents = found.slice(0, limit);
    return { documents, next: found.length > limit ? (documents.at(-1)?.id ?? null) : null };
  }

  /** The document, with its text and chunks; an error when there is no such collection or document. */
  async document(
    name: string,
    id: string,
  ): Promise<RpcResult<DocumentDetail, "collection_not_found" | "document_not_found">> {
    if (!this.store.collection(name)) return { ok: false, error: collectionMissing(name) };
    const document = this.store.document(name, id);
    return document ? { ok: true, value: document } : { ok: false, error: documentMissing(id) };
  }

  /** Deletes a document and its chunks and vectors. */
  async deleteDocument(
    name: string,
    id: string,
  ): Promise<RpcResult<null, "collection_not_found" | "document_not_found">> {
    const removed = this.ctx.storage.transactionSync(() => {
      if (!this.store.collection(name)) return "no_collection" as const;
      const ids = this.store.deleteDocument(name, id, new Date().toISOString());
      if (ids && this.index instanceof SqliteVectorIndex) this.index.write(name, { removed: ids, added: [] });
      return ids;
    });
    if (removed === "no_collection") return { ok: false, error: collectionMissing(name) };
    if (removed === null) return { ok: false, error: documentMissing(id) };
    await this.forgetOutside(name, removed);
    return { ok: true, value: null };
  }

  /** Deletes the collection with its documents, chunks and vectors, freeing its name and its place under the cap. */
  async deleteCollection(name: string): Promise<RpcResult<null, "collection_not_found">> {
    const removed = this.ctx.storage.transactionSync(() => {
      const ids = this.store.deleteCollection(name);
      if (ids && this.index instanceof SqliteVectorIndex) this.index.write(name, { removed: ids, added: [] });
      return ids;
    });
    if (removed === null) return { ok: false, error: collectionMissing(name) };
    await this.forgetOutside(name, removed);
    return { ok: true, value: null };
  }

  /** The best chunks for a query's vector, with their documents' titles and sources. */
  async search(name: string, request: SearchRequest): Promise<{ hits: SearchHit[] } | SearchRefusal> {
    const collection = this.store.collection(name);
    if (!collection) return { error: "collection_not_found" };
    if (collection.model !== request.model || collection.dimensions !== request.vector.length) {
      return { error: "embedding_mismatch", collectionModel: collection.model };
    }
    const scored = await this.index.query(name, request.vector, request.topK);
    const kept = scored.filter((s) => request.minScore === null || s.score >= request.minScore);
    const scores = new Map(kept.map((s) => [s.id, s.score]));
    const hits = this.store.chunks(
      name,
      kept.map((s) => s.id),
    );
    return {
      hits: hits.map((chunk) => ({
        ...chunk,
        ...this.store.documentLabel(name, chunk.document_id),
        score: Math.round((scores.get(chunk.chunk_id) ?? 0) * 10_000) / 10_000,
      })),
    };
  }

  /** The section a chunk belongs to, with `neighbours` chunks on either side. */
  async section(name: string, chunkId: string, neighbours: number): Promise<{ section: SectionView } | SearchRefusal> {
    if (!this.store.collection(name)) return { error: "collection_not_found" };
    const found = this.store.section(name, chunkId, neighbours);
    if (!found) return { error: "chunk_not_found" };
    const [chunk] = this.store.chunks(name, [chunkId]);
    return {
      section: {
        document_id: found.document_id,
        ...this.store.documentLabel(name, found.document_id),
        heading_path: chunk?.heading_path ?? [],
        chunks: found.chunks,
      },
    };
  }

  private view(name: string): CollectionView | null {
    return this.store.collections(this.index.backend).find((c) => c.name === name) ?? null;
  }

  /**
   * Vectorize's part of a write, after the chunks committed (SQLite's was made inside the transaction): null when done,
   * index_unavailable when Vectorize failed (the same request again repairs it).
   */
  private async writeOutside(name: string, changes: VectorChanges): Promise<RpcFailure<"index_unavailable"> | null> {
    if (!(this.index instanceof VectorizeIndex)) return null;
    try {
      await this.index.write(name, changes);
      return null;
    } catch (error) {
      console.error(`Vectorize write for collection ${name} failed`, error);
      return {
        code: "index_unavailable",
        message: `The vector index failed while writing collection "${name}": its documents are stored but may not be searchable; repeat the same request to repair them.`,
      };
    }
  }

  /**
   * Vectorize's part of a delete, after the rows are gone. A failure is logged, not answered: a vector whose chunk row
   * is gone is dropped from every search's results, so it costs only a place among a search's top_k.
   */
  private async forgetOutside(name: string, removed: readonly string[]): Promise<void> {
    if (!(this.index instanceof VectorizeIndex)) return;
    try {
      await this.index.write(name, { removed, added: [] });
    } catch (error) {
      console.error(`Vectorize delete for collection ${name} failed`, error);
    }
  }

  private refusal(name: string, model: string, documents: readonly DocumentSize[]): RpcFailure<PutRefusal> | null {
    const collection = this.store.collection(name);
    if (collection && collection.model !== model) {
      return {
        code: "embedding_mismatch",
        message: `Collection "${name}" was embedded with ${collection.model}, not ${model}: every chunk of a collection is in one vector space.`,
      };
    }
    if (!collection && this.store.collectionCount() >= MAX_COLLECTIONS) {
      return {
        code: "collection_limit_reached",
        message: `A tenant may have at most ${MAX_COLLECTIONS} collections; delete one (DELETE /v1/collections/:name) first.`,
        details: { field: "name" },
      };
    }
    const counts = this.store.countsWith(name, documents);
    if (counts.documents > MAX_DOCUMENTS_PER_COLLECTION) {
      return {
        code: "collection_limit_reached",
        message: `A collection may hold at most ${MAX_DOCUMENTS_PER_COLLECTION.toLocaleString("en")} documents; this put would pass it.`,
        details: { field: "documents" },
      };
    }
    if (counts.chunks > MAX_CHUNKS_PER_COLLECTION) {
      return {
        code: "collection_limit_reached",
        message: `A collection may hold at most ${MAX_CHUNKS_PER_COLLECTION.toLocaleString("en")} chunks; this put would make it ${counts.chunks.toLocaleString("en")}.`,
        details: { field: "documents" },
      };
    }
    return null;
  }
}

function collectionMissing(name: string): RpcFailure<"collection_not_found"> {
  return { code: "collection_not_found", message: `No collection named "${name}".`, details: { field: "name" } };
}

function documentMissing(id: string): RpcFailure<"document_not_found"> {
  return {
    code: "document_not_found",
    message: `No document with id "${id}" in this collection.`,
    details: { field: "document_id" },
  };
}

/**
 * A collection's Vectorize namespace: one per tenant's object and collection, as 32 hex digits of a SHA-256 (namespaces
 * are at most 64 bytes, and a tenant's and a collection's names together may be longer).
 */
async function vectorizeNamespace(objectId: string, collection: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${objectId}/${collection}`));
  return [...new Uint8Array(digest).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
