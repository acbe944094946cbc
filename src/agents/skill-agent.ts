// The skill agent (seed 002): a kind of agent beside the tool-use loop. It chooses from a catalog of SKILL.md skills,
// sees only their metadata until it asks for more (progressive disclosure within a token budget), and acts through
// typed actions (call_skill, run_command, mcp_call, ask_user, finish) decoded from a JSON ModelDecision each turn.
// Every model turn, decode, disclosure and action is a journaled step, so a replay after an eviction repeats none
// of them, and every phase is on record with seed 002's events.
import type { MessageParam, ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { SkillTranscriptFields, StepInfo } from "../contracts/runtime.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import { ConfigError, LimitExceededError } from "../errors.ts";
import { sha256Hex } from "../lib/sha256.ts";
import type { SkillCatalog } from "../skills/catalog.ts";
import {
  type ActionStep,
  classifyResponse,
  DECISION_PROTOCOL,
  type DecodeResult,
  decodeModelDecision,
  type ModelDecision,
} from "../skills/decision.ts";
import { computeBudget, type DisclosedContext, disclose, type TokenBudget } from "../skills/disclosure.ts";
import { DEFAULT_CANDIDATE_LIMIT, prefilterSkills, type SkillCandidate } from "../skills/prefilter.ts";
import type { SkillMetadata } from "../skills/skill.ts";
import { estimateTokens } from "../skills/tokens.ts";
import { Agent, type AgentDefinition, dryRunResult } from "./agent.ts";
import type { AgentContext } from "./context.ts";
import { type AgentResult, failureResult, successResult } from "./result.ts";
import { extractText } from "./text.ts";

export interface SkillAgentDefinition extends AgentDefinition {
  /** The skills this agent may use, by name, or "all" (the default): bundled skills and R2 uploads. */
  skills?: readonly string[] | "all";
  /** The model's context window, for the prompt budget (default 200,000 tokens). */
  maxContextTokens?: number;
  /** Tokens kept free for the answer (default: the agent's maxTokens). */
  responseHeadroomTokens?: number;
  /** Times a failed action is tried again before the loop moves on (default 1). */
  maxStepRetries?: number;
  /** Skills the prefilter shows the model (default 8). */
  candidateLimit?: number;
}

/** Calls of the same skill in a row before the loop steps in (seed 002 self-handoff). */
const SELF_HANDOFF_LIMIT = 2;
/** Characters of an action's output the next turn shows (the whole of it is in the run bundle). */
const EVIDENCE_CHARS = 4_000;
const PREVIEW_CHARS = 500;

interface CatalogSnapshot {
  skills: SkillMetadata[];
  files: Record<string, string>;
}

interface Evidence {
  turn: number;
  step_id: string;
  type: ActionStep["type"];
  status: "success" | "failed" | "skipped";
  summary: string;
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
    const positive = (value: number | undefined, name: string, fallback: number, min = 1) => {
      const v = value ?? fallback;
      if (!Number.isInteger(v) || v < min)
        throw new ConfigError(`Agent "${base.name}": ${name} must be an integer ≥ ${min}.`);
      return v;
    };
    this.skillNames = skills ?? "all";
    this.maxContextTokens = positive(maxContextTokens, "maxContextTokens", 200_000, 1_000);
    this.responseHeadroomTokens = positive(responseHeadroomTokens, "responseHeadroomTokens", this.maxTokens);
    this.maxStepRetries = positive(maxStepRetries, "maxStepRetries", 1, 0);
    this.candidateLimit = positive(candidateLimit, "candidateLimit", DEFAULT_CANDIDATE_LIMIT);
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
    if (context.dryRun) return dryRunResult(context, { ...this.requestFor(context, messages), system });
    const disclosed = new Map<string, string>();
    const handoffs = new Map<string, number>();
    const blocked = new Set<string>();
    let decodeFailures = 0;
    const maxTurns = context.config.limits.maxTurns;
    for (let turn = 1; turn <= maxTurns; turn++) {
      const { message: reply, budget } = await runtime.step(`turn_${turn}_model`, (info) =>
        this.decisionTurn(context, system, messages, turn, info),
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
        this.applySelfHandoff(context, turn, decision, handoffs, blocked),
      );
      if (blocked.size > 0) notes.push(`Do not call_skill ${[...blocked].join(", ")} again: act, or finish.`);
      if (decision.required_disclosure_paths.length > 0) {
        const context_ = await this.discloseStep(
          context,
          catalog,
          turn,
          "files",
          decision.required_disclosure_paths,
          system,
          messages,
          disclosed,
        );
        notes.push(...refusals(context_));
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
          const answer = await runtime.step(`turn_${turn}_finish`, (info) =>
            this.synthesize(context, turn, action, messages, info),
          );
          return successResult(answer, runtime.usage(), { turns: turn, selected_skill: decision.selected_skill });
        }
        if (action.type === "call_skill") {
          const name = String(action.params.skill_name);
          const shown = await this.discloseStep(
            context,
            catalog,
            turn,
            `skill-${index + 1}`,
            [`${name}/SKILL.md`],
            system,
            messages,
            disclosed,
          );
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
        results.push(await this.runAction(context, turn, stepId, index, action));
      }
      if (results.length > 0) {
        await runtime.step(`turn_${turn}_invocation_finished`, async () => {
          runtime.emit("skill_invocation_finished", { turn_index: turn, step_results: results });
        });
      }
      messages.push({ role: "user", content: nextPrompt(turn, results, disclosedSince(disclosed, messages), notes) });
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

  /** One decision turn: the prompt's budget and hash on record, then the model call. */
  private async decisionTurn(
    context: AgentContext,
    system: string,
    messages: MessageParam[],
    turn: number,
    info: StepInfo,
  ) {
    const { runtime } = context;
    const promptText = `${system}\n${messages.map((m) => messageText(m)).join("\n")}`;
    const promptTokens = estimateTokens(promptText);
    const budget = computeBudget({
      maxContextTokens: this.maxContextTokens,
      responseHeadroomTokens: this.responseHeadroomTokens,
      promptTokens,
    });
    runtime.emit("prompt_budget_computed", { turn_index: turn, ...budget }, info.spanId);
    runtime.emit(
      "prompt_composed",
      { turn_index: turn, prompt_hash: await sha256Hex(promptText), estimated_input_tokens: promptTokens },
      info.spanId,
    );
    const tools = context.tools.definitions();
    let message: import("@anthropic-ai/sdk/resources/messages").Message | undefined;
    for await (const item of runtime.streamModel(
      {
        model: context.config.model,
        max_tokens: this.maxTokens,
        system,
        messages,
        ...(tools.length > 0 ? { tools } : {}),
      },
      { turnIndex: turn, callSite: "decision_loop", attempt: info.attempt, spanId: info.spanId },
    )) {
      if (item.type === "assistant") message = item.message;
    }
    if (!message) throw new Error("The model stream ended without a message.");
    return { message, budget };
  }

  /** Loads skill files into the conversation within the tokens left for disclosure (seed 002 progressive disclosure). */
  private async discloseStep(
    context: AgentContext,
    catalog: CatalogSnapshot,
    turn: number,
    label: string,
    paths: readonly string[],
    system: string,
    messages: MessageParam[],
    disclosed: Map<string, string>,
  ): Promise<DisclosedContext> {
    const { runtime } = context;
    const result = await runtime.step(`turn_${turn}_disclose_${label}`, async () => {
      const used = estimateTokens(`${system}\n${messages.map((m) => messageText(m)).join("\n")}`);
      const budget = computeBudget({
        maxContextTokens: this.maxContextTokens,
        responseHeadroomTokens: this.responseHeadroomTokens,
        promptTokens: used + [...disclosed.values()].reduce((sum, c) => sum + estimateTokens(c), 0),
      });
      const lookup = { file: (path: string) => catalog.files[path] };
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

  /** Seed 002 self-handoff: a skill calling itself again and again is noticed, then constrained, then recovered. */
  private applySelfHandoff(
    context: AgentContext,
    turn: number,
    decision: ModelDecision,
    handoffs: Map<string, number>,
    blocked: Set<string>,
  ): ActionStep[] {
    const { runtime } = context;
    const skill = decision.selected_skill;
    const calls = decision.planned_actions.filter((a) => a.type === "call_skill" && a.params.skill_name === skill);
    const only = calls.length > 0 && decision.planned_actions.every((a) => a.type === "call_skill");
    if (!skill || !only) {
      if (skill) handoffs.set(skill, 0);
      return decision.planned_actions;
    }
    const count = (handoffs.get(skill) ?? 0) + 1;
    handoffs.set(skill, count);
    if (count < SELF_HANDOFF_LIMIT) return decision.planned_actions;
    runtime.emit("self_handoff_detected", { turn_index: turn, selected_skill: skill, count });
    if (!blocked.has(skill)) {
      blocked.add(skill);
      runtime.emit("self_handoff_constraint_applied", { turn_index: turn, blocked_skill: skill });
      return decision.planned_actions.filter((a) => a.type !== "call_skill");
    }
    // Constrained and still handing off to itself: finish with what the run has.
    const recovery: ActionStep[] = [
      { type: "finish", params: { summary: decision.reasoning_summary }, expected_output: null },
    ];
    runtime.emit("self_handoff_recovery_applied", {
      turn_index: turn,
      recovery_action_types: recovery.map((a) => a.type),
    });
    return recovery;
  }

  /** run_command, mcp_call or ask_user through the run's tools, tried again up to maxStepRetries when it fails. */
  private async runAction(
    context: AgentContext,
    turn: number,
    stepId: string,
    index: number,
    action: ActionStep,
  ): Promise<Evidence> {
    const { runtime } = context;
    let last: Evidence | undefined;
    for (let retry = 0; retry <= this.maxStepRetries; retry++) {
      const evidence = await runtime.step(`turn_${turn}_${stepId}_try_${retry}`, async (info) => {
        const use = toolUseFor(action, `toolu_skill_${turn}_${index + 1}_${retry}`);
        const result: ToolResult = use
          ? await context.tools.call(use, turn, info, index + 1)
          : { content: `Action ${action.type} is not supported here.`, is_error: true };
        const failed = result.is_error === true || /^exit code: [1-9]/.test(resultText(result));
        const status: Evidence["status"] = failed ? "failed" : "success";
        runtime.emit(
          "skill_step_executed",
          {
            turn_index: turn,
            step_id: stepId,
            type: action.type,
            status,
            retry_count: retry,
            command: action.type === "run_command" ? action.params.command : null,
            tool_name: action.type === "mcp_call" ? action.params.tool_name : null,
            output_preview: resultText(result).slice(0, PREVIEW_CHARS),
          },
          info.spanId,
        );
        // Asking a person is not retried: their answer is the answer.
        if (failed && retry < this.maxStepRetries && action.type !== "ask_user") {
          runtime.emit(
            "step_retry_scheduled",
            { turn_index: turn, step_id: stepId, retry_count: retry + 1 },
            info.spanId,
          );
        }
        return {
          turn,
          step_id: stepId,
          type: action.type,
          status,
          summary: resultText(result).slice(0, EVIDENCE_CHARS),
        };
      });
      last = evidence;
      if (evidence.status === "success" || action.type === "ask_user") break;
    }
    return last as Evidence;
  }

  /** Seed 002 final answer synthesis: its own call site; the finish action's text if the call fails. */
  private async synthesize(
    context: AgentContext,
    turn: number,
    action: ActionStep,
    messages: MessageParam[],
    info: StepInfo,
  ): Promise<string> {
    const { runtime } = context;
    const given = [action.params.result, action.params.summary, action.params.message].find(
      (v): v is string => typeof v === "string" && v.trim().length > 0,
    );
    const synthesisTurn = turn + 1;
    const evidenceItems = messages.filter((m) => m.role === "user").length - 1;
    runtime.emit(
      "final_answer_synthesis_started",
      { turn_index: synthesisTurn, evidence_items: evidenceItems },
      info.spanId,
    );
    const request = `${SYNTHESIS_PROMPT}${given ? `\n\nYour draft answer:\n${given}` : ""}`;
    await runtime.artifact(`artifacts/final_answer_prompt_turn_${synthesisTurn}.txt`, request);
    try {
      let message: import("@anthropic-ai/sdk/resources/messages").Message | undefined;
      for await (const item of runtime.streamModel(
        {
          model: context.config.model,
          max_tokens: this.maxTokens,
          system: this.systemPrompt,
          messages: [...messages, { role: "user", content: request }],
        },
        { turnIndex: synthesisTurn, callSite: "final_answer_synthesis", attempt: info.attempt, spanId: info.spanId },
      )) {
        if (item.type === "assistant") message = item.message;
      }
      const answer = message ? extractText(message.content).trim() : "";
      if (!answer) throw new Error("the synthesis call answered no text");
      runtime.emit(
        "final_answer_synthesis_completed",
        { turn_index: synthesisTurn, summary_preview: answer.slice(0, PREVIEW_CHARS) },
        info.spanId,
      );
      return answer;
    } catch (error) {
      if (runtime.signal.aborted || error instanceof LimitExceededError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      runtime.emit("final_answer_synthesis_failed", { turn_index: synthesisTurn, reason }, info.spanId);
      if (given) return given;
      throw error;
    }
  }
}

const RETRY_HINT = "Answer with the JSON object only, as the system prompt describes.";
const SYNTHESIS_PROMPT =
  "Write the final answer to the task from everything above: what you found and did. Answer the task directly; " +
  "do not describe the process or mention skills, JSON or actions.";

function decodeTurn(context: AgentContext, turn: number, content: readonly { type: string }[]): DecodeResult {
  const { runtime } = context;
  const text = extractText(content as never);
  const decoded = decodeModelDecision(text);
  const uses = content.filter((b): b is ToolUseBlock => b.type === "tool_use");
  if (!decoded.ok && uses.length > 0) {
    // The model called tools natively instead of answering with a decision: its calls become the plan.
    const actions = uses.map(nativeAction);
    runtime.emit("native_tool_fallback", {
      turn_index: turn,
      reason: `answered with ${uses.length} native tool call(s) instead of a decision (${decoded.error})`,
    });
    const fallback: DecodeResult = {
      ok: true,
      decision: {
        selected_skill: null,
        reasoning_summary: "",
        required_disclosure_paths: [],
        planned_actions: actions,
      },
      raw_action_types: uses.map((u) => u.name),
    };
    emitDecoded(context, turn, fallback);
    return fallback;
  }
  emitDecoded(context, turn, decoded);
  return decoded;
}

/** Seed 002 LlmTranscriptRecord's skill fields for a decision turn. */
function transcriptFields(decoded: DecodeResult, budget: TokenBudget, disclosedPaths: string[]): SkillTranscriptFields {
  if (!decoded.ok) {
    return {
      budget,
      disclosed_paths: disclosedPaths,
      decode_success: false,
      selected_skill: null,
      raw_action_types: decoded.raw_action_types,
      planned_action_types: [],
      required_disclosure_paths: [],
      response_kind: null,
      response_kind_reason: null,
      finish_summary: null,
      decode_error: decoded.error,
    };
  }
  const types = decoded.decision.planned_actions.map((a) => a.type);
  const kind = classifyResponse(types);
  const finish = decoded.decision.planned_actions.find((a) => a.type === "finish");
  const summary = finish
    ? [finish.params.summary, finish.params.result, finish.params.message].find((v) => typeof v === "string")
    : undefined;
  return {
    budget,
    disclosed_paths: disclosedPaths,
    decode_success: true,
    selected_skill: decoded.decision.selected_skill,
    raw_action_types: decoded.raw_action_types,
    planned_action_types: types,
    required_disclosure_paths: decoded.decision.required_disclosure_paths,
    response_kind: kind.kind,
    response_kind_reason: kind.reason,
    finish_summary: typeof summary === "string" ? summary : null,
    decode_error: null,
  };
}

function emitDecoded(context: AgentContext, turn: number, decoded: DecodeResult): void {
  if (!decoded.ok) {
    context.runtime.emit("llm_decision_decoded", {
      turn_index: turn,
      success: false,
      error: decoded.error,
      raw_action_types: decoded.raw_action_types,
    });
    return;
  }
  const types = decoded.decision.planned_actions.map((a) => a.type);
  const kind = classifyResponse(types);
  context.runtime.emit("llm_decision_decoded", {
    turn_index: turn,
    success: true,
    selected_skill: decoded.decision.selected_skill,
    reasoning_summary: decoded.decision.reasoning_summary,
    required_disclosure_paths: decoded.decision.required_disclosure_paths,
    planned_actions: decoded.decision.planned_actions,
    raw_action_types: decoded.raw_action_types,
    response_kind: kind.kind,
    response_kind_reason: kind.reason,
  });
}

function nativeAction(use: ToolUseBlock): ActionStep {
  const input = (use.input ?? {}) as Record<string, unknown>;
  if (use.name === "Bash")
    return { type: "run_command", params: { command: String(input.command ?? "") }, expected_output: null };
  if (use.name === "AskUser")
    return { type: "ask_user", params: { message: String(input.question ?? "") }, expected_output: null };
  return { type: "mcp_call", params: { tool_name: use.name, arguments: input }, expected_output: null };
}

/** The tool call that carries out an action (run_command → Bash, mcp_call → the MCP tool, ask_user → AskUser). */
function toolUseFor(action: ActionStep, id: string): ToolUseBlock | null {
  const block = (name: string, input: Record<string, unknown>): ToolUseBlock =>
    ({ type: "tool_use", id, name, input }) as ToolUseBlock;
  switch (action.type) {
    case "run_command":
      return block("Bash", { command: action.params.command });
    case "mcp_call":
      return block(String(action.params.tool_name), (action.params.arguments as Record<string, unknown>) ?? {});
    case "ask_user":
      return block("AskUser", { question: action.params.message });
    default:
      return null;
  }
}

function resultText(result: ToolResult): string {
  if (typeof result.content === "string") return result.content;
  return result.content.map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n");
}

function messageText(message: MessageParam): string {
  return typeof message.content === "string" ? message.content : extractText(message.content as never);
}

function firstPrompt(task: string, candidates: readonly SkillCandidate[]): string {
  const skills = candidates.length
    ? candidates.map((c) => `- ${c.name}: ${c.description}`).join("\n")
    : "(no skills are available: act with the other actions, or finish)";
  return `# Task\n${task}\n\n# Skills you can use\n${skills}\n\nEach skill's instructions are in <name>/SKILL.md; ask for them with required_disclosure_paths or call_skill.`;
}

/** The paths disclosed since the conversation last showed them, with their content. */
function disclosedSince(disclosed: Map<string, string>, messages: readonly MessageParam[]): [string, string][] {
  const shown = messages.map((m) => messageText(m)).join("\n");
  return [...disclosed.entries()].filter(([path]) => !shown.includes(`## ${path}\n`));
}

function nextPrompt(
  turn: number,
  results: readonly Evidence[],
  disclosed: [string, string][],
  notes: readonly string[],
): string {
  const parts: string[] = [];
  if (results.length > 0) {
    parts.push(
      `# Results of turn ${turn}\n${results.map((r) => `## ${r.step_id} ${r.type}: ${r.status}\n${r.summary}`).join("\n\n")}`,
    );
  }
  if (disclosed.length > 0) {
    parts.push(`# Skill files\n${disclosed.map(([path, content]) => `## ${path}\n${content}`).join("\n\n")}`);
  }
  if (notes.length > 0) parts.push(`# Note\n${notes.join("\n")}`);
  parts.push("Decide the next step.");
  return parts.join("\n\n");
}

function refusals(context: DisclosedContext): string[] {
  return context.refused.map((r) =>
    r.reason === "unknown_path"
      ? `${r.path} is not a file of an available skill.`
      : r.reason === "over_budget"
        ? `${r.path} did not fit in the prompt budget.`
        : `${r.path} is already shown above.`,
  );
}
