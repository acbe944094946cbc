import { env } from "cloudflare:workers";
import { it } from "vitest";
import { AnthropicProvider } from "../src/llm/anthropic.ts";
import { script, uniqueMarker } from "../test/helpers.ts";

const T = [{ type: "text" as const, text: "one two three four" }];
async function drain(p: AnthropicProvider, m: string, signal: AbortSignal) {
  try {
    for await (const _ of p.stream(
      { model: "m", max_tokens: 10, messages: [{ role: "user", content: m }] },
      { signal },
    )) {
    }
  } catch (e) {
    console.log("ERR", (e as Error).name, (e as Error).message);
  }
}
it("abort", async () => {
  const m = uniqueMarker("abort");
  await script(m, [{ content: T, faults: [{ kind: "stall", after_deltas: 1 }] }]);
  const c = new AbortController();
  setTimeout(() => c.abort(), 300);
  await drain(new AnthropicProvider({ apiKey: "k", baseURL: env.ANTHROPIC_BASE_URL, maxRetries: 0 }), m, c.signal);
  await new Promise((r) => setTimeout(r, 500));
  console.log("---- end abort");
});
it("abort-before", async () => {
  const c = new AbortController();
  c.abort();
  await drain(new AnthropicProvider({ apiKey: "k", baseURL: env.ANTHROPIC_BASE_URL, maxRetries: 0 }), "x", c.signal);
  console.log("---- end abort-before");
});
it("refused", async () => {
  await drain(
    new AnthropicProvider({ apiKey: "k", baseURL: "http://127.0.0.1:1", maxRetries: 0 }),
    "x",
    new AbortController().signal,
  );
  await new Promise((r) => setTimeout(r, 500));
  console.log("---- end refused");
});
