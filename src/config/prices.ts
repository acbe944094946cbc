// Model prices in USD per million tokens, and the cost arithmetic. Prices live in configuration: this table is
// the default and OUTPOST_PRICES (JSON) overrides or extends it per model. A model with no price is never guessed:
// its tokens are counted and its cost is reported as unknown.
import { z } from "zod";
import { ConfigError } from "../errors.ts";

/** Anthropic's rule for a 1-hour cache write: twice the input price (a 5-minute write is 1.25×, a read 0.1×). */
const ONE_HOUR_WRITE_FACTOR = 2;

export const ModelPriceSchema = z.strictObject({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  /** 5-minute cache write. */
  cache_write: z.number().nonnegative(),
  /** 1-hour cache write; absent: 2× input, Anthropic's rule (oneHourWritePrice). */
  cache_write_1h: z.number().nonnegative().optional(),
  cache_read: z.number().nonnegative(),
  /** Where the figure comes from, so an operator can re-check it. */
  source: z.string().min(1),
});
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/** The price of a 1-hour cache write: the table's, else Anthropic's rule. */
export function oneHourWritePrice(price: ModelPrice): number {
  return price.cache_write_1h ?? price.input * ONE_HOUR_WRITE_FACTOR;
}

const ANTHROPIC_MODELS_DOC = "Anthropic model overview pages (platform.claude.com/docs/…/models), read 2026-11-21";
const DERIVED_CACHE =
  "input/output from the Anthropic model overview pages (2026-11-21); cache writes 1.25× (5 minutes) and 2× (1 hour), reads 0.1× of input per Anthropic's pricing rule";

/** A price with the cache rates Anthropic derives from the input price. */
function priced(input: number, output: number, source: string): ModelPrice {
  return {
    input,
    output,
    cache_write: input * 1.25,
    cache_write_1h: input * ONE_HOUR_WRITE_FACTOR,
    cache_read: input / 10,
    source,
  };
}

/** Default prices. */
export const DEFAULT_PRICES: Readonly<Record<string, ModelPrice>> = {
  "claude-sonnet-5-5": priced(2, 10, ANTHROPIC_MODELS_DOC),
  "claude-sonnet-5": priced(2, 10, ANTHROPIC_MODELS_DOC),
  "claude-opus-5-5": priced(4, 20, DERIVED_CACHE),
  "claude-opus-5": priced(5, 25, DERIVED_CACHE),
  "claude-haiku-4-5": priced(1, 5, DERIVED_CACHE),
  "claude-sonnet-4-5": priced(3, 15, DERIVED_CACHE),
  "claude-opus-4-5": priced(5, 25, DERIVED_CACHE),
};

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** The default table with OUTPOST_PRICES merged over it. Bad JSON is a ConfigError naming the model and field. */
export function loadPriceTable(overrides: string | undefined): PriceTable {
  if (!overrides?.trim()) return DEFAULT_PRICES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(overrides);
  } catch (cause) {
    throw new ConfigError("OUTPOST_PRICES is not valid JSON.", { cause });
  }
  const result = z.record(z.string().min(1), ModelPriceSchema).safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    const at = issue?.path.length ? `.${issue.path.join(".")}` : "";
    throw new ConfigError(`OUTPOST_PRICES${at}: ${issue?.message ?? "invalid"}`);
  }
  return { ...DEFAULT_PRICES, ...result.data };
}

/**
 * Whether a cost budget can be enforced for `model`: it has a price. A broken OUTPOST_PRICES is not the client's
 * fault; the run itself fails with config_error, so the request is let through.
 */
function budgetCanBeEnforced(overrides: string | undefined, model: string): boolean {
  try {
    return findPrice(loadPriceTable(overrides), model) !== undefined;
  } catch {
    return true;
  }
}

/**
 * Why a cost budget cannot be enforced on `model` (it has no price), or null when it can or there is none. `agent`
 * names the model's agent when the request chose it (a fork onto another agent). Creations and forks ask through
 * requirePricedBudget (src/tasks/task-limits.ts), which knows whose budget the run keeps.
 */
export function unpricedBudget(check: {
  budget: number | null | undefined;
  model: string;
  prices: string | undefined;
  agent?: string;
}): string | null {
  if (check.budget === null || check.budget === undefined || budgetCanBeEnforced(check.prices, check.model)) {
    return null;
  }
  const model = check.agent ? `${check.agent}'s model ${check.model}` : check.model;
  return `A cost budget needs the model's price, and ${model} has none; add it to OUTPOST_PRICES.`;
}

/** Dated model ids (claude-haiku-4-5-20251001) are priced as their alias unless listed themselves. */
export function findPrice(table: PriceTable, model: string): ModelPrice | undefined {
  return table[model] ?? table[model.replace(/-\d{8}$/, "")];
}

export interface TokenCounts {
  /** Plain input: neither written to nor read from the cache. */
  input_tokens: number;
  output_tokens: number;
  /** Every cache write, both TTLs. */
  cache_creation_input_tokens: number;
  /** Of the writes, those at the 1-hour TTL (priced cache_write_1h; the rest cache_write). */
  cache_creation_1h_input_tokens?: number;
  cache_read_input_tokens: number;
  /** Web searches run inside the call, billed per search on top of the tokens. */
  web_search_requests?: number;
}

/**
 * Anthropic's web search: $10 per 1,000 searches, whatever the model (its pricing page, read 2026-11-24); the
 * results a search adds to the context are billed as input tokens, which the call's usage already counts.
 */
export const WEB_SEARCH_USD_PER_REQUEST = 0.01;

/** Cost of one model call in USD, or null when the model has no price. */
export function costOf(table: PriceTable, model: string, tokens: TokenCounts): number | null {
  const price = findPrice(table, model);
  if (!price) return null;
  const hour = Math.min(tokens.cache_creation_1h_input_tokens ?? 0, tokens.cache_creation_input_tokens);
  const micro =
    tokens.input_tokens * price.input +
    tokens.output_tokens * price.output +
    (tokens.cache_creation_input_tokens - hour) * price.cache_write +
    hour * oneHourWritePrice(price) +
    tokens.cache_read_input_tokens * price.cache_read;
  const searches = (tokens.web_search_requests ?? 0) * WEB_SEARCH_USD_PER_REQUEST * 1e6;
  // Prices are per million tokens; round to 1e-9 USD so sums stay exact in JSON.
  return Math.round((micro + searches) * 1000) / 1e9;
}
