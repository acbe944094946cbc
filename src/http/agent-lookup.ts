// Which agent a name means for the request's tenant: the tenant's own agent of that name (PUT /v1/agents/:name, its
// current version), else the Worker's (agents/ files and classes) if the tenant may see it. A tenant's agent shadows
// the Worker's of the same name for that tenant only. Every route that names an agent asks here.
//
// The tenant's own agents come from its Durable Object, and each Worker instance keeps what it read for
// OWN_AGENTS_TTL_MS: a call to the object on every task creation doubled the Worker's CPU per task in the benchmark
// (docs/development/benchmark.md). A PUT is seen at once by the instance that handled it, and by every other instance
// within that time; a task records the version it was created with either way. What is read again then is the index
// of current versions alone: a version never changes, so its definition (up to 256 KiB) is read once per instance.
import type { Context } from "hono";
import type { Agent } from "../agents/agent.ts";
import { registry } from "../agents/catalog.ts";
import { runtimeAgent } from "../agents/file-agents.ts";
import { AgentNotFoundError } from "../errors.ts";
import type { StoredAgent } from "../tenants/agent-versions.ts";
import { tenantStubFor } from "../tenants/directory.ts";
import type { AppEnv } from "./app-env.ts";

/** How long a Worker instance uses the tenant's own agents as it last read them. */
export const OWN_AGENTS_TTL_MS = 2_000;
/** Tenants whose agents an instance keeps at most (the least recently read go first). */
const MAX_CACHED_TENANTS = 1_000;

const ownAgentsByTenant = new Map<string, { agents: ReadonlyMap<string, StoredAgent>; until: number }>();
/** Versions an instance keeps at most, the least recently used going first. */
const MAX_CACHED_VERSIONS = 500;
/** The versions this instance has read, by tenant, name, version and digest (src/tenants/agent-versions.ts). */
const versionsRead = new Map<string, StoredAgent>();

function versionKey(tenant: string, agent: Pick<StoredAgent, "name" | "version" | "sha256">): string {
  return `${tenant}\n${agent.name}\n${agent.version}\n${agent.sha256}`;
}

/** A version read before, kept as the most recently used; undefined when this instance has not read it. */
function versionRead(key: string): StoredAgent | undefined {
  const agent = versionsRead.get(key);
  if (agent) {
    versionsRead.delete(key);
    versionsRead.set(key, agent);
  }
  return agent;
}

function keepVersion(key: string, agent: StoredAgent): void {
  versionsRead.delete(key);
  versionsRead.set(key, agent);
  if (versionsRead.size > MAX_CACHED_VERSIONS) {
    const oldest = versionsRead.keys().next().value;
    if (oldest !== undefined) versionsRead.delete(oldest);
  }
}

/**
 * An RPC result's items, copied out of it and the result disposed: kept past this request, and an RPC result holds
 * its call's session until it is disposed (one kept across requests kept the tenant object's session open).
 */
function copied<T>(result: readonly T[]): T[] {
  const items = structuredClone([...result]) as T[];
  (result as unknown as Partial<Disposable>)[Symbol.dispose]?.();
  return items;
}

/** The tenant's own agents, current versions by name, as this instance last read them (at most OWN_AGENTS_TTL_MS ago). */
async function ownAgents(c: Context<AppEnv>): Promise<ReadonlyMap<string, StoredAgent>> {
  const cached = ownAgentsByTenant.get(c.get("tenant"));
  if (cached && cached.until > Date.now()) return cached.agents;
  return currentOwnAgents(c);
}

/** The tenant's own agents as its object holds them now, current versions by name (and this instance's copy renewed). */
export async function currentOwnAgents(c: Context<AppEnv>): Promise<ReadonlyMap<string, StoredAgent>> {
  const tenant = c.get("tenant");
  const now = Date.now();
  const stub = tenantStubFor(c.env, tenant);
  const index = copied(await stub.agentIndex());
  const agents = new Map<string, StoredAgent>();
  for (const entry of index) {
    const read = versionRead(versionKey(tenant, entry));
    if (read) agents.set(entry.name, read);
  }
  if (agents.size < index.length) {
    // A version this instance has not read (a new agent or a new version): the current ones, definitions and all. One
    // newer than the index is taken as it is.
    for (const agent of copied(await stub.agentList())) {
      keepVersion(versionKey(tenant, agent), agent);
      if (!agents.has(agent.name)) agents.set(agent.name, agent);
    }
  }
  ownAgentsByTenant.delete(tenant);
  ownAgentsByTenant.set(tenant, { agents, until: now + OWN_AGENTS_TTL_MS });
  if (ownAgentsByTenant.size > MAX_CACHED_TENANTS) {
    const oldest = ownAgentsByTenant.keys().next().value;
    if (oldest !== undefined) ownAgentsByTenant.delete(oldest);
  }
  return agents;
}

/** A PUT this instance handled: its tasks use the new version from the next request on. */
export function forgetOwnAgents(tenant: string): void {
  ownAgentsByTenant.delete(tenant);
}

/** An Agent from a stored version of a tenant's agent. */
export function storedAgent(stored: StoredAgent): Agent {
  return runtimeAgent({ version: stored.version, definition: stored.definition, warnings: stored.warnings });
}

/** The agent `name` means for the tenant, or undefined (an unknown name and another tenant's agent alike). */
export async function visibleAgent(c: Context<AppEnv>, name: string): Promise<Agent | undefined> {
  const stored = (await ownAgents(c)).get(name);
  return stored ? storedAgent(stored) : registry.visible(name, c.get("tenant"));
}

/** A version of the tenant's own agent (a fork keeps its origin's), or undefined when the tenant has no such version. */
export async function agentVersion(c: Context<AppEnv>, name: string, version: number): Promise<Agent | undefined> {
  const stored = await tenantStubFor(c.env, c.get("tenant")).agentAt(name, version);
  return stored ? storedAgent(stored) : undefined;
}

/** Like visibleAgent(), but a miss is 404 agent_not_found listing the names the tenant can see. */
export async function agentFor(c: Context<AppEnv>, name: string): Promise<Agent> {
  const agent = await visibleAgent(c, name);
  if (agent) return agent;
  const own = [...(await ownAgents(c)).keys()];
  const names = [...new Set([...own, ...registry.listFor(c.get("tenant")).map((a) => a.name)])].sort();
  throw new AgentNotFoundError(name, names);
}

/** Every agent the tenant can see, by name: its own, and the Worker's it does not shadow. */
export async function agentsFor(c: Context<AppEnv>): Promise<Agent[]> {
  const own = [...(await ownAgents(c)).values()].map(storedAgent);
  const shadowed = new Set(own.map((a) => a.name));
  const builtIn = registry.listFor(c.get("tenant")).filter((a) => !shadowed.has(a.name));
  return [...own, ...builtIn].sort((a, b) => a.name.localeCompare(b.name));
}
