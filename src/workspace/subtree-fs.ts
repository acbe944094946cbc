// One folder of a file system as a file system of its own, for the shell of an agent with a working directory (seed
// 004 working_directory): mounted at that folder, it is all the shell can reach of the workspace. Paths arrive
// relative to the mount point ("/a.txt"); ".." never climbs above the folder, because a path is normalized before
// the folder is put in front of it. Errors are the inner file system's, which name the full path the agent sees.
import type { CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from "just-bash";
import { isWithin, normalize } from "./paths.ts";

/** A file system that lists a folder with its entries' types (WorkspaceFs does). */
type TypedFs = IFileSystem & Required<Pick<IFileSystem, "readdirWithFileTypes">>;
type ReadOptions = Parameters<IFileSystem["readFile"]>[1];
type WriteOptions = Parameters<IFileSystem["writeFile"]>[2];
type Dirent = Awaited<ReturnType<TypedFs["readdirWithFileTypes"]>>[number];

export class SubtreeFs implements IFileSystem {
  private readonly inner: TypedFs;
  private readonly root: string;

  /** `root`: the folder, as a path of `inner` ("/project"). */
  constructor(inner: TypedFs, root: string) {
    this.inner = inner;
    this.root = normalize(root);
  }

  /** The inner path of a path inside the folder. */
  private at(path: string): string {
    const inside = normalize(path);
    return inside === "/" ? this.root : this.root === "/" ? inside : `${this.root}${inside}`;
  }

  /** The path inside the folder of an inner path (which is inside it). */
  private from(path: string): string {
    return this.root === "/" ? path : path.slice(this.root.length) || "/";
  }

  readFile(path: string, options?: ReadOptions): Promise<string> {
    return this.inner.readFile(this.at(path), options);
  }
  readFileBuffer(path: string): Promise<Uint8Array> {
    return this.inner.readFileBuffer(this.at(path));
  }
  writeFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    return this.inner.writeFile(this.at(path), content, options);
  }
  appendFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    return this.inner.appendFile(this.at(path), content, options);
  }
  exists(path: string): Promise<boolean> {
    return this.inner.exists(this.at(path));
  }
  stat(path: string): Promise<FsStat> {
    return this.inner.stat(this.at(path));
  }
  lstat(path: string): Promise<FsStat> {
    return this.inner.lstat(this.at(path));
  }
  mkdir(path: string, options?: MkdirOptions): Promise<void> {
    return this.inner.mkdir(this.at(path), options);
  }
  readdir(path: string): Promise<string[]> {
    return this.inner.readdir(this.at(path));
  }
  readdirWithFileTypes(path: string): Promise<Dirent[]> {
    return this.inner.readdirWithFileTypes(this.at(path));
  }
  rm(path: string, options?: RmOptions): Promise<void> {
    return this.inner.rm(this.at(path), options);
  }
  cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    return this.inner.cp(this.at(src), this.at(dest), options);
  }
  mv(src: string, dest: string): Promise<void> {
    return this.inner.mv(this.at(src), this.at(dest));
  }
  resolvePath(base: string, path: string): string {
    return path.startsWith("/") ? normalize(path) : normalize(`${base}/${path}`);
  }
  getAllPaths(): string[] {
    return this.inner
      .getAllPaths()
      .filter((p) => isWithin(normalize(p), this.root))
      .map((p) => this.from(normalize(p)));
  }
  chmod(path: string, mode: number): Promise<void> {
    return this.inner.chmod(this.at(path), mode);
  }
  symlink(target: string, linkPath: string): Promise<void> {
    return this.inner.symlink(target, this.at(linkPath));
  }
  link(existingPath: string, newPath: string): Promise<void> {
    return this.inner.link(this.at(existingPath), this.at(newPath));
  }
  readlink(path: string): Promise<string> {
    return this.inner.readlink(this.at(path));
  }
  async realpath(path: string): Promise<string> {
    return this.from(await this.inner.realpath(this.at(path)));
  }
  utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    return this.inner.utimes(this.at(path), atime, mtime);
  }
}
