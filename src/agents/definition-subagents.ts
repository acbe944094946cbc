// Whether an agent can reach itself through its sub-agents (subagents.agents), directly or through other agents: one
// check, asked where every agent the names can mean is known. PUT /v1/agents/:name asks it over the tenant's agents and
// the Worker's it may see (src/http/runtime-agent-checks.ts); scripts/build-agents.ts over the files of agents/. The
// agent itself in its own list is refused by the definition (checkSubagents, src/agents/definition-checks.ts).

/** The sub-agents a stored definition (an AgentDefinition as JSON) names, or none. */
export function subagentNames(definition: unknown): readonly string[] {
  const agents = (definition as { subagents?: { agents?: unknown } } | null)?.subagents?.agents;
  return Array.isArray(agents) ? agents.filter((a): a is string => typeof a === "string") : [];
}

/**
 * The first path by which agent `name`, naming `agents` as its sub-agents, reaches itself again ([name, …, name]), or
 * null when it cannot. `listOf` gives the sub-agents of any other agent, undefined for a name that is no agent (a
 * dead end here: whether a name exists is asked apart). Each agent is walked once, so a cycle among the others that
 * does not pass through `name` ends the walk rather than looping.
 */
export function subagentCycle(
  name: string,
  agents: readonly string[],
  listOf: (agent: string) => readonly string[] | undefined,
): string[] | null {
  const seen = new Set<string>();
  const walk = (path: string[], next: readonly string[]): string[] | null => {
    for (const agent of next) {
      if (agent === name) return [...path, agent];
      if (seen.has(agent)) continue;
      seen.add(agent);
      const found = walk([...path, agent], listOf(agent) ?? []);
      if (found) return found;
    }
    return null;
  };
  return walk([name], agents);
}

/** A cycle as a refusal names it: "a → b → a". */
export function cycleText(cycle: readonly string[]): string {
  return cycle.join(" → ");
}
