// A tenant's stored version (PUT /v1/agents/:name, src/tenants/agent-versions.ts) as an Agent, or what in it no longer
// passes the checks. A version is never changed, but the checks grow stricter (bounds on max_turns and max_tokens,
// unknown allowed_tools refused, …), so a version an earlier Outpost stored may fail them now. Such a version must not
// take the tenant down with it: it is told apart here, by the file's key at fault, so that the Worker can list it with
// that reason and refuse to run it (src/http/agent-lookup.ts) until a corrected version is PUT.
import type { RuntimeAgentRecord } from "../contracts/agent-version.ts";
import type { Json, JsonObject } from "../lib/json.ts";
import type { Agent } from "./agent.ts";
import { refusalInFileTerms } from "./agent-file.ts";
import type { FileTools } from "./agent-file-keys.ts";
import { definitionKey } from "./definition-errors.ts";
import { runtimeAgent } from "./file-agents.ts";

/** What in a stored version no longer passes the checks. */
export interface StaleDefinition {
  /** The key at fault as the agent's file spells it ("claude.max_turns", "claude.allowed_tools.1"). */
  key: string;
  /** What is wrong with it, in the file's terms. */
  message: string;
}

export type StoredVersionLoad = { agent: Agent; stale: null } | { agent: null; stale: StaleDefinition };

/** The key of a version whose definition cannot even be read (not an object, or a check that names no key). */
const WHOLE_DEFINITION = "(definition)";
/** Keys left out, at most, to show a stale version (each check refuses one key at a time). */
const MOST_KEYS_LEFT_OUT = 16;

/** The Agent a stored version makes, or, when it no longer passes the checks, the key at fault and why. */
export function loadStoredVersion(record: RuntimeAgentRecord): StoredVersionLoad {
  try {
    return { agent: runtimeAgent(record), stale: null };
  } catch (error) {
    return { agent: null, stale: staleDefinition(record.definition, error) };
  }
}

/**
 * The Agent to describe a stale version with (GET /v1/agents): its definition with the keys at fault left out, one by
 * one as the checks name them, so that the rest of what it says is shown as it is. Never run: the description says
 * why it cannot be (loadStoredVersion's reason). Falls back to the name and prompt alone.
 */
export function describableVersion(record: RuntimeAgentRecord): Agent {
  let definition = record.definition;
  for (let left = 0; left < MOST_KEYS_LEFT_OUT; left++) {
    try {
      return runtimeAgent({ ...record, definition });
    } catch (error) {
      const key = definitionKey(error);
      const without = key === null ? null : withoutKey(definition, key.split("."));
      if (!without) break;
      definition = without;
    }
  }
  const prompt = typeof definition.systemPrompt === "string" ? definition.systemPrompt : "";
  const description = typeof definition.description === "string" ? definition.description : "";
  return runtimeAgent({
    ...record,
    definition: { name: definition.name ?? "", description, systemPrompt: prompt.trim() ? prompt : "(none)" },
  });
}

function staleDefinition(definition: JsonObject, error: unknown): StaleDefinition {
  if (!(error instanceof Error)) return { key: WHOLE_DEFINITION, message: "the stored definition cannot be read." };
  const { field, message } = refusalInFileTerms(error, fileTools(definition));
  const key = field ?? WHOLE_DEFINITION;
  // "maxTurns must be …" reads "claude.max_turns must be …": the message in the terms of the key it names.
  const own = definitionKey(error);
  const said =
    own !== null && field !== null && message.startsWith(`${own} `) ? field + message.slice(own.length) : message;
  return { key, message: /[.!?]$/.test(said) ? said : `${said}.` };
}

/**
 * The `tools` of the file a definition came from, as far as the definition tells: its MCP servers in order, then its
 * knowledge tools (a file that mixed them placed them otherwise, and a key among them is then one entry off).
 */
function fileTools(definition: JsonObject): FileTools {
  const servers = definition.mcpServers;
  const knowledge = definition.knowledgeTools;
  return [
    ...(isObject(servers) ? Object.keys(servers).map((name) => ({ type: "mcp", name })) : []),
    ...(Array.isArray(knowledge) ? knowledge.map((tool) => ({ type: isObject(tool) ? tool.type : undefined })) : []),
  ];
}

/** `definition` without the value at `path` (an array's entry taken out), or null when there is none there. */
function withoutKey(definition: JsonObject, path: readonly string[]): JsonObject | null {
  const [head, ...rest] = path;
  if (head === undefined || !(head in definition)) return null;
  const copy: JsonObject = { ...definition };
  if (rest.length === 0) {
    delete copy[head];
    return copy;
  }
  const inner = without(copy[head], rest);
  if (inner === undefined) return null;
  copy[head] = inner;
  return copy;
}

function without(value: Json | undefined, path: readonly string[]): Json | undefined {
  if (Array.isArray(value)) {
    const [head, ...rest] = path;
    const index = Number(head);
    if (!Number.isInteger(index) || index < 0 || index >= value.length) return undefined;
    if (rest.length === 0) return value.filter((_, i) => i !== index);
    const inner = without(value[index], rest);
    return inner === undefined ? undefined : value.map((entry, i) => (i === index ? inner : entry));
  }
  return isObject(value) ? (withoutKey(value, path) ?? undefined) : undefined;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
