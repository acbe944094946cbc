// The storage schema of a tenant's KnowledgeObject (durable-objects/knowledge-object.ts), as one ordered list of steps
// applied by the same migrate() as a task's (migrations.ts): a step is written once and never changed; the next change
// is the next step. Its tables are knowledge_* (src/knowledge/knowledge-store.ts and vector-index.ts).
import type { Migration } from "./migrations.ts";

export const KNOWLEDGE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    adds: "collections with their embedding provider, their documents, the documents' chunks, and the chunks' vectors",
    up: (sql) => {
      // `embedding` is the EmbeddingProvider as JSON (secret names only); `model` its embeddingModelId.
      sql.exec(`CREATE TABLE knowledge_collections (
        name TEXT PRIMARY KEY,
        embedding TEXT NOT NULL,
        model TEXT NOT NULL,
        dimensions INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      )`);
      sql.exec(`CREATE TABLE knowledge_documents (
        collection TEXT NOT NULL,
        id TEXT NOT NULL,
        title TEXT,
        source TEXT,
        metadata TEXT NOT NULL,
        text TEXT NOT NULL,
        chars INTEGER NOT NULL,
        chunk_count INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (collection, id)
      )`);
      // `heading_path` is a JSON list of the headings above the chunk, outermost first.
      sql.exec(`CREATE TABLE knowledge_chunks (
        id TEXT PRIMARY KEY,
        collection TEXT NOT NULL,
        document_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        heading_path TEXT NOT NULL,
        text TEXT NOT NULL
      )`);
      sql.exec("CREATE INDEX knowledge_chunks_document ON knowledge_chunks (collection, document_id, idx)");
      // The SQLite backend's vectors (little-endian float32, L2-normalised); unused under Vectorize.
      sql.exec(`CREATE TABLE knowledge_vectors (
        chunk_id TEXT PRIMARY KEY,
        collection TEXT NOT NULL,
        vector BLOB NOT NULL
      )`);
      sql.exec("CREATE INDEX knowledge_vectors_collection ON knowledge_vectors (collection)");
    },
  },
];
