// Read, Write, Edit, Glob and Grep (seed 000 built-ins) over the task's workspace. Inputs follow the shapes models
// already know from Claude Code (file_path, old_string/new_string, pattern …). Paths are absolute under
// /workspace or relative to it. Every problem is an is_error result that says what to do.
import { minimatch } from "minimatch";
import type { RE2JS } from "re2js";
import { z } from "zod";
import type { ToolResult } from "../contracts/tool-result.ts";
import { lazyModule } from "../lib/lazy-module.ts";
import { toAgentPath, toStorePath, WorkspacePathError } from "../workspace/paths.ts";
import { WORKSPACE_ROOT } from "../workspace/root.ts";
import { WorkspaceConflictError, WorkspaceFullError } from "../workspace/workspace.ts";
import { WorkspaceFs } from "../workspace/workspace-fs.ts";
import { defineTool } from "./define-tool.ts";
import { type BuiltinTool, type ToolContext, toolError } from "./tool.ts";

/** RE2 for Grep, loaded on first use. */
const loadRe2 = lazyModule(() => import("re2js"));

const DEFAULT_READ_LINES = 2000;
const MAX_LINE_CHARS = 2000;
const MAX_MATCHES = 500;
/** Grep reads files whole; these bound what one search reads and how long a line it tests. */
const MAX_GREP_FILE_BYTES = 8 * 1024 * 1024;
const MAX_GREP_TOTAL_BYTES = 64 * 1024 * 1024;
const MAX_LINE_SCAN = 100_000;
/** The most text one result sends back to the model. */
export const MAX_RESULT_CHARS = 30_000;

/** Runs `fn`, turning path and filesystem errors into results the model can act on. */
async function guarded(fn: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await fn();
  } catch (error) {
    if (
      error instanceof WorkspacePathError ||
      error instanceof WorkspaceFullError ||
      error instanceof WorkspaceConflictError
    ) {
      return toolError(error.message);
    }
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && error instanceof Error) return toolError(error.message);
    throw error;
  }
}

function isBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

function clip(text: string): string {
  return text.length <= MAX_RESULT_CHARS
    ? text
    : `${text.slice(0, MAX_RESULT_CHARS)}\n… [cut at ${MAX_RESULT_CHARS} characters of ${text.length}]`;
}

// ---- Read -------------------------------------------------------------------------------------------------------

const PATH = "Path under /workspace, absolute or relative to it.";

export const readTool: BuiltinTool = defineTool({
  name: "Read",
  description:
    "Read a file of the workspace. Returns numbered lines (cat -n style). Use offset (first line, 1-based) and " +
    `limit (default ${DEFAULT_READ_LINES}) for long files.`,
  input: z.strictObject({
    file_path: z.string().min(1).describe(PATH),
    offset: z.number().int().positive().optional().describe("First line to read, 1-based."),
    limit: z.number().int().positive().max(10_000).optional().describe("How many lines to read."),
  }),
  example: '{"file_path": "/workspace/…"}',
  run: (args, ctx) =>
    guarded(async () => {
      const path = toStorePath(args.file_path);
      const bytes = await new WorkspaceFs(ctx.workspace, {
        readOnly: true,
        displayRoot: WORKSPACE_ROOT,
      }).readFileBuffer(path);
      if (isBinary(bytes)) {
        return { content: `${toAgentPath(path)} is a binary file of ${bytes.byteLength} bytes.`, is_error: false };
      }
      const lines = new TextDecoder().decode(bytes).split("\n");
      if (lines.at(-1) === "") lines.pop();
      if (lines.length === 0) return { content: `${toAgentPath(path)} is empty.`, is_error: false };
      const start = (args.offset ?? 1) - 1;
      if (start >= lines.length) {
        return toolError(`${toAgentPath(path)} has ${lines.length} lines; offset ${start + 1} is past the end.`);
      }
      const end = Math.min(lines.length, start + (args.limit ?? DEFAULT_READ_LINES));
      const body = lines
        .slice(start, end)
        .map(
          (line, i) =>
            `${String(start + i + 1).padStart(6)}\t${line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line}`,
        )
        .join("\n");
      const more = end < lines.length ? `\n… ${lines.length - end} more lines; read on with offset ${end + 1}.` : "";
      return { content: clip(body + more), is_error: false };
    }),
});

// ---- Write ------------------------------------------------------------------------------------------------------

