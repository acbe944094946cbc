// The workspace as just-bash's IFileSystem, and the one way tools change it: reads see the stored workspace plus
// this call's own changes; writes stay in memory until commit(), which stores them all in one transaction. A tool
// call that is interrupted (an eviction, a restart) therefore changes nothing, and running it again starts clean.
// With readOnly, every change fails with EROFS (an agent whose file_system.write is off).
import type { BufferEncoding, CpOptions, FsStat, IFileSystem, MkdirOptions, RmOptions } from "just-bash";
import { decode, encode, encodingOf } from "./encoding.ts";
import { isWithin, normalize, parentOf } from "./paths.ts";
import type { Workspace, WorkspaceChange } from "./workspace.ts";

type Node =
  | { type: "file"; content: Uint8Array; mode: number; mtime: number }
  | { type: "directory"; mode: number; mtime: number };

type Meta = { type: "file" | "directory"; size: number; mode: number; mtime: number };

/** Most file content one tool call may write before it commits (the object has 128 MB of memory in all). */
export const MAX_PENDING_BYTES = 64 * 1024 * 1024;

const FILE_MODE = 0o644;
const DIR_MODE = 0o755;

function fsError(code: string, text: string, op: string, path: string): Error {
  const error = new Error(`${code}: ${text}, ${op} '${path}'`) as Error & { code: string };
  error.code = code;
  return error;
}

export class WorkspaceFs implements IFileSystem {
  private readonly store: Workspace;
  private readonly readOnly: boolean;
  private readonly displayRoot: string;
  /** This call's changes: a node, or null for a deleted path. */
  private readonly changes = new Map<string, Node | null>();
  /** Bytes of file content held in `changes`, bounded so one call cannot exhaust the object's memory. */
  private pendingBytes = 0;

  /**
   * `displayRoot` is where the agent sees the workspace ("/workspace"): error messages name that path, as the shell
   * and the tools show them to the model, rather than the path inside the store.
   */
  constructor(store: Workspace, options: { readOnly: boolean; displayRoot?: string }) {
    this.store = store;
    this.readOnly = options.readOnly;
    this.displayRoot = options.displayRoot ?? "";
  }

  private error(code: string, text: string, op: string, path: string): Error {
    if (!this.displayRoot) return fsError(code, text, op, path);
    const inside = normalize(path);
    return fsError(code, text, op, inside === "/" ? this.displayRoot : `${this.displayRoot}${inside}`);
  }

  /** Whether anything was changed. */
  get dirty(): boolean {
    return this.changes.size > 0;
  }

  /** Paths changed by this call, for the tool's result. */
  changedPaths(): string[] {
    return [...this.changes.keys()].sort();
  }

  /**
   * Stores every change in one transaction, together with `settle` (a tool call's result under its key) when given:
   * the changes and the record that the call made them are never apart.
   */
  async commit(settle?: { key: string; result: unknown }): Promise<void> {
    const out = new Map<string, WorkspaceChange>();
    for (const [path, node] of this.changes) out.set(path, node);
    await this.store.commit(out, settle);
    this.changes.clear();
    this.pendingBytes = 0;
  }

  // ---- IFileSystem -------------------------------------------------------------------------------------------

  async readFile(path: string, options?: { encoding?: BufferEncoding | null } | BufferEncoding): Promise<string> {
    return decode(await this.readFileBuffer(path), encodingOf(options));
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    const p = normalize(path);
    const node = this.changes.get(p);
    if (node === null) throw this.error("ENOENT", "no such file or directory", "open", path);
    if (node?.type === "file") return node.content;
    if (node?.type === "directory") throw this.error("EISDIR", "illegal operation on a directory", "read", path);
    const meta = this.store.stat(p);
    if (!meta) throw this.error("ENOENT", "no such file or directory", "open", path);
    if (meta.type === "directory") throw this.error("EISDIR", "illegal operation on a directory", "read", path);
    return (await this.store.read(p)) ?? new Uint8Array();
  }

  async writeFile(path: string, content: string | Uint8Array, options?: unknown): Promise<void> {
    const p = this.writable(path, "open");
    const existing = this.meta(p);
    if (existing?.type === "directory") throw this.error("EISDIR", "illegal operation on a directory", "open", path);
    this.requireDirectory(parentOf(p), path);
    this.put(p, {
      type: "file",
      content: encode(content, encodingOf(options)),
      mode: existing?.mode ?? FILE_MODE,
      mtime: Date.now(),
    });
  }

  async appendFile(path: string, content: string | Uint8Array, options?: unknown): Promise<void> {
    const p = normalize(path);
    const before = this.meta(p) ? await this.readFileBuffer(p) : new Uint8Array();
    const added = encode(content, encodingOf(options));
    const joined = new Uint8Array(before.byteLength + added.byteLength);
    joined.set(before);
    joined.set(added, before.byteLength);
    await this.writeFile(p, joined);
  }

