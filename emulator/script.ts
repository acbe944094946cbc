// Scripted conversations: the store tests register replies in, how a request picks its script and turn,
// and per-turn fault injection consumed in attempt order (so "fail twice, then succeed" is expressible).
import { createHash } from "node:crypto";
import { parseConditions, type ServiceConditionOptions } from "./conditions.ts";
import { defaultReplyBlocks } from "./defaults.ts";
import type { ReplyBlock, ReplyUsage } from "./reply.ts";
import {
  contentText,
  firstUserText,
  isRecord,
  type MessagesRequest,
  type Parsed,
  type RequestMessage,
  systemText,
  turnIndex,
} from "./request.ts";
import { isSummaryRequest, summarizedTurns, summarySelection } from "./summarize.ts";
import {
  citationOf,
  offeredWebSearch,
  type ScriptedCitation,
  type ScriptedResult,
  searchBlocks,
  WEB_SEARCH_ERROR_CODES,
} from "./web-search.ts";

export type ScriptBlock =
  /** Text; `citations` make it cite web search results (the request must offer web search). */
  | { type: "text"; text: string; citations?: ScriptedCitation[] }
  | { type: "tool_use"; name: string; input: unknown; id?: string }
  | { type: "thinking"; thinking: string; signature?: string }
  /**
   * One search with Anthropic's server tool (emulator/web-search.ts): its query and the pages found, or the API's
   * error_code. Refused (400) when the request does not offer the web_search tool.
   */
  | { type: "web_search"; query: string; results?: ScriptedResult[]; error_code?: string; id?: string };

export type Fault =
  | { kind: "http"; status: number; retry_after?: number; error_type?: string; message?: string }
  | { kind: "stream_error"; after_deltas?: number; error_type?: string; message?: string }
  | { kind: "malformed"; after_deltas?: number }
  | { kind: "stall"; after_deltas?: number; ms?: number };

export interface Turn {
  content: ScriptBlock[];
  stop_reason?: string;
  stop_sequence?: string;
  usage?: Partial<ReplyUsage>;
  faults?: Fault[];
  ttft_ms?: number;
  token_delay_ms?: number;
}

/** A script; its service conditions (rate_limit, outage, context_window) are emulator/conditions.ts's. */
export interface Script extends ServiceConditionOptions {
  id: string;
  match: string;
  turns: Turn[];
  ttft_ms?: number;
  token_delay_ms?: number;
  /** Bill prompt caching as the provider does (emulator/billing.ts), in a cache partition of this script's own. */
  prompt_cache?: boolean;
  /** Overrides the model's minimum cacheable length. */
  min_cacheable_tokens?: number;
  /** Time to first token per 1,000 uncached input tokens, when billing is on. */
  prefill_ms_per_1k_tokens?: number;
}

/** The outcome of routing one request: what to say, which fault (if any) to inject, and at what pace. */
export interface Selection {
  script: Script | null;
  turn: number;
  blocks: ReplyBlock[];
  stopReason: string;
  stopSequence: string | null;
  usage: Partial<ReplyUsage>;
  /** usage.server_tool_use when the request offers web search; absent otherwise. */
  serverToolUse?: { web_search_requests: number; web_fetch_requests: number };
  fault: Fault | null;
  messageId: string;
  ttftMs: number | undefined;
  tokenDelayMs: number | undefined;
}

/** Prefixes of made-up ids; every dialect has its own, the seeded part after them is the same. */
export interface IdPrefixes {
  message: string;
  tool: string;
}

export type SelectResult =
  | { ok: true; selection: Selection }
  | { ok: false; script: Script; turn: number; message: string };

function hash(...parts: (string | number)[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 24);
}

export class ScriptStore {
  #scripts: Script[] = [];
  #attempts = new Map<string, number>();
  #nextId = 1;
  /**
   * The last block of every reply that stopped with pause_turn. A paused reply is sent back and continued, and the
   * client joins the continuation onto it in one assistant message: where such a block is followed by more, a turn
   * ended there, so turns are counted right (turnOf) though assistant messages are fewer.
   */
  #pausedEnds = new Set<string>();

