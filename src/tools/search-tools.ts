// Glob and Grep (seed 000 built-ins): finding files of the task's workspace by name and by content. Inputs follow
// the shapes models already know from Claude Code (pattern, path, glob, output_mode …). Grep uses RE2 and bounds
// what one search reads, so a model-written search cannot stall the task's object. Every problem is an is_error
// result that says what to do.
import { minimatch } from "minimatch";
import type { RE2JS } from "re2js";
import { z } from "zod";
import { lazyModule } from "../lib/lazy-module.ts";
import { toAgentPath, toStorePath } from "../workspace/paths.ts";
import { WORKSPACE_ROOT } from "../workspace/root.ts";
import { WorkspaceFs } from "../workspace/workspace-fs.ts";
import { defineTool } from "./define-tool.ts";
import { guarded, isBinary } from "./file-tools.ts";
import { clipText } from "./result-cap.ts";
import { type BuiltinTool, type ToolContext, toolError } from "./tool.ts";

/** RE2 for Grep, loaded on first use. */
const loadRe2 = lazyModule(() => import("re2js"));

const MAX_MATCHES = 500;
/** Grep reads files whole; these bound what one search reads and how long a line it tests. */
const MAX_GREP_FILE_BYTES = 8 * 1024 * 1024;
const MAX_GREP_TOTAL_BYTES = 64 * 1024 * 1024;
const MAX_LINE_SCAN = 100_000;

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
    'Find workspace files by glob pattern ("**/*.ts", "src/*.md"), newest first. path narrows the search to a folder (default: the working directory).',
  input: z.strictObject({
    pattern: z.string().min(1).describe("A glob pattern, matched against paths relative to path."),
    path: z.string().optional().describe("Folder to search in (default: the working directory)."),
  }),
  example: '{"pattern": "**/*.ts"}',
  readOnly: true,
  run: (args, ctx) =>
    guarded(async () => {
      const dir = toStorePath(args.path ?? ".", ctx.settings.workingDirectory);
      const prefix = dir === "/" ? "/" : `${dir}/`;
      const matches = filesUnder(ctx, dir)
        .filter((f) => minimatch(f.path.slice(prefix.length), args.pattern, { dot: true }))
        .sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path));
      if (matches.length === 0) return { content: "No files match.", is_error: false };
      const shown = matches.slice(0, MAX_MATCHES).map((m) => toAgentPath(m.path));
      const more =
        matches.length > MAX_MATCHES ? `\n… and ${matches.length - MAX_MATCHES} more; narrow the pattern.` : "";
      return { content: clipText(shown.join("\n") + more), is_error: false };
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
    path: z.string().optional().describe("File or folder to search (default: the working directory)."),
    glob: z.string().optional().describe('Only files whose path matches this glob ("**/*.ts").'),
    output_mode: z.enum(["files_with_matches", "content", "count"]).optional(),
    case_insensitive: z.boolean().optional(),
    context: z.number().int().min(0).max(20).optional().describe("Lines of context around each match (content mode)."),
  }),
  example: '{"pattern": "TODO"}',
  readOnly: true,
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
      const target = toStorePath(args.path ?? ".", ctx.settings.workingDirectory);
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
      return { content: clipText([out.slice(0, MAX_MATCHES).join("\n"), ...notes].join("\n")), is_error: false };
    }),
});
