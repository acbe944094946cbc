// The agents this Worker serves, compiled in: the files of agents/ (src/agents/files.generated.ts, built by
// scripts/build-agents.ts), and the TypeScript classes, for agents that need code (a custom execute(), a skill
// agent). Add a class here (an import and a line in the literal); add a file to agents/. One name, one agent: the
// registry refuses a name defined twice.
import { OperatorAgent } from "./examples/operator.ts";
import { fileAgentClasses } from "./file-agents.ts";
import { AGENT_FILES } from "./files.generated.ts";
import { AgentRegistry } from "./registry.ts";

export const registry = AgentRegistry.from({ operator: OperatorAgent }, fileAgentClasses(AGENT_FILES));
