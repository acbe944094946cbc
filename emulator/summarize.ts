// A model asked to summarize: a request whose system prompt begins SUMMARY_REQUEST_PREFIX (how Outpost's compaction
// asks, src/runtime/compaction.ts) is answered with a summary of its own, whatever script matches its conversation,
// without taking a turn of that script: a scripted test then gets its scripted replies in order, and the
// summarization call is billed, limited and refused by the script's conditions like any other. The summary is
// deterministic: how much it read, and the start and end of what it was given.
import { createHash } from "node:crypto";
import type { ReplyBlock } from "./reply.ts";
import { contentText, type MessagesRequest, systemText } from "./request.ts";
import type { IdPrefixes, Script, Selection } from "./script.ts";

export const SUMMARY_REQUEST_PREFIX = "Summarize the conversation";

/** Characters of the conversation's start and end the summary quotes. */
const QUOTED = 160;

export function isSummaryRequest(request: MessagesRequest): boolean {
  return systemText(request.system).trimStart().startsWith(SUMMARY_REQUEST_PREFIX);
}

/** How a summary says how many of the agent's turns it stands for. */
const TURNS = /Summary of (\d+) agent turns/;

/** A summary's heading, before the quote of what it read. */
const HEADING = /^Summary of \d+ agent turns \(\d+ characters\): /;

/**
 * The agent's turns the summaries in `texts` stand for: the latest summary's count (a later summary includes the
 * earlier ones it read). A scripted conversation's turn is its assistant messages plus these.
 */
export function summarizedTurns(texts: readonly string[]): number {
  let turns = 0;
  for (const text of texts) {
    const match = TURNS.exec(text);
    if (match) turns = Math.max(turns, Number(match[1]));
  }
  return turns;
}

/**
 * The summary: the agent's turns it stands for (those of the summaries it read, and the transcript's paragraphs
 * that begin "AGENT:", as Outpost writes them), the characters it read, and their start and end.
 */
export function summaryBlocks(request: MessagesRequest): ReplyBlock[] {
  const texts = request.messages.map((message) => contentText(message.content));
  const text = texts.join("\n");
  const turns = summarizedTurns(texts) + (text.match(/^AGENT: /gm)?.length ?? 0);
  return [{ type: "text", text: summaryText(turns, text) }];
}

/** A summary's text: the agent's turns it stands for, the characters of `text` it read, and their start and end. */
export function summaryText(turns: number, text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const quoted = flat.length <= 2 * QUOTED ? flat : `${flat.slice(0, QUOTED)} … ${flat.slice(-QUOTED)}`;
  return `Summary of ${turns} agent turns (${flat.length} characters): ${quoted}`;
}

/** A summary without its heading: what a later summary quotes of it, so the conversation's start stays in front. */
export function summaryBody(summary: string): string {
  return summary.replace(HEADING, "");
}

/** A seed for the summary's message id: the request's conversation. */
export function summarySeed(request: MessagesRequest): string {
  return createHash("sha256").update(JSON.stringify(request.messages)).digest("hex").slice(0, 24);
}

/** The reply to a request to summarize: the summary, from the script its conversation matches (for pacing), if any. */
export function summarySelection(
  request: MessagesRequest,
  script: Script | null,
  turn: number,
  ids: IdPrefixes,
): Selection {
  return {
    script,
    turn,
    blocks: summaryBlocks(request),
    stopReason: "end_turn",
    stopSequence: null,
    usage: {},
    fault: null,
    messageId: `${ids.message}${summarySeed(request)}`,
    ttftMs: script?.ttft_ms,
    tokenDelayMs: script?.token_delay_ms,
  };
}
