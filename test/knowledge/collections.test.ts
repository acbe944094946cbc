// Collections of documents (PUT /v1/collections/:name/documents and the routes that read and delete them): documents
// chunked along their Markdown headings, embedded by the emulator's OpenAI and Azure embeddings endpoints through the
// official client, stored per tenant in the tenant's KnowledgeObject; a document put again replaces its chunks; every
// refusal a 4xx naming its field; a tenant never sees another's collections.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  CollectionListSchema,
  CollectionSchema,
  DocumentListSchema,
  DocumentSchema,
  PutDocumentsResultSchema,
} from "../../src/http/responses.ts";
import { MAX_COLLECTIONS, MAX_DOCUMENTS_PER_COLLECTION } from "../../src/knowledge/collection.ts";
import type { EmbeddingProvider } from "../../src/knowledge/embedding.ts";
import { knowledgeStubFor } from "../../src/knowledge/knowledge-stub.ts";
import { api, apiJson, expectError, ISO_TIME } from "../support/helpers.ts";

const READER = "test-read-key";
/** Tenant default's key with the run scope only: it may start tasks, not change what every agent trusts. */
const RUNNER = "test-run-key";
/** Tenant beta's key that may run and read, and its admin's. */
const BETA = "test-beta-key";
const BETA_ADMIN = "test-beta-admin";
const OPENAI = { provider: "openai", name: "text-embedding-3-small" };
const OPENAI_SPEC: EmbeddingProvider = { provider: "openai", name: "text-embedding-3-small" };

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
    await expectError(await api("/v1/collections/deleting/documents/_b"), 404, "document_not_found", "document_id");
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
  });

  it("answers a malformed collection name with 400 naming name, on every route", async () => {
    const body = { embedding_provider: OPENAI, documents: [{ id: "a", text: "A." }] };
    await expectError(await put("Handbook", body), 400, "validation_failed", "name");
    await expectError(await api("/v1/collections/Handbook"), 400, "validation_failed", "name");
    await expectError(await api("/v1/collections/Handbook/documents"), 400, "validation_failed", "name");
    await expectError(await api("/v1/collections/Handbook/documents/a"), 400, "validation_failed", "name");
    await expectError(
      await api("/v1/collections/Handbook/documents/a", { method: "DELETE" }),
      400,
      "validation_failed",
      "name",
    );
    await expectError(await api("/v1/collections/Handbook", { method: "DELETE" }), 400, "validation_failed", "name");
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

describe("GET /v1/collections/:name/documents", () => {
  it("lists the documents a page at a time, by id, each page continued by its next_cursor", async () => {
    await put("paged", {
      embedding_provider: OPENAI,
      documents: ["e", "a", "d", "b", "c"].map((id) => ({ id, text: `${id}.` })),
    });
    const first = await apiJson("/v1/collections/paged/documents?limit=2", DocumentListSchema);
    expect(first.documents.map((d) => d.id)).toEqual(["a", "b"]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await apiJson(
      `/v1/collections/paged/documents?limit=2&cursor=${first.next_cursor}`,
      DocumentListSchema,
    );
    expect(second.documents.map((d) => d.id)).toEqual(["c", "d"]);
    const last = await apiJson(
      `/v1/collections/paged/documents?limit=2&cursor=${second.next_cursor}`,
      DocumentListSchema,
    );
    expect(last).toMatchObject({ collection: "paged", next_cursor: null });
    expect(last.documents.map((d) => d.id)).toEqual(["e"]);
    // Twenty by default: all five on one page, and no next one.
    const all = await apiJson("/v1/collections/paged/documents", DocumentListSchema);
    expect(all.documents.map((d) => d.id)).toEqual(["a", "b", "c", "d", "e"]);
    expect(all.next_cursor).toBeNull();
  });

  it("refuses a bad limit or cursor, or an unknown parameter, naming it", async () => {
    await put("paged-bad", { embedding_provider: OPENAI, documents: [{ id: "a", text: "A." }] });
    const list = (query: string) => api(`/v1/collections/paged-bad/documents?${query}`);
    await expectError(await list("limit=0"), 400, "validation_failed", "limit");
    await expectError(await list("limit=101"), 400, "validation_failed", "limit");
    await expectError(await list("cursor=not-a-cursor"), 400, "validation_failed", "cursor");
    // A cursor of another listing (a task page's [created_at, id]) is not a document's.
    const taskCursor = btoa(JSON.stringify(["2026-01-01T00:00:00.000Z", crypto.randomUUID()]))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
    await expectError(await list(`cursor=${taskCursor}`), 400, "validation_failed", "cursor");
    await expectError(await list("page=2"), 400, "validation_failed", "page");
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
      "collection_not_found",
      "name",
    );
    await expectError(
      await api("/v1/collections/private/documents/a", { method: "DELETE", key: BETA_ADMIN }),
      404,
      "collection_not_found",
      "name",
    );
    await expectError(
      await api("/v1/collections/private", { method: "DELETE", key: BETA_ADMIN }),
      404,
      "collection_not_found",
      "name",
    );
    // Beta's own collection of the same name is another collection.
    const own = await put(
      "private",
      { embedding_provider: OPENAI, documents: [{ id: "b", text: "Beta's." }] },
      BETA_ADMIN,
    );
    expect(own.status).toBe(200);
    const defaults = await apiJson("/v1/collections/private/documents", DocumentListSchema);
    expect(defaults.documents.map((d) => d.id)).toEqual(["a"]);
  });

  it("needs admin to write (every agent of the tenant trusts the documents) and read to read", async () => {
    await put("scoped", { embedding_provider: OPENAI, documents: [{ id: "a", text: "A." }] });
    for (const key of [RUNNER, READER, BETA]) {
      await expectError(
        await put("scoped", { documents: [{ id: "b", text: "Planted." }] }, key),
        403,
        "insufficient_scope",
        "authorization",
      );
      await expectError(
        await api("/v1/collections/scoped/documents/a", { method: "DELETE", key }),
        403,
        "insufficient_scope",
        "authorization",
      );
      await expectError(
        await api("/v1/collections/scoped", { method: "DELETE", key }),
        403,
        "insufficient_scope",
        "authorization",
      );
    }
    const documents = await apiJson("/v1/collections/scoped/documents", DocumentListSchema, { key: READER });
    expect(documents.documents.map((d) => d.id)).toEqual(["a"]);
    await expectError(await api("/v1/collections", { key: null }), 401, "unauthorized", "authorization");
    const listed = await api("/v1/collections", { key: READER });
    expect(listed.status).toBe(200);
  });
});

describe("chunking what a put carries", () => {
  it("joins sections of a few characters to the chunk before, heading line and all", async () => {
    const text =
      "# FAQ\n\nAnswers to what customers ask most.\n\n## Is it free?\n\nYes.\n\n## Can I cancel?\n\nAt any time.";
    expect((await put("faq", { embedding_provider: OPENAI, documents: [{ id: "faq", text }] })).status).toBe(200);
    const doc = await apiJson("/v1/collections/faq/documents/faq", DocumentSchema);
    expect(doc.chunks.map(({ index, heading_path, text }) => ({ index, heading_path, text }))).toEqual([
      {
        index: 0,
        heading_path: ["FAQ"],
        text: "Answers to what customers ask most.\n\n## Is it free?\n\nYes.\n\n## Can I cancel?\n\nAt any time.",
      },
    ]);
  });

  it("stores the reviewer's 256 KiB put of one-letter sections in few chunks instead of failing with a 500", async () => {
    const text = "# a\nb\n".repeat(6400);
    const documents = Array.from({ length: 5 }, (_, i) => ({ id: `tiny-${i}`, text }));
    const res = await put("tiny-sections", { embedding_provider: OPENAI, documents });
    expect(res.status).toBe(200);
    const body = PutDocumentsResultSchema.parse(await res.json());
    // 6,400 sections of "b", each joined to the chunk before as "# a\n\nb": 150 to a chunk of at most 1,200.
    expect(body.documents.map((d) => d.chunk_count)).toEqual([43, 43, 43, 43, 43]);
    expect(body.collection.chunk_count).toBe(215);
  });

  it("keeps a fenced code block whole and verbatim, and cuts one longer than a chunk between its lines", async () => {
    const prose = "The installer needs a shell. ".repeat(40).trim();
    const fence = ["```sh", "  # install", "apt-get install outpost", "", "# run it", "outpost --serve", "```"].join(
      "\n",
    );
    const lines = Array.from({ length: 80 }, (_, i) => `echo "step ${i} of the long script"`);
    const long = ["~~~bash", ...lines, "~~~"].join("\n");
    const text = `# Setup\n\n${prose}\n\n${fence}\n\n## Script\n\n${long}`;
    expect((await put("code", { embedding_provider: OPENAI, documents: [{ id: "setup", text }] })).status).toBe(200);
    const doc = await apiJson("/v1/collections/code/documents/setup", DocumentSchema);
    const [first, second, ...script] = doc.chunks.map((c) => c.text);
    expect(first).toBe(prose);
    expect(second).toBe(fence);
    expect(script.length).toBe(3);
    expect(script.join("\n")).toBe(long);
    for (const piece of script) expect(piece.length).toBeLessThanOrEqual(1_200);
  });

  it("cuts a long run of emoji between characters, never inside one", async () => {
    const text = `a${"😀".repeat(700)}`;
    expect((await put("emoji", { embedding_provider: OPENAI, documents: [{ id: "e", text }] })).status).toBe(200);
    const doc = await apiJson("/v1/collections/emoji/documents/e", DocumentSchema);
    const pieces = doc.chunks.map((c) => c.text);
    expect(pieces.map((p) => p.length)).toEqual([1_199, 202]);
    expect(pieces.join("")).toBe(text);
    for (const piece of pieces) expect(piece).toMatch(/^(?:[^\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/);
  });

  it("keeps the first 200 characters of a long heading in the heading path", async () => {
    const heading = "H".repeat(5_000);
    const text = `# ${heading}\n\nThe body.`;
    expect((await put("headings", { embedding_provider: OPENAI, documents: [{ id: "h", text }] })).status).toBe(200);
    const doc = await apiJson("/v1/collections/headings/documents/h", DocumentSchema);
    expect(doc.chunks.map((c) => c.heading_path)).toEqual([[`${"H".repeat(199)}…`]]);
  });
});

describe("the limits on chunks, checked before anything is embedded", () => {
  /** A document of `sections` sections of 20 characters: one chunk each. */
  const sections = (count: number) => "# s\nabcdefghijklmnopqrst\n".repeat(count);
  /** The emulator answers this model with a 401: a put refused with 422 never reached the provider. */
  const REJECTED = { provider: "openai", name: "reject-key" };

  it("refuses a document of more than 500 chunks, naming it", async () => {
    await expectError(
      await put("chunky", {
        embedding_provider: REJECTED,
        documents: [
          { id: "ok", text: sections(10) },
          { id: "long", text: sections(501) },
        ],
      }),
      422,
      "collection_limit_reached",
      "documents.1.text",
    );
    await expectError(await api("/v1/collections/chunky"), 404, "collection_not_found", "name");
  });

  it("refuses a put of more than 1,000 chunks in all", async () => {
    const documents = [0, 1, 2].map((i) => ({ id: `d${i}`, text: sections(400) }));
    await expectError(
      await put("chunky", { embedding_provider: REJECTED, documents }),
      422,
      "collection_limit_reached",
      "documents",
    );
  });

  it("refuses a put that would take a collection past 10,000 chunks, counting a replaced document's as gone", async () => {
    for (let start = 0; start < 20; start += 2) {
      const documents = [start, start + 1].map((i) => ({ id: `d${i}`, text: sections(500) }));
      expect((await put("chunk-full", { embedding_provider: OPENAI, documents })).status).toBe(200);
    }
    expect((await apiJson("/v1/collections/chunk-full", CollectionSchema)).chunk_count).toBe(10_000);
    await expectError(
      await put("chunk-full", { documents: [{ id: "one-more", text: "No room." }] }),
      422,
      "collection_limit_reached",
      "documents",
    );
    const replaced = await put("chunk-full", { documents: [{ id: "d0", text: sections(499) }] });
    expect(replaced.status).toBe(200);
    expect((await apiJson("/v1/collections/chunk-full", CollectionSchema)).chunk_count).toBe(9_999);
  });
});

describe("DELETE /v1/collections/:name", () => {
  it("deletes the collection with its documents, chunks and vectors; its name may then take another model", async () => {
    await put("doomed", { embedding_provider: OPENAI, documents: [{ id: "a", text: "Doomed text." }] });
    expect((await api("/v1/collections/doomed", { method: "DELETE" })).status).toBe(204);
    await expectError(await api("/v1/collections/doomed"), 404, "collection_not_found", "name");
    await expectError(await api("/v1/collections/doomed/documents/a"), 404, "collection_not_found", "name");
    await expectError(await api("/v1/collections/doomed", { method: "DELETE" }), 404, "collection_not_found", "name");
    const rows = await runInDurableObject(knowledgeStubFor(env, "default"), (_instance, state) =>
      ["knowledge_documents", "knowledge_chunks", "knowledge_vectors"].map(
        (table) =>
          state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE collection = 'doomed'`).one()
            .n,
      ),
    );
    expect(rows).toEqual([0, 0, 0]);
    const again = await put("doomed", {
      embedding_provider: { provider: "openai", name: "text-embedding-3-large", dimensions: 64 },
      documents: [{ id: "b", text: "Reborn." }],
    });
    expect(again.status).toBe(200);
    expect((await apiJson("/v1/collections/doomed", CollectionSchema)).embedding_model).toBe(
      "openai:text-embedding-3-large:64",
    );
  });

  it("frees a place under the tenant's 100 collections", async () => {
    const LISTER = "test-lister-key";
    for (let i = 0; i < MAX_COLLECTIONS; i++) {
      const res = await put(`c${i}`, { embedding_provider: OPENAI, documents: [{ id: "a", text: "A." }] }, LISTER);
      expect(res.status).toBe(200);
    }
    const extra = { embedding_provider: OPENAI, documents: [{ id: "a", text: "A." }] };
    await expectError(await put("extra", extra, LISTER), 422, "collection_limit_reached", "name");
    expect((await api("/v1/collections/c0", { method: "DELETE", key: LISTER })).status).toBe(204);
    expect((await put("extra", extra, LISTER)).status).toBe(200);
  });

  it("answers collection_not_found for a document of a collection that does not exist", async () => {
    await expectError(await api("/v1/collections/nowhere/documents/a"), 404, "collection_not_found", "name");
    // A malformed document id too: the collection is judged first.
    await expectError(await api("/v1/collections/nowhere/documents/_a"), 404, "collection_not_found", "name");
    await expectError(
      await api("/v1/collections/nowhere/documents/a", { method: "DELETE" }),
      404,
      "collection_not_found",
      "name",
    );
  });
});

describe("what a failed put leaves", () => {
  it("keeps the deployment's key out of the provider's error", async () => {
    const res = await put("leaky", {
      embedding_provider: { provider: "openai", name: "reject-key" },
      documents: [{ id: "a", text: "A." }],
    });
    const error = await expectError(res, 502, "embedding_failed", "embedding_provider");
    expect(error.error.message).toBe(
      "The embedding provider (openai, reject-key) failed: 401 Incorrect API key provided: [REDACTED]. You can find your API key at https://platform.openai.com/account/api-keys.",
    );
    // test-embeddings-key is the test deployment's OPENAI_API_KEY (vitest.config.ts).
    expect(JSON.stringify(error)).not.toContain("test-embeddings-key");
  });

  it("stores no chunk when its vectors cannot be written: chunks and vectors commit together", async () => {
    const stub = knowledgeStubFor(env, "torn-writes");
    const document = {
      id: "a",
      title: null,
      source: null,
      metadata: {},
      text: "A.",
      chunks: [{ index: 0, headingPath: [], text: "A.", vector: new Float32Array([1, 0]) }],
    };
    const outcome = await runInDurableObject(stub, async (instance, state) => {
      state.storage.sql.exec("ALTER TABLE knowledge_vectors RENAME TO knowledge_vectors_away");
      const failed = await instance.putDocuments("torn", OPENAI_SPEC, "openai:text-embedding-3-small", [document]).then(
        () => "stored",
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      state.storage.sql.exec("ALTER TABLE knowledge_vectors_away RENAME TO knowledge_vectors");
      const counts = ["knowledge_collections", "knowledge_documents", "knowledge_chunks"].map(
        (table) => state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).one().n,
      );
      return { failed, counts };
    });
    expect(outcome.failed).toMatch(/no such table: knowledge_vectors/);
    expect(outcome.counts).toEqual([0, 0, 0]);
  });

  it("refuses vectors whose length is not the collection's dimensions", async () => {
    const stub = knowledgeStubFor(env, "odd-vectors");
    const doc = (id: string, vectors: number[][]) => ({
      id,
      title: null,
      source: null,
      metadata: {},
      text: id,
      chunks: vectors.map((v, index) => ({
        index,
        headingPath: [],
        text: `${id} ${index}`,
        vector: new Float32Array(v),
      })),
    });
    const model = "openai:text-embedding-3-small";
    const first = await stub.putDocuments("odd", OPENAI_SPEC, model, [doc("a", [[1, 0]])]);
    expect(first.ok).toBe(true);
    const longer = await stub.putDocuments("odd", OPENAI_SPEC, model, [doc("b", [[0, 0, 1]])]);
    expect(longer.error).toEqual({
      code: "embedding_mismatch",
      message: 'Collection "odd" holds vectors of 2 dimensions; the embedding provider returned 3.',
    });
    const mixed = await stub.putDocuments("fresh", OPENAI_SPEC, model, [
      doc("c", [
        [1, 0],
        [0, 0, 1],
      ]),
    ]);
    expect(mixed.error?.code).toBe("embedding_mismatch");
    expect(await stub.collectionView("fresh")).toBeNull();
    const list = await stub.documents("odd", null, 20);
    expect(list?.documents.map((d) => d.id)).toEqual(["a"]);
  });
});