  register(script: Omit<Script, "id">): Script {
    const registered: Script = { ...script, id: `script_${this.#nextId++}` };
    this.#scripts.push(registered);
    return registered;
  }

  list(): Script[] {
    return [...this.#scripts];
  }

  clear(): void {
    this.#scripts = [];
    this.#attempts.clear();
    this.#pausedEnds.clear();
  }

  /** The turn index of a request: the model's replies so far, paused replies continued in the same message included. */
  turnOf(messages: readonly RequestMessage[]): number {
    let joined = 0;
    for (const message of messages) {
      if (message.role !== "assistant" || typeof message.content === "string") continue;
      message.content.slice(0, -1).forEach((block) => {
        if (this.#pausedEnds.has(blockKey(block))) joined++;
      });
    }
    // A compacted conversation stands for more turns than its assistant messages: its summary says how many.
    const users = messages.filter((m) => m.role === "user").map((m) => contentText(m.content));
    return turnIndex(messages) + joined + summarizedTurns(users);
  }

  /** Latest registration wins, so a test can override an earlier script with the same match. */
  find(request: MessagesRequest): Script | null {
    const haystacks = [firstUserText(request.messages), systemText(request.system)];
    for (let i = this.#scripts.length - 1; i >= 0; i--) {
      const script = this.#scripts[i];
      if (script && haystacks.some((text) => text.includes(script.match))) return script;
    }
    return null;
  }

  select(request: MessagesRequest, ids: IdPrefixes): SelectResult {
    const turn = this.turnOf(request.messages);
    const script = this.find(request);
    // A request to summarize is answered as such, taking no turn of its script (emulator/summarize.ts).
    if (isSummaryRequest(request)) return { ok: true, selection: summarySelection(request, script, turn, ids) };
    if (!script) return { ok: true, selection: defaultSelection(request, turn, ids) };
    const scripted = script.turns[turn];
    if (!scripted) {
      const message = `emulator script "${script.match}" has no turn ${turn} (it has ${script.turns.length})`;
      return { ok: false, script, turn, message };
    }
    const key = `${script.id}\u0000${turn}`;
    const attempt = (this.#attempts.get(key) ?? 0) + 1;
    this.#attempts.set(key, attempt);
    // Seeded by the conversation, not the attempt, so a retried request gets the very same ids.
    const seed = hash("script", script.match, firstUserText(request.messages), turn);
    const hasToolUse = scripted.content.some((block) => block.type === "tool_use");
    const webSearch = offeredWebSearch(request.tools);
    const searches = scripted.content.some((b) => b.type === "web_search" || (b.type === "text" && b.citations));
    if (searches && !webSearch) {
      const message = `tools: emulator script "${script.match}" turn ${turn} searches the web or cites a search, but the request does not offer the web_search tool`;
      return { ok: false, script, turn, message };
    }
    const maxUses = typeof webSearch?.max_uses === "number" ? webSearch.max_uses : Number.POSITIVE_INFINITY;
    let searched = 0;
    let made = 0;
    const blocks = scripted.content.flatMap((block, index): ReplyBlock[] => {
      if (block.type !== "web_search") return [resolveBlock(block, seed, index, ids)];
      made++;
      const resolved = searchBlocks(block, `srvtoolu_emu_${hash(seed, index)}`, made > maxUses);
      if (made <= maxUses && block.error_code === undefined) searched++;
      return resolved;
    });
    const stopReason = scripted.stop_reason ?? (hasToolUse ? "tool_use" : "end_turn");
    const last = blocks.at(-1);
    if (stopReason === "pause_turn" && last) this.#pausedEnds.add(blockKey(last));
    return {
      ok: true,
      selection: {
        script,
        turn,
        blocks,
        stopReason,
        stopSequence: scripted.stop_sequence ?? null,
        usage: scripted.usage ?? {},
        ...(webSearch ? { serverToolUse: { web_search_requests: searched, web_fetch_requests: 0 } } : {}),
        fault: scripted.faults?.[attempt - 1] ?? null,
        messageId: `${ids.message}${seed}`,
        ttftMs: scripted.ttft_ms ?? script.ttft_ms,
        tokenDelayMs: scripted.token_delay_ms ?? script.token_delay_ms,
      },
    };
  }
}

/** What identifies a block when it comes back in a request (emulator-issued ids, or the text itself). */
function blockKey(block: Record<string, unknown> | ReplyBlock): string {
  const b = block as Record<string, unknown>;
  return JSON.stringify([b.type, b.id ?? b.tool_use_id ?? b.signature ?? b.text ?? null]);
}

function resolveBlock(
  block: Exclude<ScriptBlock, { type: "web_search" }>,
  seed: string,
  index: number,
  ids: IdPrefixes,
): ReplyBlock {
  switch (block.type) {
    case "text":
      return block.citations
        ? { type: "text", text: block.text, citations: block.citations.map(citationOf) }
        : { type: "text", text: block.text };
    case "tool_use":
      return {
        type: "tool_use",
        id: block.id ?? `${ids.tool}${hash(seed, index)}`,
        name: block.name,
        input: block.input,
      };
    case "thinking":
      return {
        type: "thinking",
        thinking: block.thinking,
        signature: block.signature ?? `sig_emu_${hash(seed, index)}`,
      };
  }
}

function defaultSelection(request: MessagesRequest, turn: number, ids: IdPrefixes): Selection {
  const { system, messages, tools } = request.prompt;
  const seed = hash("default", request.model, JSON.stringify([system, messages, tools]));
  const blocks = defaultReplyBlocks(request).map((block, index) =>
    block.type === "tool_use" ? { ...block, id: `${ids.tool}${hash(seed, index)}` } : block,
  );
  return {
    script: null,
    turn,
    blocks,
    stopReason: blocks.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn",
    stopSequence: null,
    usage: {},
    fault: null,
    messageId: `${ids.message}${seed}`,
    ttftMs: undefined,
    tokenDelayMs: undefined,
  };
}

// ---- validation of POST /_emulator/scripts bodies -------------------------------------------------

const FAULT_KINDS = new Set(["http", "stream_error", "malformed", "stall"]);
const USAGE_KEYS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"];

function isNonNegativeNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

function optionalNumber(record: Record<string, unknown>, key: string, where: string): string | null {
  return record[key] === undefined || isNonNegativeNumber(record[key])
    ? null
    : `${where}.${key}: must be a non-negative number`;
}

function checkBlock(block: unknown, where: string): string | null {
  if (!isRecord(block)) return `${where}: must be an object`;
  switch (block.type) {
    case "text":
      if (typeof block.text !== "string") return `${where}.text: must be a string`;
      if (block.citations === undefined) return null;
      if (!Array.isArray(block.citations) || block.citations.length === 0) {
        return `${where}.citations: must be a non-empty array`;
      }
      for (const [index, citation] of block.citations.entries()) {
        const at = `${where}.citations.${index}`;
        if (!isRecord(citation) || typeof citation.url !== "string" || typeof citation.cited_text !== "string") {
          return `${at}: must be an object with url and cited_text strings`;
        }
        if (citation.title !== undefined && typeof citation.title !== "string") return `${at}.title: must be a string`;
      }
      return null;
    case "web_search":
      return checkSearch(block, where);
    case "tool_use":
      if (typeof block.name !== "string" || block.name === "") return `${where}.name: must be a non-empty string`;
      if (!isRecord(block.input)) return `${where}.input: must be an object`;
      return block.id === undefined || typeof block.id === "string" ? null : `${where}.id: must be a string`;
    case "thinking":
      if (typeof block.thinking !== "string") return `${where}.thinking: must be a string`;
      return block.signature === undefined || typeof block.signature === "string"
        ? null
        : `${where}.signature: must be a string`;
    default:
      return `${where}.type: must be "text", "tool_use", "thinking" or "web_search"`;
  }
}

function checkSearch(block: Record<string, unknown>, where: string): string | null {
  if (typeof block.query !== "string" || block.query === "") return `${where}.query: must be a non-empty string`;
  if (block.id !== undefined && typeof block.id !== "string") return `${where}.id: must be a string`;
  if (block.error_code !== undefined) {
    if (typeof block.error_code !== "string" || !WEB_SEARCH_ERROR_CODES.has(block.error_code)) {
      return `${where}.error_code: must be one of ${[...WEB_SEARCH_ERROR_CODES].join(", ")}`;
    }
    return block.results === undefined ? null : `${where}: results and error_code exclude each other`;
  }
  if (!Array.isArray(block.results)) return `${where}.results: must be an array (or give error_code)`;
  for (const [index, result] of block.results.entries()) {
    const at = `${where}.results.${index}`;
    if (!isRecord(result) || typeof result.url !== "string" || typeof result.title !== "string") {
      return `${at}: must be an object with url and title strings`;
    }
    if (result.page_age !== undefined && typeof result.page_age !== "string") return `${at}.page_age: must be a string`;
  }
  return null;
}

function checkFault(fault: unknown, where: string): string | null {
  if (!isRecord(fault) || typeof fault.kind !== "string" || !FAULT_KINDS.has(fault.kind)) {
    return `${where}.kind: must be one of http, stream_error, malformed, stall`;
  }
  if (
    fault.kind === "http" &&
    (typeof fault.status !== "number" || !Number.isInteger(fault.status) || fault.status < 400 || fault.status > 599)
  ) {
    return `${where}.status: must be an HTTP error status (400-599)`;
  }
  for (const key of ["after_deltas", "ms", "retry_after"]) {
    const problem = optionalNumber(fault, key, where);
    if (problem) return problem;
  }
  return null;
}

function checkTurn(turn: unknown, where: string): string | null {
  if (!isRecord(turn)) return `${where}: must be an object`;
  if (!Array.isArray(turn.content)) return `${where}.content: must be an array of blocks`;
  for (const [index, block] of turn.content.entries()) {
    const problem = checkBlock(block, `${where}.content.${index}`);
    if (problem) return problem;
  }
  if (turn.stop_reason !== undefined && typeof turn.stop_reason !== "string")
    return `${where}.stop_reason: must be a string`;
  if (turn.stop_sequence !== undefined && typeof turn.stop_sequence !== "string")
    return `${where}.stop_sequence: must be a string`;
  if (turn.usage !== undefined) {
    if (!isRecord(turn.usage)) return `${where}.usage: must be an object`;
    for (const key of USAGE_KEYS) {
      const problem = optionalNumber(turn.usage, key, `${where}.usage`);
      if (problem) return problem;
    }
  }
  if (turn.faults !== undefined) {
    if (!Array.isArray(turn.faults)) return `${where}.faults: must be an array`;
    for (const [index, fault] of turn.faults.entries()) {
      const problem = checkFault(fault, `${where}.faults.${index}`);
      if (problem) return problem;
    }
  }
  return optionalNumber(turn, "ttft_ms", where) ?? optionalNumber(turn, "token_delay_ms", where);
}

/** Validates a script registration; the shapes are then trusted, so this is the only gate. */
export function parseScript(body: unknown): Parsed<Omit<Script, "id">> {
  if (!isRecord(body)) return { ok: false, message: "script must be a JSON object" };
  if (typeof body.match !== "string" || body.match === "")
    return { ok: false, message: "match: must be a non-empty string" };
  if (!Array.isArray(body.turns)) return { ok: false, message: "turns: must be an array" };
  for (const [index, turn] of body.turns.entries()) {
    const problem = checkTurn(turn, `turns.${index}`);
    if (problem) return { ok: false, message: problem };
  }
  const numbers = ["ttft_ms", "token_delay_ms", "min_cacheable_tokens", "prefill_ms_per_1k_tokens"] as const;
  for (const key of numbers) {
    const problem = optionalNumber(body, key, "script");
    if (problem) return { ok: false, message: problem };
  }
  if (body.prompt_cache !== undefined && typeof body.prompt_cache !== "boolean") {
    return { ok: false, message: "script.prompt_cache: must be a boolean (true or false)" };
  }
  const conditions = parseConditions(body);
  if (!conditions.ok) return conditions;
  const script: Omit<Script, "id"> = { match: body.match, turns: body.turns as Turn[], ...conditions.value };
  for (const key of numbers) {
    const value = body[key];
    if (typeof value === "number") script[key] = value;
  }
  if (typeof body.prompt_cache === "boolean") script.prompt_cache = body.prompt_cache;
  return { ok: true, value: script };
}
