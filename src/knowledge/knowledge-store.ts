// A tenant's collections in its KnowledgeObject's SQLite (tables knowledge_*, src/storage/knowledge-migrations.ts):
// each collection with the embedding provider its chunks were made with, its documents (text, title, source,
// metadata) and their chunks (text and heading path, in order). The vectors are the VectorIndex's
// (src/knowledge/vector-index.ts). Rows become the views of src/knowledge/collection.ts here.
import type { ChunkView, CollectionView, DocumentDetail, DocumentView, IndexedDocument } from "./collection.ts";
import type { EmbeddingProvider } from "./embedding.ts";

interface CollectionRow {
  name: string;
  embedding: string;
  model: string;
  dimensions: number;
  created_at: string;
  updated_at: string;
  [key: string]: SqlStorageValue;
}

interface DocumentRow {
  id: string;
  title: string | null;
  source: string | null;
  metadata: string;
  chars: number;
  chunk_count: number;
  created_at: string;
  updated_at: string;
  [key: string]: SqlStorageValue;
}

interface ChunkRow {
  id: string;
  document_id: string;
  idx: number;
  heading_path: string;
  text: string;
  [key: string]: SqlStorageValue;
}

/** A chunk with the document it belongs to. */
export interface StoredChunk extends ChunkView {
  document_id: string;
}

export interface CollectionRecord {
  name: string;
  embedding: EmbeddingProvider;
  model: string;
  dimensions: number;
}

export class KnowledgeStore {
  private readonly sql: SqlStorage;
  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  collection(name: string): CollectionRecord | null {
    const row = this.sql.exec<CollectionRow>("SELECT * FROM knowledge_collections WHERE name = ?", name).toArray()[0];
    return row
      ? { name: row.name, embedding: JSON.parse(row.embedding), model: row.model, dimensions: row.dimensions }
      : null;
  }

  collectionCount(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM knowledge_collections").one().n;
  }

  /** Every collection, by name, with its counts. */
  collections(backend: CollectionView["backend"]): CollectionView[] {
    const rows = this.sql
      .exec<CollectionRow & { document_count: number; chunk_count: number }>(
        `SELECT c.*,
           (SELECT count(*) FROM knowledge_documents d WHERE d.collection = c.name) AS document_count,
           (SELECT count(*) FROM knowledge_chunks k WHERE k.collection = c.name) AS chunk_count
         FROM knowledge_collections c ORDER BY c.name`,
      )
      .toArray();
    return rows.map((row) => ({
      name: row.name,
      embedding_model: row.model,
      embedding_provider: JSON.parse(row.embedding),
      dimensions: row.dimensions,
      document_count: row.document_count,
      chunk_count: row.chunk_count,
      backend,
      created_at: row.created_at,
      updated_at: row.updated_at,
    }));
  }

  createCollection(record: CollectionRecord, now: string): void {
    this.sql.exec(
      "INSERT INTO knowledge_collections (name, embedding, model, dimensions, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      record.name,
      JSON.stringify(record.embedding),
      record.model,
      record.dimensions,
      now,
      now,
    );
  }

  /** How many documents and chunks the collection would hold once `documents` (ids and chunk counts) are put. */
  countsWith(
    collection: string,
    documents: readonly { id: string; chunks: number }[],
  ): { documents: number; chunks: number } {
    const totals = this.sql
      .exec<{ documents: number; chunks: number }>(
        "SELECT count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks FROM knowledge_documents WHERE collection = ?",
        collection,
      )
      .one();
    let { documents: count, chunks } = totals;
    for (const doc of documents) {
      const before = this.documentRow(collection, doc.id);
      if (!before) count++;
      chunks += doc.chunks - (before?.chunk_count ?? 0);
    }
    return { documents: count, chunks };
  }

