// The emulator's embeddings endpoints (emulator/embeddings.ts) through the official `openai` client, unchanged, from
// inside workerd: OpenAI's /v1/embeddings (the client's default base64 encoding and float) and Azure OpenAI's
// deployments; vectors are deterministic, unit length, and closer for texts that share words. Then Outpost's own
// Embedder (src/knowledge/embedding.ts) against them: the key from a secret, the outbound guard, the errors.
import { env } from "cloudflare:workers";
import OpenAI, { AuthenticationError, AzureOpenAI, BadRequestError } from "openai";
import { describe, expect, it } from "vitest";
import { createEmbedder, EmbeddingError, EmbeddingProviderSchema } from "../../src/knowledge/embedding.ts";
import { outboundPolicy } from "../../src/net/outbound.ts";
import { errorOf } from "../support/helpers.ts";

const emulatorUrl = env.ANTHROPIC_BASE_URL ?? "";
const client = new OpenAI({
  apiKey: "test",
  baseURL: `${emulatorUrl}/v1`,
  fetch: (i, r) => fetch(i, r),
  maxRetries: 0,
});

function cosine(a: readonly number[], b: readonly number[]): number {
  return a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
}

describe("the emulator's embeddings", () => {
  it("answers the official client with deterministic unit vectors, closer for texts that share words", async () => {
    const input = ["Refunds are paid within 14 days.", "How many days until a refund is paid?", "Install on Linux."];
    // The client's default encoding is base64, which it decodes.
    const first = await client.embeddings.create({ model: "text-embedding-3-small", input });
    const again = await client.embeddings.create({ model: "text-embedding-3-small", input, encoding_format: "float" });
    expect(first.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(first.data.map((d) => d.embedding.length)).toEqual([256, 256, 256]);
    expect(again.data.map((d) => d.embedding)).toEqual(first.data.map((d) => d.embedding));
    const [refunds, question, linux] = first.data.map((d) => d.embedding) as [number[], number[], number[]];
    expect(cosine(refunds, refunds)).toBeCloseTo(1, 5);
    expect(cosine(refunds, question)).toBeGreaterThan(cosine(refunds, linux) + 0.2);
    expect(first.usage).toEqual({ prompt_tokens: 17, total_tokens: 17 });
    expect(first.model).toBe("text-embedding-3-small");
  });

  it("gives the length asked for, and refuses what OpenAI refuses", async () => {
    const short = await client.embeddings.create({ model: "m", input: "hello", dimensions: 32 });
    expect(short.data[0]?.embedding.length).toBe(32);
    const empty = await client.embeddings.create({ model: "m", input: [""] }).catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(BadRequestError);
    // Without a key: OpenAI's 401 (sent raw: the client will not send a request without one).
    const keyless = await fetch(`${emulatorUrl}/v1/embeddings`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", input: "x" }),
    });
    expect(keyless.status).toBe(401);
    // The model reject-key: OpenAI's 401 for a wrong key, quoting it (what Outpost must not pass on).
    const rejected = await client.embeddings.create({ model: "reject-key", input: "x" }).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(AuthenticationError);
    expect((rejected as AuthenticationError).message).toBe(
      "401 Incorrect API key provided: test. You can find your API key at https://platform.openai.com/account/api-keys.",
    );
  });

  it("serves Azure OpenAI's deployments to the AzureOpenAI client", async () => {
    const azure = new AzureOpenAI({
      apiKey: "test",
      // The base URL, not `endpoint`: with nodejs_compat the client also reads OPENAI_BASE_URL from process.env,
      // which the test deployment sets, and refuses both.
      baseURL: `${emulatorUrl}/openai`,
      apiVersion: "2024-10-21",
      deployment: "emb",
      fetch: (i, r) => fetch(i, r),
      maxRetries: 0,
    });
    const result = await azure.embeddings.create({ model: "emb", input: ["Refunds are paid within 14 days."] });
    const openai = await client.embeddings.create({ model: "x", input: ["Refunds are paid within 14 days."] });
    expect(result.data[0]?.embedding).toEqual(openai.data[0]?.embedding);
  });
});

describe("an Embedder", () => {
  const base = {
    secret: (name: string) => (name === "TEST_OPENAI_KEY" ? "k" : undefined),
    outbound: outboundPolicy("127.0.0.1"),
    endpoints: { openai: `${emulatorUrl}/v1`, azure_openai: emulatorUrl },
  };

  it("embeds through its provider, normalised, with the key its definition names", async () => {
    const spec = EmbeddingProviderSchema.parse({
      provider: "azure_openai",
      deployment: "emb",
      api_key: "TEST_OPENAI_KEY",
    });
    const embedder = createEmbedder(spec, base);
    expect(embedder.model).toBe("azure_openai:emb");
    const [vector] = await embedder.embed(["Refunds are paid within 14 days."]);
    expect(vector?.length).toBe(256);
    expect(cosine([...(vector ?? [])], [...(vector ?? [])])).toBeCloseTo(1, 5);
  });

  it("is refused without its key, or with an endpoint the outbound guard refuses", () => {
    const spec = EmbeddingProviderSchema.parse({ provider: "openai" });
    const missing = errorOf(() => createEmbedder(spec, base));
    expect(missing).toBeInstanceOf(EmbeddingError);
    expect((missing as EmbeddingError).reason).toBe("no_key");
    expect(missing.message).toBe(
      "The embedding provider (openai) needs its API key in the Worker secret OPENAI_API_KEY (wrangler secret put OPENAI_API_KEY).",
    );
    const guarded = EmbeddingProviderSchema.parse({ provider: "openai", api_key: "TEST_OPENAI_KEY" });
    const blocked = errorOf(() => createEmbedder(guarded, { ...base, outbound: outboundPolicy("") }));
    expect((blocked as EmbeddingError).reason).toBe("blocked");
    expect(blocked.message).toContain("127.0.0.1");
  });
});
