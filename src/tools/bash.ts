// Bash (seed 002 run_command) on the just-bash library: a simulated bash with ~80 commands (grep, sed, awk, jq,
// find …) that runs inside workerd with no processes. /workspace is the task's workspace, and the working directory
// unless the agent sets seed 004's working_directory: then only that folder of it is mounted, so the shell reaches
// nothing else. /tmp is scratch space that lasts one command. A command's workspace changes commit together when it ends, so an interrupted command
// changes nothing. The result follows seed 002: CommandExecution → StepExecutionResult, with the full output
// saved in the run bundle as artifacts/turn_<n>_<step>_stdout.txt and _stderr.txt.
import type { Bash, CommandName, SecureFetch } from "just-bash";
import { z } from "zod";
import type { ToolResult } from "../contracts/tool-result.ts";
import { lazyModule } from "../lib/lazy-module.ts";
import { guardedFetch } from "../net/guarded-fetch.ts";
import { toAgentPath } from "../workspace/paths.ts";
import { WORKSPACE_ROOT } from "../workspace/root.ts";
import { SubtreeFs } from "../workspace/subtree-fs.ts";
import { WorkspaceConflictError, WorkspaceFullError } from "../workspace/workspace.ts";
import { WorkspaceFs } from "../workspace/workspace-fs.ts";
import { defineTool } from "./define-tool.ts";
import { MAX_RESULT_CHARS } from "./result-cap.ts";
import type { BuiltinTool, ToolContext } from "./tool.ts";

/** just-bash, loaded on first use (a Worker whose agents never run a shell never evaluates it). */
const loadJustBash = lazyModule(() => import("just-bash"));

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_TIMEOUT_MS = 600_000;

/** Seed 002 CommandExecution. */
export interface CommandExecution {
  command: string;
  exit_code: number;
  stdout: string;
  stderr: string;
}

/** Seed 002 StepExecutionResult. */
export interface StepExecutionResult {
  step_id: string;
  exit_code: number;
  stdout_summary: string;
  stderr_summary: string;
  retry_count: number;
  status: "success" | "failed" | "skipped";
  stdout_artifact: string | null;
  stderr_artifact: string | null;
}

const SUMMARY_CHARS = 500;

export const bashTool: BuiltinTool = defineTool({
  name: "Bash",
  description:
    "Run a bash command in the task's workspace (/workspace), in the working directory. The shell is simulated: " +
    "common commands (ls, cat, grep, sed, awk, jq, find, sort, head, wc, diff, base64 …), pipes, redirects, " +
    "loops and functions work; there are no real processes, package managers or compilers, and /tmp is cleared " +
    "after each command. Output longer than 30,000 characters is cut; the full text is kept in the run bundle.",
  input: z.strictObject({
    command: z.string().min(1).max(100_000).describe("The command to run."),
    timeout: z
      .number()
      .int()
      .positive()
      .max(MAX_TIMEOUT_MS)
      .optional()
      .describe(`Milliseconds (default ${DEFAULT_TIMEOUT_MS}, max ${MAX_TIMEOUT_MS}).`),
    description: z.string().max(500).optional().describe("What the command does, in a few words."),
  }),
  example: '{"command": "ls"}',
  changesWorkspace: true,
  async run(args, ctx) {
    const { command } = args;
    const timeoutMs = args.timeout ?? DEFAULT_TIMEOUT_MS;
    const workspaceFs = new WorkspaceFs(ctx.workspace, {
      readOnly: !ctx.settings.fileSystem.write,
      displayRoot: WORKSPACE_ROOT,
    });
    const shell = await createShell(ctx, workspaceFs, timeoutMs);
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
    let run: { stdout: string; stderr: string; exitCode: number };
    try {
      run = await shell.exec(command, { signal });
    } catch (error) {
      // just-bash lets a filesystem error in a redirection escape exec (e.g. EROFS, or ENOENT for a missing
      // folder); in bash that is an error message and exit status 1.
      const code = (error as { code?: unknown }).code;
      if (ctx.signal.aborted || typeof code !== "string" || !(error instanceof Error)) throw error;
      run = { stdout: "", stderr: `bash: ${error.message}\n`, exitCode: 1 };
    }
    if (ctx.signal.aborted) throw ctx.signal.reason;
    // Either deadline may fire first: the tool's signal, or just-bash's own (exit 124, "execution deadline").
    const timedOut = signal.aborted || (run.exitCode === 124 && /execution deadline/.test(run.stderr));
    const execution: CommandExecution = {
      command,
      exit_code: timedOut ? 124 : run.exitCode,
      stdout: run.stdout,
      stderr: timedOut ? `${run.stderr}\nbash: the command did not finish within ${timeoutMs} ms` : run.stderr,
    };
    // A command's changes to the workspace are kept whatever its exit code, as in a real shell. Its output goes
    // to the bundle first; then the changes and the call's result commit together, so a replay after an
    // eviction returns this result instead of running the command again on changed files.
    const changed = workspaceFs.changedPaths();
    const artifacts = await saveOutput(ctx, execution);
    const result = report(ctx, execution, artifacts, changed, null);
    if (!workspaceFs.dirty) return result;
    try {
      await workspaceFs.commit({ key: ctx.toolUseId, result });
      return result;
    } catch (error) {
      if (!(error instanceof WorkspaceFullError || error instanceof WorkspaceConflictError)) throw error;
      return report(ctx, execution, artifacts, [], `The command's file changes were not saved: ${error.message}.`);
    }
  },
});

