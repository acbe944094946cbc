// Read, Write and Edit (seed 000 built-ins) over the task's workspace, and what the workspace tools share (the search
// tools, Glob and Grep, are search-tools.ts). Inputs follow the shapes models already know from Claude Code
// (file_path, old_string/new_string …). Paths are absolute under /workspace or relative to the working directory
// (the workspace, or the agent's working_directory, outside which nothing is reached). Every problem is an is_error
// result that says what to do.
import { z } from "zod";
import type { ToolResult } from "../contracts/tool-result.ts";
import { toAgentPath, toStorePath, WorkspacePathError } from "../workspace/paths.ts";
import { WORKSPACE_ROOT } from "../workspace/root.ts";
import { WorkspaceConflictError, WorkspaceFullError } from "../workspace/workspace.ts";
import { WorkspaceFs } from "../workspace/workspace-fs.ts";
import { defineTool } from "./define-tool.ts";
import { clipText } from "./result-cap.ts";
import { type BuiltinTool, toolError } from "./tool.ts";

const DEFAULT_READ_LINES = 2000;
const MAX_LINE_CHARS = 2000;

/** Runs `fn`, turning path and filesystem errors into results the model can act on. */
export async function guarded(fn: () => Promise<ToolResult>): Promise<ToolResult> {
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

/** Whether file content is binary rather than text (a NUL in its first 8000 bytes, as git and grep judge it). */
export function isBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

// ---- Read -------------------------------------------------------------------------------------------------------

const PATH = "Path of the file: absolute (under /workspace), or relative to the working directory.";

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
  readOnly: true,
  run: (args, ctx) =>
    guarded(async () => {
      const path = toStorePath(args.file_path, ctx.settings.workingDirectory);
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
      return { content: clipText(body + more), is_error: false };
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
      const path = toStorePath(args.file_path, ctx.settings.workingDirectory);
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
      const path = toStorePath(args.file_path, ctx.settings.workingDirectory);
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
