// The Messages API's compaction on the wire (beta): the beta its requests name, which requests need it, and what a
// call that compacted is billed. Its compaction request (src/agents/anthropic-compaction.ts) and every later request
// whose conversation opens with the signed block it returned carry the beta; without it the API refuses the field
// and the block. The usage of a compaction is reported in `usage.iterations`, and a `compaction` iteration's
// tokens are not in the top-level fields: a call is billed the top-level usage plus its compaction iterations.
import type { MessageCreateParamsBase, Usage } from "@anthropic-ai/sdk/resources/messages";

export const COMPACTION_BETA = "compact-2026-09-04";

/** Whether a request asks for a compaction or sends a compaction block back. */
export function needsCompactionBeta(params: MessageCreateParamsBase): boolean {
  if ((params as { compaction?: unknown }).compaction != null) return true;
  return params.messages.some(
    (m) => typeof m.content !== "string" && m.content.some((b) => (b as { type: string }).type === "compaction"),
  );
}

/** `headers` with `beta` added to their anthropic-beta list (the betas already named are kept). */
export function withBetaHeader(headers: Record<string, string> | undefined, beta: string): Record<string, string> {
  const named = (headers?.["anthropic-beta"] ?? "")
    .split(",")
    .map((b) => b.trim())
    .filter((b) => b !== "" && b !== beta);
  return { ...headers, "anthropic-beta": [...named, beta].join(",") };
}

/** The token fields of a usage, top-level or one iteration's. */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** Of the cache writes, those at the 1-hour TTL. */
  cache_creation_1h_input_tokens: number;
}

interface IterationUsage {
  type?: unknown;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_1h_input_tokens?: number | null } | null;
}

/** What a call is billed: its top-level usage and the compaction iterations it reports beside it. */
export function billedTokens(usage: Usage): TokenUsage {
  const total: TokenUsage = {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
    cache_creation_1h_input_tokens: usage.cache_creation?.ephemeral_1h_input_tokens ?? 0,
  };
  const iterations = (usage as { iterations?: IterationUsage[] | null }).iterations ?? [];
  for (const iteration of iterations) {
    if (iteration.type !== "compaction") continue;
    total.input_tokens += iteration.input_tokens ?? 0;
    total.output_tokens += iteration.output_tokens ?? 0;
    total.cache_creation_input_tokens += iteration.cache_creation_input_tokens ?? 0;
    total.cache_read_input_tokens += iteration.cache_read_input_tokens ?? 0;
    total.cache_creation_1h_input_tokens += iteration.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  }
  return total;
}
