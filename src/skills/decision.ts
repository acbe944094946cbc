// The structured decision loop's vocabulary (seed 002): a model turn answers with a ModelDecision, a JSON object
// naming the skill it works with, what it wants disclosed, and the actions to take. decodeModelDecision() turns the
// raw text into one, tolerating the usual wrapping (a ```json fence, prose around the object) and common
// spellings of the action types; anything else is a decode failure the loop records and recovers from.
import { z } from "zod";

export const ACTION_TYPES = ["call_skill", "run_command", "ask_user", "finish", "mcp_call"] as const;
export type ActionType = (typeof ACTION_TYPES)[number];
export type ResponseKind = "skill_call" | "tool_call" | "response";

/** Seed 002 ActionStep params by type: required and optional. */
const PARAMS: { [K in ActionType]: z.ZodType } = {
  run_command: z.looseObject({ command: z.string().min(1).max(100_000) }),
  call_skill: z.looseObject({ skill_name: z.string().min(1).max(64), instructions: z.string().max(20_000).optional() }),
  mcp_call: z.looseObject({
    tool_name: z.string().min(1).max(200),
    arguments: z.record(z.string(), z.unknown()).default({}),
  }),
  ask_user: z.looseObject({ message: z.string().min(1).max(20_000) }),
  finish: z.looseObject({
    message: z.string().max(200_000).optional(),
    summary: z.string().max(200_000).optional(),
    result: z.string().max(200_000).optional(),
  }),
};

export interface ActionStep {
  type: ActionType;
  params: Record<string, unknown>;
  expected_output: string | null;
}

export interface ModelDecision {
  selected_skill: string | null;
  reasoning_summary: string;
  required_disclosure_paths: string[];
  planned_actions: ActionStep[];
}

/** Spellings models use for the action types, normalized before validation. */
const ALIASES: Readonly<Record<string, ActionType>> = {
  command: "run_command",
  run: "run_command",
  shell: "run_command",
  bash: "run_command",
  skill: "call_skill",
  use_skill: "call_skill",
  invoke_skill: "call_skill",
  mcp: "mcp_call",
  tool: "mcp_call",
  call_tool: "mcp_call",
  ask: "ask_user",
  question: "ask_user",
  done: "finish",
  answer: "finish",
  respond: "finish",
  final_answer: "finish",
};

const RawDecision = z.looseObject({
  selected_skill: z.string().max(64).nullable().optional(),
  reasoning_summary: z.string().max(20_000).optional(),
  required_disclosure_paths: z.array(z.string().min(1).max(512)).max(50).optional(),
  planned_actions: z
    .array(
      z.looseObject({
        type: z.string().min(1).max(64),
        params: z.record(z.string(), z.unknown()).optional(),
        expected_output: z.string().max(20_000).nullable().optional(),
      }),
    )
    .max(20),
});

export type DecodeResult =
  | { ok: true; decision: ModelDecision; raw_action_types: string[] }
  | { ok: false; error: string; raw_action_types: string[] };

/** The JSON object in a model's answer: a fenced block, or the outermost braces. */
function extractJson(text: string): string | null {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/i.exec(text);
  if (fenced?.[1]?.trim().startsWith("{")) return fenced[1].trim();
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  return start >= 0 && end > start ? text.slice(start, end + 1) : null;
}

export function decodeModelDecision(text: string): DecodeResult {
  const json = extractJson(text);
  if (json === null) return { ok: false, error: "the answer holds no JSON object", raw_action_types: [] };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return { ok: false, error: `the JSON does not parse: ${(error as Error).message}`, raw_action_types: [] };
  }
  const raw = RawDecision.safeParse(value);
  if (!raw.success) {
    const issue = raw.error.issues[0];
    return {
      ok: false,
      error: `${issue?.path.join(".") || "(decision)"}: ${issue?.message ?? "invalid"}`,
      raw_action_types: [],
    };
  }
  const rawTypes = raw.data.planned_actions.map((a) => a.type);
  const actions: ActionStep[] = [];
  for (const [index, action] of raw.data.planned_actions.entries()) {
    const key = action.type.trim().toLowerCase();
    const type = (ACTION_TYPES as readonly string[]).includes(key) ? (key as ActionType) : ALIASES[key];
    if (!type) {
      return {
        ok: false,
        error: `planned_actions.${index}.type: "${action.type}" is not one of ${ACTION_TYPES.join(", ")}`,
        raw_action_types: rawTypes,
      };
    }
    const params = PARAMS[type].safeParse(action.params ?? {});
    if (!params.success) {
      const issue = params.error.issues[0];
      return {
        ok: false,
        error: `planned_actions.${index}.params.${issue?.path.join(".") ?? ""}: ${issue?.message ?? "invalid"} (${type})`,
        raw_action_types: rawTypes,
      };
    }
    actions.push({
      type,
      params: params.data as Record<string, unknown>,
      expected_output: action.expected_output ?? null,
    });
  }
  if (actions.length === 0) {
    return {
      ok: false,
      error: "planned_actions is empty: plan at least one action (finish to answer)",
      raw_action_types: rawTypes,
    };
  }
  return {
    ok: true,
    decision: {
      selected_skill: raw.data.selected_skill ?? null,
      reasoning_summary: raw.data.reasoning_summary ?? "",
      required_disclosure_paths: raw.data.required_disclosure_paths ?? [],
      planned_actions: actions,
    },
    raw_action_types: rawTypes,
  };
}

/** Seed 002 response kind: a skill call, a tool call, or a response, by the actions planned. */
export function classifyResponse(types: readonly ActionType[]): { kind: ResponseKind; reason: string } {
  if (types.includes("call_skill")) return { kind: "skill_call", reason: "plans call_skill" };
  if (types.includes("run_command") || types.includes("mcp_call")) {
    return { kind: "tool_call", reason: "plans run_command or mcp_call" };
  }
  return { kind: "response", reason: "plans no skill or tool call" };
}

/** The protocol the decision loop's system prompt states. */
export const DECISION_PROTOCOL = `Answer every turn with one JSON object and nothing else:
{
  "selected_skill": "<the skill you work with, or null>",
  "reasoning_summary": "<one or two sentences>",
  "required_disclosure_paths": ["<skill files to read before acting, e.g. some-skill/SKILL.md>"],
  "planned_actions": [{"type": "<action>", "params": {...}, "expected_output": "<optional>"}]
}
Actions and their params:
- call_skill {skill_name, instructions?}: start working with a skill; its SKILL.md is shown to you next turn.
- run_command {command}: run a bash command in the task's workspace (/workspace).
- mcp_call {tool_name, arguments}: call an MCP tool by its full name (mcp__<server>__<tool>).
- ask_user {message}: ask the person a question; their answer comes back next turn.
- finish {result, summary?}: you are done; result is the answer to the task.
Read a skill's SKILL.md (via required_disclosure_paths or call_skill) before following it. Results of your actions
are shown to you on the next turn.`;
