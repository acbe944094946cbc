// G-Eval style model-graded metrics (Liu et al. 2023, "G-Eval: NLG Evaluation using GPT-4 with Better Human
// Alignment", EMNLP): the grader model is given the criteria, the evaluation steps when the author wrote them, the
// case's input, the reference when there is one and the agent's response, reasons, and fills in a form: a score from
// 0 to 10 and its reasoning, as one JSON object. The paper weights the scores by their token probabilities; not every
// provider returns those, so the score is the one the grader writes, divided by 10. The call goes through the
// provider layer (src/llm/), so a grader may be any provider an agent may use.
import type { MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import type { ModelProvider } from "../llm/provider.ts";

/** One model call of the grader: its text, and the tokens it used (for the run's cost). */
export interface GraderAnswer {
  text: string;
  usage: { input_tokens: number; output_tokens: number };
}

/** What a model-graded metric needs: one call, system prompt and user message in, the answer's text out. */
export interface Grader {
  readonly model: string;
  ask(system: string, user: string): Promise<GraderAnswer>;
}

/** The grader's output budget: a score and a few sentences. */
const GRADER_MAX_TOKENS = 1_024;

/** A Grader calling `model` through `provider` (built with createProvider, src/llm/providers.ts). */
export function providerGrader(provider: ModelProvider, model: string, signal = new AbortController().signal): Grader {
  return {
    model,
    async ask(system, user) {
      const params: MessageCreateParamsBase = {
        model,
        max_tokens: GRADER_MAX_TOKENS,
        system,
        messages: [{ role: "user", content: user }],
      };
      const stream = provider.stream(params, { signal });
      let step = await stream.next();
      while (!step.done) step = await stream.next();
      const message = step.value;
      const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
      return {
        text,
        usage: { input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens },
      };
    },
  };
}

export interface GEvalPrompt {
  criteria: string;
  steps: readonly string[] | undefined;
  input: string;
  reference: string | undefined;
  response: string;
}

/** The system prompt: the form the grader fills in. The criteria come first, so a test can recognise the grader. */
export function gEvalSystemPrompt(name: string, criteria: string, steps: readonly string[] | undefined): string {
  const stepText = steps?.length
    ? `\n\nEvaluation steps:\n${steps.map((step, i) => `${i + 1}. ${step}`).join("\n")}`
    : "\n\nFirst reason step by step about how well the response meets the criteria.";
  return (
    `You grade an AI agent's response for the metric "${name}".\n\nCriteria:\n${criteria}${stepText}\n\n` +
    "Then answer with one JSON object and nothing else: " +
    '{"score": <a number from 0 (does not meet the criteria) to 10 (fully meets them)>, "reasoning": "<why, in a few sentences>"}'
  );
}

/** The user message: what is graded. */
export function gEvalUserMessage(prompt: Omit<GEvalPrompt, "criteria" | "steps">): string {
  return [
    `Input:\n${prompt.input}`,
    ...(prompt.reference === undefined ? [] : [`Expected output:\n${prompt.reference}`]),
    `Response:\n${prompt.response}`,
  ].join("\n\n");
}

const GraderVerdictSchema = z.object({
  score: z.number().min(0).max(10),
  reasoning: z.string(),
});
export type GraderVerdict = z.output<typeof GraderVerdictSchema>;

/**
 * The grader's verdict read from its answer: the JSON object alone, in a code fence, or else the first object in the
 * text that is a verdict (a model may write its reasoning before it, with braces in it, or a stray brace after it):
 * from each "{" in turn, the object it opens (strings and nesting followed to its closing "}") is read. Null when no
 * object with a score from 0 to 10 and a reasoning is there.
 */
export function parseVerdict(text: string): GraderVerdict | null {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)\n\s*```/.exec(text)?.[1];
  for (const candidate of [text.trim(), fenced]) {
    const verdict = candidate === undefined ? null : verdictOf(candidate);
    if (verdict) return verdict;
  }
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    const end = closingBrace(text, start);
    if (end === -1) continue;
    const verdict = verdictOf(text.slice(start, end + 1));
    if (verdict) return verdict;
  }
  return null;
}

function verdictOf(candidate: string): GraderVerdict | null {
  try {
    const parsed = GraderVerdictSchema.safeParse(JSON.parse(candidate));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // Not JSON.
  }
}

/** The index of the "}" closing the "{" at `start` (braces inside JSON strings skipped), or -1. */
function closingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return i;
  }
  return -1;
}
