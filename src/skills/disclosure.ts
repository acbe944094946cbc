// Progressive disclosure (seed 002 TokenBudget, DisclosedContext, event skill_disclosure_loaded): the model first
// sees only the candidates' metadata; the paths it then asks for (required_disclosure_paths: a skill's SKILL.md, or
// files beside it) are loaded into the prompt within the tokens left for disclosure, in the order asked.
import type { SkillCatalog } from "./catalog.ts";
import { estimateTokens, fitToTokens } from "./tokens.ts";

/** Seed 002 LlmTranscriptBudget / TokenBudget. */
export interface TokenBudget {
  max_context_tokens: number;
  response_headroom_tokens: number;
  allocated_prompt_tokens: number;
  allocated_disclosure_tokens: number;
}

/** The model's context split: the response's headroom first, then the base prompt, and what remains for skills. */
export function computeBudget(options: {
  maxContextTokens: number;
  responseHeadroomTokens: number;
  promptTokens: number;
}): TokenBudget {
  const available = Math.max(0, options.maxContextTokens - options.responseHeadroomTokens);
  const prompt = Math.min(options.promptTokens, available);
  return {
    max_context_tokens: options.maxContextTokens,
    response_headroom_tokens: options.responseHeadroomTokens,
    allocated_prompt_tokens: prompt,
    allocated_disclosure_tokens: available - prompt,
  };
}

export interface DisclosedItem {
  path: string;
  content: string;
  tokens: number;
  /** True when the file was cut to fit the budget. */
  truncated: boolean;
}

/** Seed 002 DisclosedContext: what was loaded into the prompt, and what was not and why. */
export interface DisclosedContext {
  stage: "skill_instructions" | "skill_files";
  paths: string[];
  items: DisclosedItem[];
  total_bytes: number;
  total_tokens: number;
  refused: { path: string; reason: "unknown_path" | "over_budget" | "already_disclosed" }[];
}

/**
 * Loads `paths` from the catalog within `budgetTokens`. A file that does not fit whole is cut when at least a
 * quarter of it fits (and says so); otherwise it is refused as over budget. Paths already disclosed are skipped.
 */
export function disclose(
  catalog: Pick<SkillCatalog, "file">,
  paths: readonly string[],
  budgetTokens: number,
  stage: DisclosedContext["stage"],
  already: ReadonlySet<string> = new Set(),
): DisclosedContext {
  const items: DisclosedItem[] = [];
  const refused: DisclosedContext["refused"] = [];
  let left = budgetTokens;
  for (const path of [...new Set(paths)]) {
    if (already.has(path)) {
      refused.push({ path, reason: "already_disclosed" });
      continue;
    }
    const content = catalog.file(path);
    if (content === undefined) {
      refused.push({ path, reason: "unknown_path" });
      continue;
    }
    const tokens = estimateTokens(content);
    if (tokens <= left) {
      items.push({ path, content, tokens, truncated: false });
      left -= tokens;
      continue;
    }
    if (left >= Math.max(64, tokens / 4)) {
      const cut = fitToTokens(content, left);
      const cutTokens = estimateTokens(cut);
      items.push({ path, content: cut, tokens: cutTokens, truncated: true });
      left -= cutTokens;
      continue;
    }
    refused.push({ path, reason: "over_budget" });
  }
  return {
    stage,
    paths: items.map((i) => i.path),
    items,
    total_bytes: items.reduce((sum, i) => sum + new TextEncoder().encode(i.content).byteLength, 0),
    total_tokens: items.reduce((sum, i) => sum + i.tokens, 0),
    refused,
  };
}
