// The Messages API's explicit compaction (beta compact-2026-09-04), as the emulator plays it. A request with
// `compaction: {type: "summarize"}` is answered with one signed `compaction` block summarizing its conversation
// (stop_reason "compaction", nothing sampled after it), whatever script the conversation matches and without taking a
// turn of it, as a request to summarize is (emulator/summarize.ts), while the script's conditions admit, bill and pace
// it like any other. A later request sends the block back first, in place of the messages it summarizes. Every
// Messages API request is checked as the API checks it: the beta named in `anthropic-beta`, a block only as the first
// block of the first message (an assistant message), its signature matching its content. The summary follows
// summarize.ts's convention ("Summary of N agent turns …"), so a compacted conversation's turn (emulator/script.ts)
// counts the turns it stands for. The reply's tokens are reported as a compaction iteration (usage.iterations), the
// top-level counts zero: the API keeps a compaction iteration's tokens out of them. The stats bill them once.
import { createHmac } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { type CacheCreation, chunkText, type ReplyBlock, type ReplyUsage } from "./reply.ts";
import { contentText, fail, isRecord, type MessagesRequest, type Parsed, type RequestMessage } from "./request.ts";
import type { IdPrefixes, Script, Selection } from "./script.ts";
import { summaryBody, summarySeed, summaryText } from "./summarize.ts";

/** The beta a compaction request, and every request that sends a compaction block back, names in anthropic-beta. */
export const COMPACTION_BETA = "compact-2026-09-04";

/** The emulator's own key for the blocks' signatures: private to it, and constant, so a signature is deterministic. */
const SIGNING_KEY = "outpost-emulator/compaction-signing-key/v1";

/** A compaction request's `compaction`, checked: its instructions, null when absent, empty or only whitespace. */
export interface CompactionRequest {
  instructions: string | null;
}

export type CompactionBlock = Extract<ReplyBlock, { type: "compaction" }>;

/** A block's signature: an HMAC-SHA256 of its content and encrypted content, so that any change to either shows. */
export function compactionSignature(content: string | null, encrypted: string | null): string {
  return createHmac("sha256", SIGNING_KEY)
    .update(JSON.stringify([content, encrypted]))
    .digest("base64");
}

/** The betas a request names: `anthropic-beta`, a comma-separated list (repeated headers joined). */
function betasOf(headers: IncomingHttpHeaders): Set<string> {
  const value = headers["anthropic-beta"];
  const list = Array.isArray(value) ? value.join(",") : (value ?? "");
  return new Set(list.split(",").map((beta) => beta.trim()));
}

/**
 * A parsed Messages API request checked for compaction, as the API checks it: the compaction blocks sent back, then
 * the `compaction` parameter. A compaction request comes back with `compaction` set.
 */
export function withCompaction(
  parsed: Parsed<MessagesRequest>,
  body: unknown,
  headers: IncomingHttpHeaders,
): Parsed<MessagesRequest> {
  if (!parsed.ok || !isRecord(body)) return parsed;
  const beta = betasOf(headers).has(COMPACTION_BETA);
  const problem = checkBlocks(parsed.value.messages, beta);
  if (problem) return fail(problem);
  const config = compactionConfig(body, beta);
  if (!config.ok) return config;
  return config.value ? { ok: true, value: { ...parsed.value, compaction: config.value } } : parsed;
}

function compactionConfig(body: Record<string, unknown>, beta: boolean): Parsed<CompactionRequest | null> {
  const { compaction } = body;
  if (compaction === undefined) return { ok: true, value: null };
  // Without the beta the parameter does not exist: refused as any unknown field is.
  if (!beta) return fail("compaction: Extra inputs are not permitted");
  if (compaction === null) return { ok: true, value: null };
  if (!isRecord(compaction) || compaction.type !== "summarize")
    return fail("compaction.type: Input should be 'summarize'");
  const extra = Object.keys(compaction).find((key) => key !== "type" && key !== "instructions");
  if (extra !== undefined) return fail(`compaction.${extra}: Extra inputs are not permitted`);
  const { instructions } = compaction;
  if (instructions !== undefined && instructions !== null && typeof instructions !== "string") {
    return fail("compaction.instructions: Input should be a valid string");
  }
  if (body.context_management !== undefined && body.context_management !== null) {
    return fail("compaction: cannot be combined with context_management");
  }
  const given = typeof instructions === "string" && instructions.trim() !== "" ? instructions : null;
  return { ok: true, value: { instructions: given } };
}

/** The API's refusal of the first compaction block sent back wrongly, or null. */
function checkBlocks(messages: readonly RequestMessage[], beta: boolean): string | null {
  for (const [m, message] of messages.entries()) {
    if (typeof message.content === "string") continue;
    for (const [b, block] of message.content.entries()) {
      if (block.type !== "compaction") continue;
      const where = `messages.${m}.content.${b}`;
      if (!beta) return `${where}: Input tag 'compaction' found using 'type' does not match any of the expected tags`;
      const problem = checkBlock(block, where, m === 0 && b === 0 && message.role === "assistant");
      if (problem) return problem;
    }
  }
  return null;
}

