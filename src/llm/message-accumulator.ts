// A streamed Messages API response built up into its Message, from the raw events the SDK's Stream yields
// (`messages.create({stream: true})`). The SDK's MessageStream does the same behind an event emitter, an async queue
// and a snapshot copied on every delta; a run reads every event itself and needs the message once, at the end, so
// the provider iterates the raw stream and builds the message here. The events are never changed: what a consumer
// records is what the API sent. Tool inputs are concatenated and parsed once, when their block stops.
import { AnthropicError } from "@anthropic-ai/sdk";
import type { ContentBlock, Message, RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";

/** A content block while it streams: a tool's input arrives as JSON text, parsed when the block stops. */
type Building = { block: ContentBlock; json: string | null };

export class MessageAccumulator {
  private message: Message | null = null;
  private readonly blocks: Building[] = [];
  private stopped = false;

  add(event: RawMessageStreamEvent): void {
    switch (event.type) {
      case "message_start":
        if (this.message) throw new AnthropicError('Unexpected event order: "message_start" twice');
        this.message = { ...event.message, content: [], usage: { ...event.message.usage } };
        for (const block of event.message.content) this.blocks.push({ block: { ...block }, json: null });
        return;
      case "content_block_start": {
        const block = { ...event.content_block } as ContentBlock;
        const takesJson = block.type === "tool_use" || block.type === "server_tool_use";
        this.blocks[event.index] = { block, json: takesJson ? "" : null };
        return;
      }
      case "content_block_delta": {
        const building = this.blocks[event.index];
        if (!building) return;
        const { block } = building;
        const { delta } = event;
        if (delta.type === "text_delta" && block.type === "text") block.text = (block.text ?? "") + delta.text;
        else if (delta.type === "citations_delta" && block.type === "text") {
          block.citations = [...(block.citations ?? []), delta.citation];
        } else if (delta.type === "input_json_delta" && building.json !== null) building.json += delta.partial_json;
        else if (delta.type === "thinking_delta" && block.type === "thinking") block.thinking += delta.thinking;
        else if (delta.type === "signature_delta" && block.type === "thinking") block.signature = delta.signature;
        else compactionDelta(block, delta);
        return;
      }
      case "content_block_stop": {
        const building = this.blocks[event.index];
        if (building && building.json !== null && building.json !== "") {
          (building.block as { input: unknown }).input = JSON.parse(building.json);
          building.json = null;
        }
        return;
      }
      case "message_delta": {
        const message = this.message;
        if (!message) return;
        message.stop_reason = event.delta.stop_reason;
        message.stop_sequence = event.delta.stop_sequence;
        if ("stop_details" in event.delta) {
          (message as { stop_details?: unknown }).stop_details = (
            event.delta as { stop_details?: unknown }
          ).stop_details;
        }
        if (event.delta.container != null) message.container = event.delta.container;
        const { usage } = event;
        // Running totals: output_tokens always; the others only when present, and they replace, never add.
        message.usage.output_tokens = usage.output_tokens;
        if (usage.input_tokens != null) message.usage.input_tokens = usage.input_tokens;
        if (usage.cache_creation_input_tokens != null) {
          message.usage.cache_creation_input_tokens = usage.cache_creation_input_tokens;
        }
        if (usage.cache_read_input_tokens != null)
          message.usage.cache_read_input_tokens = usage.cache_read_input_tokens;
        if (usage.server_tool_use != null) message.usage.server_tool_use = usage.server_tool_use;
        // A compaction's tokens are reported here, not in the fields above (src/llm/anthropic-compaction.ts).
        const iterations = (usage as { iterations?: unknown }).iterations;
        if (iterations != null) (message.usage as { iterations?: unknown }).iterations = iterations;
        if (usage.output_tokens_details != null) {
          (message.usage as { output_tokens_details?: unknown }).output_tokens_details = usage.output_tokens_details;
        }
        return;
      }
      case "message_stop":
        this.stopped = true;
        return;
    }
  }

  /** The message, once `message_stop` has arrived; an error like the SDK's when the stream ended without it. */
  final(): Message {
    if (!this.message || !this.stopped) {
      throw new AnthropicError("stream ended without producing a Message with role=assistant");
    }
    return { ...this.message, content: this.blocks.map((b) => b.block) };
  }
}

/**
 * A delta of the Messages API's compaction block (its beta compaction request, src/agents/anthropic-compaction.ts):
 * `compaction_delta` carries the block's final content (null: the compaction failed), and its signature comes as a
 * `signature_delta`. The block is sent back exactly as built here, so nothing else touches it.
 */
function compactionDelta(block: ContentBlock, delta: unknown): void {
  const target = block as unknown as Record<string, unknown>;
  const change = delta as Record<string, unknown>;
  if (target.type !== "compaction") return;
  if (change.type === "compaction_delta") {
    target.content = change.content ?? null;
    if ("encrypted_content" in change) target.encrypted_content = change.encrypted_content;
  } else if (change.type === "signature_delta") target.signature = change.signature;
}
