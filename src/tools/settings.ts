// Least privilege for built-in tools (seed 004 ClaudeConfig: bash, file_system, web fetch, allowed_tools). Every
// capability is off unless the agent's definition turns it on; unknown keys are refused (src/agents/definition.ts
// names them with their path). Which built-in tool each capability unlocks is decided here and nowhere else.
import { z } from "zod";
import { ConfigError } from "../errors.ts";
import { toAgentPath, toStorePath, WorkspacePathError } from "../workspace/paths.ts";

/** Seed 004 BashConfig. */
const BashSettings = z.strictObject({
  enabled: z.boolean().default(false),
  /** Commands the shell refuses to run (e.g. ["rm", "sed"]). */
  excluded_commands: z
    .array(z.string().regex(/^[A-Za-z0-9_.+-]+$/, "must be a command name"))
    .max(200)
    .default([]),
  /**
   * The simulated shell has no processes to escape to; what is "unsafe" in it is reaching the network. With
   * allow_unsafe, `curl` works, through the same outbound guard and limits as WebFetch.
   */
  allow_unsafe: z.boolean().default(false),
});

/** Seed 004 FileSystemConfig. */
const FileSystemSettings = z.strictObject({
  read: z.boolean().default(false),
  write: z.boolean().default(false),
  edit: z.boolean().default(false),
});

const WebFetchSettings = z.strictObject({
  enabled: z.boolean().default(false),
  /** Largest response body read, in bytes (the rest is cut off, and the result says so). */
  max_bytes: z
    .number()
    .int()
    .positive()
    .max(10 * 1024 * 1024)
    .default(1024 * 1024),
  /** Time allowed for the whole fetch, redirects included. */
  timeout_seconds: z.number().int().positive().max(120).default(30),
});

/**
 * Seed 004 working_directory: a folder of the workspace ("project", "/workspace/project") that is the shell's
 * working directory and the base of relative paths; the file tools and the shell reach nothing outside it. Kept as
 * the folder's store path ("/project"); the workspace root ("/") when the agent sets none.
 */
const WorkingDirectory = z
  .string("must be a folder of the workspace")
  .transform((value, ctx) => {
    try {
      return toStorePath(value);
    } catch (error) {
      if (!(error instanceof WorkspacePathError)) throw error;
      ctx.addIssue({ code: "custom", message: `must be a folder of the workspace: ${error.message}` });
      return z.NEVER;
    }
  })
  .default("/");

/**
 * Seed 004 SubagentConfig {enabled, max_parallel}, and the agents this one may delegate to (Outpost's addition: a
 * model may not start any agent of the deployment). The Task tool, off unless enabled.
 */
const SubagentSettings = z.strictObject({
  enabled: z.boolean().default(false),
  max_parallel: z.number().int().min(1).max(16).default(4),
  agents: z
    .array(z.string().regex(/^[a-z][a-z0-9_]*$/, "must be an agent name"))
    .max(64)
    .default([]),
});

export type BashSettings = z.output<typeof BashSettings>;
export type FileSystemSettings = z.output<typeof FileSystemSettings>;
export type WebFetchSettings = z.output<typeof WebFetchSettings>;
export type SubagentSettings = z.output<typeof SubagentSettings>;

/**
 * The built-in tools' settings as an agent's definition spells them (src/agents/definition.ts composes it): each
 * one off, with its defaults, when the definition leaves it out.
 */
export const TOOL_SETTINGS_SHAPE = {
  /** Seed 004 BashConfig {enabled, excluded_commands, allow_unsafe}: the Bash tool. Off unless enabled. */
  bash: BashSettings.prefault({}),
  /** Seed 004 FileSystemConfig {read, write, edit}: Read/Glob/Grep, Write, Edit. All off by default. */
  fileSystem: FileSystemSettings.prefault({}),
  /** {enabled, max_bytes, timeout_seconds}: the WebFetch tool. Off unless enabled. */
  webFetch: WebFetchSettings.prefault({}),
  /** Seed 004 SubagentConfig and the agents it may delegate to: the Task tool. Off unless enabled. */
  subagents: SubagentSettings.prefault({}),
  /** Seed 004 working_directory, as a store path: "/" (the workspace) unless the agent sets a folder of it. */
  workingDirectory: WorkingDirectory,
};
const ToolSettingsSchema = z.object(TOOL_SETTINGS_SHAPE);