export const writeTool: BuiltinTool = defineTool({
  name: "Write",
  description: "Create or overwrite a file of the workspace with the given content. Parent folders are created.",
  input: z.strictObject({
    file_path: z.string().min(1).describe(PATH),
    content: z.string().describe("The whole new content of the file."),
  }),
  example: '{"file_path": "…", "content": "…"}',
  changesWorkspace: true,
  run: (args, ctx) =>
    guarded(async () => {
      const path = toStorePath(args.file_path);
      if (path === "/") return toolError("Give a file path, not the workspace folder itself.");
      const fs = new WorkspaceFs(ctx.workspace, { readOnly: false, displayRoot: WORKSPACE_ROOT });
      const existed = await fs.exists(path);
      await fs.mkdir(path.slice(0, path.lastIndexOf("/")) || "/", { recursive: true });
      await fs.writeFile(path, args.content);
      const bytes = new TextEncoder().encode(args.content).byteLength;
      const result: ToolResult = {
        content: `${existed ? "Overwrote" : "Created"} ${toAgentPath(path)} (${bytes} bytes).`,
        is_error: false,
        details: { path: toAgentPath(path), bytes, created: !existed },
      };
      await fs.commit({ key: ctx.toolUseId, result });
      return result;
    }),
});

// ---- Edit -------------------------------------------------------------------------------------------------------

export const editTool: BuiltinTool = defineTool({
  name: "Edit",
  description:
    "Replace old_string with new_string in a workspace file. old_string must occur exactly once unless " +
    "replace_all is true; include enough surrounding text to make it unique.",
  input: z.strictObject({
    file_path: z.string().min(1).describe(PATH),
    old_string: z.string().min(1).describe("The exact text to replace."),
    new_string: z.string().describe("The text to put in its place."),
    replace_all: z.boolean().optional().describe("Replace every occurrence (default false)."),
  }),
  example: '{"file_path", "old_string", "new_string"}',
  changesWorkspace: true,
  run: (args, ctx) =>
    guarded(async () => {
      const { old_string: from, new_string: to, replace_all: all } = args;
      if (from === to) return toolError("old_string and new_string are the same; there is nothing to change.");
      const path = toStorePath(args.file_path);
      const fs = new WorkspaceFs(ctx.workspace, { readOnly: false, displayRoot: WORKSPACE_ROOT });
      const text = await fs.readFile(path);
      const count = text.split(from).length - 1;
      if (count === 0) {
        return toolError(`old_string was not found in ${toAgentPath(path)}; Read the file and copy the text exactly.`);
      }
      if (count > 1 && !all) {
        return toolError(
          `old_string occurs ${count} times in ${toAgentPath(path)}; add surrounding text to make it unique, or set replace_all.`,
        );
      }
      await fs.writeFile(path, all ? text.split(from).join(to) : text.replace(from, () => to));
      const replacements = all ? count : 1;
      const result: ToolResult = {
        content: `Edited ${toAgentPath(path)}: ${replacements} replacement${replacements === 1 ? "" : "s"}.`,
        is_error: false,
        details: { path: toAgentPath(path), replacements },
      };
      await fs.commit({ key: ctx.toolUseId, result });
      return result;
    }),
});

// ---- Glob -------------------------------------------------------------------------------------------------------

/** Files (not folders) under `dir` with their modification times, from the stored workspace. */
function filesUnder(ctx: ToolContext, dir: string): { path: string; mtime: number }[] {
  const prefix = dir === "/" ? "/" : `${dir}/`;
  return ctx.workspace
    .list()
    .filter((e) => e.type === "file")
    .map((e) => ({ path: `/${e.path}`, mtime: Date.parse(e.modified_at) }))
    .filter((e) => dir === "/" || e.path.startsWith(prefix));
}

export const globTool: BuiltinTool = defineTool({
  name: "Glob",
  description:
    'Find workspace files by glob pattern ("**/*.ts", "src/*.md"), newest first. path narrows the search to a folder.',
  input: z.strictObject({
    pattern: z.string().min(1).describe("A glob pattern, matched against paths relative to path."),
    path: z.string().optional().describe("Folder to search in (default: the workspace)."),
  }),
  example: '{"pattern": "**/*.ts"}',
  run: (args, ctx) =>
    guarded(async () => {
      const dir = toStorePath(args.path ?? ".");
      const prefix = dir === "/" ? "/" : `${dir}/`;
      const matches = filesUnder(ctx, dir)
        .filter((f) => minimatch(f.path.slice(prefix.length), args.pattern, { dot: true }))
        .sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path));
      if (matches.length === 0) return { content: "No files match.", is_error: false };
      const shown = matches.slice(0, MAX_MATCHES).map((m) => toAgentPath(m.path));
      const more =
        matches.length > MAX_MATCHES ? `\n… and ${matches.length - MAX_MATCHES} more; narrow the pattern.` : "";
      return { content: clip(shown.join("\n") + more), is_error: false };
    }),
});

