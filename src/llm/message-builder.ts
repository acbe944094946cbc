// Builds Messages API stream events and the final Message from another provider's stream: text, thinking and tool
// call pieces go in as they arrive, Anthropic-shaped events come out (message_start, content_block_start/delta/stop,
// message_delta, message_stop), so the runtime, transcripts and SSE clients see one format for every provider.
import type {
  ContentBlock,
  Message,
  MessageParam,
  RawMessageStreamEvent,
  StopReason,
  ToolUseBlock,
} from "@anthropic-ai/sdk/resources/messages";

type OpenBlock =
  | { kind: "text"; index: number; text: string }
  | { kind: "thinking"; index: number; thinking: string }
  | { kind: "tool_use"; index: number; id: string; name: string; json: string; input?: unknown };

/**
 * Tool use ids that are unique within a conversation. A call's id names the person's decision on it (its request_id),
 * its settled result and its MCP idempotency key, so an id a provider repeats (some OpenAI-compatible servers number
 * the calls of each response, "call_0") or leaves out must not name a second call: it is replaced by a fresh one.
 * The model turn is journaled with the ids it got, so a replay sees the same ones.
 */
export class ToolUseIds {
  private readonly used = new Set<string>();

  /** The ids the conversation so far has used. */
  constructor(messages: readonly MessageParam[]) {
    for (const message of messages) {
      if (message.role !== "assistant" || typeof message.content === "string") continue;
      for (const block of message.content) if (block.type === "tool_use") this.used.add(block.id);
    }
  }

