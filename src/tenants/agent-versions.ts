// A tenant's own agents (PUT /v1/agents/:name), kept in the tenant's Durable Object (durable-objects/tenant-object.ts)
// with every version: a version is never changed or removed, so a task records the version it ran and its run keeps
// that definition whatever comes after. The definition is stored as checked by the Worker (src/agents/agent-file.ts);
// this module keeps it as JSON and knows nothing of what it says but the sub-agents it names: a version whose
// sub-agents lead back to it through the versions stored now is refused as it is written, since two PUTs at once
// (a → b, b → a) each passed the Worker's check before the other's write. Its table (agents_versions) is in
// src/storage/tenant-migrations.ts. What a tenant keeps is capped (runtimeAgentLimits): a new agent past
// OUTPOST_MAX_RUNTIME_AGENTS and a new version past OUTPOST_MAX_AGENT_VERSIONS are refused, never made room for by
// dropping a version, since a task, a fork of one or a delegation waiting for its turn may still ask for any.
import type { Env } from "../env.ts";
import { ConfigError } from "../errors.ts";
import type { JsonObject } from "../lib/json.ts";

/** How much a tenant keeps: its own agents, and the versions of each. */
export interface RuntimeAgentLimits {
  maxAgents: number;
  maxVersions: number;
}

/**
 * Defaults: a tenant's agents are a catalog, not a corpus (100 of up to 256 KiB each is 25 MiB at most), and 50
 * versions of one are a long history of edits that still fits the tenant's object many times over.
 */
const DEFAULT_LIMITS: RuntimeAgentLimits = { maxAgents: 100, maxVersions: 50 };
/** Past this the caps would not bound the tenant's object (SQLite's 10 GB per Durable Object) in any useful way. */
const MOST = 10_000;

/** OUTPOST_MAX_RUNTIME_AGENTS and OUTPOST_MAX_AGENT_VERSIONS, or their defaults; a ConfigError names a bad one. */
export function runtimeAgentLimits(
  env: Pick<Env, "OUTPOST_MAX_RUNTIME_AGENTS" | "OUTPOST_MAX_AGENT_VERSIONS">,
): RuntimeAgentLimits {
  const read = (name: keyof typeof env, fallback: number): number => {
    const text = env[name]?.trim();
    if (!text) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1 || value > MOST) {
      throw new ConfigError(`${name} must be a whole number from 1 to ${MOST}, not "${text}".`);
    }
    return value;
  };
  return {
    maxAgents: read("OUTPOST_MAX_RUNTIME_AGENTS", DEFAULT_LIMITS.maxAgents),
    maxVersions: read("OUTPOST_MAX_AGENT_VERSIONS", DEFAULT_LIMITS.maxVersions),
  };
}

/** One version of a tenant's agent. */
export interface StoredAgent {
  name: string;
  version: number;
  /** The checked definition (an AgentDefinition) and the file's startup warnings. */
  definition: JsonObject;
  warnings: string[];
  /** SHA-256 of the body as it was sent: the same body again is the same version. */
  sha256: string;
  created_at: string;
  /** The id of the API key that sent it. */
  created_by: string;
}

/** The newest version of one agent, without its definition (src/http/agent-lookup.ts reads the definition once). */
export type AgentIndexEntry = Pick<StoredAgent, "name" | "version" | "sha256">;

/** A version as GET /v1/agents/:name/versions lists it. */
export type AgentVersionSummary = Omit<StoredAgent, "definition" | "name">;

export type PutAgentOutcome =
  | { outcome: "created" | "replaced" | "unchanged"; agent: StoredAgent }
  /** If-Match named another version than the current one (0: the agent must not exist yet). */
  | { outcome: "version_mismatch"; current: number }
  /** A new agent past the tenant's cap: nothing was stored. */
  | { outcome: "agent_limit"; limit: number }
  /** A new version past the agent's cap: nothing was stored, nothing dropped. */
  | { outcome: "version_limit"; limit: number }
  /**
   * Its sub-agents lead back to it ([name, …, name]) through the versions stored now: another PUT closed the cycle
   * after the Worker checked this one. Nothing was stored.
   */
  | { outcome: "subagent_cycle"; cycle: string[] };

interface VersionRow extends Record<string, SqlStorageValue> {
  name: string;
  version: number;
  source: string;
  sha256: string;
  definition: string;
  warnings: string;
  created_at: string;
  created_by: string;
}

