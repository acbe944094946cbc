// The agent registry (seed 000 AgentRegistry, FR-010..FR-012): names to agent classes, compiled into the Worker.
// Register by call or as a class decorator; a duplicate name fails at once.
import { AgentNotFoundError, ConfigError, DuplicateAgentError } from "../errors.ts";
import type { HookSpec } from "../inbound-hooks/hook.ts";
import type { Agent } from "./agent.ts";

/** An agent class: constructed with no arguments, its definition lives in its constructor. */
export type AgentClass = new () => Agent;

export class AgentRegistry {
  private readonly agents = new Map<string, AgentClass>();

  /** A registry from literals of name → class (the compiled catalog); a name in two of them is refused. */
  static from(...groups: readonly Readonly<Record<string, AgentClass>>[]): AgentRegistry {
    const registry = new AgentRegistry();
    for (const classes of groups) for (const [name, cls] of Object.entries(classes)) registry.register(name, cls);
    return registry;
  }

  /**
   * `register(name, cls)`, or `@registry.register(name)` on a class (TypeScript decorators: tsconfig sets
   * experimentalDecorators, which tsc, esbuild and vitest's transformer all lower identically).
   */
  register(name: string, cls: AgentClass): void;
  register(name: string): <C extends AgentClass>(cls: C, context?: ClassDecoratorContext) => C;
  register(name: string, cls?: AgentClass): undefined | (<C extends AgentClass>(cls: C) => C) {
    if (cls) {
      this.add(name, cls);
      return undefined;
    }
    return <C extends AgentClass>(target: C): C => {
      this.add(name, target);
      return target;
    };
  }

  get(name: string): AgentClass {
    const cls = this.agents.get(name);
    if (!cls) throw new AgentNotFoundError(name, this.list());
    return cls;
  }

  has(name: string): boolean {
    return this.agents.has(name);
  }

  list(): string[] {
    return [...this.agents.keys()].sort();
  }

  /** Instantiates the agent registered as `name` (SC-005: the caller needs no class). */
  create(name: string): Agent {
    const agent = new (this.get(name))();
    if (agent.name !== name) {
      throw new ConfigError(`The class registered as "${name}" builds an agent named "${agent.name}"; use one name.`);
    }
    return agent;
  }

  /**
   * The agent registered as `name` if `tenant` may see it, else undefined: an unknown name and another tenant's
   * agent are the same answer, so no response can tell that an agent exists. Every route that names an agent (and
   * the runner) goes through here or createFor().
   */
  visible(name: string, tenant: string): Agent | undefined {
    if (!this.has(name)) return undefined;
    const agent = this.create(name);
    return agent.visibleTo(tenant) ? agent : undefined;
  }

  /** Like visible(), but a miss is AgentNotFoundError (404 agent_not_found) listing only what `tenant` can see. */
  createFor(name: string, tenant: string): Agent {
    const agent = this.visible(name, tenant);
    if (!agent) throw new AgentNotFoundError(name, this.namesFor(tenant));
    return agent;
  }

  /** The agents `tenant` may see, sorted by name. */
  listFor(tenant: string): Agent[] {
    return this.list()
      .map((name) => this.create(name))
      .filter((agent) => agent.visibleTo(tenant));
  }

  /** The names `tenant` may see, for an error message; a broken definition is left out rather than thrown here. */
  private namesFor(tenant: string): string[] {
    return this.list().filter((name) => {
      try {
        return this.create(name).visibleTo(tenant);
      } catch {
        return false;
      }
    });
  }

  /** The agent that declares hook `id`, with the hook; undefined if none does. Two agents declaring one id is a ConfigError. */
  findHook(id: string): { agent: Agent; hook: HookSpec } | undefined {
    let found: { agent: Agent; hook: HookSpec } | undefined;
    for (const name of this.list()) {
      let agent: Agent;
      try {
        agent = this.create(name);
      } catch {
        // A broken definition fails its own routes (config_error); it must not take every hook down with it.
        continue;
      }
      const hook = agent.hooks.find((h) => h.id === id);
      if (!hook) continue;
      if (found) throw new ConfigError(`Agents "${found.agent.name}" and "${name}" both declare the hook "${id}".`);
      found = { agent, hook };
    }
    return found;
  }

  private add(name: string, cls: AgentClass): void {
    if (this.agents.has(name)) throw new DuplicateAgentError(name);
    this.agents.set(name, cls);
  }
}
