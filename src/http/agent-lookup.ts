// Which agent a name means for the request's tenant: the tenant's own agent of that name (PUT /v1/agents/:name, its
// current version), else the Worker's (agents/ files and classes) if the tenant may see it. A tenant's agent shadows
// the Worker's of the same name for that tenant only. Every route that names an agent asks here. A version of the
// tenant's own that an earlier Outpost stored may fail today's stricter checks: it is listed with the key at fault
// and refused to every route that would run it (409 agent_version_invalid), never a 500 for the tenant.
//
// The tenant's own agents come from its Durable Object, and each Worker instance keeps what it read for
// OWN_AGENTS_TTL_MS: a call to the object on every task creation doubled the Worker's CPU per task in the benchmark
// (docs/development/benchmark.md). A PUT is seen at once by the instance that handled it, and by every other instance
// within that time; a task records the version it was created with either way. What is read again then is the index
// of current versions alone: a version never changes, so its definition (up to 256 KiB) is read once per instance.
import type { Context } from "hono";
import { Agent } from "../agents/agent.ts";
import { registry } from "../agents/catalog.ts";
import { loadStoredVersion, type StaleDefinition } from "../agents/definition-stored.ts";
import type { RuntimeAgentRecord } from "../contracts/agent-version.ts";
import { AgentNotFoundError, ApiError } from "../errors.ts";
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

/**
 * A tenant's own agent whose current version no longer passes the checks (stored by an earlier Outpost): GET /v1/agents
 * shows it, with `stale` as the reason, and nothing runs it (src/agents/definition-stored.ts).
 */
export interface StaleAgent {
  name: string;
  version: number;
  stale: StaleDefinition;
  /** The version as stored (describableVersion() shows it without the keys at fault): never run. */
  record: RuntimeAgentRecord;
}

/** What a stored version makes: an Agent, or a StaleAgent when it no longer passes the checks. */
export function storedVersion(stored: StoredAgent): Agent | StaleAgent {
  const record = { version: stored.version, definition: stored.definition, warnings: stored.warnings };
  const load = loadStoredVersion(record);
  if (load.agent) return load.agent;
  return { name: stored.name, version: stored.version, stale: load.stale, record };
}

/** The 409 for running a version that no longer passes the checks, naming the key (its `field`) and the way out. */
function staleVersionError(agent: Pick<StaleAgent, "name" | "version" | "stale">): ApiError {
  return new ApiError(
    "agent_version_invalid",
    `The agent "${agent.name}" is at version ${agent.version}, which no longer passes Outpost's checks, at ${agent.stale.key}: ${agent.stale.message} PUT /v1/agents/${agent.name} with a corrected version to run it again.`,
    agent.stale.key,
  );
}

/** What the tenant's own agent of that name is, or the Worker's it may see; undefined for any other name. */
async function lookUp(c: Context<AppEnv>, name: string): Promise<Agent | StaleAgent | undefined> {
  const stored = (await ownAgents(c)).get(name);
  return stored ? storedVersion(stored) : registry.visible(name, c.get("tenant"));
}

/**
 * The agent `name` means for the tenant, or undefined (an unknown name and another tenant's agent alike). One of the
 * tenant's own whose current version no longer passes the checks is refused: 409 agent_version_invalid.
 */
export async function visibleAgent(c: Context<AppEnv>, name: string): Promise<Agent | undefined> {
  const agent = await lookUp(c, name);
  if (agent === undefined || agent instanceof Agent) return agent;
  throw staleVersionError(agent);
}

/**
 * A version of the tenant's own agent (a fork keeps its origin's), or undefined when the tenant has no such version;
 * one that no longer passes the checks is refused, as visibleAgent() refuses it.
 */
export async function agentVersion(c: Context<AppEnv>, name: string, version: number): Promise<Agent | undefined> {
  const stored = await tenantStubFor(c.env, c.get("tenant")).agentAt(name, version);
  if (!stored) return undefined;
  const agent = storedVersion(stored);
  if (agent instanceof Agent) return agent;
  throw staleVersionError(agent);
}

/** The 404 for a name the tenant cannot see, listing the names it can. */
async function notFound(c: Context<AppEnv>, name: string): Promise<AgentNotFoundError> {
  const own = [...(await ownAgents(c)).keys()];
  const names = [...new Set([...own, ...registry.listFor(c.get("tenant")).map((a) => a.name)])].sort();
  return new AgentNotFoundError(name, names);
}

/** Like visibleAgent(), but a miss is 404 agent_not_found listing the names the tenant can see. */
export async function agentFor(c: Context<AppEnv>, name: string): Promise<Agent> {
  const agent = await visibleAgent(c, name);
  if (agent) return agent;
  throw await notFound(c, name);
}

/** Like agentFor(), but one of the tenant's own that no longer passes the checks is answered, not refused: to describe. */
export async function describedAgentFor(c: Context<AppEnv>, name: string): Promise<Agent | StaleAgent> {
  const agent = await lookUp(c, name);
  if (agent) return agent;
  throw await notFound(c, name);
}

/**
 * Every agent the tenant can see, by name, its own and the Worker's it does not shadow: as GET /v1/agents describes
 * them, those of its own that no longer pass the checks too.
 */
export async function agentListingFor(c: Context<AppEnv>): Promise<(Agent | StaleAgent)[]> {
  const own = [...(await ownAgents(c)).values()].map(storedVersion);
  const shadowed = new Set(own.map((a) => a.name));
  const builtIn = registry.listFor(c.get("tenant")).filter((a) => !shadowed.has(a.name));
  return [...own, ...builtIn].sort((a, b) => a.name.localeCompare(b.name));
}

/** Every agent the tenant can run, by name (agentListingFor's, but those that no longer pass the checks). */
export async function agentsFor(c: Context<AppEnv>): Promise<Agent[]> {
  return (await agentListingFor(c)).filter((agent): agent is Agent => agent instanceof Agent);
}
