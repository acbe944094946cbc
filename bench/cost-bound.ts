// The cache-optimal bound of the bench's cost case (issue 33): the least a run's calls could bill for their input
// with Anthropic's prompt cache if breakpoints could be put anywhere, knowing which later calls reuse which prefix.
// A pure function over the prompts the emulator saw (each call's cacheable units with their token counts and prefix
// hashes), so it is checked here without a server: `npx node bench/cost-bound.ts` runs the self-check.
//
// Every token of a call is billed one of three ways:
// - read (0.1× input): it lies in the longest prefix of the call that an earlier call of the run wrote;
// - written (1.25× input for 5m, 2× for 1h): it lies after that prefix, up to the longest prefix of the call that a
//   later call of the run shares (the last breakpoint worth placing: writing what nothing reads again only costs);
// - plain input (1×): after the last breakpoint, or the whole prompt when it is shorter than the model's minimum
//   cacheable length (the API caches no prefix shorter than that).
// Writing a token that a later call reads is always cheaper than not (1.25 + 0.1 per read against 1 per sending),
// and cheapest the first time it is sent, so placing breakpoints so is optimal. The bound ignores the API's other
// limits (four breakpoints a request, the 20-block lookback, TTLs: a run's calls are seconds apart): they can only
// make a real caller bill more.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

/** One cacheable unit of a prompt (a tool, a system block, a content block), as the emulator's stats give it. */
export interface PromptUnit {
  tokens: number;
  /** Identifies the prompt up to and including this unit: two calls share a prefix exactly where these agree. */
  prefix_hash: string;
}

export interface BoundCall {
  units: readonly PromptUnit[];
  /** The model's minimum cacheable length: no prefix shorter than this is written or read. */
  minCacheableTokens: number;
  /** Tokens of the prompt outside its units (none in the emulator): billed as plain input. */
  extraTokens?: number;
}

/** USD per million tokens. `write` is the write price of the TTL the run uses. */
export interface BoundPrices {
  input: number;
  write: number;
  read: number;
}

export interface BoundCallCost {
  promptTokens: number;
  writeTokens: number;
  readTokens: number;
  inputTokens: number;
  usd: number;
}

export interface Bound {
  calls: BoundCallCost[];
  writeTokens: number;
  readTokens: number;
  inputTokens: number;
  /** Input cost of the run at the bound, USD. */
  usd: number;
}

/** The cache-optimal input cost of `calls`, in the order they were made. */
export function cacheOptimalBound(calls: readonly BoundCall[], prices: BoundPrices): Bound {
  const usdOf = (input: number, write: number, read: number) =>
    (input * prices.input + write * prices.write + read * prices.read) / 1e6;
  // Each call's prefixes: [hash, tokens up to and including the unit].
  const prefixes = calls.map((call) => {
    let sum = 0;
    return call.units.map((unit) => {
      sum += unit.tokens;
      return [unit.prefix_hash, sum] as const;
    });
  });
  // For each call, the hashes of every later call's prefixes: what a write of this call could be read by.
  const later: Set<string>[] = calls.map(() => new Set());
  const seen = new Set<string>();
  for (let i = calls.length - 1; i >= 0; i--) {
    later[i] = new Set(seen);
    for (const [hash] of prefixes[i] ?? []) seen.add(hash);
  }
  const written = new Set<string>();
  const out: BoundCallCost[] = [];
  for (const [i, call] of calls.entries()) {
    const own = prefixes[i] ?? [];
    const units = own.at(-1)?.[1] ?? 0;
    const promptTokens = units + (call.extraTokens ?? 0);
    const cacheable = own.filter(([, tokens]) => tokens >= call.minCacheableTokens);
    const longest = (keep: (hash: string) => boolean) =>
      cacheable.reduce((best, [hash, tokens]) => (keep(hash) ? Math.max(best, tokens) : best), 0);
    const readTokens = longest((hash) => written.has(hash));
    const reused = longest((hash) => later[i]?.has(hash) ?? false);
    const writeTokens = Math.max(0, reused - readTokens);
    for (const [hash, tokens] of cacheable) if (tokens <= reused) written.add(hash);
    const inputTokens = promptTokens - readTokens - writeTokens;
    out.push({ promptTokens, writeTokens, readTokens, inputTokens, usd: usdOf(inputTokens, writeTokens, readTokens) });
  }
  const sum = (key: keyof BoundCallCost) => out.reduce((total, call) => total + call[key], 0);
  const total = { writeTokens: sum("writeTokens"), readTokens: sum("readTokens"), inputTokens: sum("inputTokens") };
  return { calls: out, ...total, usd: usdOf(total.inputTokens, total.writeTokens, total.readTokens) };
}

