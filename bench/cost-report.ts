// The cost case's figures (bench/cost.ts) summed up: medians of each variant's runs, the case's two targets in the
// shape of the bench's other targets, and the printed tables.
import { type CaseTarget, caseTarget } from "./case.ts";
import { TARGETS } from "./config.ts";
import type { CostResult, CostRun, CostVariant } from "./cost.ts";
import { fmt, percentile, round, table } from "./util.ts";

export interface VariantSummary {
  runs: number;
  plain: number;
  write: number;
  read: number;
  output: number;
  readShare: number;
  usdInput: number;
  usdOutput: number;
  usdTotal: number;
  /** Outpost's own total_cost_usd (null when any run had none). */
  outpostUsd: number | null;
  bound: { usd: number; write: number; read: number; plain: number };
  boundRatio: number;
  /** The emulator's time to first token: the median call, and the run's sum. */
  ttftMs: { p50: number; perRun: number };
  /** The first delta at the client after its llm_request_sent: the median call, and the run's sum. */
  clientTtftMs: { p50: number; perRun: number };
  wallMs: number;
  /** Tokens a call added to the prompt before it, over every run. */
  growth: { min: number; max: number };
}

export interface CostSummary {
  cold: VariantSummary;
  warm: VariantSummary;
  off: VariantSummary;
  /** 1 − input cost ÷ the same with caching off (medians), cold and warm. */
  savingVsOff: { cold: number; warm: number };
  /** Per call, the median over each variant's runs. */
  perCall: {
    promptTokens: number;
    cold: { write: number; read: number; plain: number };
    bound: { write: number; read: number; plain: number };
    ttftMs: Record<CostVariant, number>;
    clientTtftMs: Record<CostVariant, number>;
  }[];
}

/** A target in the shape of bench/run.ts's headline rows (the cost case has no floor). */
export type CostTarget = CaseTarget;

const VARIANTS: readonly CostVariant[] = ["cold", "warm", "off"];

function median(values: readonly number[]): number {
  return percentile(values, 50);
}

function summarizeVariant(runs: readonly CostRun[]): VariantSummary {
  const m = (pick: (run: CostRun) => number) => median(runs.map(pick));
  const calls = runs.flatMap((run) => run.calls);
  const client = calls.flatMap((call) => (call.clientTtftMs === null ? [] : [call.clientTtftMs]));
  const outpost = runs.map((run) => run.outpost.usd);
  return {
    runs: runs.length,
    plain: m((r) => r.tokens.plain),
    write: m((r) => r.tokens.write),
    read: m((r) => r.tokens.read),
    output: m((r) => r.tokens.output),
    readShare: m((r) => r.readShare),
    usdInput: m((r) => r.usd.input),
    usdOutput: m((r) => r.usd.output),
    usdTotal: m((r) => r.usd.total),
    outpostUsd: outpost.some((usd) => usd === null) ? null : median(outpost as number[]),
    bound: {
      usd: m((r) => r.bound.usd),
      write: m((r) => r.bound.write),
      read: m((r) => r.bound.read),
      plain: m((r) => r.bound.plain),
    },
    boundRatio: m((r) => r.boundRatio),
    ttftMs: {
      p50: round(median(calls.map((call) => call.ttftMs))),
      perRun: round(m((r) => r.calls.reduce((sum, call) => sum + call.ttftMs, 0))),
    },
    clientTtftMs: {
      p50: round(median(client)),
      perRun: round(m((r) => r.calls.reduce((sum, call) => sum + (call.clientTtftMs ?? 0), 0))),
    },
    wallMs: round(m((r) => r.wallMs)),
    growth: {
      min: Math.min(...runs.map((r) => r.growth.min)),
      max: Math.max(...runs.map((r) => r.growth.max)),
    },
  };
}

export function summarizeCost(runs: readonly CostRun[]): CostSummary {
  const of = (variant: CostVariant) => runs.filter((run) => run.variant === variant);
  const [cold, warm, off] = VARIANTS.map((variant) => summarizeVariant(of(variant))) as [
    VariantSummary,
    VariantSummary,
    VariantSummary,
  ];
  const calls = Math.max(0, ...runs.map((run) => run.calls.length));
  const at = (variant: CostVariant, i: number, pick: (call: CostRun["calls"][number]) => number | null) =>
    round(median(of(variant).flatMap((run) => (run.calls[i] ? [pick(run.calls[i]) ?? Number.NaN] : []))));
  const bound = (i: number, key: "write" | "read" | "plain") =>
    median(of("cold").map((run) => run.calls[i]?.bound[key] ?? Number.NaN));
  return {
    cold,
    warm,
    off,
    savingVsOff: {
      cold: round(1 - cold.usdInput / off.usdInput, 4),
      warm: round(1 - warm.usdInput / off.usdInput, 4),
    },
    perCall: Array.from({ length: calls }, (_, i) => ({
      promptTokens: at("cold", i, (c) => c.promptTokens),
      cold: {
        write: at("cold", i, (c) => c.write),
        read: at("cold", i, (c) => c.read),
        plain: at("cold", i, (c) => c.plain),
      },
      bound: { write: bound(i, "write"), read: bound(i, "read"), plain: bound(i, "plain") },
      ttftMs: {
        cold: at("cold", i, (c) => c.ttftMs),
        warm: at("warm", i, (c) => c.ttftMs),
        off: at("off", i, (c) => c.ttftMs),
      },
      clientTtftMs: {
        cold: at("cold", i, (c) => c.clientTtftMs),
        warm: at("warm", i, (c) => c.clientTtftMs),
        off: at("off", i, (c) => c.clientTtftMs),
      },
    })),
  };
}

