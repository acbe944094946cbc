// The knowledge tools end to end (seed 004 VectorstoreTool and HierarchicalDocumentToolConfig): documents uploaded
// through the API, an agent whose scripted model calls its tool, and the tool's result as the model received it (the
// run bundle's request of the next turn). The query is embedded by the emulator through the official client, and the
// search runs in the task's tenant's KnowledgeObject only.
import { beforeAll, describe, expect, it } from "vitest";
import { DocumentSchema, TaskResourceSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  expectError,
  modelRequest,
  parseBody,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const BETA = "test-beta-key";
/** Tenant beta's admin: writing a collection needs admin. */
const BETA_ADMIN = "test-beta-admin";
const OPENAI = { provider: "openai" as const };

const INSTALL = `# Install guide

## Requirements

You need 2 GB of memory.

## Install

### Linux

Run the installer with sudo and reboot.

### Windows

Double-click setup.exe and follow the wizard.

## Uninstall

Remove the folder.
`;

async function upload(collection: string, documents: unknown[], key?: string): Promise<void> {
  const res = await api(`/v1/collections/${collection}/documents`, {
    method: "PUT",
    body: JSON.stringify({ embedding_provider: { provider: "openai", name: "text-embedding-3-small" }, documents }),
    ...(key ? { key } : {}),
  });
  expect(res.status).toBe(200);
}

const agent = defineAgent({
  embeddingProvider: OPENAI,
  knowledgeTools: [
    { type: "vectorstore", name: "search_handbook", collection: "handbook", top_k: 2 },
    { type: "hierarchical_document", name: "browse_manuals", collection: "manuals", top_k: 1, neighbours: 1 },
    { type: "vectorstore", name: "search_beta_only", collection: "beta-only" },
  ],
});

interface SearchResult {
  collection: string;
  query: string;
  results: { document_id: string; title: string | null; source: string | null; score: number; text: string }[];
}

beforeAll(async () => {
  await upload("handbook", [
    {
      id: "refunds.md",
      title: "Refunds",
      source: "https://handbook.example/refunds",
      text: "# Refunds\n\nRefunds are paid within 14 days of the request.",
    },
    { id: "shipping.md", title: "Shipping", text: "# Shipping\n\nParcels ship from Lisbon every weekday." },
    { id: "security.md", title: "Security", text: "# Security\n\nRotate passwords every ninety days." },
  ]);
  await upload("manuals", [{ id: "install.md", title: "Install guide", text: INSTALL }]);
  // Beta's own collections: one of the same name as default's, and one default does not have.
  await upload("handbook", [{ id: "beta.md", text: "Beta refunds are paid in store credit only." }], BETA_ADMIN);
  await upload("beta-only", [{ id: "plans.md", text: "Beta's refund plans are confidential." }], BETA_ADMIN);
});

describe("a vector-store tool", () => {
  it("answers from uploaded documents: the best chunks with their sources and scores", async () => {
    const marker = uniqueMarker("kb-answer");
    await script(marker, [
      { content: [toolUse("search_handbook", { query: "how many days until my refund is paid?" })] },
      { content: [{ type: "text", text: "Refunds are paid within 14 days." }] },
    ]);
    const task = await waitForTask((await startTask(agent, `When is my refund paid? ${marker}`)).id);
    expect(task.status).toBe("completed");
    expect(task.result).toBe("Refunds are paid within 14 days.");
    // The model was offered the tool with its query schema.
    const first = await modelRequest(task.id, 1);
    expect(first.tools?.find((t) => t.name === "search_handbook")?.input_schema).toEqual({
      type: "object",
      properties: {
        query: { type: "string", minLength: 1, maxLength: 2000, description: "What to look for, in words." },
      },
      required: ["query"],
      additionalProperties: false,
    });
    const [result] = await toolResults(task.id, 2);
    expect(result?.is_error).toBe(false);
    const found = JSON.parse(String(result?.content)) as SearchResult;
    expect(found.collection).toBe("handbook");
    expect(found.query).toBe("how many days until my refund is paid?");
    expect(found.results).toHaveLength(2);
    expect(found.results[0]).toEqual({
      document_id: "refunds.md",
      title: "Refunds",
      source: "https://handbook.example/refunds",
      score: expect.any(Number),
      text: "Refunds are paid within 14 days of the request.",
    });
    expect(found.results[0]?.score).toBeGreaterThan(found.results[1]?.score ?? 1);
    // Another tenant's document of the same collection name is never among them.
    expect(found.results.map((r) => r.document_id)).not.toContain("beta.md");
  });

  it("searches only the task's tenant's collections", async () => {
    const marker = uniqueMarker("kb-tenant");
    await script(marker, [
      {
        content: [
          toolUse("search_handbook", { query: "refunds paid" }),
          toolUse("search_beta_only", { query: "refund plans" }),
        ],
      },
      done,
    ]);
    // Default's task: beta's collection does not exist for it.
    const mine = await waitForTask((await startTask(agent, `Refunds? ${marker}`)).id);
    const [handbook, betaOnly] = await toolResults(mine.id, 2);
    expect((JSON.parse(String(handbook?.content)) as SearchResult).results.map((r) => r.document_id)).not.toContain(
      "beta.md",
    );
    expect(betaOnly).toEqual({
      type: "tool_result",
      tool_use_id: expect.any(String),
      is_error: true,
      content: 'The collection "beta-only" does not exist (or holds no documents yet).',
    });
    // Beta's task of the same agent: its own handbook only, and its own beta-only.
    const res = await api(`/v1/agents/${agent}/tasks`, {
      method: "POST",
      body: JSON.stringify({ input: `Refunds? ${marker}` }),
      key: BETA,
    });
    expect(res.status).toBe(202);
    const theirs = await parseBody(res, TaskResourceSchema);
    const finished = await parseBody(await api(`/v1/tasks/${theirs.id}?wait=20`, { key: BETA }), TaskResourceSchema);
    expect(finished.status).toBe("completed");
    const request = await api(
      `/v1/tasks/${theirs.id}/artifacts/artifacts/llm/decision_loop_turn_2_attempt_1_request.txt`,
      {
        key: BETA,
      },
    );
    const sent = JSON.parse(await request.text()) as { messages: { content: { content: string }[] }[] };
    const [betaHandbook, betaPlans] = sent.messages.at(-1)?.content ?? [];
    expect((JSON.parse(betaHandbook?.content ?? "") as SearchResult).results.map((r) => r.document_id)).toEqual([
      "beta.md",
    ]);
    expect((JSON.parse(betaPlans?.content ?? "") as SearchResult).results.map((r) => r.document_id)).toEqual([
      "plans.md",
    ]);
  });
});

describe("a hierarchical-document tool", () => {
  it("returns chunks with their heading paths, and a section with its neighbours by chunk_id", async () => {
    const doc = await apiJson("/v1/collections/manuals/documents/install.md", DocumentSchema);
    const windows = doc.chunks.find((c) => c.heading_path.at(-1) === "Windows");
    expect(doc.chunks.map((c) => c.heading_path.join(" › "))).toEqual([
      "Install guide › Requirements",
      "Install guide › Install › Linux",
      "Install guide › Install › Windows",
      "Install guide › Uninstall",
    ]);
    const marker = uniqueMarker("kb-section");
    await script(marker, [
      { content: [toolUse("browse_manuals", { query: "setup.exe wizard on Windows" })] },
      { content: [toolUse("browse_manuals", { chunk_id: windows?.chunk_id ?? "" })] },
      { content: [toolUse("browse_manuals", { chunk_id: "no-such-chunk" })] },
      done,
    ]);
    const task = await waitForTask((await startTask(agent, `Install on Windows? ${marker}`)).id);
    expect(task.status).toBe("completed");
    const [search] = await toolResults(task.id, 2);
    expect(JSON.parse(String(search?.content))).toEqual({
      collection: "manuals",
      query: "setup.exe wizard on Windows",
      results: [
        {
          document_id: "install.md",
          title: "Install guide",
          source: null,
          heading_path: ["Install guide", "Install", "Windows"],
          chunk_id: windows?.chunk_id,
          score: expect.any(Number),
          text: "Double-click setup.exe and follow the wizard.",
        },
      ],
    });
    const [section] = await toolResults(task.id, 3);
    expect(JSON.parse(String(section?.content))).toEqual({
      collection: "manuals",
      section: {
        document_id: "install.md",
        title: "Install guide",
        source: null,
        heading_path: ["Install guide", "Install", "Windows"],
        // The Windows section, with one neighbour on either side.
        chunks: doc.chunks.slice(1, 4),
      },
    });
    const [missing] = await toolResults(task.id, 4);
    expect(missing?.is_error).toBe(true);
    expect(missing?.content).toBe('No chunk with that chunk_id in "manuals"; use a chunk_id from a search result.');
  });
});

describe("an agent's embedding provider", () => {
  it("fails the call, not the run, when its key is not set or its model is not the collection's", async () => {
    const keyless = defineAgent({
      embeddingProvider: { provider: "openai", api_key: "MISSING_EMBEDDING_KEY" },
      knowledgeTools: [{ type: "vectorstore", name: "kb", collection: "handbook" }],
    });
    const other = defineAgent({
      embeddingProvider: { provider: "openai", name: "text-embedding-3-large" },
      knowledgeTools: [{ type: "vectorstore", name: "kb", collection: "handbook" }],
    });
    const marker = uniqueMarker("kb-failures");
    await script(marker, [{ content: [toolUse("kb", { query: "refunds" })] }, done]);
    const [noKey, wrongModel] = await Promise.all(
      [keyless, other].map(async (name) => waitForTask((await startTask(name, `Refunds? ${marker}`)).id)),
    );
    expect([noKey?.status, wrongModel?.status]).toEqual(["completed", "completed"]);
    expect((await toolResults(noKey?.id ?? "", 2))[0]).toMatchObject({
      is_error: true,
      content:
        "The embedding provider (openai) needs its API key in the Worker secret MISSING_EMBEDDING_KEY (wrangler secret put MISSING_EMBEDDING_KEY).",
    });
    expect((await toolResults(wrongModel?.id ?? "", 2))[0]).toMatchObject({
      is_error: true,
      content:
        'The collection "handbook" was embedded with openai:text-embedding-3-small, not this agent\'s embedding_provider: the two cannot be compared.',
    });
  });

  it("is required with a knowledge tool when a tenant adds its own agent, and may not name an endpoint", async () => {
    const ADMIN = "test-author-key";
    const yaml = (extra: string) =>
      `name: kb_tenant\ninstructions: Answer.\ntools:\n  - type: vectorstore\n    name: kb\n    collection: handbook\n${extra}`;
    const put = (body: string) =>
      api("/v1/agents/kb_tenant", { method: "PUT", body, headers: { "content-type": "application/yaml" }, key: ADMIN });
    const rule1 = await expectError(await put(yaml("")), 400, "validation_failed", "tools.0");
    expect(rule1.error.message).toBe(
      "body:4: tools.0: a knowledge tool on an Anthropic agent needs embedding_provider (rule 1)",
    );
    await expectError(
      await put(yaml("embedding_provider:\n  provider: openai\n  endpoint: https://collector.example/v1\n")),
      400,
      "validation_failed",
      "embedding_provider.endpoint",
    );
    const ok = await put(yaml("embedding_provider:\n  provider: openai\n"));
    expect(ok.status).toBe(201);
  });
});