  /** `candidate` if no call of the conversation has it yet, else a new id starting with `prefix`. */
  claim(candidate: string | null | undefined, prefix: string): string {
    const id =
      candidate && !this.used.has(candidate)
        ? candidate
        : `${prefix}${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
    this.used.add(id);
    return id;
  }
}

export class MessageBuilder {
  private readonly id: string;
  private readonly model: string;
  private readonly blocks: ContentBlock[] = [];
  private open: OpenBlock | null = null;
  private started = false;

  constructor(model: string, id: string) {
    this.model = model;
    this.id = id;
  }

  /**
   * message_start (the input tokens are often known only at the end; the final message has them all). Input is
   * Anthropic's: the plain input, apart from what was read from the provider's cache.
   */
  start(inputTokens = 0, cacheReadTokens = 0): RawMessageStreamEvent[] {
    if (this.started) return [];
    this.started = true;
    return [
      {
        type: "message_start",
        message: {
          id: this.id,
          type: "message",
          role: "assistant",
          model: this.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: usage({ input: inputTokens, output: 0, cacheRead: cacheReadTokens }),
        } as unknown as Message,
      },
    ];
  }

  text(piece: string): RawMessageStreamEvent[] {
    if (!piece) return [];
    const events = this.ensure("text");
    const block = this.open as Extract<OpenBlock, { kind: "text" }>;
    block.text += piece;
    events.push({ type: "content_block_delta", index: block.index, delta: { type: "text_delta", text: piece } });
    return events;
  }

  thinking(piece: string): RawMessageStreamEvent[] {
    if (!piece) return [];
    const events = this.ensure("thinking");
    const block = this.open as Extract<OpenBlock, { kind: "thinking" }>;
    block.thinking += piece;
    events.push({
      type: "content_block_delta",
      index: block.index,
      delta: { type: "thinking_delta", thinking: piece },
    } as RawMessageStreamEvent);
    return events;
  }

  /** A tool call begins; its arguments follow as JSON pieces (toolArguments) or whole (input). */
  toolStart(id: string, name: string, input?: unknown): RawMessageStreamEvent[] {
    const events = [...this.start(), ...this.close()];
    const index = this.blocks.length;
    this.open = { kind: "tool_use", index, id, name, json: "", ...(input !== undefined ? { input } : {}) };
    events.push({
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id, name, input: {} },
    } as RawMessageStreamEvent);
    if (input !== undefined) {
      const json = JSON.stringify(input);
      this.open.json = json;
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json } });
    }
    return events;
  }

  toolArguments(piece: string): RawMessageStreamEvent[] {
    if (!piece || this.open?.kind !== "tool_use") return [];
    this.open.json += piece;
    return [
      { type: "content_block_delta", index: this.open.index, delta: { type: "input_json_delta", partial_json: piece } },
    ];
  }

  /** Closes the last block and the message. */
  finish(stopReason: StopReason, tokens: Tokens): RawMessageStreamEvent[] {
    const events = [...this.start(), ...this.close()];
    this.stop = stopReason;
    this.tokens = tokens;
    events.push({
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: {
        output_tokens: tokens.output,
        input_tokens: tokens.input,
        cache_read_input_tokens: tokens.cacheRead ?? 0,
      },
    } as unknown as RawMessageStreamEvent);
    events.push({ type: "message_stop" });
    return events;
  }

  private stop: StopReason = "end_turn";
  private tokens: Tokens = { input: 0, output: 0 };

  message(): Message {
    return {
      id: this.id,
      type: "message",
      role: "assistant",
      model: this.model,
      content: this.blocks,
      stop_reason: this.stop,
      stop_sequence: null,
      usage: usage(this.tokens),
    } as unknown as Message;
  }

  /** Whether any tool call was made (a provider that reports "stop" with tool calls still means tool_use). */
  get hasToolUse(): boolean {
    return this.blocks.some((b) => b.type === "tool_use") || this.open?.kind === "tool_use";
  }

  private ensure(kind: "text" | "thinking"): RawMessageStreamEvent[] {
    const events = this.start();
    if (this.open?.kind === kind) return events;
    events.push(...this.close());
    const index = this.blocks.length;
    this.open = kind === "text" ? { kind, index, text: "" } : { kind, index, thinking: "" };
    events.push({
      type: "content_block_start",
      index,
      content_block:
        kind === "text"
          ? { type: "text", text: "", citations: null }
          : { type: "thinking", thinking: "", signature: "" },
    } as RawMessageStreamEvent);
    return events;
  }

  private close(): RawMessageStreamEvent[] {
    const block = this.open;
    if (!block) return [];
    this.open = null;
    if (block.kind === "text") this.blocks.push({ type: "text", text: block.text, citations: null } as ContentBlock);
    else if (block.kind === "thinking")
      this.blocks.push({ type: "thinking", thinking: block.thinking, signature: "" } as ContentBlock);
    else {
      let input: unknown = block.input ?? {};
      if (block.input === undefined && block.json.trim()) {
        try {
          input = JSON.parse(block.json);
        } catch {
          // A provider that sent broken arguments: the model gets an error from the tool, not a crash here.
          input = { _unparsed_arguments: block.json };
        }
      }
      this.blocks.push({ type: "tool_use", id: block.id, name: block.name, input } as ToolUseBlock);
    }
    return [{ type: "content_block_stop", index: block.index }];
  }
}

/**
 * A call's tokens in Anthropic's terms: `input` is the plain input only. OpenAI's prompt_tokens and Gemini's
 * promptTokenCount include what they read from their caches, so their providers pass the total less the cached
 * part as `input` and that part as `cacheRead` (billed at the cache price, not the full one).
 */
export interface Tokens {
  input: number;
  output: number;
  cacheRead?: number;
}

/** Tokens from a provider's prompt total (cached included) and its cached part. */
export function tokensOf(promptTotal: number, cached: number, output: number): Tokens {
  const cacheRead = Math.min(Math.max(cached, 0), promptTotal);
  return { input: promptTotal - cacheRead, output, cacheRead };
}

function usage(tokens: Tokens) {
  return {
    input_tokens: tokens.input,
    output_tokens: tokens.output,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: tokens.cacheRead ?? 0,
    cache_creation: null,
    server_tool_use: null,
    service_tier: null,
  };
}

/** The text of a Messages API content value (string, or text blocks). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b): b is { type: "text"; text: string } => typeof b === "object" && b !== null && b.type === "text")
    .map((b) => b.text)
    .join("\n");
}
