// Workspace paths: the store's own (absolute within the workspace, "/src/a.ts", normalized), and paths as tools
// receive them: absolute under the workspace root ("/workspace/src/a.ts") or relative to the agent's working
// directory (the workspace root unless the agent sets seed 004's working_directory). Anything that resolves outside
// the workspace, or outside the working directory, is refused with a message the model can act on.
import { WORKSPACE_ROOT } from "./root.ts";

export class WorkspacePathError extends Error {}

/**
 * The path inside the workspace store ("/src/a.ts"), or throws WorkspacePathError. `within` is the working
 * directory as a store path: a relative input resolves against it, and a path outside it is refused.
 */
export function toStorePath(input: string, within = "/"): string {
  if (typeof input !== "string" || input.trim() === "") throw new WorkspacePathError("The path is empty.");
  if (input.includes("\0")) throw new WorkspacePathError("The path contains a NUL character.");
  const absolute = input.startsWith("/") ? input : `${toAgentPath(within)}/${input}`;
  const raw = absolute.split("/").filter((s) => s && s !== ".");
  // Resolve ".." ourselves first: a path that climbs out of the workspace is an error, not clamped at its root.
  const stack: string[] = [];
  for (const segment of raw) {
    if (segment === "..") {
      if (stack.length === 0) throw new WorkspacePathError(`${input} is outside the workspace (${WORKSPACE_ROOT}).`);
      stack.pop();
    } else stack.push(segment);
  }
  const full = `/${stack.join("/")}`;
  if (full !== WORKSPACE_ROOT && !full.startsWith(`${WORKSPACE_ROOT}/`)) {
    throw new WorkspacePathError(`${input} is outside the workspace; use paths under ${WORKSPACE_ROOT}/.`);
  }
  const path = normalize(full.slice(WORKSPACE_ROOT.length));
  if (!isWithin(path, within)) {
    throw new WorkspacePathError(
      `${input} is outside the working directory ${toAgentPath(within)}; use paths under it (or relative to it).`,
    );
  }
  return path;
}

/** Whether store path `path` is `dir` or inside it. */
export function isWithin(path: string, dir: string): boolean {
  return dir === "/" || path === dir || path.startsWith(`${dir}/`);
}

/** The path the agent sees for a store path. */
export function toAgentPath(storePath: string): string {
  return storePath === "/" ? WORKSPACE_ROOT : `${WORKSPACE_ROOT}${storePath}`;
}

/** "/a/b/c" → "/a/b"; "/a" → "/". */
export function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** Normalizes an absolute path: no empty segments, no ".", ".." resolved (never above the root). */
export function normalize(path: string): string {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (!segment || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  return `/${out.join("/")}`;
}
