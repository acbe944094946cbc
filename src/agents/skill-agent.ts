// The skill agent (seed 002): a kind of agent beside the tool-use loop. It chooses from a catalog of SKILL.md skills,
// sees only their metadata until it asks for more (progressive disclosure within a token budget), and acts through
// typed actions (call_skill, run_command, mcp_call, ask_user, finish) decoded from a JSON ModelDecision each turn.
// Every model turn, decode, disclosure and action is a journaled step, so a replay after an eviction repeats none
// of them, and every phase is on record with seed 002's events. This file is the decision loop; its phases are
// skill-prompts.ts (what the model sees), skill-decoding.ts (its answer as a decision), skill-handoff.ts,
// skill-actions.ts and skill-synthesis.ts (the final answer).
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { ConfigError, LimitExceededError } from "../errors.ts";
import type { SkillCatalog } from "../skills/catalog.ts";
import { DECISION_PROTOCOL, type ModelDecision } from "../skills/decision.ts";
import { DEFAULT_CANDIDATE_LIMIT, prefilterSkills } from "../skills/prefilter.ts";
import type { SkillMetadata } from "../skills/skill.ts";
import { Agent } from "./agent.ts";
import type { AgentContext } from "./context.ts";
import type { AgentDefinition } from "./definition.ts";
import { parseDefinitionPart } from "./definition-errors.ts";
import { dryRunResult } from "./model-request.ts";
import { type AgentResult, failureResult, successResult } from "./result.ts";
import { runAction } from "./skill-actions.ts";
import { decodeTurn, transcriptFields } from "./skill-decoding.ts";
import { applySelfHandoff } from "./skill-handoff.ts";
import {
  decisionTurn,
  discloseStep,
  type Evidence,
  firstPrompt,
  nextPrompt,
  type PromptWindow,
  RETRY_HINT,
  refusals,
} from "./skill-prompts.ts";
import { synthesize } from "./skill-synthesis.ts";
import { extractText } from "./text.ts";

function integerFrom(min: number) {
  const message = `must be an integer ≥ ${min}`;
  return z.number(message).int(message).min(min, message);
}

/** A skill agent's own keys, beside an agent's definition. */
const SkillSettingsSchema = z.strictObject({
  /** The skills this agent may use, by name, or "all" (the default): bundled skills and R2 uploads. */
  skills: z.union([z.literal("all"), z.array(z.string()).readonly()]).default("all"),
  /** The model's context window, for the prompt budget (default 200,000 tokens). */
  maxContextTokens: integerFrom(1_000).default(200_000),
  /** Tokens kept free for the answer (default: the agent's maxTokens). */
  responseHeadroomTokens: integerFrom(1).optional(),
  /** Times a failed action is tried again before the loop moves on (default 1). */
  maxStepRetries: integerFrom(0).default(1),
  /** Skills the prefilter shows the model (default 8). */
  candidateLimit: integerFrom(1).default(DEFAULT_CANDIDATE_LIMIT),
});

export type SkillAgentDefinition = AgentDefinition & z.input<typeof SkillSettingsSchema>;

interface CatalogSnapshot {
  skills: SkillMetadata[];
  files: Record<string, string>;
}

export class SkillAgent extends Agent {
  readonly skillNames: readonly string[] | "all";
  readonly maxContextTokens: number;
  readonly responseHeadroomTokens: number;
  readonly maxStepRetries: number;
  readonly candidateLimit: number;

  constructor(definition: SkillAgentDefinition) {
    const { skills, maxContextTokens, responseHeadroomTokens, maxStepRetries, candidateLimit, ...base } = definition;
    super(base);
    // The skill loop ends with its own synthesis, not the tool loop's final answer that a response_format checks.
    if (this.responseFormat) {
      throw new ConfigError(
        `Agent "${this.name}": responseFormat is for agents of the default tool loop, not skill agents.`,
      );
    }
    // The skill loop decodes each reply's text as a decision; searches inside its model calls are not part of it.
    if (this.webSearch) {
      throw new ConfigError(
        `Agent "${this.name}": webSearch is for agents of the default tool loop, not skill agents.`,
      );
    }
    const own = parseDefinitionPart(this.name, SkillSettingsSchema, {
      skills,
      maxContextTokens,
      responseHeadroomTokens,
      maxStepRetries,
      candidateLimit,
    });
    this.skillNames = own.skills;
    this.maxContextTokens = own.maxContextTokens;
    this.responseHeadroomTokens = own.responseHeadroomTokens ?? this.maxTokens;
    this.maxStepRetries = own.maxStepRetries;
    this.candidateLimit = own.candidateLimit;
  }

