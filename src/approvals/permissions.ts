// Who approves what (seed 004 permission_mode): an agent's mode and per-tool rules, how long a call may wait for a
// person, and what a timeout does. Parsed once when the agent is built; the Toolbox asks needsApproval() before
// every call.
import { parseMcpToolName } from "../contracts/tool-names.ts";
import { ConfigError } from "../errors.ts";
import { ASK_USER } from "./ask-user.ts";

export type PermissionMode = "manual" | "acceptEdits" | "acceptAll";

/** An agent definition's review settings, as written (see AgentDefinition for what each one means). */
export interface PermissionSettings {
  name: string;
  permissionMode?: PermissionMode;
  toolPermissions?: Readonly<Record<string, "allow" | "ask">>;
  approvalTimeoutSeconds?: number;
  onApprovalTimeout?: "reject" | "fail";
}

/** Who approves what (seed 004 permission_mode), checked by the run's Toolbox before every tool call. */
export interface ToolPermissions {
  mode: PermissionMode;
  rules: Readonly<Record<string, "allow" | "ask">>;
  timeoutSeconds: number | null;
  onTimeout: "reject" | "fail";
}

/** The settings checked against the agent's tools (`tools`: its allowed tools, MCP wildcards included). */
export function parsePermissions(definition: PermissionSettings, tools: readonly string[]): ToolPermissions {
  const name = definition.name;
  const mode = definition.permissionMode ?? "acceptAll";
  if (!["manual", "acceptEdits", "acceptAll"].includes(mode)) {
    throw new ConfigError(`Agent "${name}": permissionMode must be "manual", "acceptEdits" or "acceptAll".`);
  }
  const rules = definition.toolPermissions ?? {};
  for (const [tool, rule] of Object.entries(rules)) {
    if (rule !== "allow" && rule !== "ask") {
      throw new ConfigError(`Agent "${name}": toolPermissions.${tool} must be "allow" or "ask".`);
    }
    const server = /^mcp__(.+)__\*$/.exec(tool)?.[1];
    const known = tools.includes(tool) || (server !== undefined && tools.some((t) => t.startsWith(`mcp__${server}__`)));
    if (!known && !tools.some((t) => t.endsWith("__*") && tool.startsWith(t.slice(0, -1)))) {
      throw new ConfigError(`Agent "${name}": toolPermissions.${tool} names a tool the agent does not have.`);
    }
  }
  const timeout = definition.approvalTimeoutSeconds;
  if (timeout !== undefined && !(Number.isInteger(timeout) && timeout > 0)) {
    throw new ConfigError(`Agent "${name}": approvalTimeoutSeconds must be a positive integer.`);
  }
  const onTimeout = definition.onApprovalTimeout ?? "reject";
  if (onTimeout !== "reject" && onTimeout !== "fail") {
    throw new ConfigError(`Agent "${name}": onApprovalTimeout must be "reject" or "fail".`);
  }
  return { mode, rules: Object.freeze({ ...rules }), timeoutSeconds: timeout ?? null, onTimeout };
}

/** The tools whose only effect is an edit of the workspace: acceptEdits lets them run without approval. */
const EDIT_TOOLS: ReadonlySet<string> = new Set(["Write", "Edit"]);

/** Whether a call to `name` waits for a person (seed 004 permission_mode, with per-tool rules first). */
export function needsApproval(name: string, permissions: ToolPermissions): boolean {
  if (name === ASK_USER) return false;
  const server = parseMcpToolName(name)?.server;
  const rule = permissions.rules[name] ?? (server ? permissions.rules[`mcp__${server}__*`] : undefined);
  if (rule) return rule === "ask";
  if (permissions.mode === "acceptAll") return false;
  if (permissions.mode === "acceptEdits") return !EDIT_TOOLS.has(name);
  return true;
}
