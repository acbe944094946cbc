// The task's workspace: a virtual filesystem kept in the task's Durable Object (SQLite), with large files spilled
// to R2, so it survives evictions and restarts. Paths here are absolute within the workspace ("/src/a.ts"); agents
// see them under AgentContext.workspace ("/workspace/src/a.ts") and the API as relative paths ("src/a.ts").
// Changes are made through a WorkspaceFs and committed in one transaction, so a tool call that is interrupted
// leaves the workspace as it was. How large it may grow is limits.ts; its paths are paths.ts.
import type { BlobStore } from "../blob-store/blob-store.ts";
import { MAX_FILE_BYTES, MAX_WORKSPACE_BYTES, MAX_WORKSPACE_ENTRIES } from "./limits.ts";
import { parentOf } from "./paths.ts";

/** Files above this live in R2 rather than in a SQLite row (rows must stay under 2 MB). */
export const SPILL_BYTES = 256 * 1024;

export type NodeType = "file" | "directory";

export type WorkspaceRow = {
  path: string;
  type: NodeType;
  size: number;
  mode: number;
  mtime: number;
};

/** What a commit writes: a new state of a path, or null to delete it. */
export type WorkspaceChange =
  | { type: "file"; content: Uint8Array; mode: number; mtime: number }
  | { type: "directory"; mode: number; mtime: number }
  | null;

export interface WorkspaceEntry {
  path: string;
  type: NodeType;
  size: number;
  modified_at: string;
}

export class WorkspaceFullError extends Error {}

/** Another commit changed the workspace under this one (e.g. removed a folder it writes into). */
export class WorkspaceConflictError extends Error {}

/** Where a task's large workspace files live in R2 (outside runs/<id>/, which is the run bundle). */
export function workspacePrefix(taskId: string): string {
  return `workspaces/${taskId}/`;
}

export class Workspace {
  private readonly sql: SqlStorage;
  private readonly bucket: BlobStore;
  private readonly keyPrefix: () => string;
  private readonly transaction: <T>(fn: () => T) => T;

  constructor(sql: SqlStorage, bucket: BlobStore, keyPrefix: () => string, transaction: <T>(fn: () => T) => T) {
    this.sql = sql;
    this.bucket = bucket;
    this.keyPrefix = keyPrefix;
    this.transaction = transaction;
  }

  /** One path's metadata; "/" always exists. */
  stat(path: string): WorkspaceRow | undefined {
    if (path === "/") return { path: "/", type: "directory", size: 0, mode: 0o755, mtime: 0 };
    return this.sql
      .exec<WorkspaceRow>("SELECT path, type, size, mode, mtime FROM workspace_files WHERE path = ?", path)
      .toArray()[0];
  }

  children(dir: string): WorkspaceRow[] {
    return this.sql
      .exec<WorkspaceRow>(
        "SELECT path, type, size, mode, mtime FROM workspace_files WHERE parent = ? ORDER BY path",
        dir,
      )
      .toArray();
  }

  /** Every path strictly under `dir`. */
  descendants(dir: string): string[] {
    const prefix = dir === "/" ? "/" : `${dir}/`;
    // Every path under the prefix sorts before the prefix with its final "/" raised to "0", whatever bytes follow
    // (a "\uffff" bound would miss names whose UTF-8 starts above EF BF BF, such as emoji).
    return this.sql
      .exec<{ path: string }>(
        "SELECT path FROM workspace_files WHERE path > ? AND path < ? ORDER BY path",
        prefix,
        `${prefix.slice(0, -1)}0`,
      )
      .toArray()
      .map((r) => r.path);
  }

  allPaths(): string[] {
    return this.sql
      .exec<{ path: string }>("SELECT path FROM workspace_files ORDER BY path")
      .toArray()
      .map((r) => r.path);
  }

  /** Every file and directory, for the API. */
  list(): WorkspaceEntry[] {
    return this.sql
      .exec<WorkspaceRow>("SELECT path, type, size, mode, mtime FROM workspace_files ORDER BY path")
      .toArray()
      .map((r) => ({
        path: r.path.slice(1),
        type: r.type,
        size: r.size,
        modified_at: new Date(r.mtime).toISOString(),
      }));
  }

  totalBytes(): number {
    return this.sql.exec<{ total: number | null }>("SELECT SUM(size) AS total FROM workspace_files").one().total ?? 0;
  }

  /** Where a file's bytes are: inline (a SQLite row) or an R2 key; null if there is no such file. */
  locate(path: string): { inline: Uint8Array } | { r2Key: string } | null {
    const row = this.sql
      .exec<{ type: string; content: ArrayBuffer | null; r2_key: string | null }>(
        "SELECT type, content, r2_key FROM workspace_files WHERE path = ?",
        path,
      )
      .toArray()[0];
    if (row?.type !== "file") return null;
    return row.r2_key ? { r2Key: row.r2_key } : { inline: new Uint8Array(row.content ?? new ArrayBuffer(0)) };
  }

  /** A file's bytes, or null if there is no such file. */
  async read(path: string): Promise<Uint8Array | null> {
    const row = this.sql
      .exec<{ type: string; content: ArrayBuffer | null; r2_key: string | null }>(
        "SELECT type, content, r2_key FROM workspace_files WHERE path = ?",
        path,
      )
      .toArray()[0];
    if (row?.type !== "file") return null;
    if (row.r2_key) {
      const object = await this.bucket.get(row.r2_key);
      if (!object) throw new Error(`workspace file ${path} is missing from R2 (${row.r2_key})`);
      return new Uint8Array(await object.arrayBuffer());
    }
    return new Uint8Array(row.content ?? new ArrayBuffer(0));
  }

