// The bench's compaction case (issue 35): a chat session of SESSION.messages messages of 1–3k tokens each on a model
// whose window is 32k tokens (the agent's context_window, and the emulator's: it refuses a prompt past it as the
// Messages API does), against the emulator billing Anthropic's prompt cache, on self-hosted Outpost. Every turn must
// end; no call's prompt may pass 80 % of the window; and the session's billed input must stay within 1.15× the
// cache-optimal bound (bench/cost-bound.ts) of the prompts it sent, where each compaction's new prefix is a prefix
// like any other, written once at the bound too. The session runs twice, once with each summarizer: Outpost's own
// prompt through the agent's model, and the Messages API's compaction request (summarizer anthropic, whose signed
// block the emulator checks on every later call).
// `npm run bench:compaction` runs this case alone; `npm run bench` runs it after its other cases.
import { DEFAULT_PRICES, findPrice } from "../src/config/prices.ts";
import { caseTarget, runCaseAlone } from "./case.ts";
import { API_KEY } from "./config.ts";
import { cacheOptimalBound } from "./cost-bound.ts";
import { billedCalls } from "./cost-calls.ts";
import { startEmulatorProcess } from "./emulator-process.ts";
import { httpJson, readSse } from "./http.ts";
import { buildSelfHosted } from "./self-hosted.ts";
import { round } from "./util.ts";

const log = (line: string) => process.stderr.write(`[bench:compaction] ${line}\n`);

export const SESSION = { marker: "[outpost-bench-compaction]", messages: 40, window: 32_000 } as const;
export const TARGETS = { maxPromptShare: 0.8, boundRatio: 1.15 } as const;
const MODEL = "claude-sonnet-5-5";
const SUMMARIZERS = ["outpost", "anthropic"] as const;
type Summarizer = (typeof SUMMARIZERS)[number];

export interface CompactionResult {
  summarizer: Summarizer;
  messages: number;
  completed: number;
  calls: number;
  summaryCalls: number;
  compactions: number;
  /** The largest prompt of any call (input, cache reads and writes), as a share of the window. */
  maxPromptShare: number;
  billedUsd: number;
  boundUsd: number;
  /** billed ÷ bound, input only. */
  boundRatio: number;
  tokens: { plain: number; write: number; read: number };
}

/** The marker of a summarizer's session: the emulator's script for it matches its first message. */
const markerOf = (summarizer: Summarizer) => SESSION.marker.replace("]", `-${summarizer}]`);

/** A message of 1–3k tokens (about four characters a token), the same each run: varied words, not one repeated. */
function message(index: number, marker: string): string {
  const tokens = 1000 + ((index * 7919) % 2001);
  const words = ["river", "ledger", "quartz", "meadow", "signal", "harbor", "lantern", "orbit", "cedar", "vector"];
  const body = Array.from({ length: Math.round(tokens * 0.8) }, (_, i) => words[(i * 31 + index) % words.length]);
  return `${index === 0 ? `${marker} ` : ""}Note ${index + 1}: ${body.join(" ")}`;
}