export class AgentVersions {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /**
   * Stores a new version unless the current one was made from the same body. `ifMatch` is the version the caller
   * saw (0: none): a PUT that raced another is refused, not applied over it. Its sub-agents are walked first for a
   * path back to it, over the current versions and `workerSubagents` (the sub-agents of each of the Worker's agents
   * the tenant may see, by name, for a name the tenant has no agent of). Synchronous, with no await between the walk
   * and the write: no other PUT comes between them.
   */
  put(
    agent: Omit<StoredAgent, "version" | "created_at"> & { source: string },
    ifMatch: number | null,
    limits: RuntimeAgentLimits,
    workerSubagents: Readonly<Record<string, readonly string[]>> = {},
  ): PutAgentOutcome {
    const cycle = subagentCycle(agent.name, subagentNames(agent.definition), (name) => {
      const own = this.current(name);
      if (own) return subagentNames(own.definition);
      return Object.hasOwn(workerSubagents, name) ? workerSubagents[name] : undefined;
    });
    if (cycle) return { outcome: "subagent_cycle", cycle };
    const current = this.current(agent.name);
    if (ifMatch !== null && ifMatch !== (current?.version ?? 0)) {
      return { outcome: "version_mismatch", current: current?.version ?? 0 };
    }
    if (current && current.sha256 === agent.sha256) return { outcome: "unchanged", agent: current };
    if (!current && this.count() >= limits.maxAgents) return { outcome: "agent_limit", limit: limits.maxAgents };
    if (current && this.versionCount(agent.name) >= limits.maxVersions) {
      return { outcome: "version_limit", limit: limits.maxVersions };
    }
    const version = (current?.version ?? 0) + 1;
    const created_at = new Date().toISOString();
    this.sql.exec(
      `INSERT INTO agents_versions (name, version, source, sha256, definition, warnings, created_at, created_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      agent.name,
      version,
      agent.source,
      agent.sha256,
      JSON.stringify(agent.definition),
      JSON.stringify(agent.warnings),
      created_at,
      agent.created_by,
    );
    const stored = this.current(agent.name);
    if (!stored) throw new Error("the version just stored is missing");
    return { outcome: current ? "replaced" : "created", agent: stored };
  }

  /** How many agents the tenant has. */
  private count(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(DISTINCT name) AS n FROM agents_versions").one().n;
  }

  /** How many versions of the agent are kept. */
  private versionCount(name: string): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM agents_versions WHERE name = ?", name).one().n;
  }

  /** The newest version of the agent, or null when the tenant has none of that name. */
  current(name: string): StoredAgent | null {
    const row = this.sql
      .exec<VersionRow>("SELECT * FROM agents_versions WHERE name = ? ORDER BY version DESC LIMIT 1", name)
      .toArray()[0];
    return row ? fromRow(row) : null;
  }

  /** One version of the agent, or null when the tenant has no such version. */
  at(name: string, version: number): StoredAgent | null {
    const row = this.sql
      .exec<VersionRow>("SELECT * FROM agents_versions WHERE name = ? AND version = ?", name, version)
      .toArray()[0];
    return row ? fromRow(row) : null;
  }

  /** Which version of each agent of the tenant is the newest, by name: what a Worker instance reads to know its copy is current. */
  index(): AgentIndexEntry[] {
    return this.sql
      .exec<{ name: string; version: number; sha256: string }>(
        `SELECT v.name, v.version, v.sha256 FROM agents_versions v
         WHERE v.version = (SELECT MAX(version) FROM agents_versions w WHERE w.name = v.name) ORDER BY v.name`,
      )
      .toArray()
      .map(({ name, version, sha256 }) => ({ name, version, sha256 }));
  }

  /** The newest version of every agent of the tenant, by name. */
  list(): StoredAgent[] {
    return this.sql
      .exec<VersionRow>(
        `SELECT v.* FROM agents_versions v
         WHERE v.version = (SELECT MAX(version) FROM agents_versions w WHERE w.name = v.name) ORDER BY v.name`,
      )
      .toArray()
      .map(fromRow);
  }

  /** Every version of the agent, newest first. */
  versions(name: string): AgentVersionSummary[] {
    return this.sql
      .exec<VersionRow>("SELECT * FROM agents_versions WHERE name = ? ORDER BY version DESC", name)
      .toArray()
      .map((row) => {
        const { definition: _definition, name: _name, ...summary } = fromRow(row);
        return summary;
      });
  }
}

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

function fromRow(row: VersionRow): StoredAgent {
  return {
    name: row.name,
    version: row.version,
    definition: JSON.parse(row.definition) as JsonObject,
    warnings: JSON.parse(row.warnings) as string[],
    sha256: row.sha256,
    created_at: row.created_at,
    created_by: row.created_by,
  };
}