  override async execute(context: AgentContext): Promise<AgentResult> {
    const { runtime } = context;
    const catalog = await runtime.step("skill_catalog", () => this.loadCatalog(context));
    const candidates = await runtime.step("skill_prefilter", async () => {
      const found = prefilterSkills(context.input, catalog.skills, this.candidateLimit);
      runtime.emit("skill_prefilter_completed", { candidates: found, candidate_count: found.length });
      return found;
    });
    const system = `${this.systemPrompt}\n\n${DECISION_PROTOCOL}`;
    const messages: MessageParam[] = [{ role: "user", content: firstPrompt(context.input, candidates) }];
    runtime.recordMessage(0, messages[0] as MessageParam);
    if (context.dryRun) return dryRunResult(context, this.requestFor(context, messages, system));
    const promptWindow: PromptWindow = {
      maxContextTokens: this.maxContextTokens,
      responseHeadroomTokens: this.responseHeadroomTokens,
    };
    const disclosed = new Map<string, string>();
    const handoff = { handoffs: new Map<string, number>(), blocked: new Set<string>() };
    const disclosure = { files: catalog.files, system, messages, disclosed };
    let decodeFailures = 0;
    const maxTurns = context.config.limits.maxTurns;
    for (let turn = 1; turn <= maxTurns; turn++) {
      const { message: reply, budget } = await runtime.step(
        `turn_${turn}_model`,
        (info) =>
          decisionTurn(
            context,
            promptWindow,
            { turn, system, request: this.requestFor(context, messages, system) },
            info,
          ),
        { providerRetries: true },
      );
      const text = extractText(reply.content);
      messages.push({ role: "assistant", content: text || "(no text)" });
      runtime.recordMessage(messages.length - 1, messages.at(-1) as MessageParam);
      const shownPaths = [...disclosed.keys()];
      const decoded = await runtime.step(`turn_${turn}_decode`, async () => {
        const result = decodeTurn(context, turn, reply.content);
        runtime.annotateTranscript(turn, "decision_loop", transcriptFields(result, budget, shownPaths));
        return result;
      });
      const notes: string[] = [];
      let decision: ModelDecision;
      if (!decoded.ok) {
        decodeFailures++;
        if (decodeFailures < 2) {
          messages.push({
            role: "user",
            content: `Your answer could not be decoded (${decoded.error}). ${RETRY_HINT}`,
          });
          runtime.recordMessage(messages.length - 1, messages.at(-1) as MessageParam);
          continue;
        }
        // Twice in a row: the text is taken as the answer rather than spending turns on the format.
        decision = { selected_skill: null, reasoning_summary: "", required_disclosure_paths: [], planned_actions: [] };
        decision.planned_actions.push({ type: "finish", params: { result: text }, expected_output: null });
      } else {
        decodeFailures = 0;
        decision = decoded.decision;
      }
      const actions = await runtime.step(`turn_${turn}_plan`, async () =>
        applySelfHandoff(context, turn, decision, handoff),
      );
      if (handoff.blocked.size > 0) {
        notes.push(`Do not call_skill ${[...handoff.blocked].join(", ")} again: act, or finish.`);
      }
      if (decision.required_disclosure_paths.length > 0) {
        const shown = await discloseStep(context, promptWindow, {
          ...disclosure,
          turn,
          label: "files",
          paths: decision.required_disclosure_paths,
        });
        notes.push(...refusals(shown));
      }
      const results: Evidence[] = [];
      if (actions.some((a) => a.type !== "finish")) {
        await runtime.step(`turn_${turn}_invocation_started`, async () => {
          runtime.emit("skill_invocation_started", { turn_index: turn, selected_skill: decision.selected_skill });
        });
      }
      for (const [index, action] of actions.entries()) {
        const stepId = `step-${index + 1}`;
        if (action.type === "finish") {
          const answer = await runtime.step(
            `turn_${turn}_finish`,
            (info) =>
              synthesize(
                context,
                { turn, action, messages, request: (all) => this.requestFor(context, all, this.systemPrompt, []) },
                info,
              ),
            { providerRetries: true },
          );
          return successResult(answer, runtime.usage(), { turns: turn, selected_skill: decision.selected_skill });
        }
        if (action.type === "call_skill") {
          const name = String(action.params.skill_name);
          const shown = await discloseStep(context, promptWindow, {
            ...disclosure,
            turn,
            label: `skill-${index + 1}`,
            paths: [`${name}/SKILL.md`],
          });
          const ok = shown.paths.length > 0 || disclosed.has(`${name}/SKILL.md`);
          results.push({
            turn,
            step_id: stepId,
            type: action.type,
            status: ok ? "success" : "failed",
            summary: ok
              ? `Working with ${name}.${action.params.instructions ? ` Instructions: ${action.params.instructions}` : ""}`
              : `No skill "${name}" in the catalog.`,
          });
          continue;
        }
        results.push(
          await runAction(context, { turn, stepId, index, step: action, maxStepRetries: this.maxStepRetries }),
        );
      }
      if (results.length > 0) {
        await runtime.step(`turn_${turn}_invocation_finished`, async () => {
          runtime.emit("skill_invocation_finished", { turn_index: turn, step_results: results });
        });
      }
      messages.push({ role: "user", content: nextPrompt(turn, results, disclosed, messages, notes) });
      runtime.recordMessage(messages.length - 1, messages.at(-1) as MessageParam);
    }
    return failureResult(
      [
        new LimitExceededError(
          "max_turns",
          `max_turns limit reached (${maxTurns} model turns) before a finish action.`,
        ),
      ],
      runtime.usage(),
      { turns: maxTurns },
    );
  }

  /** The allowed skills' metadata and files, as this run will use them (journaled: a replay sees the same). */
  private async loadCatalog(context: AgentContext): Promise<CatalogSnapshot> {
    const catalog: SkillCatalog = await context.skills();
    const allowed = catalog.list().filter((s) => this.skillNames === "all" || this.skillNames.includes(s.name));
    const missing = this.skillNames === "all" ? [] : this.skillNames.filter((n) => !catalog.get(n));
    if (missing.length > 0) {
      throw new ConfigError(`Agent "${this.name}" names skills the catalog does not have: ${missing.join(", ")}.`);
    }
    const files: Record<string, string> = {};
    for (const skill of allowed) Object.assign(files, catalog.get(skill.name)?.files ?? {});
    context.runtime.emit("skill_catalog_loaded", {
      skills_count: allowed.length,
      skills_dir: "skills/",
      skills: allowed.map((s) => ({ name: s.name, source: s.source, files: s.files.length })),
      skipped: catalog.skipped,
    });
    return { skills: allowed, files };
  }
}
