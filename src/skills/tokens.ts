// Token estimates for budgeting prompts before they are sent (seed 002 prompt_estimated_tokens, TokenBudget). No
// tokenizer runs in the Worker: about four bytes of UTF-8 per token is close for English and code and errs high for
// most other scripts. Usage reported by the provider after a call is exact; these numbers only plan the prompt.
const encoder = new TextEncoder();

export function estimateTokens(text: string): number {
  if (!text) return 0;
  return Math.ceil(encoder.encode(text).byteLength / 4);
}

/** The longest prefix of `text` that fits in `tokens` by the same estimate, cut at a line break when one is near. */
export function fitToTokens(text: string, tokens: number): string {
  if (estimateTokens(text) <= tokens) return text;
  let cut = Math.max(0, tokens * 4);
  // Bytes to characters: shrink until the estimate fits (multi-byte text).
  while (cut > 0 && estimateTokens(text.slice(0, cut)) > tokens) cut = Math.floor(cut * 0.9);
  const slice = text.slice(0, cut);
  const lineBreak = slice.lastIndexOf("\n");
  return lineBreak > cut * 0.8 ? slice.slice(0, lineBreak) : slice;
}
