// What an agent a tenant adds at runtime (PUT /v1/agents/:name) is checked for beyond any definition, since the
// tenant's admin is not the deployment's operator and its agents live beside others: its MCP servers reach no private
// host but those the operator gave the tenant (OUTPOST_TENANT_PRIVATE_HOSTS), their headers read no Worker secret, and
// its sub-agents are agents the tenant can run that never lead back to it. Each refusal is a DefinitionError naming
// the key, which the file's check turns into the file's key and line (src/agents/agent-file.ts).
import { BlockedUrlError } from "../errors.ts";
import { tenantServerCheck } from "../mcp/config.ts";
import type { AgentDefinition } from "./definition.ts";
import { DefinitionError } from "./definition-errors.ts";
import { cycleText, subagentCycle } from "./definition-subagents.ts";

export interface RuntimeAgentScope {
  /** Throws BlockedUrlError for a server URL the tenant's agents may not reach. */
  checkServerUrl: (url: string) => void;
  /** The sub-agents of an agent the tenant can run (its own, or the Worker's it may see); undefined for any other name. */
  subagentsOf: (name: string) => readonly string[] | undefined;
}

/**
 * The scope of `tenant`'s agents: OUTPOST_TENANT_PRIVATE_HOSTS (`tenantPrivateHosts`) read now, so a setting that is
 * not valid is the operator's ConfigError, never a refusal of the tenant's definition.
 */
export function runtimeAgentScope(
  tenant: string,
  tenantPrivateHosts: string | undefined,
  subagentsOf: RuntimeAgentScope["subagentsOf"],
): RuntimeAgentScope {
  return { checkServerUrl: tenantServerCheck(tenantPrivateHosts, tenant), subagentsOf };
}

/** Throws a DefinitionError for the first thing an agent added at runtime may not do in `scope`. */
export function checkRuntimeAgent(definition: AgentDefinition, scope: RuntimeAgentScope): void {
  const agent = String(definition.name);
  for (const [name, server] of Object.entries(definition.mcpServers ?? {})) {
    const at = `mcpServers.${name}`;
    if ("headers" in server && server.headers !== undefined) {
      throw new DefinitionError(
        `${at}.headers`,
        `Agent "${agent}": not for an agent added at runtime: headers read the deployment's secrets; declare such a server in an agents/ file.`,
      );
    }
    try {
      scope.checkServerUrl(String(server.url));
    } catch (error) {
      if (!(error instanceof BlockedUrlError)) throw error;
      throw new DefinitionError(`${at}.url`, `Agent "${agent}": ${error.message}`);
    }
  }
  const agents = definition.subagents?.agents ?? [];
  for (const [index, name] of agents.entries()) {
    if (name === agent || scope.subagentsOf(name) !== undefined) continue;
    throw new DefinitionError(
      `subagents.agents.${index}`,
      `Agent "${agent}": subagents.agents.${index} "${name}" is no agent this tenant can run (add it first).`,
    );
  }
  const cycle = subagentCycle(agent, agents, scope.subagentsOf);
  if (cycle) throw subagentCycleError(agent, agents, cycle);
}

/**
 * The refusal of an agent whose sub-agents (`agents`) lead back to it by `cycle` ([agent, …, agent]), at the entry the
 * cycle leaves by: checkRuntimeAgent's, and the tenant object's when another PUT closed the cycle after that check.
 */
export function subagentCycleError(
  agent: string,
  agents: readonly string[],
  cycle: readonly string[],
): DefinitionError {
  const index = agents.indexOf(cycle[1] ?? "");
  return new DefinitionError(
    `subagents.agents.${index}`,
    `Agent "${agent}": subagents.agents.${index} "${cycle[1]}" leads back to the agent (${cycleText(cycle)}): an agent may not delegate to itself, directly or through others.`,
  );
}
