// The workflows this Worker serves, by name: assembled once from the workflows/ files and the TypeScript workflows,
// each resolved against the agents the Worker serves (resolveWorkflow), so a workflow that names a missing agent
// stops the Worker from starting, in `wrangler dev`, in the tests and in `wrangler deploy`'s upload check alike.
import { ConfigError } from "../errors.ts";
import { type AgentCatalog, resolveWorkflow, type Workflow } from "./workflow.ts";

/** What visibility needs of the agent registry: whether `tenant` may see agent `name`. */
export interface AgentVisibility {
  visible(name: string, tenant: string): unknown;
}

export class WorkflowRegistry {
  private readonly workflows = new Map<string, Workflow>();
  private readonly agents: AgentCatalog & AgentVisibility;

  private constructor(agents: AgentCatalog & AgentVisibility) {
    this.agents = agents;
  }

  /** A registry of `workflows` over `agents`; a name used twice, or a workflow naming what does not exist, throws. */
  static from(agents: AgentCatalog & AgentVisibility, ...groups: readonly (readonly Workflow[])[]): WorkflowRegistry {
    const registry = new WorkflowRegistry(agents);
    for (const workflow of groups.flat()) {
      const other = registry.workflows.get(workflow.name);
      if (other) {
        throw new ConfigError(
          `Workflow "${workflow.name}" is defined twice (${describeSource(other)} and ${describeSource(workflow)}).`,
        );
      }
      resolveWorkflow(workflow, agents);
      registry.workflows.set(workflow.name, workflow);
    }
    return registry;
  }

  /**
   * Adds a workflow once the registry is assembled (a test's own workflow, like AgentRegistry.register): resolved
   * against the agents as the others were; a name already taken throws.
   */
  register(workflow: Workflow): void {
    if (this.workflows.has(workflow.name)) throw new ConfigError(`Workflow "${workflow.name}" is defined twice.`);
    resolveWorkflow(workflow, this.agents);
    this.workflows.set(workflow.name, workflow);
  }

  list(): string[] {
    return [...this.workflows.keys()].sort();
  }

  /**
   * The workflow `name` if `tenant` may run it, else undefined: a workflow is visible to a tenant that may see every
   * agent it names (it could not run otherwise), and an unknown name and a hidden workflow are the same answer.
   */
  visible(name: string, tenant: string): Workflow | undefined {
    const workflow = this.workflows.get(name);
    if (!workflow) return undefined;
    return workflow.agents.every((agent) => this.agents.visible(agent, tenant) !== undefined) ? workflow : undefined;
  }

  /** The workflows `tenant` may see, sorted by name. */
  listFor(tenant: string): Workflow[] {
    return this.list().flatMap((name) => this.visible(name, tenant) ?? []);
  }
}

function describeSource(workflow: Workflow): string {
  return workflow.source.kind === "file" ? workflow.source.path : "a TypeScript workflow";
}