// ---- Grep -------------------------------------------------------------------------------------------------------

export const grepTool: BuiltinTool = defineTool({
  name: "Grep",
  description:
    "Search workspace files with a regular expression (RE2 syntax, as in ripgrep). output_mode: files_with_matches " +
    "(default), content (matching lines with line numbers; context adds lines around them) or count.",
  input: z.strictObject({
    pattern: z.string().min(1).describe("Regular expression."),
    path: z.string().optional().describe("File or folder to search (default: the workspace)."),
    glob: z.string().optional().describe('Only files whose path matches this glob ("**/*.ts").'),
    output_mode: z.enum(["files_with_matches", "content", "count"]).optional(),
    case_insensitive: z.boolean().optional(),
    context: z.number().int().min(0).max(20).optional().describe("Lines of context around each match (content mode)."),
  }),
  example: '{"pattern": "TODO"}',
  run: (args, ctx) =>
    guarded(async () => {
      // RE2 semantics (linear time): a model-written pattern cannot backtrack catastrophically and stall the object.
      const { RE2JS: RE2 } = await loadRe2();
      let regex: RE2JS;
      try {
        regex = RE2.compile(args.pattern, args.case_insensitive ? RE2.CASE_INSENSITIVE : 0);
      } catch (error) {
        return toolError(
          `Invalid regular expression (RE2 syntax: no backreferences or lookaround): ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const target = toStorePath(args.path ?? ".");
      const fs = new WorkspaceFs(ctx.workspace, { readOnly: true, displayRoot: WORKSPACE_ROOT });
      const targetStat = await fs.stat(target);
      const candidates = targetStat.isFile ? [{ path: target, mtime: 0 }] : filesUnder(ctx, target);
      const prefix = target === "/" ? "/" : `${target}/`;
      const mode = args.output_mode ?? "files_with_matches";
      const out: string[] = [];
      const skippedLarge: string[] = [];
      let scanned = 0;
      let stoppedEarly = false;
      let matchedFiles = 0;
      for (const file of candidates) {
        if (
          args.glob &&
          !minimatch(targetStat.isFile ? file.path.slice(1) : file.path.slice(prefix.length), args.glob, {
            dot: true,
            matchBase: true,
          })
        )
          continue;
        if (ctx.signal.aborted) throw ctx.signal.reason;
        const size = (await fs.stat(file.path)).size;
        if (size > MAX_GREP_FILE_BYTES) {
          skippedLarge.push(toAgentPath(file.path));
          continue;
        }
        scanned += size;
        if (scanned > MAX_GREP_TOTAL_BYTES) {
          stoppedEarly = true;
          break;
        }
        const bytes = await fs.readFileBuffer(file.path);
        if (isBinary(bytes)) continue;
        const lines = new TextDecoder().decode(bytes).split("\n");
        const hits = lines.flatMap((line, i) =>
          regex.matcher(line.length > MAX_LINE_SCAN ? line.slice(0, MAX_LINE_SCAN) : line).find() ? [i] : [],
        );
        if (hits.length === 0) continue;
        matchedFiles++;
        const shown = toAgentPath(file.path);
        if (mode === "files_with_matches") out.push(shown);
        else if (mode === "count") out.push(`${shown}:${hits.length}`);
        else {
          const around = args.context ?? 0;
          const keep = new Set<number>();
          for (const hit of hits)
            for (let i = Math.max(0, hit - around); i <= Math.min(lines.length - 1, hit + around); i++) keep.add(i);
          for (const i of [...keep].sort((a, b) => a - b))
            out.push(`${shown}:${i + 1}${hits.includes(i) ? ":" : "-"}${lines[i]}`);
        }
        if (out.length >= MAX_MATCHES) break;
      }
      const notes = [
        ...(out.length >= MAX_MATCHES ? [`… stopped at ${MAX_MATCHES} lines; narrow the search.`] : []),
        ...(stoppedEarly
          ? [`… stopped after ${MAX_GREP_TOTAL_BYTES / 1024 / 1024} MiB of files; narrow the search.`]
          : []),
        ...(skippedLarge.length > 0
          ? [`Not searched (over ${MAX_GREP_FILE_BYTES / 1024 / 1024} MiB; use Bash grep): ${skippedLarge.join(", ")}`]
          : []),
      ];
      if (matchedFiles === 0) return { content: ["No matches.", ...notes].join("\n"), is_error: false };
      return { content: clip([out.slice(0, MAX_MATCHES).join("\n"), ...notes].join("\n")), is_error: false };
    }),
});