/** Units with hashes that are the same wherever the contents up to them are ("a", "a/b", …). */
function units(...parts: [name: string, tokens: number][]): PromptUnit[] {
  const path: string[] = [];
  return parts.map(([name, tokens]) => {
    path.push(name);
    return { tokens, prefix_hash: path.join("/") };
  });
}

function selfCheck(): void {
  const prices = { input: 2, write: 2.5, read: 0.2 };
  const min = 1024;
  const head: [string, number][] = [
    ["tools", 600],
    ["system", 10_000],
    ["task", 100],
  ];
  // A conversation that grows by one call and its result a turn.
  const call1 = units(...head);
  const call2 = units(...head, ["use1", 50], ["result1", 2_000]);
  const call3 = units(...head, ["use1", 50], ["result1", 2_000], ["use2", 50], ["result2", 3_000]);
  const grown = cacheOptimalBound(
    [call1, call2, call3].map((u) => ({ units: u, minCacheableTokens: min })),
    prices,
  );
  assert.deepEqual(
    grown.calls.map((c) => [c.writeTokens, c.readTokens, c.inputTokens]),
    [
      [10_700, 0, 0], // written whole: the next call starts with it
      [2_050, 10_700, 0],
      [0, 12_750, 3_050], // the last call: nothing reads its new tokens, so they are not worth writing
    ],
  );
  assert.equal(grown.usd, (12_750 * 2.5 + 23_450 * 0.2 + 3_050 * 2) / 1e6);

  // A prompt under the minimum is billed whole at the input price, even when a later call repeats it.
  const short = units(["tools", 300], ["task", 200]);
  const small = cacheOptimalBound(
    [short, short].map((u) => ({ units: u, minCacheableTokens: min })),
    prices,
  );
  assert.deepEqual(
    small.calls.map((c) => [c.writeTokens, c.readTokens, c.inputTokens]),
    [
      [0, 0, 500],
      [0, 0, 500],
    ],
  );

  // Two calls that part after the system prompt: the second reads what they share, and no prefix under the minimum
  // (the tools alone) counts as shared.
  const other = units(...head.slice(0, 2), ["another task", 400]);
  const parted = cacheOptimalBound(
    [call1, other].map((u) => ({ units: u, minCacheableTokens: min })),
    prices,
  );
  assert.deepEqual(
    parted.calls.map((c) => [c.writeTokens, c.readTokens, c.inputTokens]),
    [
      [10_600, 0, 100],
      [0, 10_600, 400],
    ],
  );

  // A prefix written once is read by every later call that shares it, not only by the next one.
  const fan = cacheOptimalBound(
    [call1, other, call1].map((u) => ({ units: u, minCacheableTokens: min })),
    prices,
  );
  assert.deepEqual(
    fan.calls.map((c) => [c.writeTokens, c.readTokens, c.inputTokens]),
    [
      [10_700, 0, 0],
      [0, 10_600, 400],
      [0, 10_700, 0],
    ],
  );

  // Tokens outside the units are plain input.
  const extra = cacheOptimalBound([{ units: call1, minCacheableTokens: min, extraTokens: 7 }], prices);
  assert.deepEqual([extra.writeTokens, extra.readTokens, extra.inputTokens], [0, 0, 10_707]);
  assert.equal(cacheOptimalBound([], prices).usd, 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  selfCheck();
  process.stdout.write("bench/cost-bound.ts: self-check passed\n");
}