  /** The result a tool call committed with its changes, if it did. */
  settled<T>(key: string): T | undefined {
    const row = this.sql
      .exec<{ result: string }>("SELECT result FROM workspace_settled WHERE key = ?", key)
      .toArray()[0];
    return row ? (JSON.parse(row.result) as T) : undefined;
  }

  /**
   * Creates files (and their folders) before a run starts: path → UTF-8 content. Synchronous, for the caller's
   * transaction (the task and its files are created together); seeded files are small enough for a row.
   */
  seed(files: readonly [string, string][]): void {
    const now = Date.now();
    const changes = new Map<string, WorkspaceChange>();
    for (const [path, content] of files) {
      for (let dir = parentOf(path); dir !== "/"; dir = parentOf(dir)) {
        if (!changes.has(dir) && !this.stat(dir)) changes.set(dir, { type: "directory", mode: 0o755, mtime: now });
      }
      const bytes = new TextEncoder().encode(content);
      if (bytes.byteLength > SPILL_BYTES) throw new WorkspaceFullError(`${path} is too large to seed`);
      changes.set(path, { type: "file", content: bytes, mode: 0o644, mtime: now });
    }
    this.apply(changes, new Map());
  }

  /**
   * Applies a set of changes atomically, with `settle` (a tool call's result under its key) when given. Large
   * files go to R2 first; then every row changes in one transaction, which also re-checks the limits and that
   * every new path has a folder to live in (a concurrent commit may have removed it), and rolls back if not.
   * Replaced R2 objects are deleted last; an aborted commit deletes the ones it uploaded.
   */
  async commit(
    changes: ReadonlyMap<string, WorkspaceChange>,
    settle?: { key: string; result: unknown },
  ): Promise<void> {
    if (changes.size === 0 && !settle) return;
    for (const [path, change] of changes) {
      if (change?.type === "file" && change.content.byteLength > MAX_FILE_BYTES) {
        throw new WorkspaceFullError(`${path} is larger than the ${MAX_FILE_BYTES / 1024 / 1024} MiB limit per file`);
      }
    }
    const spilled = new Map<string, string>();
    for (const [path, change] of changes) {
      if (change?.type !== "file" || change.content.byteLength <= SPILL_BYTES) continue;
      const key = `${this.keyPrefix()}${crypto.randomUUID()}`;
      await this.bucket.put(key, change.content);
      spilled.set(path, key);
    }
    let replaced: string[];
    try {
      replaced = this.transaction(() => this.apply(changes, spilled, settle));
    } catch (error) {
      if (spilled.size > 0) await this.bucket.delete([...spilled.values()]).catch(() => undefined);
      throw error;
    }
    if (replaced.length > 0) await this.bucket.delete(replaced).catch(() => undefined);
  }

  /** Writes the rows of a commit; call inside a transaction. Returns the R2 keys the changes made obsolete. */
  private apply(
    changes: ReadonlyMap<string, WorkspaceChange>,
    spilled: ReadonlyMap<string, string>,
    settle?: { key: string; result: unknown },
  ): string[] {
    const obsolete: string[] = [];
    if (settle) {
      this.sql.exec(
        "INSERT OR REPLACE INTO workspace_settled (key, result) VALUES (?, ?)",
        settle.key,
        JSON.stringify(settle.result),
      );
    }
    for (const [path, change] of changes) {
      const old = this.sql
        .exec<{ r2_key: string | null }>("SELECT r2_key FROM workspace_files WHERE path = ?", path)
        .toArray()[0];
      if (old?.r2_key) obsolete.push(old.r2_key);
      if (change === null) {
        this.sql.exec("DELETE FROM workspace_files WHERE path = ?", path);
        continue;
      }
      const key = spilled.get(path) ?? null;
      const content = change.type === "file" && !key ? change.content : null;
      this.sql.exec(
        `INSERT INTO workspace_files (path, parent, type, content, r2_key, size, mode, mtime) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(path) DO UPDATE SET type = excluded.type, content = excluded.content, r2_key = excluded.r2_key,
           size = excluded.size, mode = excluded.mode, mtime = excluded.mtime`,
        path,
        parentOf(path),
        change.type,
        content,
        key,
        change.type === "file" ? change.content.byteLength : 0,
        change.mode,
        change.mtime,
      );
    }
    for (const [path, change] of changes) {
      if (change === null) continue;
      const parent = parentOf(path);
      if (parent !== "/" && this.stat(parent)?.type !== "directory") {
        throw new WorkspaceConflictError(`${parent} is no longer a folder, so ${path} cannot be saved`);
      }
    }
    const totals = this.sql
      .exec<{ bytes: number | null; entries: number }>(
        "SELECT SUM(size) AS bytes, COUNT(*) AS entries FROM workspace_files",
      )
      .one();
    if ((totals.bytes ?? 0) > MAX_WORKSPACE_BYTES) {
      throw new WorkspaceFullError(`the workspace would exceed its ${MAX_WORKSPACE_BYTES / 1024 / 1024} MiB limit`);
    }
    if (totals.entries > MAX_WORKSPACE_ENTRIES) {
      throw new WorkspaceFullError(
        `the workspace would exceed its limit of ${MAX_WORKSPACE_ENTRIES} files and folders`,
      );
    }
    return obsolete;
  }
}