/** Issue 33's targets, on the cold runs: the case where nothing of the run was cached before it. */
export function costTargets(result: CostResult): CostTarget[] {
  const { cold } = result.summary;
  const saving = result.summary.savingVsOff.cold;
  const row = caseTarget;
  return [
    row(
      "cost: billed input ÷ cache-optimal bound (cold runs)",
      cold.boundRatio,
      `<= ${TARGETS.costToBoundRatio}x`,
      cold.boundRatio <= TARGETS.costToBoundRatio,
    ),
    row(
      "cost: input cost below caching off, % (cold runs)",
      round(saving * 100, 1),
      `>= ${TARGETS.costSavingVsUncached * 100} %`,
      saving >= TARGETS.costSavingVsUncached,
    ),
  ];
}

/** Words in lines of at most 118 characters. */
function wrap(text: string): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + word.length + 1 > 118) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  return line ? [...lines, line] : lines;
}

const usd = (value: number | null) => (value === null ? "—" : `$${value.toFixed(4)}`);
const tokens = (value: number) => (Number.isNaN(value) ? "—" : Math.round(value).toLocaleString("en-US"));
const percent = (share: number) => `${fmt(share * 100, 1)} %`;

export function costReport(result: CostResult): string[] {
  const { cold, warm, off, savingVsOff, perCall } = result.summary;
  const bound = cold.bound;
  const variants = [cold, warm, off];
  const row = (name: string, cell: (v: VariantSummary) => string, boundCell = "") => [
    name,
    ...variants.map(cell),
    boundCell,
  ];
  const lines = [
    ...wrap(
      "Cost per run (bench/cost.ts): an agent with a 10k-token system prompt and the file tools (together " +
        `${tokens(result.agentPrefixTokens)} tokens) reads 12 notes (results of 1–4k tokens) in 10 turns, then ` +
        `answers: ${perCall.length} calls of ${result.model} (minimum cacheable length ` +
        `${tokens(result.minCacheableTokens)} tokens), each turn ` +
        `adding ${tokens(cold.growth.min)}–${tokens(cold.growth.max)} tokens to the prompt. USD at list prices ` +
        `(src/config/prices.ts); medians of ${result.runsPerVariant} runs of each variant. The emulator bills as ` +
        "Anthropic does: its prompt cache, and time to first token " +
        `+${result.prefillMsPer1kTokens}\u00a0ms per 1k input tokens not read from the cache. Cold: a new agent edition, ` +
        "nothing cached; warm: the agent's tools and system prompt written by an earlier task within the TTL. The " +
        "bound: bench/cost-bound.ts, over each run's own calls.",
    ),
    table(
      ["per run", "caching on, cold", "caching on, warm", "caching off", "cache-optimal bound (cold)"],
      [
        row("input tokens, plain", (v) => tokens(v.plain), tokens(bound.plain)),
        row("input tokens, written to the cache", (v) => tokens(v.write), tokens(bound.write)),
        row("input tokens, read from the cache", (v) => tokens(v.read), tokens(bound.read)),
        row(
          "cache read share",
          (v) => percent(v.readShare),
          percent(bound.read / (bound.plain + bound.write + bound.read)),
        ),
        row("input, USD", (v) => usd(v.usdInput), usd(bound.usd)),
        row("output, USD", (v) => usd(v.usdOutput)),
        row("total, USD at list prices", (v) => usd(v.usdTotal)),
        row("total, Outpost's usage.total_cost_usd", (v) => usd(v.outpostUsd)),
        row("input ÷ the run's own cache-optimal bound", (v) => `${fmt(v.boundRatio, 3)}x`),
        [
          "input cost below caching off",
          percent(savingVsOff.cold),
          percent(savingVsOff.warm),
          "—",
          percent(1 - bound.usd / off.usdInput),
        ],
        row("time to first token, median call, ms", (v) => fmt(v.ttftMs.p50)),
        row("time to first token, sum over the run, ms", (v) => fmt(v.ttftMs.perRun, 0)),
        row("first delta at the client, median call, ms", (v) => fmt(v.clientTtftMs.p50)),
        row("POST → run_finished, ms", (v) => fmt(v.wallMs, 0)),
      ],
    ),
    "",
    "Per call (medians; tokens of the cold runs and their bound; time to first token cold / warm / off, ms):",
    table(
      ["call", "prompt", "written", "read", "plain", "bound w/r/p", "TTFT (emulator)", "first delta (client)"],
      perCall.map((call, i) => [
        String(i + 1),
        tokens(call.promptTokens),
        tokens(call.cold.write),
        tokens(call.cold.read),
        tokens(call.cold.plain),
        `${tokens(call.bound.write)} / ${tokens(call.bound.read)} / ${tokens(call.bound.plain)}`,
        `${fmt(call.ttftMs.cold, 0)} / ${fmt(call.ttftMs.warm, 0)} / ${fmt(call.ttftMs.off, 0)}`,
        `${fmt(call.clientTtftMs.cold, 0)} / ${fmt(call.clientTtftMs.warm, 0)} / ${fmt(call.clientTtftMs.off, 0)}`,
      ]),
    ),
  ];
  if (result.findings.length === 0) {
    lines.push(
      ...wrap(
        "Outpost's usage (tokens and total_cost_usd) agrees with what the emulator billed on every run; every warm " +
          "run read its agent's prefix, and no run with caching off cached.",
      ),
    );
  } else {
    lines.push("Findings (not as Outpost promises):", ...result.findings.map((finding) => `  ${finding}`));
  }
  return lines;
}