function checkBlock(block: Record<string, unknown>, where: string, opening: boolean): string | null {
  const { content, encrypted_content: encrypted, signature } = block;
  for (const [key, value] of [
    ["content", content],
    ["encrypted_content", encrypted],
    ["signature", signature],
  ] as const) {
    if (value !== undefined && value !== null && typeof value !== "string") {
      return `${where}.${key}: Input should be a valid string`;
    }
  }
  // A failed compaction (no content) is a no-op, wherever a client sends it back.
  if (content === undefined || content === null) return null;
  if (content === "") return `${where}.content: String should have at least 1 character`;
  if (!opening) {
    return `compaction_block_misplaced: ${where}: a compaction block may only be the first content block of the first message, which must be an assistant message`;
  }
  if (signature !== compactionSignature(content as string, (encrypted as string | null | undefined) ?? null)) {
    return `compaction_signature_invalid: ${where}: the signature does not match the compaction block's content`;
  }
  return null;
}

/** The summary of the compaction block a conversation opens with (messages.0.content.0); "" when it has none. */
export function openingSummary(messages: readonly RequestMessage[]): string {
  const first = messages[0];
  const block = first?.role === "assistant" && typeof first.content !== "string" ? first.content[0] : undefined;
  return block?.type === "compaction" && typeof block.content === "string" ? block.content : "";
}

/**
 * The assistant messages that hold nothing but compaction blocks: each stands in for the messages it summarizes and
 * is none of the model's replies, so it takes no turn (its summary says how many it stands for).
 */
export function standIns(messages: readonly RequestMessage[]): number {
  return messages.filter(
    (message) =>
      message.role === "assistant" &&
      typeof message.content !== "string" &&
      message.content.length > 0 &&
      message.content.every((block) => block.type === "compaction"),
  ).length;
}

/** What a compaction reads: the conversation's text, an earlier compaction's summary by what it quotes alone. */
function conversationText(messages: readonly RequestMessage[]): string {
  return messages
    .map((message) =>
      contentText(
        typeof message.content === "string"
          ? message.content
          : message.content.map((block) =>
              block.type === "compaction" && typeof block.content === "string"
                ? { ...block, content: summaryBody(block.content) }
                : block,
            ),
      ),
    )
    .join("\n");
}

/**
 * The reply to a compaction request: one block, whose summary stands for the conversation's turns so far (`turn`:
 * its replies, and the turns of the summary it opens with), from the script it matches (for pacing), if any.
 */
export function compactionSelection(
  request: MessagesRequest,
  script: Script | null,
  turn: number,
  ids: IdPrefixes,
): Selection {
  // A script may have the compaction fail, as the API's does when its summary comes out malformed: a block with no
  // content, which a later request may send back and the API treats as nothing.
  const content = script?.compaction_fails ? null : summaryText(turn, conversationText(request.messages));
  const block: CompactionBlock = {
    type: "compaction",
    content,
    encrypted_content: null,
    signature: content === null ? null : compactionSignature(content, null),
  };
  return {
    script,
    turn,
    blocks: [block],
    stopReason: "compaction",
    stopSequence: null,
    usage: {},
    fault: null,
    messageId: `${ids.message}${summarySeed(request)}`,
    ttftMs: script?.ttft_ms,
    tokenDelayMs: script?.token_delay_ms,
  };
}

/** A compaction block streamed: empty at its start, its summary in one compaction_delta, then its signature. */
export function compactionRendering(block: CompactionBlock): {
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  chunks: number;
} {
  return {
    start: { type: "compaction", content: null, encrypted_content: null },
    deltas: [
      { type: "compaction_delta", content: block.content, encrypted_content: block.encrypted_content },
      ...(block.signature === null ? [] : [{ type: "signature_delta", signature: block.signature }]),
    ],
    chunks: chunkText(block.content ?? "").length,
  };
}

/** A compaction iteration's usage, as usage.iterations reports it (BetaCompactionIterationUsage). */
export interface CompactionIteration extends ReplyUsage {
  type: "compaction";
  cache_creation: CacheCreation;
}

/**
 * A compaction request's usage as reported: what it was billed (`tokens`, its writes split by TTL, all 5m when
 * caching is not billed) as its one iteration, and zero in the top-level counts (and their `cache_creation`).
 */
export function compactionUsage(
  tokens: ReplyUsage,
  creation: CacheCreation | undefined,
): { reported: ReplyUsage; creation: CacheCreation | undefined; iterations: CompactionIteration[] } {
  const split = creation ?? {
    ephemeral_5m_input_tokens: tokens.cache_creation_input_tokens,
    ephemeral_1h_input_tokens: 0,
  };
  return {
    reported: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    creation: creation ? { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 } : undefined,
    iterations: [{ type: "compaction", ...tokens, cache_creation: split }],
  };
}
