// Where a collection's chunk vectors are searched: ONE interface, two backends. SqliteVectorIndex keeps the vectors in
// the tenant's KnowledgeObject (table knowledge_vectors) and searches exactly, by cosine over every chunk of the
// collection; it runs wherever a Durable Object does (wrangler dev, tests, self-hosted workerd). VectorizeIndex uses
// Cloudflare Vectorize (the KNOWLEDGE_INDEX binding, docs/operations/deploy.md), one namespace per tenant and
// collection; it is approximate, scales past what an exact scan should read, and cannot run offline (Vectorize has no
// local simulation). Vectors arrive L2-normalised (src/knowledge/embedding.ts), so cosine similarity is their dot
// product.

export interface ScoredId {
  id: string;
  score: number;
}

/** The vectors a write removes (chunk ids) and adds. */
export interface VectorChanges {
  removed: readonly string[];
  added: readonly { id: string; vector: Float32Array }[];
}

/** What both backends answer: a search. Their writes differ (one is synchronous, one is not), so each has its own. */
export interface VectorIndex {
  readonly backend: "sqlite" | "vectorize";
  /** The `topK` chunk ids most similar to `vector`, best first. */
  query(collection: string, vector: Float32Array, topK: number): Promise<ScoredId[]>;
}

/**
 * Exact cosine search in SQLite. Its writes are synchronous: the object makes them inside the transaction that
 * stores the chunks, so chunks and vectors commit together or not at all.
 */
export class SqliteVectorIndex implements VectorIndex {
  readonly backend = "sqlite";
  private readonly sql: SqlStorage;
  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** Removes and adds vectors; call it inside the object's transaction. */
  write(collection: string, changes: VectorChanges): void {
    for (const id of changes.removed) this.sql.exec("DELETE FROM knowledge_vectors WHERE chunk_id = ?", id);
    for (const { id, vector } of changes.added) {
      // A copy of exactly the vector's bytes (a view may sit inside a larger buffer).
      const bytes = vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength);
      this.sql.exec(
        "INSERT OR REPLACE INTO knowledge_vectors (chunk_id, collection, vector) VALUES (?, ?, ?)",
        id,
        collection,
        bytes,
      );
    }
  }

  async query(collection: string, vector: Float32Array, topK: number): Promise<ScoredId[]> {
    const best: ScoredId[] = [];
    const rows = this.sql.exec<{ chunk_id: string; vector: ArrayBuffer }>(
      "SELECT chunk_id, vector FROM knowledge_vectors WHERE collection = ?",
      collection,
    );
    for (const row of rows) {
      const other = new Float32Array(row.vector);
      if (other.length !== vector.length) continue;
      let score = 0;
      for (let i = 0; i < vector.length; i++) score += (vector[i] ?? 0) * (other[i] ?? 0);
      // Keep the topK best in order: a short insertion, since topK is at most 20.
      if (best.length === topK && score <= (best.at(-1)?.score ?? -Infinity)) continue;
      let at = best.length;
      while (at > 0 && (best[at - 1]?.score ?? 0) < score) at--;
      best.splice(at, 0, { id: row.chunk_id, score });
      if (best.length > topK) best.pop();
    }
    return best;
  }
}

/** Vectors per Vectorize upsert or delete call (the binding takes up to 1,000). */
const VECTORIZE_BATCH = 500;

/**
 * Cloudflare Vectorize (binding type `Vectorize`, an index created with the embedding model's dimensions and the
 * cosine metric). Its mutations are applied asynchronously: a chunk just stored may be missing from results for a few
 * seconds, and one just deleted may still be returned, which the object drops (its chunk row is gone).
 */
export class VectorizeIndex implements VectorIndex {
  readonly backend = "vectorize";
  private readonly index: Vectorize;
  /** The namespace of a collection: one per tenant and collection (namespaces are at most 64 bytes). */
  private readonly namespaceOf: (collection: string) => Promise<string>;
  constructor(index: Vectorize, namespaceOf: (collection: string) => Promise<string>) {
    this.index = index;
    this.namespaceOf = namespaceOf;
  }

  /**
   * Removes, then adds vectors, after the object has committed the chunks (Vectorize is outside its transaction).
   * Throws when Vectorize fails: the chunks are stored, some vectors may be missing, and a retry of the same put
   * (which removes the chunks it replaces and adds them all again) repairs the document.
   */
  async write(collection: string, changes: VectorChanges): Promise<void> {
    for (let start = 0; start < changes.removed.length; start += VECTORIZE_BATCH) {
      await this.index.deleteByIds(changes.removed.slice(start, start + VECTORIZE_BATCH));
    }
    if (changes.added.length === 0) return;
    const namespace = await this.namespaceOf(collection);
    for (let start = 0; start < changes.added.length; start += VECTORIZE_BATCH) {
      const batch = changes.added.slice(start, start + VECTORIZE_BATCH);
      await this.index.upsert(batch.map(({ id, vector }) => ({ id, values: Array.from(vector), namespace })));
    }
  }

  async query(collection: string, vector: Float32Array, topK: number): Promise<ScoredId[]> {
    const { matches } = await this.index.query(Array.from(vector), {
      topK,
      namespace: await this.namespaceOf(collection),
      returnValues: false,
      returnMetadata: "none",
    });
    return matches.map((match) => ({ id: match.id, score: match.score }));
  }
}