async function send(baseUrl: string, session: string, text: string): Promise<string> {
  const res = await httpJson("POST", `${baseUrl}/v1/sessions/${session}/messages?wait=60`, {
    apiKey: API_KEY,
    body: { message: text },
  });
  const status = (res.body as { status?: string } | null)?.status;
  if (res.status !== 200 || !status) {
    throw new Error(`POST /v1/sessions/${session}/messages: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return status;
}

/** Both summarizers' sessions, one after the other, on one self-hosted Outpost and one emulator. */
export type CompactionCase = Record<Summarizer, CompactionResult>;

export async function runCompactionCase(options: {
  root: string;
  log?: (line: string) => void;
}): Promise<CompactionCase> {
  const say = options.log ?? log;
  const emulator = await startEmulatorProcess({ promptCache: true });
  try {
    const replies = Array.from({ length: SESSION.messages + 1 }, (_, i) => ({
      content: [{ type: "text", text: `Noted (${i + 1}); ready for the next one.` }],
    }));
    for (const summarizer of SUMMARIZERS) {
      await emulator.register({ match: markerOf(summarizer), turns: replies, context_window: SESSION.window });
    }
    say("building self-hosted Outpost for the compaction case…");
    const build = await buildSelfHosted({
      root: options.root,
      vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
    });
    try {
      return await build.withServer(async (server) => {
        const results = {} as CompactionCase;
        for (const summarizer of SUMMARIZERS) {
          say(
            `a session of ${SESSION.messages} messages of 1–3k tokens on a ${SESSION.window}-token window, summarizer ${summarizer}…`,
          );
          results[summarizer] = await runSession(server.url, emulator, summarizer);
        }
        return results;
      });
    } finally {
      build.remove();
    }
  } finally {
    await emulator.close();
  }
}

async function runSession(
  baseUrl: string,
  emulator: Awaited<ReturnType<typeof startEmulatorProcess>>,
  summarizer: Summarizer,
): Promise<CompactionResult> {
  const agentName = `bench_long_chat_${summarizer}`;
  const agent = await httpJson("PUT", `${baseUrl}/v1/agents/${agentName}`, {
    apiKey: API_KEY,
    body: {
      name: agentName,
      instructions: "You keep a long conversation's notes and acknowledge each one briefly.",
      model: { name: MODEL },
      context_window: { tokens: SESSION.window, summarizer },
    },
  });
  if (agent.status !== 200 && agent.status !== 201) throw new Error(`PUT agent: HTTP ${agent.status}`);
  const created = await httpJson("POST", `${baseUrl}/v1/agents/${agentName}/sessions`, { apiKey: API_KEY, body: {} });
  const session = (created.body as { id?: string } | null)?.id;
  if (created.status !== 201 || !session) throw new Error(`POST sessions: HTTP ${created.status}`);
  let completed = 0;
  for (let i = 0; i < SESSION.messages; i++) {
    if ((await send(baseUrl, session, message(i, markerOf(summarizer)))) === "completed") completed++;
  }
  // Closed, its event stream ends: the compactions and the summaries' calls, from it.
  await httpJson("DELETE", `${baseUrl}/v1/sessions/${session}`, { apiKey: API_KEY });
  let compactions = 0;
  let summaryCalls = 0;
  await readSse(`${baseUrl}/v1/sessions/${session}/events`, API_KEY, (frame) => {
    const event = JSON.parse(frame.data) as { event_type?: string; payload?: { call_site?: string } };
    if (event.event_type === "context_compacted") compactions++;
    if (event.event_type === "llm_request_sent" && event.payload?.call_site === "context_compaction") summaryCalls++;
  });
  // As the emulator billed them: a compaction request's tokens are its compaction iteration's.
  const calls = billedCalls(await emulator.stats(), session);
  const price = findPrice(DEFAULT_PRICES, MODEL);
  if (!price) throw new Error(`${MODEL} has no list price`);
  const prices = { input: price.input, write: price.cache_write, read: price.cache_read };
  const bound = cacheOptimalBound(
    calls.map((call) => ({ units: call.prompt_units, minCacheableTokens: call.min_cacheable_tokens })),
    prices,
  );
  const tokens = { plain: 0, write: 0, read: 0 };
  let maxPrompt = 0;
  for (const call of calls) {
    const u = call.usage;
    tokens.plain += u.input_tokens;
    tokens.write += u.cache_creation_input_tokens;
    tokens.read += u.cache_read_input_tokens;
    maxPrompt = Math.max(maxPrompt, u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens);
  }
  const billedUsd = (tokens.plain * prices.input + tokens.write * prices.write + tokens.read * prices.read) / 1e6;
  return {
    summarizer,
    messages: SESSION.messages,
    completed,
    calls: calls.length,
    summaryCalls,
    compactions,
    maxPromptShare: round(maxPrompt / SESSION.window, 3),
    billedUsd: round(billedUsd, 4),
    boundUsd: round(bound.usd, 4),
    boundRatio: round(billedUsd / bound.usd, 3),
    tokens,
  };
}

export function compactionReport(results: CompactionCase): string[] {
  return [
    `Compaction: a session of ${SESSION.messages} messages of 1–3k tokens on a ${SESSION.window}-token window (self-hosted):`,
    ...SUMMARIZERS.flatMap((summarizer) => {
      const result = results[summarizer];
      return [
        `  summarizer ${summarizer}: turns completed ${result.completed}/${result.messages} · model calls ` +
          `${result.calls} (${result.summaryCalls} summaries, ${result.compactions} compactions) · largest prompt ` +
          `${(result.maxPromptShare * 100).toFixed(1)} % of the window`,
        `    input billed $${result.billedUsd.toFixed(4)} (plain ${result.tokens.plain}, written ` +
          `${result.tokens.write}, read ${result.tokens.read}) · cache-optimal bound $${result.boundUsd.toFixed(4)} · ` +
          `ratio ${result.boundRatio}×`,
      ];
    }),
  ];
}

/** Shaped as the bench's other targets (no floor has these figures), for each summarizer. */
export function compactionTargets(results: CompactionCase) {
  const row = caseTarget;
  return SUMMARIZERS.flatMap((summarizer) => {
    const result = results[summarizer];
    const name = (figure: string) => `compaction (${summarizer}): ${figure}`;
    return [
      row(
        name("session turns completed"),
        result.completed,
        `${result.messages}`,
        result.completed === result.messages,
      ),
      row(
        name("largest prompt ÷ window"),
        result.maxPromptShare,
        `<= ${TARGETS.maxPromptShare}`,
        result.maxPromptShare <= TARGETS.maxPromptShare,
      ),
      row(
        name("billed input ÷ cache-optimal bound"),
        result.boundRatio,
        `<= ${TARGETS.boundRatio}x`,
        result.boundRatio <= TARGETS.boundRatio,
      ),
    ];
  });
}

runCaseAlone(import.meta.url, "compaction", (root) => runCompactionCase({ root }), compactionReport, compactionTargets);
