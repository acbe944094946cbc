// How large a task's workspace may grow: a file, the whole workspace, and how many files and folders it holds. The
// store (workspace.ts) checks every commit against them; the Worker checks a task's seed files before its object
// sees them (firstSeedOverflow).
import { parentOf } from "./paths.ts";

/** Largest single file. */
export const MAX_FILE_BYTES = 32 * 1024 * 1024;
/** Largest workspace. */
export const MAX_WORKSPACE_BYTES = 256 * 1024 * 1024;
/** Most files and folders in a workspace (its listing is one response). */
export const MAX_WORKSPACE_ENTRIES = 10_000;

/**
 * The index of the first of these file paths whose file, with the folders it implies, takes an empty workspace past
 * MAX_WORKSPACE_ENTRIES; -1 if they all fit. Lets the Worker refuse seed files before the task's object sees them.
 */
export function firstSeedOverflow(paths: readonly string[]): number {
  const entries = new Set<string>();
  for (const [index, path] of paths.entries()) {
    // A path already counted has had its folders counted with it.
    for (let at = path; at !== "/" && !entries.has(at); at = parentOf(at)) entries.add(at);
    if (entries.size > MAX_WORKSPACE_ENTRIES) return index;
  }
  return -1;
}