  async exists(path: string): Promise<boolean> {
    return this.meta(normalize(path)) !== undefined;
  }

  async stat(path: string): Promise<FsStat> {
    const meta = this.meta(normalize(path));
    if (!meta) throw this.error("ENOENT", "no such file or directory", "stat", path);
    return {
      isFile: meta.type === "file",
      isDirectory: meta.type === "directory",
      isSymbolicLink: false,
      mode: meta.mode,
      size: meta.size,
      mtime: new Date(meta.mtime),
    };
  }

  lstat(path: string): Promise<FsStat> {
    return this.stat(path);
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    const p = this.writable(path, "mkdir");
    const existing = this.meta(p);
    if (existing) {
      if (options?.recursive && existing.type === "directory") return;
      throw this.error("EEXIST", "file already exists", "mkdir", path);
    }
    const parent = parentOf(p);
    if (!this.meta(parent)) {
      if (!options?.recursive) throw this.error("ENOENT", "no such file or directory", "mkdir", path);
      await this.mkdir(parent, options);
    }
    this.requireDirectory(parent, path);
    this.put(p, { type: "directory", mode: DIR_MODE, mtime: Date.now() });
  }

  async readdir(path: string): Promise<string[]> {
    const p = normalize(path);
    const meta = this.meta(p);
    if (!meta) throw this.error("ENOENT", "no such file or directory", "scandir", path);
    if (meta.type !== "directory") throw this.error("ENOTDIR", "not a directory", "scandir", path);
    return this.childNames(p);
  }

  async readdirWithFileTypes(
    path: string,
  ): Promise<{ name: string; isFile: boolean; isDirectory: boolean; isSymbolicLink: boolean }[]> {
    const p = normalize(path);
    const names = await this.readdir(p);
    return names.map((name) => {
      const meta = this.meta(p === "/" ? `/${name}` : `${p}/${name}`);
      return { name, isFile: meta?.type === "file", isDirectory: meta?.type === "directory", isSymbolicLink: false };
    });
  }

  async rm(path: string, options?: RmOptions): Promise<void> {
    const p = this.writable(path, "rm");
    const meta = this.meta(p);
    if (!meta) {
      if (options?.force) return;
      throw this.error("ENOENT", "no such file or directory", "rm", path);
    }
    if (p === "/") throw this.error("EBUSY", "resource busy or locked", "rm", path);
    if (meta.type === "directory") {
      const inside = this.allUnder(p);
      if (inside.length > 0 && !options?.recursive) throw this.error("ENOTEMPTY", "directory not empty", "rm", path);
      for (const child of inside) this.delete(child);
    }
    this.delete(p);
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    const from = normalize(src);
    const to = this.writable(dest, "cp");
    const meta = this.meta(from);
    if (!meta) throw this.error("ENOENT", "no such file or directory", "cp", src);
    if (meta.type === "file") {
      await this.writeFile(to, await this.readFileBuffer(from));
      return;
    }
    if (!options?.recursive) throw this.error("EISDIR", "illegal operation on a directory", "cp", src);
    if (isWithin(to, from)) throw this.error("EINVAL", "cannot copy a directory into itself", "cp", dest);
    if (!this.meta(to)) await this.mkdir(to);
    for (const name of this.childNames(from)) {
      await this.cp(from === "/" ? `/${name}` : `${from}/${name}`, `${to}/${name}`, options);
    }
  }

  /** rename(2): the tree moves with its modes and times; an existing destination follows rename's rules. */
  async mv(src: string, dest: string): Promise<void> {
    const from = normalize(src);
    const to = this.writable(dest, "rename");
    const meta = this.meta(from);
    if (!meta) throw this.error("ENOENT", "no such file or directory", "rename", src);
    if (from === to) return;
    if (from === "/") throw this.error("EBUSY", "resource busy or locked", "rename", src);
    if (meta.type === "directory" && isWithin(to, from)) {
      throw this.error("EINVAL", "cannot move a directory into itself", "rename", dest);
    }
    const target = this.meta(to);
    if (target) {
      if (meta.type === "file" && target.type === "directory") {
        throw this.error("EISDIR", "illegal operation on a directory", "rename", dest);
      }
      if (meta.type === "directory" && target.type === "file")
        throw this.error("ENOTDIR", "not a directory", "rename", dest);
      if (target.type === "directory" && this.childNames(to).length > 0) {
        throw this.error("ENOTEMPTY", "directory not empty", "rename", dest);
      }
    } else {
      this.requireDirectory(parentOf(to), dest);
    }
    const moved: [string, Node][] = [[to, await this.loadNode(from, "rename")]];
    if (meta.type === "directory") {
      for (const path of this.allUnder(from).sort()) {
        moved.push([to + path.slice(from.length), await this.loadNode(path, "rename")]);
      }
    }
    if (target) this.delete(to);
    for (const path of this.allUnder(from)) this.delete(path);
    this.delete(from);
    for (const [path, node] of moved) this.put(path, node);
  }