  /**
   * Adds the document or replaces it (and all its chunks), with `chunkIds[i]` the id of its i-th chunk. Returns the
   * ids of the chunks it replaced, whose vectors the caller removes.
   */
  putDocument(collection: string, doc: IndexedDocument, chunkIds: readonly string[], now: string): string[] {
    const before = this.documentRow(collection, doc.id);
    const replaced = before ? this.removeChunks(collection, doc.id) : [];
    this.sql.exec(
      `INSERT OR REPLACE INTO knowledge_documents
         (collection, id, title, source, metadata, text, chars, chunk_count, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      collection,
      doc.id,
      doc.title,
      doc.source,
      JSON.stringify(doc.metadata),
      doc.text,
      doc.text.length,
      doc.chunks.length,
      before?.created_at ?? now,
      now,
    );
    doc.chunks.forEach((chunk, i) => {
      this.sql.exec(
        "INSERT INTO knowledge_chunks (id, collection, document_id, idx, heading_path, text) VALUES (?, ?, ?, ?, ?, ?)",
        chunkIds[i] ?? "",
        collection,
        doc.id,
        chunk.index,
        JSON.stringify(chunk.headingPath),
        chunk.text,
      );
    });
    this.touch(collection, now);
    return replaced;
  }

  /** Deletes the document and its chunks; the ids of the chunks removed, or null when there was no such document. */
  deleteDocument(collection: string, id: string, now: string): string[] | null {
    if (!this.documentRow(collection, id)) return null;
    const removed = this.removeChunks(collection, id);
    this.sql.exec("DELETE FROM knowledge_documents WHERE collection = ? AND id = ?", collection, id);
    this.touch(collection, now);
    return removed;
  }

  /** Deletes the collection, its documents and their chunks; the ids of the chunks removed, or null when there was none. */
  deleteCollection(collection: string): string[] | null {
    if (!this.collection(collection)) return null;
    const ids = this.sql
      .exec<{ id: string }>("SELECT id FROM knowledge_chunks WHERE collection = ?", collection)
      .toArray()
      .map((row) => row.id);
    this.sql.exec("DELETE FROM knowledge_chunks WHERE collection = ?", collection);
    this.sql.exec("DELETE FROM knowledge_documents WHERE collection = ?", collection);
    this.sql.exec("DELETE FROM knowledge_collections WHERE name = ?", collection);
    return ids;
  }

  documents(collection: string): DocumentView[] {
    return this.sql
      .exec<DocumentRow>(
        `SELECT id, title, source, metadata, chars, chunk_count, created_at, updated_at
         FROM knowledge_documents WHERE collection = ? ORDER BY id`,
        collection,
      )
      .toArray()
      .map(documentView);
  }

  /** Up to `limit` documents by id, after the id `after` (from the first when null). */
  documentPage(collection: string, after: string | null, limit: number): DocumentView[] {
    return this.sql
      .exec<DocumentRow>(
        `SELECT id, title, source, metadata, chars, chunk_count, created_at, updated_at
         FROM knowledge_documents WHERE collection = ? AND id > ? ORDER BY id LIMIT ?`,
        collection,
        after ?? "",
        limit,
      )
      .toArray()
      .map(documentView);
  }

  document(collection: string, id: string): DocumentDetail | null {
    const row = this.sql
      .exec<DocumentRow & { text: string }>(
        "SELECT * FROM knowledge_documents WHERE collection = ? AND id = ?",
        collection,
        id,
      )
      .toArray()[0];
    if (!row) return null;
    const chunks = this.sql
      .exec<ChunkRow>(
        "SELECT * FROM knowledge_chunks WHERE collection = ? AND document_id = ? ORDER BY idx",
        collection,
        id,
      )
      .toArray()
      .map(chunkView);
    return { ...documentView(row), text: row.text, chunks };
  }

  /** The chunks with these ids that are still in the collection, in the order of `ids`. */
  chunks(collection: string, ids: readonly string[]): StoredChunk[] {
    const found = new Map<string, StoredChunk>();
    for (const id of ids) {
      const row = this.sql
        .exec<ChunkRow>("SELECT * FROM knowledge_chunks WHERE collection = ? AND id = ?", collection, id)
        .toArray()[0];
      if (row) found.set(id, { ...chunkView(row), document_id: row.document_id });
    }
    return ids.flatMap((id) => found.get(id) ?? []);
  }

  /**
   * The section of the chunk `chunkId`: the chunks of its document that share its heading path and are contiguous with
   * it, plus `neighbours` chunks before and after them. Null when there is no such chunk.
   */
  section(
    collection: string,
    chunkId: string,
    neighbours: number,
  ): { document_id: string; chunks: ChunkView[] } | null {
    const [chunk] = this.chunks(collection, [chunkId]);
    if (!chunk) return null;
    const all = this.sql
      .exec<ChunkRow>(
        "SELECT * FROM knowledge_chunks WHERE collection = ? AND document_id = ? ORDER BY idx",
        collection,
        chunk.document_id,
      )
      .toArray()
      .map(chunkView);
    const at = all.findIndex((c) => c.chunk_id === chunkId);
    const path = JSON.stringify(chunk.heading_path);
    let first = at;
    let last = at;
    while (first > 0 && JSON.stringify(all[first - 1]?.heading_path) === path) first--;
    while (last < all.length - 1 && JSON.stringify(all[last + 1]?.heading_path) === path) last++;
    return {
      document_id: chunk.document_id,
      chunks: all.slice(Math.max(0, first - neighbours), last + neighbours + 1),
    };
  }

  /** The title and source of a document, for hits. */
  documentLabel(collection: string, id: string): { title: string | null; source: string | null } {
    const row = this.documentRow(collection, id);
    return { title: row?.title ?? null, source: row?.source ?? null };
  }

  private documentRow(collection: string, id: string): DocumentRow | null {
    return (
      this.sql
        .exec<DocumentRow>("SELECT * FROM knowledge_documents WHERE collection = ? AND id = ?", collection, id)
        .toArray()[0] ?? null
    );
  }

  private removeChunks(collection: string, documentId: string): string[] {
    const ids = this.sql
      .exec<{ id: string }>(
        "SELECT id FROM knowledge_chunks WHERE collection = ? AND document_id = ?",
        collection,
        documentId,
      )
      .toArray()
      .map((row) => row.id);
    this.sql.exec("DELETE FROM knowledge_chunks WHERE collection = ? AND document_id = ?", collection, documentId);
    return ids;
  }

  private touch(collection: string, now: string): void {
    this.sql.exec("UPDATE knowledge_collections SET updated_at = ? WHERE name = ?", now, collection);
  }
}

function documentView(row: DocumentRow): DocumentView {
  return {
    id: row.id,
    title: row.title,
    source: row.source,
    metadata: JSON.parse(row.metadata),
    chars: row.chars,
    chunk_count: row.chunk_count,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function chunkView(row: ChunkRow): ChunkView {
  return { chunk_id: row.id, index: row.idx, heading_path: JSON.parse(row.heading_path), text: row.text };
}
