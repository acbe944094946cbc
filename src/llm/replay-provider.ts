// A replay's model (POST /v1/tasks/:id/replay, src/tasks/replay.ts): each call answers with the recorded task's
// response for that turn instead of calling a model, streamed as the Messages API streams it, so the run records
// and emits it like any other. Which recorded response a call gets is read from the request itself (how many
// assistant turns its conversation already holds), so a replay evicted mid-run resumes on the right one. A replayed
// call costs nothing: its usage is zero tokens.
import type {
  ContentBlock,
  ContentBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageParam,
  RawMessageStreamEvent,
} from "@anthropic-ai/sdk/resources/messages";
import type { AgentMessage } from "../contracts/runtime.ts";
import { ReplayExhaustedError } from "../errors.ts";
import type { ModelProvider, ProviderName, StreamOptions } from "./provider.ts";

const NO_USAGE = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  server_tool_use: null,
  service_tier: null,
  cache_creation: null,
  inference_geo: null,
};

export class ReplayProvider implements ModelProvider {
  readonly name: ProviderName;
  private readonly recordedTask: string;
  private readonly responses: readonly MessageParam[];

  constructor(options: { name: ProviderName; recordedTask: string; responses: readonly MessageParam[] }) {
    this.name = options.name;
    this.recordedTask = options.recordedTask;
    this.responses = options.responses;
  }

  async *stream(params: MessageCreateParamsBase, options: StreamOptions): AsyncGenerator<AgentMessage, Message> {
    const turn = params.messages.filter((m) => m.role === "assistant").length;
    const recorded = this.responses[turn];
    if (!recorded) {
      throw new ReplayExhaustedError(
        `The replayed agent asked for model call ${turn + 1}; task ${this.recordedTask} recorded ${this.responses.length}.`,
      );
    }
    if (options.signal.aborted) throw options.signal.reason;
    const content = blocksOf(recorded.content);
    const message: Message = {
      id: `msg_replay_${this.recordedTask.replaceAll("-", "")}_${turn + 1}`,
      type: "message",
      role: "assistant",
      model: params.model,
      content,
      stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: NO_USAGE,
      container: null,
    } as Message;
    for (const event of streamOf(message)) yield { type: "stream_event", event };
    yield { type: "assistant", message, request_id: null };
    return message;
  }
}

/** A recorded message's content as response blocks (a string is one text block). */
function blocksOf(content: MessageParam["content"]): ContentBlock[] {
  const blocks: ContentBlockParam[] = typeof content === "string" ? [{ type: "text", text: content }] : content;
  return blocks.map((block) => {
    if (block.type === "text") return { type: "text", text: block.text, citations: null } as ContentBlock;
    return { ...block } as unknown as ContentBlock;
  });
}

/** The stream a Messages API call would have sent for `message`: text and tool input as deltas. */
function* streamOf(message: Message): Generator<RawMessageStreamEvent> {
  yield { type: "message_start", message: { ...message, content: [], stop_reason: null } } as RawMessageStreamEvent;
  for (const [index, block] of message.content.entries()) {
    if (block.type === "text") {
      yield { type: "content_block_start", index, content_block: { ...block, text: "" } } as RawMessageStreamEvent;
      yield { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } };
    } else if (block.type === "tool_use") {
      yield { type: "content_block_start", index, content_block: { ...block, input: {} } } as RawMessageStreamEvent;
      const json = JSON.stringify(block.input ?? {});
      yield { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json } };
    } else if (block.type === "thinking") {
      yield {
        type: "content_block_start",
        index,
        content_block: { ...block, thinking: "", signature: "" },
      } as RawMessageStreamEvent;
      yield { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } };
      yield { type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } };
    } else {
      yield { type: "content_block_start", index, content_block: block } as RawMessageStreamEvent;
    }
    yield { type: "content_block_stop", index };
  }
  yield {
    type: "message_delta",
    delta: { stop_reason: message.stop_reason, stop_sequence: null, container: null },
    usage: { output_tokens: 0, input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  } as RawMessageStreamEvent;
  yield { type: "message_stop" };
}
