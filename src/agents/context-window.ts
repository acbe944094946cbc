// A conversation that never outgrows the model's context window (docs/compaction.md). Before each model turn the loop
// asks how large the prompt now is: the last call's reported input plus an estimate of what was added since. Past the
// agent's compact_at share of the room for the prompt (the window less the answer's max_tokens), the conversation is
// compacted in one step down to its compact_to share, so the cached prefix changes once per compaction: old tool
// results become notes first, and if that is not enough the earlier turns become a summary, written by the agent's
// own model in calls of their own (budgeted and billed like any call, each bounded to fit the window). A provider's
// "prompt is too long" forces one compaction and the call is tried again. Each compaction is a journaled step with
// its context_compacted event, so a replay after an eviction neither loses it nor makes it twice; the conversation,
// the event log and the run bundle keep everything. The pure part is src/agents/compaction.ts.
import type { Message, MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { modelFacts } from "../config/models.ts";
import type { StepInfo } from "../contracts/runtime.ts";
import { ProviderError } from "../errors.ts";
import { anthropicCompaction } from "./anthropic-compaction.ts";
import {
  CONTEXT_VIEW_KEY,
  type ContextView,
  chunksOf,
  clearedToolResults,
  compactedHead,
  contextOf,
  firstText,
  holdsCompaction,
  KEEP_RECENT_MESSAGES,
  SUMMARY_MAX_TOKENS,
  SUMMARY_SYSTEM,
  type Summarizer,
  summaryCut,
  summaryHead,
  tokensOf,
  toldWindow,
  transcriptOf,
} from "./compaction.ts";
import type { AgentContext } from "./context.ts";
import { extractText } from "./text.ts";

/** An agent's window and marks (its contextWindow), and its answers' max_tokens. */
export interface WindowSettings {
  tokens: number | null;
  compactAt: number;
  compactTo: number;
  maxTokens: number;
  /** Who writes a summary (docs/compaction.md); absent: outpost. */
  summarizer?: Summarizer;
}

export const DEFAULT_COMPACT_AT = 0.75;
export const DEFAULT_COMPACT_TO = 0.5;

type Reason = "threshold" | "prompt_too_long";
type Request = (messages: MessageParam[]) => unknown;

/** What a compaction step records: the view from then on, and the figures its event reported. */
interface Compaction {
  view: ContextView;
  tokens_after: number;
}

/** Whether `error` is a provider's refusal of a prompt past the model's window. */
export function promptTooLong(error: unknown): error is ProviderError {
  return error instanceof ProviderError && error.code === "context_window_exceeded";
}

export class ContextWindow {
  private readonly context: AgentContext;
  /** Tokens a prompt may take: the window less the answer's max_tokens. */
  private room: number;
  private readonly compactAt: number;
  private readonly compactTo: number;
  private readonly maxTokens: number;
  private readonly summarizer: Summarizer;
  private view: ContextView | null;
  /** The last model call's prompt as the provider counted it, and how many messages it was sent. */
  private last: { tokens: number; count: number } | null = null;
  /** The turns whose call was refused as too long and compacted for: one forced compaction a turn. */
  private readonly forced = new Set<number>();

  constructor(context: AgentContext, settings: WindowSettings, start: readonly MessageParam[]) {
    this.context = context;
    const window = settings.tokens ?? modelFacts(context.config.model).contextWindow;
    this.room = Math.max(1024, window - settings.maxTokens);
    this.compactAt = settings.compactAt;
    this.compactTo = settings.compactTo;
    this.maxTokens = settings.maxTokens;
    this.summarizer = settings.summarizer ?? "outpost";
    // A session's next turn goes on from the view its last turn ended with; a replay of that turn (which starts
    // shorter than the conversation it stored) and a fork (a task of its own) start from the whole conversation.
    // A view that opens with the Messages API's block is only sent back to it (an agent since moved to the other
    // summarizer, or to another provider, starts from the whole conversation and compacts anew).
    const stored = context.runtime.taskState.get(CONTEXT_VIEW_KEY);
    const head = (stored?.head ?? []) as MessageParam[];
    const usable = this.summarizer === "anthropic" || !holdsCompaction(head);
    this.view =
      stored && usable && stored.conversation_length <= start.length && stored.through <= start.length
        ? { through: stored.through, head }
        : null;
  }

  /** What the model is sent of the conversation. */
  messages(conversation: readonly MessageParam[]): MessageParam[] {
    return contextOf(conversation, this.view);
  }

  /** A model turn answered: its reported prompt anchors the next estimate. */
  observe(reply: Message, sent: readonly MessageParam[]): void {
    const u = reply.usage;
    const tokens = u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
    this.last = { tokens, count: sent.length };
  }

  /**
   * The prompt's size if `conversation` were sent now: the last call's reported prompt and an estimate of the
   * messages added since (only they are measured, so a turn's estimate does not grow with the conversation); before
   * any call, an estimate of the whole request, its system prompt and tools included.
   */
  estimate(conversation: readonly MessageParam[], request: Request): number {
    const sent = this.messages(conversation);
    if (this.last) return this.last.tokens + tokensOf(sent.slice(this.last.count));
    return tokensOf(request(sent));
  }

  /** Before a model turn: compacts when the prompt has passed the agent's compact_at share of the room. */
  async beforeTurn(conversation: readonly MessageParam[], turn: number, request: Request): Promise<void> {
    const tokens = this.estimate(conversation, request);
    if (tokens < this.compactAt * this.room) return;
    await this.compact(conversation, turn, "threshold", tokens, request);
  }

  /**
   * The turn's call was refused as too long: compacts once (the provider's figures, when it gave them, correct the
   * window) and says whether the call may be tried again.
   */
  async afterTooLong(
    conversation: readonly MessageParam[],
    turn: number,
    error: ProviderError,
    request: Request,
  ): Promise<boolean> {
    if (this.forced.has(turn)) return false;
    this.forced.add(turn);
    const told = toldWindow(error.message);
    if (told) this.room = Math.min(this.room, Math.max(1024, told.window - this.maxTokens));
    const tokens = Math.max(told?.tokens ?? 0, this.estimate(conversation, request), Math.ceil(this.room * 1.01));
    await this.compact(conversation, turn, "prompt_too_long", tokens, request);
    return true;
  }

  /** At the run's end: a session's next turn starts from this view. */
  remember(conversation: readonly MessageParam[]): void {
    if (!this.view) return;
    this.context.runtime.taskState.put(CONTEXT_VIEW_KEY, {
      through: this.view.through,
      head: this.view.head as never,
      conversation_length: conversation.length,
    });
  }

  private async compact(
    conversation: readonly MessageParam[],
    turn: number,
    reason: Reason,
    tokens: number,
    request: Request,
  ) {
    const name = `turn_${turn}_compaction${reason === "prompt_too_long" ? "_forced" : ""}`;
    const done = await this.context.runtime.step(name, (info) =>
      this.compaction(conversation, { turn, reason, tokens, request, step: name }, info),
    );
    this.view = done.view;
    this.last = { tokens: done.tokens_after, count: this.messages(conversation).length };
  }

  /** One compaction, as its step runs it: clear old tool results, and summarize if that is not enough. */
  private async compaction(
    conversation: readonly MessageParam[],
    at: { turn: number; reason: Reason; tokens: number; request: Request; step: string },
    info: StepInfo,
  ): Promise<Compaction> {
    const { turn, reason, tokens } = at;
    const before = this.messages(conversation);
    // The system prompt and the tools: what the estimate holds beyond the messages.
    const overhead = Math.max(0, tokens - tokensOf(before));
    const target = this.compactTo * this.room;
    const base = this.view?.through ?? 0;
    const headLength = this.view?.head.length ?? 0;
    // 1. Old tool results become notes; the latest messages stay as they are.
    const keepFrom = Math.max(base, conversation.length - KEEP_RECENT_MESSAGES);
    const cleared = clearedToolResults(before.slice(0, headLength + keepFrom - base));
    let view: ContextView = { through: keepFrom, head: cleared.messages };
    let after = overhead + tokensOf(contextOf(conversation, view));
    let summaryCalls = 0;
    let strategy: "clear_tool_results" | "summarize" | "anthropic_compaction" = "clear_tool_results";
    if (after > target || cleared.cleared === 0) {
      // 2. The earlier turns become a summary; the latest turns, from an assistant message on, stay as they are.
      const task = this.summarizer === "outpost" ? firstText(conversation) : null;
      const kept = task !== null && tokensOf(task) <= this.room * 0.1 ? task : null;
      const budget = target - overhead - SUMMARY_MAX_TOKENS - (kept ? tokensOf(kept) : 0);
      const cut = summaryCut(conversation, Math.max(base, 1), budget);
      if (cut > 0) {
        const summarized = before.slice(0, headLength + cut - base);
        // The Messages API's own summary opens the kept assistant message; if its compaction fails, Outpost's.
        const api =
          this.summarizer === "anthropic"
            ? await anthropicCompaction(this.context, { ...at, messages: summarized, room: this.room })
            : null;
        if (api?.block) {
          view = { through: cut + 1, head: compactedHead(api.block, conversation[cut] as MessageParam) };
          summaryCalls = api.calls;
          strategy = "anthropic_compaction";
        } else {
          // Its parts are numbered on from the API's, so no step or bundle file of either is named twice.
          const summary = await this.summarize(transcriptOf(summarized), turn, reason, (api?.calls ?? 0) + 1);
          summaryCalls = (api?.calls ?? 0) + summary.calls;
          view = { through: cut, head: summaryHead(kept, summary.text) };
          strategy = "summarize";
        }
        after = overhead + tokensOf(contextOf(conversation, view));
      }
    }
    this.context.runtime.emit(
      "context_compacted",
      {
        turn_index: turn,
        strategy,
        reason,
        tokens_before: tokens,
        tokens_after: after,
        messages_compacted: view.through,
        tool_results_cleared: strategy === "clear_tool_results" ? cleared.cleared : 0,
        summary_calls: summaryCalls,
      },
      info.spanId,
    );
    return { view, tokens_after: after };
  }

  /**
   * The summary of `transcript`, written by the agent's model: in parts of at most half the room each (the
   * summary so far goes with each part after the first), each part a model call and a step of its own.
   */
  private async summarize(
    transcript: string,
    turn: number,
    reason: Reason,
    firstPart = 1,
  ): Promise<{ text: string; calls: number }> {
    const { runtime, config } = this.context;
    const parts = chunksOf(transcript, Math.max(4000, Math.floor(this.room * 0.5 * 4)));
    let summary = "";
    for (const [index, part] of parts.entries()) {
      const prompt = summary
        ? `The summary of the conversation so far:\n${summary}\n\nThe conversation goes on:\n${part}`
        : part;
      const request: MessageCreateParamsBase = {
        model: config.model,
        max_tokens: SUMMARY_MAX_TOKENS,
        system: SUMMARY_SYSTEM,
        messages: [{ role: "user", content: prompt }],
      };
      const step = `turn_${turn}_compaction${reason === "prompt_too_long" ? "_forced" : ""}_part_${firstPart + index}`;
      summary = await runtime.step(
        step,
        async (info) => {
          let message: Message | undefined;
          const options = {
            turnIndex: turn,
            callSite: "context_compaction" as const,
            attempt: info.attempt,
            spanId: info.spanId,
            part: firstPart + index,
          };
          for await (const item of runtime.streamModel(request, options)) {
            if (item.type === "assistant") message = item.message;
          }
          return message ? extractText(message.content) : "";
        },
        { providerRetries: true },
      );
    }
    return { text: summary, calls: parts.length };
  }
}
