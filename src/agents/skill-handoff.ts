// Seed 002 self-handoff: a skill agent whose plan is only to call the same skill again, turn after turn, is noticed
// (self_handoff_detected), then constrained (its call_skill actions are dropped and the next prompt says so), then
// recovered (the turn finishes with what the run has).
import type { ActionStep, ModelDecision } from "../skills/decision.ts";
import type { AgentContext } from "./context.ts";

/** Calls of the same skill in a row before the loop steps in. */
const SELF_HANDOFF_LIMIT = 2;

/** The skill agent's memory for the self-handoff guard: calls in a row per skill, and the skills it blocked. */
export interface HandoffState {
  handoffs: Map<string, number>;
  blocked: Set<string>;
}

/** The actions to carry out of a turn's plan, after the guard. */
export function applySelfHandoff(
  context: AgentContext,
  turn: number,
  decision: ModelDecision,
  state: HandoffState,
): ActionStep[] {
  const { runtime } = context;
  const { handoffs, blocked } = state;
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
