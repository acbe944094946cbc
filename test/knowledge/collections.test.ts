// Collections of documents (PUT /v1/collections/:name/documents and the routes that read and delete them): documents
// chunked along their Markdown headings, embedded by the emulator's OpenAI and Azure embeddings endpoints through the
// official client, stored per tenant in the tenant's KnowledgeObject; a document put again replaces its chunks; every
// refusal a 4xx naming its field; a tenant never sees another's collections.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  CollectionListSchema,
  DocumentListSchema,
  DocumentSchema,
  PutDocumentsResultSchema,
} from "../../src/http/responses.ts";
import { MAX_DOCUMENTS_PER_COLLECTION } from "../../src/knowledge/collection.ts";
import { knowledgeStubFor } from "../../src/knowledge/knowledge-stub.ts";
import { api, apiJson, expectError, ISO_TIME } from "../support/helpers.ts";

const READER = "test-read-key";
const BETA = "test-beta-key";
const OPENAI = { provider: "openai", name: "text-embedding-3-small" };

const GUIDE = `# Guide

Welcome to the product.

## Install

### Linux

Run the installer with sudo and reboot.

### Windows

Double-click setup.exe and follow the wizard.

## Refunds

Refunds are paid within 14 days of the request.
`;

function put(collection: string, body: unknown, key?: string) {
  return api(`/v1/collections/${collection}/documents`, {
    method: "PUT",
    body: JSON.stringify(body),
    ...(key ? { key } : {}),
  });
}

