// Seed 004's knowledge tools, configured per agent (each under a name of the agent's choosing): VectorstoreTool
// (`type: vectorstore`) searches a collection with a query and returns the best chunks with their sources and scores;
// HierarchicalDocumentToolConfig (`type: hierarchical_document`) does the same with each chunk's heading path, and
// returns the whole section around a chunk, with its neighbours, when called with that chunk's id. The query is
// embedded with the agent's embedding_provider (src/knowledge/embedding.ts) and searched in the task's tenant's
// collections only (KnowledgeSearch, bound by the task's object). Read-only; a failure is an is_error result.
import { z } from "zod";
import type { ToolResult } from "../contracts/tool-result.ts";
import { CollectionNameSchema, type KnowledgeSearch, MAX_TOP_K, type SearchRefusal } from "../knowledge/collection.ts";
import { type Embedder, EmbeddingError } from "../knowledge/embedding.ts";
import { defineTool } from "./define-tool.ts";
import { type BuiltinTool, toolError } from "./tool.ts";

/** A knowledge tool's name: what the model calls it, and what allowedTools and toolPermissions name. */
export const KNOWLEDGE_TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

const common = {
  name: z
    .string()
    .regex(KNOWLEDGE_TOOL_NAME, `must match ${KNOWLEDGE_TOOL_NAME} (lower case, digits, _)`)
    .refine((name) => !name.startsWith("mcp__"), "must not start with mcp__ (the MCP tools' prefix)"),
  /** What the model is told the tool searches; absent: a sentence naming the collection. */
  description: z.string().min(1).max(1024).optional(),
  /** The tenant's collection it searches (PUT /v1/collections/:name/documents fills it). */
  collection: CollectionNameSchema,
  /** Chunks returned per search. */
  top_k: z.number().int().min(1).max(MAX_TOP_K).default(5),
  /** Chunks scoring below this cosine similarity are left out; absent: none are. */
  min_similarity_score: z.number().min(-1).max(1).optional(),
};

/** Seed 004 VectorstoreTool, searching a collection of Outpost's. */
export const VectorstoreToolSchema = z.strictObject({ type: z.literal("vectorstore"), ...common });

/** Seed 004 HierarchicalDocumentToolConfig: chunks with their heading paths, and sections with their neighbours. */
export const HierarchicalDocumentToolSchema = z.strictObject({
  type: z.literal("hierarchical_document"),
  ...common,
  /** Chunks before and after a section that a call with chunk_id returns with it. */
  neighbours: z.number().int().min(0).max(5).default(1),
});

export const KnowledgeToolSchema = z.discriminatedUnion("type", [
  VectorstoreToolSchema,
  HierarchicalDocumentToolSchema,
]);
export type KnowledgeToolInput = z.input<typeof KnowledgeToolSchema>;
export type KnowledgeToolSpec = z.output<typeof KnowledgeToolSchema>;

/** What a knowledge tool runs with: the tenant's collections, and the agent's embedder (made on first use). */
export interface KnowledgeToolDeps {
  search: KnowledgeSearch | null;
  embedder: () => Embedder;
}

const Query = z.string().trim().min(1).max(2_000).describe("What to look for, in words.");

/** The tool the model gets for `spec`. */
export function knowledgeTool(spec: KnowledgeToolSpec, deps: KnowledgeToolDeps): BuiltinTool {
  const about = spec.description ?? `Searches the document collection "${spec.collection}".`;
  if (spec.type === "vectorstore") {
    return defineTool({
      name: spec.name,
      description: `${about} Returns the ${spec.top_k} most relevant passages with their source and similarity score.`,
      input: z.strictObject({ query: Query }),
      example: '{"query": "how do I reset my password?"}',
      readOnly: true,
      run: ({ query }, ctx) => searchResult(spec, deps, query, ctx.signal, false),
    });
  }
  return defineTool({
    name: spec.name,
    description:
      `${about} With "query": the ${spec.top_k} most relevant passages, each with its heading path, chunk_id, source ` +
      `and score. With "chunk_id" (from a result): the whole section that chunk belongs to, with ${spec.neighbours} ` +
      "neighbouring chunk(s) on either side.",
    input: z
      .strictObject({
        query: Query.optional(),
        chunk_id: z.string().min(1).max(64).optional().describe("A chunk_id from an earlier result: read its section."),
      })
      .refine((input) => (input.query === undefined) !== (input.chunk_id === undefined), {
        message: "give either query or chunk_id",
      }),
    example: '{"query": "installation on Linux"} or {"chunk_id": "<a chunk_id from a result>"}',
    readOnly: true,
    async run(input, ctx) {
      if (input.query !== undefined) return searchResult(spec, deps, input.query, ctx.signal, true);
      if (!deps.search) return toolError("Knowledge search is not available in this run.");
      const found = await deps.search.section(spec.collection, input.chunk_id ?? "", spec.neighbours);
      if ("error" in found) return refused(spec, found);
      return {
        content: JSON.stringify({ collection: spec.collection, section: found.section }),
        is_error: false,
        details: {
          collection: spec.collection,
          document_id: found.section.document_id,
          chunk_ids: found.section.chunks.map((c) => c.chunk_id),
        },
      };
    },
  });
}

async function searchResult(
  spec: KnowledgeToolSpec,
  deps: KnowledgeToolDeps,
  query: string,
  signal: AbortSignal,
  withPaths: boolean,
): Promise<ToolResult> {
  if (!deps.search) return toolError("Knowledge search is not available in this run.");
  let embedder: Embedder;
  let vector: Float32Array | undefined;
  try {
    embedder = deps.embedder();
    [vector] = await embedder.embed([query], signal);
  } catch (error) {
    if (error instanceof EmbeddingError) return toolError(error.message);
    throw error;
  }
  if (!vector) return toolError("The embedding provider returned no vector for the query.");
  const found = await deps.search.search(spec.collection, {
    vector,
    model: embedder.model,
    topK: spec.top_k,
    minScore: spec.min_similarity_score ?? null,
  });
  if ("error" in found) return refused(spec, found);
  const results = found.hits.map((hit) => ({
    document_id: hit.document_id,
    title: hit.title,
    source: hit.source,
    ...(withPaths ? { heading_path: hit.heading_path, chunk_id: hit.chunk_id } : {}),
    score: hit.score,
    text: hit.text,
  }));
  return {
    content: JSON.stringify({ collection: spec.collection, query, results }),
    is_error: false,
    details: {
      collection: spec.collection,
      hits: found.hits.map((hit) => ({ document_id: hit.document_id, chunk_id: hit.chunk_id, score: hit.score })),
    },
  };
}

function refused(spec: KnowledgeToolSpec, refusal: SearchRefusal): ToolResult {
  switch (refusal.error) {
    case "collection_not_found":
      return toolError(`The collection "${spec.collection}" does not exist (or holds no documents yet).`);
    case "embedding_mismatch":
      return toolError(
        `The collection "${spec.collection}" was embedded with ${refusal.collectionModel}, not this agent's embedding_provider: the two cannot be compared.`,
      );
    case "chunk_not_found":
      return toolError(`No chunk with that chunk_id in "${spec.collection}"; use a chunk_id from a search result.`);
  }
}
