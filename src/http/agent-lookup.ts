// Which agent a name means for the request's tenant: the tenant's own agent of that name (PUT /v1/agents/:name, its
// current version), else the Worker's (agents/ files and classes) if the tenant may see it. A tenant's agent shadows
// the Worker's of the same name for that tenant only. Every route that names an agent asks here.
import type { Context } from "hono";
import type { Agent } from "../agents/agent.ts";
import { registry } from "../agents/catalog.ts";
import { AGENT_NAME_PATTERN } from "../agents/definition.ts";
import { runtimeAgent } from "../agents/file-agents.ts";
import { AgentNotFoundError } from "../errors.ts";
import type { StoredAgent } from "../tenants/agent-versions.ts";
import { tenantStubFor } from "../tenants/directory.ts";
import type { AppEnv } from "./app-env.ts";

/** An Agent from a stored version of a tenant's agent. */
export function storedAgent(stored: StoredAgent): Agent {
  return runtimeAgent({ version: stored.version, definition: stored.definition, warnings: stored.warnings });
}

/** The agent `name` means for the tenant, or undefined (an unknown name and another tenant's agent alike). */
export async function visibleAgent(c: Context<AppEnv>, name: string): Promise<Agent | undefined> {
  const tenant = c.get("tenant");
  if (AGENT_NAME_PATTERN.test(name)) {
    const stored = await tenantStubFor(c.env, tenant).agent(name);
    if (stored) return storedAgent(stored);
  }
  return registry.visible(name, tenant);
}

/** Like visibleAgent(), but a miss is 404 agent_not_found listing the names the tenant can see. */
export async function agentFor(c: Context<AppEnv>, name: string): Promise<Agent> {
  const agent = await visibleAgent(c, name);
  if (agent) return agent;
  const own = (await tenantStubFor(c.env, c.get("tenant")).agentList()).map((a) => a.name);
  const names = [...new Set([...own, ...registry.listFor(c.get("tenant")).map((a) => a.name)])].sort();
  throw new AgentNotFoundError(name, names);
}

/** Every agent the tenant can see, by name: its own, and the Worker's it does not shadow. */
export async function agentsFor(c: Context<AppEnv>): Promise<Agent[]> {
  const own = (await tenantStubFor(c.env, c.get("tenant")).agentList()).map(storedAgent);
  const shadowed = new Set(own.map((a) => a.name));
  const builtIn = registry.listFor(c.get("tenant")).filter((a) => !shadowed.has(a.name));
  return [...own, ...builtIn].sort((a, b) => a.name.localeCompare(b.name));
}
