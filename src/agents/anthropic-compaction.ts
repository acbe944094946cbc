// The summary step written by the Messages API itself (an agent's contextWindow.summarizer anthropic): its explicit
// compaction request (`compaction: {type: "summarize"}`; its beta and billing: src/llm/anthropic-compaction.ts) over the agent's own request, so
// the system prompt and the tools are read from the prompt cache, answered with one signed `compaction` block. The
// block is the step's journaled result, stored and sent back exactly as it came: it opens the conversation in place
// of the messages it summarizes (src/agents/compaction.ts compactedHead). A stretch longer than half the room is
// compacted in parts, oldest first, each part's request opening with the block of the parts before it. A block that
// comes back without content is the API's failed compaction: the caller then summarizes with Outpost's own prompt.
import type { Message, MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import {
  type CompactionBlock,
  clearedToolResults,
  compactedHead,
  isCompactionBlock,
  stretchesOf,
  tokensOf,
} from "./compaction.ts";
import type { AgentContext } from "./context.ts";

export interface AnthropicCompactionInput {
  /** What is summarized, as the model was sent it: it ends before one of the model's messages. */
  messages: readonly MessageParam[];
  /** The agent's request over some messages (system prompt, tools, cache breakpoints). */
  request: (messages: MessageParam[]) => unknown;
  /** Tokens a prompt may take. */
  room: number;
  /** The step name the parts are named after, e.g. turn_7_compaction. */
  step: string;
  turn: number;
}

/** The block that stands for `input.messages`, and the calls it took; null block when the API's compaction failed. */
export async function anthropicCompaction(
  context: AgentContext,
  input: AnthropicCompactionInput,
): Promise<{ block: CompactionBlock | null; calls: number }> {
  const stretches = stretchesOf(input.messages, Math.max(1000, Math.floor(input.room * 0.5)));
  let block: CompactionBlock | null = null;
  for (const [index, stretch] of stretches.entries()) {
    // A part too large for the window on its own (a huge tool result) is sent with its tool results as notes.
    const fitted = tokensOf(stretch) > input.room * 0.9 ? clearedToolResults(stretch).messages : stretch;
    const [first, ...rest] = fitted as [MessageParam, ...MessageParam[]];
    const messages = block ? [...compactedHead(block, first), ...rest] : fitted;
    const params = compactionRequest(input.request(messages) as MessageCreateParamsBase);
    const part = index + 1;
    const answer: CompactionBlock | null = await context.runtime.step(
      `${input.step}_part_${part}`,
      async (info) => {
        let message: Message | undefined;
        const options = {
          turnIndex: input.turn,
          callSite: "context_compaction" as const,
          attempt: info.attempt,
          spanId: info.spanId,
          part,
        };
        for await (const item of context.runtime.streamModel(params, options)) {
          if (item.type === "assistant") message = item.message;
        }
        const found = message?.content.find(isCompactionBlock) as CompactionBlock | undefined;
        return found && typeof found.content === "string" && found.content !== "" ? found : null;
      },
      { providerRetries: true },
    );
    if (!answer) return { block: null, calls: part };
    block = answer;
  }
  return { block, calls: stretches.length };
}

/**
 * The agent's request made a compaction request: nothing is sampled after the block, so the settings of a sampled
 * answer (thinking, a forced tool) go; the system prompt and the tools stay, for the cache.
 */
function compactionRequest(request: MessageCreateParamsBase): MessageCreateParamsBase {
  const { thinking: _thinking, tool_choice: _choice, ...rest } = request;
  return { ...rest, compaction: { type: "summarize" } } as MessageCreateParamsBase;
}
