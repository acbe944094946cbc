// The agents this Worker serves, compiled in: add yours here (an import and a line in the literal).
import { AssistantAgent } from "./examples/assistant.ts";
import { CoderAgent } from "./examples/coder.ts";
import { OperatorAgent } from "./examples/operator.ts";
import { PlannerAgent } from "./examples/planner.ts";
import { TriageAgent } from "./examples/triage.ts";
import { AgentRegistry } from "./registry.ts";

export const registry = AgentRegistry.from({
  assistant: AssistantAgent,
  coder: CoderAgent,
  operator: OperatorAgent,
  planner: PlannerAgent,
  triage: TriageAgent,
});
