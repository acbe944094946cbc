// Whether an agent can reach itself through its sub-agents (subagents.agents), directly or through other agents: one
// check, asked where every agent the names can mean is known. PUT /v1/agents/:name asks it over the tenant's agents and
// the Worker's it may see (src/agents/definition-runtime.ts), and the tenant's object again as it writes the version
// (two PUTs at once each read the agents before the other's write); scripts/build-agents.ts over the files of agents/.
// The walk itself lives with the tenant's versions (src/tenants/agent-versions.ts), which the tenant's object may
// import and this folder may too. The agent itself in its own list is refused by the definition (checkSubagents,
// src/agents/definition-checks.ts).
import { subagentCycle, subagentNames } from "../tenants/agent-versions.ts";

export { subagentCycle, subagentNames };

/** A cycle as a refusal names it: "a → b → a". */
export function cycleText(cycle: readonly string[]): string {
  return cycle.join(" → ");
}
