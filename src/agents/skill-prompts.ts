// What a skill agent's model sees (seed 002 prompt composition and progressive disclosure): the first prompt with
// the prefiltered skills; each decision turn's token budget and prompt hash, on record before the call; skill files
// loaded into the conversation within the tokens left for them; and the next prompt with the turn's results, the
// files disclosed since, and notes.
import type { Message, MessageCreateParamsBase, MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { StepInfo } from "../contracts/runtime.ts";
import { sha256Hex } from "../lib/sha256.ts";
import type { ActionStep } from "../skills/decision.ts";
import { computeBudget, type DisclosedContext, disclose, type TokenBudget } from "../skills/disclosure.ts";
import type { SkillCandidate } from "../skills/prefilter.ts";
import { estimateTokens } from "../skills/tokens.ts";
import type { AgentContext } from "./context.ts";
import { extractText } from "./text.ts";

/** The context window a skill agent's prompts are budgeted against. */
export interface PromptWindow {
  maxContextTokens: number;
  /** Tokens kept free for the answer. */
  responseHeadroomTokens: number;
}

/** What one action of a turn produced, as the next prompt reports it (seed 002 skill_invocation_finished). */
export interface Evidence {
  turn: number;
  step_id: string;
  type: ActionStep["type"];
  status: "success" | "failed" | "skipped";
  summary: string;
}

export const RETRY_HINT = "Answer with the JSON object only, as the system prompt describes.";

export function firstPrompt(task: string, candidates: readonly SkillCandidate[]): string {
  const skills = candidates.length
    ? candidates.map((c) => `- ${c.name}: ${c.description}`).join("\n")
    : "(no skills are available: act with the other actions, or finish)";
  return `# Task\n${task}\n\n# Skills you can use\n${skills}\n\nEach skill's instructions are in <name>/SKILL.md; ask for them with required_disclosure_paths or call_skill.`;
}

/** One decision turn: the prompt's budget and hash on record, then the model call. */
export async function decisionTurn(
  context: AgentContext,
  window: PromptWindow,
  call: { turn: number; system: string; request: MessageCreateParamsBase },
  info: StepInfo,
): Promise<{ message: Message; budget: TokenBudget }> {
  const { runtime } = context;
  const { turn, system, request } = call;
  const promptText = `${system}\n${request.messages.map((m) => extractText(m)).join("\n")}`;
  const promptTokens = estimateTokens(promptText);
  const budget = computeBudget({ ...window, promptTokens });
  runtime.emit("prompt_budget_computed", { turn_index: turn, ...budget }, info.spanId);
  runtime.emit(
    "prompt_composed",
    { turn_index: turn, prompt_hash: await sha256Hex(promptText), estimated_input_tokens: promptTokens },
    info.spanId,
  );
  let message: Message | undefined;
  for await (const item of runtime.streamModel(request, {
    turnIndex: turn,
    callSite: "decision_loop",
    attempt: info.attempt,
    spanId: info.spanId,
  })) {
    if (item.type === "assistant") message = item.message;
  }
  if (!message) throw new Error("The model stream ended without a message.");
  return { message, budget };
}

/**
 * Loads skill files into the conversation within the tokens left for disclosure (seed 002 progressive disclosure):
 * a journaled step, so a replay discloses the same. `disclosed` (path → content) gains what was loaded.
 */
export async function discloseStep(
  context: AgentContext,
  window: PromptWindow,
  disclosure: {
    files: Readonly<Record<string, string>>;
    turn: number;
    label: string;
    paths: readonly string[];
    system: string;
    messages: readonly MessageParam[];
    disclosed: Map<string, string>;
  },
): Promise<DisclosedContext> {
  const { runtime } = context;
  const { files, turn, label, paths, system, messages, disclosed } = disclosure;
  const result = await runtime.step(`turn_${turn}_disclose_${label}`, async () => {
    const used = estimateTokens(`${system}\n${messages.map((m) => extractText(m)).join("\n")}`);
    const budget = computeBudget({
      ...window,
      promptTokens: used + [...disclosed.values()].reduce((sum, c) => sum + estimateTokens(c), 0),
    });
    const lookup = { file: (path: string) => files[path] };
    const shown = disclose(
      lookup,
      paths,
      budget.allocated_disclosure_tokens,
      label.startsWith("skill") ? "skill_instructions" : "skill_files",
      new Set(disclosed.keys()),
    );
    runtime.emit("skill_disclosure_loaded", {
      turn_index: turn,
      stage: shown.stage,
      paths: shown.paths,
      total_bytes: shown.total_bytes,
      total_tokens: shown.total_tokens,
      refused: shown.refused,
    });
    return shown;
  });
  for (const item of result.items) disclosed.set(item.path, item.content);
  return result;
}

/** Why requested files were not shown, as notes for the next prompt. */
export function refusals(context: DisclosedContext): string[] {
  return context.refused.map((r) =>
    r.reason === "unknown_path"
      ? `${r.path} is not a file of an available skill.`
      : r.reason === "over_budget"
        ? `${r.path} did not fit in the prompt budget.`
        : `${r.path} is already shown above.`,
  );
}

/** The prompt after a turn: its results, the skill files disclosed since the conversation last showed them, notes. */
export function nextPrompt(
  turn: number,
  results: readonly Evidence[],
  disclosed: ReadonlyMap<string, string>,
  messages: readonly MessageParam[],
  notes: readonly string[],
): string {
  const shown = messages.map((m) => extractText(m)).join("\n");
  const unseen = [...disclosed.entries()].filter(([path]) => !shown.includes(`## ${path}\n`));
  const parts: string[] = [];
  if (results.length > 0) {
    parts.push(
      `# Results of turn ${turn}\n${results.map((r) => `## ${r.step_id} ${r.type}: ${r.status}\n${r.summary}`).join("\n\n")}`,
    );
  }
  if (unseen.length > 0) {
    parts.push(`# Skill files\n${unseen.map(([path, content]) => `## ${path}\n${content}`).join("\n\n")}`);
  }
  if (notes.length > 0) parts.push(`# Note\n${notes.join("\n")}`);
  parts.push("Decide the next step.");
  return parts.join("\n\n");
}