describe("PUT /v1/collections/:name/documents", () => {
  it("creates the collection, chunks each document along its headings and shows its chunks", async () => {
    const res = await put("guide", {
      embedding_provider: OPENAI,
      documents: [{ id: "guide.md", title: "Guide", source: "https://docs.example/guide", text: GUIDE }],
    });
    expect(res.status).toBe(200);
    const body = PutDocumentsResultSchema.parse(await res.json());
    expect(body.collection).toEqual({
      name: "guide",
      embedding_model: "openai:text-embedding-3-small",
      embedding_provider: { provider: "openai", name: "text-embedding-3-small" },
      dimensions: 256,
      document_count: 1,
      chunk_count: 4,
      backend: "sqlite",
      created_at: expect.stringMatching(ISO_TIME),
      updated_at: expect.stringMatching(ISO_TIME),
    });
    expect(body.documents).toEqual([
      {
        id: "guide.md",
        title: "Guide",
        source: "https://docs.example/guide",
        metadata: {},
        chars: GUIDE.length,
        chunk_count: 4,
        created_at: expect.stringMatching(ISO_TIME),
        updated_at: expect.stringMatching(ISO_TIME),
      },
    ]);
    const doc = await apiJson("/v1/collections/guide/documents/guide.md", DocumentSchema);
    expect(doc.text).toBe(GUIDE);
    expect(doc.chunks.map(({ index, heading_path, text }) => ({ index, heading_path, text }))).toEqual([
      { index: 0, heading_path: ["Guide"], text: "Welcome to the product." },
      { index: 1, heading_path: ["Guide", "Install", "Linux"], text: "Run the installer with sudo and reboot." },
      {
        index: 2,
        heading_path: ["Guide", "Install", "Windows"],
        text: "Double-click setup.exe and follow the wizard.",
      },
      { index: 3, heading_path: ["Guide", "Refunds"], text: "Refunds are paid within 14 days of the request." },
    ]);
    const list = await apiJson("/v1/collections", CollectionListSchema);
    expect(list.collections.map((c) => [c.name, c.document_count, c.chunk_count])).toContainEqual(["guide", 1, 4]);
  });

  it("replaces a document's chunks when it is put again, and finds only the new text", async () => {
    const first = await put("replace", {
      embedding_provider: OPENAI,
      documents: [{ id: "faq", text: "# FAQ\n\nShipping takes five days.\n\n## Returns\n\nReturns are free." }],
    });
    expect(first.status).toBe(200);
    const before = await apiJson("/v1/collections/replace/documents/faq", DocumentSchema);
    // The collection's provider is kept: a later put need not repeat it.
    const second = await put("replace", { documents: [{ id: "faq", text: "Gift cards never expire." }] });
    expect(second.status).toBe(200);
    const after = await apiJson("/v1/collections/replace/documents/faq", DocumentSchema);
    expect(after.chunks.map((c) => c.text)).toEqual(["Gift cards never expire."]);
    expect(after.created_at).toBe(before.created_at);
    const beforeIds = new Set(before.chunks.map((c) => c.chunk_id));
    expect(after.chunks.some((c) => beforeIds.has(c.chunk_id))).toBe(false);
    // Storage holds the new chunk and its vector only.
    const rows = await runInDurableObject(knowledgeStubFor(env, "default"), (_instance, state) => ({
      chunks: state.storage.sql
        .exec<{ text: string }>("SELECT text FROM knowledge_chunks WHERE collection = 'replace'")
        .toArray()
        .map((r) => r.text),
      vectors: state.storage.sql
        .exec<{ n: number }>("SELECT count(*) AS n FROM knowledge_vectors WHERE collection = 'replace'")
        .one().n,
    }));
    expect(rows).toEqual({ chunks: ["Gift cards never expire."], vectors: 1 });
  });

  it("answers 503 naming the secret when the embedding provider's key is not set", async () => {
    // The test deployment sets AZURE_OPENAI_ENDPOINT but not AZURE_OPENAI_API_KEY.
    const res = await put("azure", {
      embedding_provider: { provider: "azure_openai", name: "text-embedding-3-large", deployment: "emb-large" },
      documents: [{ id: "a", text: "Azure text." }],
    });
    const error = await expectError(res, 503, "embedding_not_configured", "embedding_provider.api_key");
    expect(error.error.message).toBe(
      "The embedding provider (azure_openai) needs its API key in the Worker secret AZURE_OPENAI_API_KEY (wrangler secret put AZURE_OPENAI_API_KEY).",
    );
    await expectError(await api("/v1/collections/azure"), 404, "collection_not_found", "name");
  });

  it("deletes a document and its chunks; a second delete is 404", async () => {
    await put("deleting", {
      embedding_provider: OPENAI,
      documents: [
        { id: "a", text: "A." },
        { id: "b", text: "B." },
      ],
    });
    const gone = await api("/v1/collections/deleting/documents/a", { method: "DELETE" });
    expect(gone.status).toBe(204);
    const list = await apiJson("/v1/collections/deleting/documents", DocumentListSchema);
    expect(list.documents.map((d) => d.id)).toEqual(["b"]);
    await expectError(
      await api("/v1/collections/deleting/documents/a", { method: "DELETE" }),
      404,
      "document_not_found",
      "document_id",
    );
    await expectError(await api("/v1/collections/deleting/documents/a"), 404, "document_not_found", "document_id");
  });

  it("needs an embedding provider to create a collection, and the same model afterwards", async () => {
    await expectError(
      await put("nothing", { documents: [{ id: "a", text: "A." }] }),
      400,
      "validation_failed",
      "embedding_provider",
    );
    await put("fixed", { embedding_provider: OPENAI, documents: [{ id: "a", text: "A." }] });
    await expectError(
      await put("fixed", {
        embedding_provider: { provider: "openai", name: "text-embedding-3-large" },
        documents: [{ id: "b", text: "B." }],
      }),
      409,
      "embedding_mismatch",
      "embedding_provider",
    );
    const list = await apiJson("/v1/collections/fixed/documents", DocumentListSchema);
    expect(list.documents.map((d) => d.id)).toEqual(["a"]);
  });

  it("refuses an endpoint or a secret in the request: the deployment's key must not go elsewhere", async () => {
    await expectError(
      await put("leak", {
        embedding_provider: { ...OPENAI, endpoint: "https://collector.example/v1" },
        documents: [{ id: "a", text: "A." }],
      }),
      400,
      "validation_failed",
      "embedding_provider.endpoint",
    );
    await expectError(
      await put("leak", {
        embedding_provider: { ...OPENAI, api_key: "GITHUB_WEBHOOK_SECRET" },
        documents: [{ id: "a", text: "A." }],
      }),
      400,
      "validation_failed",
      "embedding_provider.api_key",
    );
    await expectError(
      await put("leak", { embedding_provider: { provider: "gemini" }, documents: [{ id: "a", text: "A." }] }),
      400,
      "validation_failed",
      "embedding_provider.provider",
    );
    await expectError(await api("/v1/collections/leak"), 404, "collection_not_found", "name");
  });

  it("refuses documents past the limits, naming the field", async () => {
    const big = "x".repeat(100_001);
    await expectError(
      await put("limits", {
        embedding_provider: OPENAI,
        documents: [
          { id: "a", text: "A." },
          { id: "b", text: big },
        ],
      }),
      400,
      "validation_failed",
      "documents.1.text",
    );
    const many = Array.from({ length: 21 }, (_, i) => ({ id: `d${i}`, text: "Short." }));
    await expectError(
      await put("limits", { embedding_provider: OPENAI, documents: many }),
      400,
      "validation_failed",
      "documents",
    );
    await expectError(
      await put("limits", { embedding_provider: OPENAI, documents: [{ id: "../etc", text: "A." }] }),
      400,
      "validation_failed",
      "documents.0.id",
    );
    await expectError(
      await put("limits", { embedding_provider: OPENAI, documents: [{ id: "h", text: "# Only a heading" }] }),
      400,
      "validation_failed",
      "documents.0.text",
    );
    await expectError(await put("Bad Name", { documents: [] }), 404, "collection_not_found", "name");
  });

  it("refuses a put that would take a collection past its document limit", async () => {
    for (let start = 0; start < MAX_DOCUMENTS_PER_COLLECTION; start += 20) {
      const documents = Array.from({ length: 20 }, (_, i) => ({ id: `d${start + i}`, text: `Note ${start + i}.` }));
      const res = await put("full", { embedding_provider: OPENAI, documents });
      expect(res.status).toBe(200);
    }
    await expectError(
      await put("full", { documents: [{ id: "one-more", text: "No room." }] }),
      422,
      "collection_limit_reached",
      "documents",
    );
    // Replacing a document it holds adds none.
    expect((await put("full", { documents: [{ id: "d0", text: "Still room for this." }] })).status).toBe(200);
  });
});