async function createShell(ctx: ToolContext, workspaceFs: WorkspaceFs, timeoutMs: number): Promise<Bash> {
  // Loaded on first use: a Worker whose agents never run a shell never evaluates just-bash.
  const { Bash, defineCommand, getCommandNames, getNetworkCommandNames, InMemoryFs, MountableFs } =
    await loadJustBash();
  const { bash } = ctx.settings;
  const excluded = new Set(bash.excluded_commands);
  const available = [...getCommandNames(), ...(bash.allow_unsafe ? getNetworkCommandNames() : [])] as CommandName[];
  const commands = available.filter((name) => !excluded.has(name));
  const network = bash.allow_unsafe ? { fetch: shellFetch(ctx) } : {};
  // A Bash on a fresh InMemoryFs writes /bin, /usr/bin (a stub per command, which is how commands are found on
  // PATH; excluded ones too, so their refusal below is found) and /dev into it; the workspace is mounted over that.
  const base = new InMemoryFs();
  new Bash({ fs: base, commands: available, ...network });
  // An agent with a working directory gets that folder alone, where it is in the workspace.
  const folder = ctx.settings.workingDirectory;
  const cwd = toAgentPath(folder);
  const mounted = folder === "/" ? workspaceFs : new SubtreeFs(workspaceFs, folder);
  const fs = new MountableFs({ base, mounts: [{ mountPoint: cwd, filesystem: mounted }] });
  const refused = bash.excluded_commands.map((name) =>
    defineCommand(name, async () => ({
      stdout: "",
      stderr: `${name}: not allowed for this agent (bash.excluded_commands)\n`,
      exitCode: 126,
    })),
  );
  return new Bash({
    fs,
    cwd,
    env: { HOME: cwd, PWD: cwd, USER: "agent", TZ: "UTC" },
    // Hardened limits: loops and output stay bounded (workerd also caps zlib output below the normal profile).
    executionLimitProfile: "hardened",
    executionLimits: { maxExecutionTimeMs: timeoutMs },
    commands,
    customCommands: refused,
    ...network,
  });
}

/** curl for an agent with bash.allow_unsafe: the outbound guard and the WebFetch limits apply. */
function shellFetch(ctx: ToolContext): SecureFetch {
  return async (url, options) => {
    const response = await guardedFetch(url, {
      policy: ctx.outbound,
      maxBytes: ctx.settings.webFetch.max_bytes,
      timeoutMs: Math.min(
        options?.timeoutMs ?? ctx.settings.webFetch.timeout_seconds * 1000,
        ctx.settings.webFetch.timeout_seconds * 1000,
      ),
      ...(options?.method ? { method: options.method } : {}),
      ...(options?.body !== undefined ? { body: options.body } : {}),
      ...(options?.headers ? { headers: Object.fromEntries(new Headers(options.headers)) } : {}),
      maxRedirects: options?.followRedirects === false ? 0 : (options?.maxRedirects ?? 5),
      ...(options?.signal ? { signal: options.signal } : {}),
    });
    return {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
      body: response.body,
      url: response.url,
    };
  };
}

/** Saves a command's full output in the run bundle; returns the artifact paths (null for empty output). */
async function saveOutput(
  ctx: ToolContext,
  execution: CommandExecution,
): Promise<{ stdout: string | null; stderr: string | null }> {
  const stem = `artifacts/turn_${ctx.turnIndex}_${ctx.stepLabel}`;
  const stdout = execution.stdout ? `${stem}_stdout.txt` : null;
  const stderr = execution.stderr ? `${stem}_stderr.txt` : null;
  if (stdout) await ctx.runtime.artifact(stdout, execution.stdout);
  if (stderr) await ctx.runtime.artifact(stderr, execution.stderr);
  return { stdout, stderr };
}

function report(
  ctx: ToolContext,
  execution: CommandExecution,
  artifacts: { stdout: string | null; stderr: string | null },
  changed: string[],
  commitError: string | null,
): ToolResult {
  const step: StepExecutionResult = {
    step_id: ctx.stepLabel,
    exit_code: execution.exit_code,
    stdout_summary: execution.stdout.slice(0, SUMMARY_CHARS),
    stderr_summary: execution.stderr.slice(0, SUMMARY_CHARS),
    retry_count: 0,
    status: execution.exit_code === 0 && !commitError ? "success" : "failed",
    stdout_artifact: artifacts.stdout,
    stderr_artifact: artifacts.stderr,
  };
  const parts = [`exit code: ${execution.exit_code}`];
  if (execution.stdout) parts.push(`stdout:\n${cut(execution.stdout, artifacts.stdout)}`);
  if (execution.stderr) parts.push(`stderr:\n${cut(execution.stderr, artifacts.stderr)}`);
  if (commitError) parts.push(commitError);
  return {
    content: parts.join("\n"),
    is_error: step.status === "failed",
    details: {
      command: execution.command,
      step_result: step,
      changed_paths: changed.map((p) => `${WORKSPACE_ROOT}${p}`),
    },
  };
}

/** Long output: the head and the tail for the model, with where the rest is. */
function cut(text: string, artifact: string | null): string {
  if (text.length <= MAX_RESULT_CHARS) return text;
  const half = MAX_RESULT_CHARS / 2;
  return (
    `${text.slice(0, half)}\n… [${text.length - MAX_RESULT_CHARS} characters cut; the full output is ${artifact} ` +
    `in the run bundle] …\n${text.slice(-half)}`
  );
}