export type ToolSettingsInput = z.input<typeof ToolSettingsSchema>;
export type ToolSettings = z.output<typeof ToolSettingsSchema>;

/** The capability each built-in tool needs; TodoWrite needs none (it only keeps the agent's own list). */
const REQUIRES: Readonly<Record<string, { setting: string; on: (s: ToolSettings) => boolean }>> = {
  Read: { setting: "fileSystem.read", on: (s) => s.fileSystem.read },
  Glob: { setting: "fileSystem.read", on: (s) => s.fileSystem.read },
  Grep: { setting: "fileSystem.read", on: (s) => s.fileSystem.read },
  Write: { setting: "fileSystem.write", on: (s) => s.fileSystem.write },
  Edit: { setting: "fileSystem.edit", on: (s) => s.fileSystem.edit },
  Bash: { setting: "bash.enabled", on: (s) => s.bash.enabled },
  WebFetch: { setting: "webFetch.enabled", on: (s) => s.webFetch.enabled },
  Task: { setting: "subagents.enabled", on: (s) => s.subagents.enabled },
};

/** The built-in tools the settings turn on (what an agent without allowedTools gets). */
export function enabledBuiltins(settings: ToolSettings): string[] {
  return Object.entries(REQUIRES)
    .filter(([, rule]) => rule.on(settings))
    .map(([name]) => name);
}

/** Throws when allowedTools lists a built-in whose capability is off: least privilege is never silently widened. */
export function requireCapabilities(agent: string, allowedTools: readonly string[], settings: ToolSettings): void {
  for (const name of allowedTools) {
    const rule = REQUIRES[name];
    if (rule && !rule.on(settings)) {
      throw new ConfigError(
        `Agent "${agent}": allowedTools lists ${name}, which needs ${rule.setting}: true in the agent's definition.`,
      );
    }
  }
}

/** Whether a built-in tool may run under these settings (checked again at every call). */
export function capabilityOn(name: string, settings: ToolSettings): boolean {
  const rule = REQUIRES[name];
  return rule ? rule.on(settings) : true;
}

/** Built-in tools that act on the workspace, which the working directory scopes. */
const WORKSPACE_TOOLS: ReadonlySet<string> = new Set(["Read", "Glob", "Grep", "Write", "Edit", "Bash"]);

/**
 * What the system prompt adds for an agent with a working directory and a tool that acts on the workspace: where it
 * works, so that the model writes paths there rather than meeting refusals. Empty otherwise.
 */
export function workingDirectoryInstructions(settings: ToolSettings): string {
  const folder = settings.workingDirectory;
  if (folder === "/" || !enabledBuiltins(settings).some((name) => WORKSPACE_TOOLS.has(name))) return "";
  const path = toAgentPath(folder);
  return (
    `\n\nYour working directory is ${path}: relative paths resolve against it, the shell starts in it, and files ` +
    "outside it cannot be read or changed."
  );
}

/**
 * Seed 004's rule 4: a CLAUDE.md in the working directory is a warning. Claude Code would load it as instructions,
 * beside the agent's own; Outpost does not (the agent's instructions are its whole system prompt), so the file is
 * only a file, and whoever seeded it should know. `paths` are the task's seeded files, as store paths.
 */
export function workingDirectoryWarnings(
  settings: Pick<ToolSettings, "workingDirectory">,
  paths: readonly string[],
): string[] {
  const folder = settings.workingDirectory;
  if (folder === "/") return [];
  const file = `${folder}/CLAUDE.md`;
  if (!paths.includes(file)) return [];
  return [
    `${toAgentPath(file)} is in the agent's working directory (rule 4): Outpost does not load CLAUDE.md as ` +
      "instructions, so it is an ordinary file the agent may read; the agent's instructions are its system prompt.",
  ];
}
