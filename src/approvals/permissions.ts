// Who approves what (seed 004 permission_mode): an agent's mode and per-tool rules, how long a call may wait for a
// person, and what a timeout does. Parsed once when the agent is built (src/agents/definition.ts); the Toolbox asks
// needsApproval() before every call.
import { z } from "zod";
import { parseMcpToolName } from "../contracts/tool-names.ts";
import { ConfigError } from "../errors.ts";
import { ASK_USER } from "./ask-user.ts";

export const PERMISSION_MODES = ["manual", "acceptEdits", "acceptAll"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

const POSITIVE_INTEGER = "must be a positive integer";

/** An agent definition's review settings as it spells them (src/agents/definition.ts composes them). */
export const PERMISSION_SETTINGS_SHAPE = {
  /**
   * Seed 004 permission_mode: "manual" (every tool call waits for a person's approval), "acceptEdits" (Write and
   * Edit run, other calls wait) or "acceptAll" (nothing waits; the default: capabilities are already least
   * privilege). toolPermissions overrides it per tool ("allow" or "ask"; mcp__<server>__* for a whole server).
   */
  permissionMode: z.enum(PERMISSION_MODES, 'must be "manual", "acceptEdits" or "acceptAll"').default("acceptAll"),
  toolPermissions: z.record(z.string(), z.enum(["allow", "ask"], 'must be "allow" or "ask"')).optional(),
  /** How long a tool call may wait for approval; then it is rejected, or the run fails (onApprovalTimeout). */
  approvalTimeoutSeconds: z.number(POSITIVE_INTEGER).int(POSITIVE_INTEGER).positive(POSITIVE_INTEGER).optional(),
  onApprovalTimeout: z.enum(["reject", "fail"], 'must be "reject" or "fail"').default("reject"),
};
const PermissionSettingsSchema = z.object(PERMISSION_SETTINGS_SHAPE);

/** Who approves what (seed 004 permission_mode), checked by the run's Toolbox before every tool call. */
export interface ToolPermissions {
  mode: PermissionMode;
  rules: Readonly<Record<string, "allow" | "ask">>;
  timeoutSeconds: number | null;
  onTimeout: "reject" | "fail";
}

/**
 * The parsed settings of agent `agent`, checked against its tools (`tools`: its allowed tools, MCP wildcards
 * included): a rule for a tool the agent does not have is a ConfigError.
 */
export function toolPermissions(
  agent: string,
  settings: z.output<typeof PermissionSettingsSchema>,
  tools: readonly string[],
): ToolPermissions {
  const rules = settings.toolPermissions ?? {};
  for (const tool of Object.keys(rules)) {
    const server = /^mcp__(.+)__\*$/.exec(tool)?.[1];
    const known = tools.includes(tool) || (server !== undefined && tools.some((t) => t.startsWith(`mcp__${server}__`)));
    if (!known && !tools.some((t) => t.endsWith("__*") && tool.startsWith(t.slice(0, -1)))) {
      throw new ConfigError(`Agent "${agent}": toolPermissions.${tool} names a tool the agent does not have.`);
    }
  }
  return {
    mode: settings.permissionMode,
    rules: Object.freeze({ ...rules }),
    timeoutSeconds: settings.approvalTimeoutSeconds ?? null,
    onTimeout: settings.onApprovalTimeout,
  };
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
