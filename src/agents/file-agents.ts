// The agents of agents/*.yaml (src/agents/files.generated.ts, compiled in by scripts/build-agents.ts) as classes the
// registry holds like any other, and a tenant's own agents (PUT /v1/agents/:name) at the version a task runs: each an
// Agent with the file's definition and the default tool loop.
import type { RuntimeAgentRecord } from "../contracts/agent-version.ts";
import { Agent, type AgentDefinition } from "./agent.ts";
import type { AgentFile } from "./agent-file.ts";
import type { AgentClass } from "./registry.ts";

/** The registry's entries for checked agent files, by agent name. */
export function fileAgentClasses(files: readonly AgentFile[]): Record<string, AgentClass> {
  return Object.fromEntries(files.map((file) => [String(file.definition.name), fileAgentClass(file)]));
}

function fileAgentClass(file: AgentFile): AgentClass {
  return class FileAgent extends Agent {
    constructor() {
      super(file.definition, { kind: "file", path: file.path, warnings: Object.freeze([...file.warnings]) });
    }
  };
}

/** A tenant's own agent (PUT /v1/agents/:name), at the version `record` holds. */
export function runtimeAgent(record: RuntimeAgentRecord): Agent {
  const cls = class RuntimeAgent extends Agent {
    constructor() {
      super(record.definition as AgentDefinition, { kind: "runtime", record });
    }
  };
  return new cls();
}