describe("who may use collections", () => {
  it("keeps each tenant's collections to itself", async () => {
    await put("private", { embedding_provider: OPENAI, documents: [{ id: "a", text: "Default's secret plan." }] });
    const beta = await apiJson("/v1/collections", CollectionListSchema, { key: BETA });
    expect(beta.collections.map((c) => c.name)).not.toContain("private");
    await expectError(await api("/v1/collections/private", { key: BETA }), 404, "collection_not_found", "name");
    await expectError(
      await api("/v1/collections/private/documents/a", { key: BETA }),
      404,
      "document_not_found",
      "document_id",
    );
    await expectError(
      await api("/v1/collections/private/documents/a", { method: "DELETE", key: BETA }),
      404,
      "document_not_found",
      "document_id",
    );
    // Beta's own collection of the same name is another collection.
    const own = await put("private", { embedding_provider: OPENAI, documents: [{ id: "b", text: "Beta's." }] }, BETA);
    expect(own.status).toBe(200);
    const defaults = await apiJson("/v1/collections/private/documents", DocumentListSchema);
    expect(defaults.documents.map((d) => d.id)).toEqual(["a"]);
  });

  it("needs run to write and read to read", async () => {
    await expectError(
      await put("scoped", { embedding_provider: OPENAI, documents: [{ id: "a", text: "A." }] }, READER),
      403,
      "insufficient_scope",
      "authorization",
    );
    await expectError(await api("/v1/collections", { key: null }), 401, "unauthorized", "authorization");
    const listed = await api("/v1/collections", { key: READER });
    expect(listed.status).toBe(200);
  });
});
