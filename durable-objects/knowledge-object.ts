// One Durable Object per tenant: its collections of documents (PUT /v1/collections/:name/documents), their chunks and
// the search the knowledge tools run. Per tenant rather than per collection so that listing a tenant's collections
// and keeping tenants apart are both a matter of which object is asked: a route and a task's tool only ever get their
// own tenant's stub. Documents arrive chunked and embedded (the Worker calls the embedding provider; an object does no
// outbound I/O while it writes): the object stores them in SQLite and their vectors in the VectorIndex, exact cosine
// in SQLite, or Cloudflare Vectorize when the KNOWLEDGE_INDEX binding is configured (src/knowledge/vector-index.ts).
import { DurableObject } from "cloudflare:workers";
import type { RpcResult } from "../src/contracts/rpc.ts";
import type { Env } from "../src/env.ts";
import {
  type CollectionView,
  type DocumentDetail,
  type DocumentView,
  type IndexedDocument,
  MAX_COLLECTIONS,
  MAX_DOCUMENTS_PER_COLLECTION,
  type SearchHit,
  type SearchRefusal,
  type SearchRequest,
  type SectionView,
} from "../src/knowledge/collection.ts";
import type { EmbeddingProvider } from "../src/knowledge/embedding.ts";
import { type CollectionRecord, KnowledgeStore } from "../src/knowledge/knowledge-store.ts";
import { SqliteVectorIndex, type VectorIndex, VectorizeIndex } from "../src/knowledge/vector-index.ts";
import { KNOWLEDGE_MIGRATIONS } from "../src/storage/knowledge-migrations.ts";
import { migrate } from "../src/storage/migrations.ts";

/** The codes a put can be refused with, for its route to map. */
export type PutRefusal = "embedding_mismatch" | "collection_limit_reached";

export class KnowledgeObject extends DurableObject<Env> {
  private readonly store: KnowledgeStore;
  private readonly index: VectorIndex;

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
  async admit(name: string, model: string, documentIds: readonly string[]): Promise<RpcResult<null, PutRefusal>> {
    const refusal = this.refusal(name, model, documentIds);
    return refusal ? { ok: false, error: refusal } : { ok: true, value: null };
  }

  /** Adds or replaces the documents (a replaced document loses all its old chunks), creating the collection. */
  async putDocuments(
    name: string,
    embedding: EmbeddingProvider,
    model: string,
    documents: readonly IndexedDocument[],
  ): Promise<RpcResult<{ collection: CollectionView; documents: DocumentView[] }, PutRefusal>> {
    const refusal = this.refusal(
      name,
      model,
      documents.map((d) => d.id),
    );
    if (refusal) return { ok: false, error: refusal };
    const now = new Date().toISOString();
    const dimensions = documents[0]?.chunks[0]?.vector.length ?? 0;
    const added: { id: string; vector: Float32Array }[] = [];
    const removed: string[] = [];
    this.ctx.storage.transactionSync(() => {
      if (!this.store.collection(name)) this.store.createCollection({ name, embedding, model, dimensions }, now);
      for (const doc of documents) {
        const ids = doc.chunks.map(() => crypto.randomUUID());
        removed.push(...this.store.putDocument(name, doc, ids, now));
        doc.chunks.forEach((chunk, i) => {
          added.push({ id: ids[i] ?? "", vector: chunk.vector });
        });
      }
    });
    // SQLite's writes are synchronous (no await before them), so they commit with the chunks above; Vectorize's
    // follow the commit, and a chunk whose row is gone is dropped from its results.
    await this.index.remove(name, removed);
    await this.index.upsert(name, added);
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

  /** The collection's documents, or null when there is no such collection. */
  async documents(name: string): Promise<DocumentView[] | null> {
    return this.store.collection(name) ? this.store.documents(name) : null;
  }

  async document(name: string, id: string): Promise<DocumentDetail | null> {
    return this.store.document(name, id);
  }

  /** Deletes a document and its chunks; false when there was none. */
  async deleteDocument(name: string, id: string): Promise<boolean> {
    let removed: string[] | null = null;
    this.ctx.storage.transactionSync(() => {
      removed = this.store.deleteDocument(name, id, new Date().toISOString());
    });
    if (removed === null) return false;
    await this.index.remove(name, removed);
    return true;
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

  private refusal(name: string, model: string, ids: readonly string[]) {
    const collection = this.store.collection(name);
    if (collection && collection.model !== model) {
      return {
        code: "embedding_mismatch" as const,
        message: `Collection "${name}" was embedded with ${collection.model}, not ${model}: every chunk of a collection is in one vector space.`,
      };
    }
    if (!collection && this.store.collectionCount() >= MAX_COLLECTIONS) {
      return {
        code: "collection_limit_reached" as const,
        message: `A tenant may have at most ${MAX_COLLECTIONS} collections.`,
        details: { field: "name" },
      };
    }
    if (this.store.documentCountWith(name, ids) > MAX_DOCUMENTS_PER_COLLECTION) {
      return {
        code: "collection_limit_reached" as const,
        message: `A collection may hold at most ${MAX_DOCUMENTS_PER_COLLECTION} documents; this put would pass it.`,
        details: { field: "documents" },
      };
    }
    return null;
  }
}

/**
 * A collection's Vectorize namespace: one per tenant's object and collection, as 32 hex digits of a SHA-256 (namespaces
 * are at most 64 bytes, and a tenant's and a collection's names together may be longer).
 */
async function vectorizeNamespace(objectId: string, collection: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${objectId}/${collection}`));
  return [...new Uint8Array(digest).slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
