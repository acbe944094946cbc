// A tenant's own agent (PUT /v1/agents/:name) as the code that runs it sees it: the version, the checked definition
// and the file's warnings. An Agent built from one carries it (src/agents/file-agents.ts), a task records it at its
// creation (src/tasks/), and every run of the task builds its agent from the record, so a newer version never changes
// a task already started. A leaf: agents and tasks both name it without importing each other.
import type { JsonObject } from "../lib/json.ts";

export interface RuntimeAgentRecord {
  version: number;
  /** An AgentDefinition, as JSON. */
  definition: JsonObject;
  warnings: string[];
}