  resolvePath(base: string, path: string): string {
    return path.startsWith("/") ? normalize(path) : normalize(`${base}/${path}`);
  }

  getAllPaths(): string[] {
    const paths = new Set(this.store.allPaths());
    for (const [path, node] of this.changes) {
      if (node === null) paths.delete(path);
      else paths.add(path);
    }
    return [...paths].sort();
  }

  async chmod(path: string, mode: number): Promise<void> {
    const p = this.writable(path, "chmod");
    if (p === "/") return; // the workspace root is not a stored node; its mode is fixed
    const node = await this.loadNode(p, "chmod");
    this.put(p, { ...node, mode });
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw this.error("ENOSYS", "symbolic links are not supported in the workspace", "symlink", linkPath);
  }

  async link(_existing: string, newPath: string): Promise<void> {
    throw this.error("ENOSYS", "hard links are not supported in the workspace", "link", newPath);
  }

  async readlink(path: string): Promise<string> {
    throw this.error("EINVAL", "invalid argument", "readlink", path);
  }

  async realpath(path: string): Promise<string> {
    const p = normalize(path);
    if (!this.meta(p)) throw this.error("ENOENT", "no such file or directory", "realpath", path);
    return p;
  }

  async utimes(path: string, _atime: Date, mtime: Date): Promise<void> {
    const p = this.writable(path, "utimes");
    if (p === "/") return; // `touch .` in /workspace: the root is not a stored node
    const node = await this.loadNode(p, "utimes");
    this.put(p, { ...node, mtime: mtime.getTime() });
  }

  // ---- internals ---------------------------------------------------------------------------------------------

  /** Records a change, keeping the overlay within MAX_PENDING_BYTES. */
  private put(path: string, node: Node | null): void {
    const before = this.changes.get(path);
    const delta =
      (node?.type === "file" ? node.content.byteLength : 0) - (before?.type === "file" ? before.content.byteLength : 0);
    if (delta > 0 && this.pendingBytes + delta > MAX_PENDING_BYTES) {
      throw this.error(
        "ENOSPC",
        `no space left on device (one tool call may change at most ${MAX_PENDING_BYTES / 1024 / 1024} MiB of files)`,
        "write",
        path,
      );
    }
    this.pendingBytes += delta;
    this.changes.set(path, node);
  }

  private meta(path: string): Meta | undefined {
    const node = this.changes.get(path);
    if (node === null) return undefined;
    if (node)
      return {
        type: node.type,
        size: node.type === "file" ? node.content.byteLength : 0,
        mode: node.mode,
        mtime: node.mtime,
      };
    if (path !== "/" && this.deletedAncestor(path)) return undefined;
    return this.store.stat(path);
  }

  /** A path whose ancestor this call deleted is gone, even if the store still has it. */
  private deletedAncestor(path: string): boolean {
    for (let dir = parentOf(path); dir !== "/"; dir = parentOf(dir)) {
      if (this.changes.get(dir) === null) return true;
    }
    return false;
  }

  private childNames(dir: string): string[] {
    const names = new Set<string>();
    for (const row of this.store.children(dir))
      if (this.meta(row.path)) names.add(row.path.slice(dir === "/" ? 1 : dir.length + 1));
    for (const [path, node] of this.changes) {
      if (node !== null && path !== "/" && parentOf(path) === dir)
        names.add(path.slice(dir === "/" ? 1 : dir.length + 1));
    }
    return [...names].sort();
  }

  private allUnder(dir: string): string[] {
    const prefix = dir === "/" ? "/" : `${dir}/`;
    const paths = new Set(this.store.descendants(dir).filter((p) => this.meta(p)));
    for (const [path, node] of this.changes) if (node !== null && path.startsWith(prefix)) paths.add(path);
    return [...paths];
  }

  private delete(path: string): void {
    // A path that only this call created needs no delete in the store.
    if (this.store.stat(path)) this.put(path, null);
    else {
      this.put(path, null);
      this.changes.delete(path);
    }
  }

  private async loadNode(path: string, op: string): Promise<Node> {
    const meta = this.meta(path);
    if (!meta) throw this.error("ENOENT", "no such file or directory", op, path);
    if (meta.type === "directory") return { type: "directory", mode: meta.mode, mtime: meta.mtime };
    return { type: "file", content: await this.readFileBuffer(path), mode: meta.mode, mtime: meta.mtime };
  }

  private requireDirectory(dir: string, forPath: string): void {
    const meta = this.meta(dir);
    if (!meta) throw this.error("ENOENT", "no such file or directory", "open", forPath);
    if (meta.type !== "directory") throw this.error("ENOTDIR", "not a directory", "open", forPath);
  }

  private writable(path: string, op: string): string {
    if (this.readOnly) {
      throw this.error("EROFS", "read-only file system (this agent's file_system.write is off)", op, path);
    }
    return normalize(path);
  }
}
