// Scripted conversations: the store tests register replies in, how a request picks its script and turn,
// and per-turn fault injection consumed in attempt order (so "fail twice, then succeed" is expressible).
import { createHash } from "node:crypto";
import { compactionSelection, openingSummary, standIns } from "./compaction.ts";
import type { ServiceConditionOptions } from "./conditions.ts";
import { defaultReplyBlocks } from "./defaults.ts";
import type { ReplyBlock, ReplyUsage } from "./reply.ts";
import {
  contentText,
  firstUserText,
  type MessagesRequest,
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
  /** Its compaction requests fail as the API's can: a block with no content and no signature (emulator/compaction.ts). */
  compaction_fails?: boolean;
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
    // A compacted conversation stands for more turns than its assistant messages: its summary says how many, in a user
    // message (Outpost's own compaction) or in the compaction block it opens with (emulator/compaction.ts), and an
    // assistant message holding that block alone is none of the model's replies.
    const users = messages.filter((m) => m.role === "user").map((m) => contentText(m.content));
    const summaries = [...users, openingSummary(messages)];
    return turnIndex(messages) - standIns(messages) + joined + summarizedTurns(summaries);
  }

  /** Latest registration wins, so a test can override an earlier script with the same match. */
  find(request: MessagesRequest): Script | null {
    // A compacted conversation may have lost its first user message, but its compaction block quotes its start.
    const haystacks = [firstUserText(request.messages), systemText(request.system), openingSummary(request.messages)];
    for (let i = this.#scripts.length - 1; i >= 0; i--) {
      const script = this.#scripts[i];
      if (script && haystacks.some((text) => text.includes(script.match))) return script;
    }
    return null;
  }

  select(request: MessagesRequest, ids: IdPrefixes): SelectResult {
    const turn = this.turnOf(request.messages);
    const script = this.find(request);
    // A request to summarize, or to compact, is answered as such, taking no turn of its script (emulator/summarize.ts,
    // emulator/compaction.ts).
    if (request.compaction) return { ok: true, selection: compactionSelection(request, script, turn, ids) };
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
