import { env } from "cloudflare:workers";
import { it } from "vitest";
import { AnthropicProvider } from "../src/llm/anthropic.ts";
import { script, uniqueMarker } from "../test/helpers.ts";

async function run(p: AnthropicProvider, marker: string, signal = new AbortController().signal) {
  const items: unknown[] = [];
  const attempts: unknown[] = [];
  const t0 = Date.now();
  try {
    for await (const item of p.stream(
      { model: "claude-sonnet-5-5", max_tokens: 100, messages: [{ role: "user", content: `hi ${marker}` }] },
      { signal, onAttempt: (a) => attempts.push(a) },
    ))
      items.push(item);
    return { ok: true, items, attempts, ms: Date.now() - t0 };
  } catch (e) {
    const err = e as Error & Record<string, unknown>;
    const cause = err.cause as (Error & Record<string, unknown>) | undefined;
    return {
      ok: false,
      n: items.length,
      items: items.map((i) => JSON.stringify(i).slice(0, 120)),
      attempts,
      name: err.name,
      code: err.code,
      msg: err.message,
      cause: cause?.name,
      causeCode: cause?.code,
      causeCause: (cause?.cause as Error)?.name,
      raw: err.rawResponse,
      partial: (err.partialMessages as unknown[])?.length,
      ms: Date.now() - t0,
    };
  }
}
const mk = (o: Record<string, unknown> = {}) =>
  new AnthropicProvider({ apiKey: "k", baseURL: env.ANTHROPIC_BASE_URL, maxRetries: 0, ...o });
const T = [{ type: "text" as const, text: "one two three four" }];
it("probe", async () => {
  for (const [label, faults, opts] of [
    ["ok", [], {}],
    ["429", [{ kind: "http", status: 429, retry_after: 0 }], {}],
    ["529", [{ kind: "http", status: 529 }], {}],
    ["500", [{ kind: "http", status: 500 }], {}],
    ["400", [{ kind: "http", status: 400 }], {}],
    ["401", [{ kind: "http", status: 401 }], {}],
    ["403", [{ kind: "http", status: 403 }], {}],
    ["404", [{ kind: "http", status: 404 }], {}],
    ["503", [{ kind: "http", status: 503 }], {}],
    ["se2", [{ kind: "stream_error", after_deltas: 2 }], {}],
    ["se0", [{ kind: "stream_error", after_deltas: 0 }], {}],
    ["mal0", [{ kind: "malformed", after_deltas: 0 }], {}],
    ["mal2", [{ kind: "malformed", after_deltas: 2 }], {}],
    ["stall-timeout", [{ kind: "stall", after_deltas: 1, ms: 1500 }], { timeoutMs: 300 }],
    [
      "retry",
      [
        { kind: "http", status: 429, retry_after: 0 },
        { kind: "http", status: 429, retry_after: 0 },
      ],
      { maxRetries: 2 },
    ],
  ] as const) {
    const m = uniqueMarker(label);
    await script(m, [{ content: T, faults: faults as unknown as Record<string, unknown>[] }]);
    console.log(label, JSON.stringify(await run(mk(opts as Record<string, unknown>), m), null, 1));
  }
  const m = uniqueMarker("abort");
  await script(m, [{ content: T, faults: [{ kind: "stall", after_deltas: 1 }] }]);
  const c = new AbortController();
  setTimeout(() => c.abort(), 300);
  console.log("abort", JSON.stringify(await run(mk(), m, c.signal)));
  console.log(
    "refused",
    JSON.stringify(
      await run(new AnthropicProvider({ apiKey: "k", baseURL: "http://127.0.0.1:1", maxRetries: 0 }), "x"),
    ),
  );
});
