// How an agent writes its model calls, in one place: the Messages API request (Outpost's own format, whatever the
// provider), the assistant's reply turned back into request blocks for the next call, and seed 002's dry run, which
// saves the first request instead of sending it. The tool loop, the skill agent and the benchmark's floor all build
// their requests here, so they send the same thing.
import type {
  ContentBlock,
  ContentBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  Tool,
  WebSearchTool20250305,
} from "@anthropic-ai/sdk/resources/messages";
import { type PromptCachePolicy, withCacheBreakpoints, withPromptCacheKey } from "../llm/prompt-cache.ts";
import type { AgentContext } from "./context.ts";
import { type AgentResult, successResult } from "./result.ts";

export interface ModelRequestParts {
  model: string;
  /** The output token budget of this call (the agent's maxTokens). */
  maxTokens: number;
  /**
   * The sampling temperature (the agent's), or null for the provider's default. Carried beside the Messages API's
   * fields for the providers that take one (temperatureOf in src/llm/provider.ts).
   */
  temperature?: number | null;
  /** Seed 004 extended thinking: the call's thinking budget, or null. */
  thinkingBudget?: number | null;
  system: string;
  messages: MessageParam[];
  /** The tools the model may call; none are sent when there are none (the API refuses an empty list). */
  tools?: Tool[];
  /** Tools the provider runs itself (Anthropic's web search), offered after the tools Outpost runs. */
  serverTools?: WebSearchTool20250305[];
  /** The agent's prompt caching (src/llm/prompt-cache.ts): breakpoints unless null or absent. */
  promptCache?: PromptCachePolicy;
  /** An OpenAI-compatible call's prompt_cache_key, when the agent sends one. */
  cacheKey?: string | null;
}

/** The Messages API request of one model call. */
export function modelRequest(parts: ModelRequestParts): MessageCreateParamsBase {
  const tools = [...(parts.tools ?? []), ...(parts.serverTools ?? [])];
  const request: MessageCreateParamsBase = {
    model: parts.model,
    max_tokens: parts.maxTokens,
    ...(parts.temperature !== undefined && parts.temperature !== null ? { temperature: parts.temperature } : {}),
    ...(parts.thinkingBudget ? { thinking: { type: "enabled" as const, budget_tokens: parts.thinkingBudget } } : {}),
    system: parts.system,
    messages: alternating(parts.messages),
    ...(tools.length > 0 ? { tools } : {}),
  };
  const cached = parts.promptCache ? withCacheBreakpoints(request, parts.promptCache.ttl) : request;
  return parts.cacheKey ? withPromptCacheKey(cached, parts.cacheKey) : cached;
}

/**
 * Messages with consecutive ones of the same role joined, as the API requires roles to alternate. A conversation
 * holds two user messages in a row where a session's turn ended after its tool results (interrupted, or out of
 * turns) and the next message followed; the stored conversation keeps both as they were.
 */
export function alternating(messages: readonly MessageParam[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const message of messages) {
    const previous = out.at(-1);
    if (previous?.role === message.role) {
      out[out.length - 1] = { ...previous, content: [...blocksOf(previous), ...blocksOf(message)] } as MessageParam;
    } else out.push(message);
  }
  return out;
}

function blocksOf(message: MessageParam): ContentBlockParam[] {
  return typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
}

/** Response blocks as request blocks, so the assistant turn can be sent back to the model unchanged. */
export function toParams(content: readonly ContentBlock[]): ContentBlockParam[] {
  return content.map((block): ContentBlockParam => {
    switch (block.type) {
      case "text":
        // Citations (of web search results) go back with their text: the API reads their encrypted_index.
        return block.citations?.length
          ? { type: "text", text: block.text, citations: block.citations }
          : { type: "text", text: block.text };
      case "tool_use":
        return { type: "tool_use", id: block.id, name: block.name, input: block.input };
      case "thinking":
        return { type: "thinking", thinking: block.thinking, signature: block.signature };
      case "redacted_thinking":
        return { type: "redacted_thinking", data: block.data };
      default:
        // server_tool_use and web_search_tool_result (web search) among them: back exactly as they came, since the
        // API checks the results' encrypted_content.
        return block as unknown as ContentBlockParam;
    }
  });
}

/**
 * Seed 002 dry run: the prompt the first model call would send, saved as dry_run_prompt.txt in the run bundle; no
 * model is called, and the result says what was composed.
 */
export async function dryRunResult(context: AgentContext, request: MessageCreateParamsBase): Promise<AgentResult> {
  const text = JSON.stringify(request, null, 2);
  await context.runtime.step("dry_run_prompt", async () => {
    await context.runtime.artifact("dry_run_prompt.txt", text);
  });
  const tokens = Math.ceil(new TextEncoder().encode(text).byteLength / 4);
  return successResult(
    `Dry run: the prompt was composed (about ${tokens} tokens) and saved as dry_run_prompt.txt; no model was called.`,
    context.runtime.usage(),
    { dry_run: true, estimated_input_tokens: tokens },
  );
}
