// An agent's A2A Agent Card (A2A v1.0 §8): who the agent is, what it can do (a skill per tool, MCP server and skill
// it has), how to reach it (JSON-RPC at /a2a/<agent>, HTTP+JSON under the same URL) and how to authenticate (an
// Outpost API key as a bearer token). Served at /a2a/<agent>/.well-known/agent-card.json and listed by GET /a2a.
import { A2A_PROTOCOL_VERSION, type AgentCard, type AgentSkill } from "@a2a-js/sdk";
import type { Agent } from "../agents/agent.ts";
import { SkillAgent } from "../agents/skill-agent.ts";
import { BUILTIN_TOOL_IMPLEMENTATIONS } from "../tools/builtin.ts";

/** The A2A version this server speaks; a request naming another is refused with VersionNotSupportedError. */
export const A2A_VERSION = A2A_PROTOCOL_VERSION;
/** The security scheme's name in every card. */
export const BEARER_SCHEME = "outpost_api_key";

function skill(id: string, name: string, description: string, tags: string[]): AgentSkill {
  return {
    id,
    name,
    description,
    tags,
    examples: [],
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  };
}

/** The first sentence of a tool's description: a card describes, it does not instruct the model. */
function firstSentence(text: string): string {
  const match = /^[\s\S]*?[.!?](\s|$)/.exec(text.trim());
  return (match ? match[0] : text).trim();
}

/** A skill for each of the agent's built-in tools, MCP servers and (a skill agent's) skills. */
export function agentSkills(agent: Agent): AgentSkill[] {
  const skills: AgentSkill[] = [];
  for (const name of agent.allowedTools) {
    const tool = BUILTIN_TOOL_IMPLEMENTATIONS.get(name);
    if (tool) skills.push(skill(`tool:${name}`, name, firstSentence(tool.description), ["tool"]));
  }
  for (const server of agent.mcpServers) {
    skills.push(skill(`mcp:${server.name}`, server.name, `The tools of the MCP server "${server.name}".`, ["mcp"]));
  }
  if (agent instanceof SkillAgent) {
    if (agent.skillNames === "all") {
      skills.push(skill("skills:all", "skills", "Every skill of the deployment's skill catalog.", ["skill"]));
    } else {
      for (const name of agent.skillNames) skills.push(skill(`skill:${name}`, name, `The skill "${name}".`, ["skill"]));
    }
  }
  // A card needs at least one skill: an agent with no tools still answers.
  if (skills.length === 0) skills.push(skill("chat", agent.name, agent.description || "Answers a message.", ["chat"]));
  return skills;
}

/** The agent's card; `url` is the agent's A2A interface, https://<host>/a2a/<agent>. */
export function agentCard(agent: Agent, url: string): AgentCard {
  return {
    name: agent.name,
    description: agent.description || `The Outpost agent ${agent.name}.`,
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: A2A_VERSION },
      { url, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: A2A_VERSION },
    ],
    provider: { organization: "Outpost", url: new URL(url).origin },
    version: agent.runtime ? String(agent.runtime.version) : "1",
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: true },
    securitySchemes: {
      [BEARER_SCHEME]: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: { description: "An Outpost API key.", scheme: "Bearer", bearerFormat: "" },
        },
      },
    },
    securityRequirements: [{ schemes: { [BEARER_SCHEME]: { list: [] } } }],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: agentSkills(agent),
    signatures: [],
  };
}
