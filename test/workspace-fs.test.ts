// The workspace store (Durable Object SQLite, large files spilled to R2) and WorkspaceFs, the IFileSystem the
// tools change it through: an in-memory overlay of one call's changes, committed in one transaction. Every test
// runs against a fresh Durable Object's real SQLite and the real R2 binding.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { migrate } from "../src/storage/migrations.ts";
import { MAX_FILE_BYTES, MAX_WORKSPACE_ENTRIES } from "../src/workspace/limits.ts";
import { SPILL_BYTES, Workspace, WorkspaceConflictError, WorkspaceFullError } from "../src/workspace/workspace.ts";
import { MAX_PENDING_BYTES, WorkspaceFs } from "../src/workspace/workspace-fs.ts";

interface Harness {
  ws: Workspace;
  sql: SqlStorage;
  /** This workspace's R2 key prefix. */
  prefix: string;
  /** A new WorkspaceFs over the same store: sees only what was committed. */
  fresh(readOnly?: boolean): WorkspaceFs;
  /** Keys of this workspace's R2 objects. */
  r2Keys(): Promise<string[]>;
}

/** Runs `fn` inside a new Durable Object with a migrated, empty workspace. */
function withWorkspace<T>(fn: (h: Harness) => Promise<T>): Promise<T> {
  const stub = env.TASKS.get(env.TASKS.idFromName(`workspace-fs-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    const sql = state.storage.sql;
    migrate(state.storage);
    const prefix = `workspaces/test-${crypto.randomUUID()}/`;
    const ws = new Workspace(
      sql,
      env.RUNS,
      () => prefix,
      (f) => state.storage.transactionSync(f),
    );
    return fn({
      ws,
      sql,
      prefix,
      fresh: (readOnly = false) => new WorkspaceFs(ws, { readOnly }),
      r2Keys: async () => (await env.RUNS.list({ prefix })).objects.map((o) => o.key),
    });
  });
}

describe("WorkspaceFs reading and writing files", () => {
  it("round-trips UTF-8 text before and after commit", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/notes.md", "héllo — 世界 🌍\n");
      expect(await fs.readFile("/notes.md")).toBe("héllo — 世界 🌍\n");
      expect(await fs.readFile("/notes.md", "utf8")).toBe("héllo — 世界 🌍\n");
      expect(await fs.readFile("/notes.md", { encoding: "utf-8" })).toBe("héllo — 世界 🌍\n");
      await fs.commit();
      const again = fresh();
      expect(await again.readFile("/notes.md")).toBe("héllo — 世界 🌍\n");
      expect((await again.stat("/notes.md")).size).toBe(new TextEncoder().encode("héllo — 世界 🌍\n").byteLength);
    }));

  it("round-trips every byte value through the store as a Uint8Array", () =>
    withWorkspace(async ({ fresh }) => {
      const bytes = Uint8Array.from({ length: 512 }, (_, i) => (i * 7) % 256);
      const fs = fresh();
      await fs.writeFile("/blob.bin", bytes);
      expect(await fs.readFileBuffer("/blob.bin")).toEqual(bytes);
      await fs.commit();
      expect(await fresh().readFileBuffer("/blob.bin")).toEqual(bytes);
    }));

  it("maps 'binary' and 'latin1' strings one character to one byte, both ways", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/a.bin", "\xff\xfe\x00A\x80", "binary");
      expect(await fs.readFileBuffer("/a.bin")).toEqual(new Uint8Array([0xff, 0xfe, 0x00, 0x41, 0x80]));
      await fs.writeFile("/b.bin", "\xe9t\xe9", { encoding: "latin1" });
      expect(await fs.readFileBuffer("/b.bin")).toEqual(new Uint8Array([0xe9, 0x74, 0xe9]));
      await fs.commit();
      const again = fresh();
      expect(await again.readFile("/a.bin", "binary")).toBe("\xff\xfe\x00A\x80");
      expect(await again.readFile("/b.bin", { encoding: "latin1" })).toBe("été");
      // The same bytes read as UTF-8 are not valid text: the encoding really was applied.
      expect(await again.readFile("/b.bin")).not.toBe("été");
    }));

  it("writes and reads base64 and hex", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/b64", "AP8Q", "base64");
      expect(await fs.readFileBuffer("/b64")).toEqual(new Uint8Array([0x00, 0xff, 0x10]));
      expect(await fs.readFile("/b64", "base64")).toBe("AP8Q");
      await fs.writeFile("/hex", "00ff10", { encoding: "hex" });
      expect(await fs.readFileBuffer("/hex")).toEqual(new Uint8Array([0x00, 0xff, 0x10]));
      expect(await fs.readFile("/hex", "hex")).toBe("00ff10");
    }));

  it("overwrites a file, keeping its mode", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/run.sh", "echo one");
      await fs.chmod("/run.sh", 0o755);
      await fs.commit();
      const again = fresh();
      await again.writeFile("/run.sh", "echo two");
      await again.commit();
      const stat = await fresh().stat("/run.sh");
      expect(stat.mode).toBe(0o755);
      expect(await fresh().readFile("/run.sh")).toBe("echo two");
    }));

  it("appends to new, uncommitted and stored files", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.appendFile("/log.txt", "one\n");
      await fs.appendFile("/log.txt", "two\n");
      expect(await fs.readFile("/log.txt")).toBe("one\ntwo\n");
      await fs.commit();
      const again = fresh();
      await again.appendFile("/log.txt", new TextEncoder().encode("three\n"));
      await again.appendFile("/log.txt", "\xff", "latin1");
      expect(await again.readFileBuffer("/log.txt")).toEqual(
        new Uint8Array([...new TextEncoder().encode("one\ntwo\nthree\n"), 0xff]),
      );
      // The store still has the committed version until this call commits.
      expect(await fresh().readFile("/log.txt")).toBe("one\ntwo\n");
    }));

  it("normalizes paths: dot segments, repeated and trailing slashes name the same file", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/src");
      await fs.writeFile("/src/./lib/../a.ts", "x");
      await fs.writeFile("//src//b.ts", "y");
      expect(fs.changedPaths()).toEqual(["/src", "/src/a.ts", "/src/b.ts"]);
      expect(await fs.readFile("/src/../src/a.ts")).toBe("x");
      expect(await fs.exists("/src/b.ts/")).toBe(true);
    }));
});

describe("WorkspaceFs metadata", () => {
  it("exists and stat describe files, folders and the root", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/dir");
      await fs.writeFile("/dir/f.txt", "12345");
      expect(await fs.exists("/dir")).toBe(true);
      expect(await fs.exists("/dir/f.txt")).toBe(true);
      expect(await fs.exists("/dir/nope")).toBe(false);
      expect(await fs.exists("/")).toBe(true);

      const file = await fs.stat("/dir/f.txt");
      expect(file).toMatchObject({ isFile: true, isDirectory: false, isSymbolicLink: false, size: 5, mode: 0o644 });
      expect(file.mtime).toBeInstanceOf(Date);
      const dir = await fs.stat("/dir");
      expect(dir).toMatchObject({ isFile: false, isDirectory: true, size: 0, mode: 0o755 });
      expect((await fs.stat("/")).isDirectory).toBe(true);
      expect(await fs.lstat("/dir/f.txt")).toEqual(file);

      await fs.commit();
      const stored = await fresh().stat("/dir/f.txt");
      expect(stored).toMatchObject({ isFile: true, size: 5, mode: 0o644 });
      expect(stored.mtime.getTime()).toBe(file.mtime.getTime());
    }));

  it("chmod changes the mode of files and folders and keeps the content", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/bin");
      await fs.writeFile("/bin/tool", "#!/bin/sh\n");
      await fs.commit();
      const again = fresh();
      await again.chmod("/bin/tool", 0o700);
      await again.chmod("/bin", 0o711);
      expect(again.changedPaths()).toEqual(["/bin", "/bin/tool"]);
      expect((await fresh().stat("/bin/tool")).mode).toBe(0o644);
      await again.commit();
      const after = fresh();
      expect((await after.stat("/bin/tool")).mode).toBe(0o700);
      expect((await after.stat("/bin")).mode).toBe(0o711);
      expect(await after.readFile("/bin/tool")).toBe("#!/bin/sh\n");
    }));

  it("utimes sets the modification time", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/a.txt", "a");
      await fs.commit();
      const again = fresh();
      const when = new Date("2001-02-03T04:05:06.007Z");
      await again.utimes("/a.txt", new Date(), when);
      expect((await again.stat("/a.txt")).mtime.getTime()).toBe(when.getTime());
      await again.commit();
      expect((await fresh().stat("/a.txt")).mtime.toISOString()).toBe("2001-02-03T04:05:06.007Z");
      expect(await fresh().readFile("/a.txt")).toBe("a");
    }));

  it("chmod and utimes of the root change nothing and store no row for it", () =>
    withWorkspace(async ({ ws, fresh }) => {
      const fs = fresh();
      await fs.chmod("/", 0o700);
      await fs.chmod("/./", 0o777);
      await fs.utimes("/", new Date(), new Date(0));
      await fs.utimes("", new Date(), new Date(1_000));
      expect(fs.dirty).toBe(false);
      expect(fs.changedPaths()).toEqual([]);
      expect(await fs.stat("/")).toMatchObject({ isDirectory: true, mode: 0o755 });
      await fs.writeFile("/a.txt", "a");
      await fs.chmod("/", 0o700);
      await fs.utimes("/", new Date(), new Date(0));
      expect(fs.changedPaths()).toEqual(["/a.txt"]);
      await fs.commit();
      expect(ws.allPaths()).toEqual(["/a.txt"]);
      expect(ws.list().map((e) => e.path)).toEqual(["a.txt"]);
      expect(await fresh().readdir("/")).toEqual(["a.txt"]);
      expect(fresh().getAllPaths()).toEqual(["/a.txt"]);
    }));

  it("realpath normalizes existing paths and refuses missing ones", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/a/b", { recursive: true });
      expect(await fs.realpath("/a/./b/../b/")).toBe("/a/b");
      expect(await fs.realpath("/")).toBe("/");
      await expect(fs.realpath("/a/c")).rejects.toMatchObject({
        code: "ENOENT",
        message: "ENOENT: no such file or directory, realpath '/a/c'",
      });
    }));

  it("resolvePath joins relative paths to a base and never climbs above the root", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      expect(fs.resolvePath("/a/b", "c/d")).toBe("/a/b/c/d");
      expect(fs.resolvePath("/a/b", "../c")).toBe("/a/c");
      expect(fs.resolvePath("/a/b", "/x/./y/")).toBe("/x/y");
      expect(fs.resolvePath("/", "../../etc")).toBe("/etc");
      expect(fs.resolvePath("/a", ".")).toBe("/a");
    }));

  it("getAllPaths merges stored paths with this call's changes and drops deleted ones", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/keep");
      await fs.writeFile("/keep/a", "a");
      await fs.writeFile("/gone", "g");
      await fs.commit();
      const again = fresh();
      await again.rm("/gone");
      await again.writeFile("/keep/b", "b");
      expect(again.getAllPaths()).toEqual(["/keep", "/keep/a", "/keep/b"]);
      expect(fresh().getAllPaths()).toEqual(["/gone", "/keep", "/keep/a"]);
    }));

  it("refuses symbolic and hard links and readlink", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/target", "t");
      await expect(fs.symlink("/target", "/link")).rejects.toMatchObject({
        code: "ENOSYS",
        message: expect.stringMatching(/^ENOSYS: symbolic links are not supported.*, symlink '\/link'$/),
      });
      await expect(fs.link("/target", "/hard")).rejects.toMatchObject({ code: "ENOSYS" });
      await expect(fs.readlink("/target")).rejects.toMatchObject({ code: "EINVAL" });
      expect(await fs.exists("/link")).toBe(false);
      expect(await fs.exists("/hard")).toBe(false);
      expect(fs.changedPaths()).toEqual(["/target"]);
    }));
});

describe("WorkspaceFs folders", () => {
  it("mkdir creates one folder, or every missing ancestor with recursive", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/one");
      await fs.mkdir("/a/b/c", { recursive: true });
      expect(fs.changedPaths()).toEqual(["/a", "/a/b", "/a/b/c", "/one"]);
      for (const dir of ["/one", "/a", "/a/b", "/a/b/c"]) expect((await fs.stat(dir)).isDirectory).toBe(true);
      // recursive on an existing folder is a no-op
      await fs.mkdir("/a/b", { recursive: true });
      await fs.commit();
      const again = fresh();
      await again.mkdir("/a/b/c/d/e", { recursive: true });
      expect(again.changedPaths()).toEqual(["/a/b/c/d", "/a/b/c/d/e"]);
    }));

  it("mkdir refuses an existing path (EEXIST), a missing parent (ENOENT) and a file parent (ENOTDIR)", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/d");
      await fs.writeFile("/f", "x");
      await expect(fs.mkdir("/d")).rejects.toMatchObject({
        code: "EEXIST",
        message: "EEXIST: file already exists, mkdir '/d'",
      });
      await expect(fs.mkdir("/f", { recursive: true })).rejects.toMatchObject({ code: "EEXIST" });
      await expect(fs.mkdir("/x/y")).rejects.toMatchObject({
        code: "ENOENT",
        message: "ENOENT: no such file or directory, mkdir '/x/y'",
      });
      await expect(fs.mkdir("/f/sub")).rejects.toMatchObject({ code: "ENOTDIR" });
      await expect(fs.mkdir("/f/sub/deeper", { recursive: true })).rejects.toMatchObject({ code: "ENOTDIR" });
      expect(fs.changedPaths()).toEqual(["/d", "/f"]);
    }));

  it("readdir lists names sorted, merging stored entries with uncommitted ones and hiding deleted ones", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/src");
      for (const name of ["zeta.ts", "alpha.ts", "old.ts"]) await fs.writeFile(`/src/${name}`, name);
      await fs.mkdir("/src/lib");
      await fs.writeFile("/top.txt", "t");
      await fs.commit();

      const again = fresh();
      await again.writeFile("/src/beta.ts", "b");
      await again.mkdir("/src/docs");
      await again.rm("/src/old.ts");
      await again.writeFile("/src/zeta.ts", "changed"); // changed, still listed once
      expect(await again.readdir("/src")).toEqual(["alpha.ts", "beta.ts", "docs", "lib", "zeta.ts"]);
      expect(await again.readdir("/")).toEqual(["src", "top.txt"]);
      expect(await again.readdirWithFileTypes("/src")).toEqual([
        { name: "alpha.ts", isFile: true, isDirectory: false, isSymbolicLink: false },
        { name: "beta.ts", isFile: true, isDirectory: false, isSymbolicLink: false },
        { name: "docs", isFile: false, isDirectory: true, isSymbolicLink: false },
        { name: "lib", isFile: false, isDirectory: true, isSymbolicLink: false },
        { name: "zeta.ts", isFile: true, isDirectory: false, isSymbolicLink: false },
      ]);
      expect(await again.readdirWithFileTypes("/")).toEqual([
        { name: "src", isFile: false, isDirectory: true, isSymbolicLink: false },
        { name: "top.txt", isFile: true, isDirectory: false, isSymbolicLink: false },
      ]);
      // The store is untouched until commit.
      expect(await fresh().readdir("/src")).toEqual(["alpha.ts", "lib", "old.ts", "zeta.ts"]);
      await again.commit();
      expect(await fresh().readdir("/src")).toEqual(["alpha.ts", "beta.ts", "docs", "lib", "zeta.ts"]);
    }));

  it("readdir refuses a missing path and a file", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/f", "x");
      await expect(fs.readdir("/nope")).rejects.toMatchObject({
        code: "ENOENT",
        message: "ENOENT: no such file or directory, scandir '/nope'",
      });
      await expect(fs.readdir("/f")).rejects.toMatchObject({
        code: "ENOTDIR",
        message: "ENOTDIR: not a directory, scandir '/f'",
      });
      await expect(fs.readdirWithFileTypes("/f")).rejects.toMatchObject({ code: "ENOTDIR" });
    }));
});

describe("WorkspaceFs rm", () => {
  it("removes a file and an empty folder", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/f", "x");
      await fs.mkdir("/empty");
      await fs.commit();
      const again = fresh();
      await again.rm("/f");
      await again.rm("/empty");
      expect(await again.exists("/f")).toBe(false);
      expect(await again.exists("/empty")).toBe(false);
      await expect(again.readFile("/f")).rejects.toMatchObject({ code: "ENOENT" });
      expect(await fresh().exists("/f")).toBe(true);
      await again.commit();
      expect(fresh().getAllPaths()).toEqual([]);
    }));

  it("refuses a non-empty folder without recursive, and changes nothing", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/d");
      await fs.writeFile("/d/f", "x");
      await fs.commit();
      const again = fresh();
      await expect(again.rm("/d")).rejects.toMatchObject({
        code: "ENOTEMPTY",
        message: "ENOTEMPTY: directory not empty, rm '/d'",
      });
      expect(again.dirty).toBe(false);
      // A folder that only has an uncommitted child is not empty either.
      await again.mkdir("/new");
      await again.writeFile("/new/child", "c");
      await expect(again.rm("/new")).rejects.toMatchObject({ code: "ENOTEMPTY" });
      expect(await again.exists("/new/child")).toBe(true);
    }));

  it("removes a folder's stored and uncommitted descendants with recursive", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/d/sub", { recursive: true });
      await fs.writeFile("/d/sub/a", "a");
      await fs.writeFile("/d/b", "b");
      await fs.writeFile("/d-sibling", "keep"); // shares the prefix "/d" but is not inside it
      await fs.commit();
      const again = fresh();
      await again.writeFile("/d/sub/new", "n");
      await again.rm("/d", { recursive: true });
      expect(again.getAllPaths()).toEqual(["/d-sibling"]);
      // Only stored paths need deleting; the uncommitted file simply disappears.
      expect(again.changedPaths()).toEqual(["/d", "/d/b", "/d/sub", "/d/sub/a"]);
      await again.commit();
      expect(fresh().getAllPaths()).toEqual(["/d-sibling"]);
    }));

  it("ignores a missing path with force and refuses it without", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.rm("/missing", { force: true });
      await fs.rm("/missing/deeper", { force: true, recursive: true });
      expect(fs.dirty).toBe(false);
      await expect(fs.rm("/missing")).rejects.toMatchObject({
        code: "ENOENT",
        message: "ENOENT: no such file or directory, rm '/missing'",
      });
    }));

  it("refuses to remove the root", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/f", "x");
      await fs.commit();
      const again = fresh();
      await expect(again.rm("/", { recursive: true, force: true })).rejects.toMatchObject({ code: "EBUSY" });
      await expect(again.rm("/./")).rejects.toMatchObject({ code: "EBUSY" });
      expect(again.dirty).toBe(false);
      expect(await again.exists("/f")).toBe(true);
    }));

  it("a new file created and removed in the same call leaves nothing to commit", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/tmp");
      await fs.writeFile("/tmp/scratch", "x");
      await fs.rm("/tmp", { recursive: true });
      expect(fs.dirty).toBe(false);
      expect(fs.changedPaths()).toEqual([]);
    }));
});

describe("Workspace names above U+FFFF", () => {
  // "😀" is F0 9F 98 80 in UTF-8: it sorts after any bound made of "\uffff" (EF BF BF).
  it("descendants lists every path under a folder, emoji names included, and nothing beside it", () =>
    withWorkspace(async ({ ws }) => {
      await ws.seed([
        ["/d/a.txt", "a"],
        ["/d/😀.txt", "smile"],
        ["/d/😀/deep.txt", "deep"],
        ["/d/\uffff.txt", "max bmp"],
        ["/d-sibling", "keep"],
        ["/d0", "keep"],
        ["/e/😀", "other folder"],
      ]);
      expect(ws.descendants("/d")).toEqual(["/d/a.txt", "/d/\uffff.txt", "/d/😀", "/d/😀.txt", "/d/😀/deep.txt"]);
      expect(ws.descendants("/d/😀")).toEqual(["/d/😀/deep.txt"]);
      expect(ws.descendants("/")).toEqual(ws.allPaths());
    }));

  it("rm -r of a folder with an emoji-named file leaves no orphan rows after commit", () =>
    withWorkspace(async ({ ws, fresh }) => {
      await ws.seed([
        ["/d/a.txt", "a"],
        ["/d/😀.txt", "smile"],
        ["/d/😀/deep.txt", "deep"],
        ["/d-sibling", "keep"],
      ]);
      const fs = fresh();
      await fs.rm("/d", { recursive: true });
      expect(fs.changedPaths()).toEqual(["/d", "/d/a.txt", "/d/😀", "/d/😀.txt", "/d/😀/deep.txt"]);
      await fs.commit();
      expect(ws.allPaths()).toEqual(["/d-sibling"]);
      expect(ws.allPaths().filter((p) => p.startsWith("/d/"))).toEqual([]);
      const after = fresh();
      for (const path of ["/d", "/d/😀.txt", "/d/😀", "/d/😀/deep.txt"]) {
        expect(await after.exists(path), path).toBe(false);
      }
      expect(await after.readdir("/")).toEqual(["d-sibling"]);
    }));

  it("rm without recursive refuses a folder whose only child has an emoji name", () =>
    withWorkspace(async ({ ws, fresh }) => {
      await ws.seed([["/d/😀.txt", "smile"]]);
      const fs = fresh();
      await expect(fs.rm("/d")).rejects.toMatchObject({
        code: "ENOTEMPTY",
        message: "ENOTEMPTY: directory not empty, rm '/d'",
      });
      expect(fs.dirty).toBe(false);
      expect(await fs.readFile("/d/😀.txt")).toBe("smile");
    }));

  it("mv of a folder moves its emoji-named files too", () =>
    withWorkspace(async ({ ws, fresh }) => {
      await ws.seed([
        ["/d/a.txt", "a"],
        ["/d/😀.txt", "smile"],
        ["/d/😀/deep.txt", "deep"],
      ]);
      const fs = fresh();
      await fs.mv("/d", "/e");
      expect(await fs.readFile("/e/😀.txt")).toBe("smile");
      expect(await fs.readFile("/e/😀/deep.txt")).toBe("deep");
      await fs.commit();
      expect(ws.allPaths()).toEqual(["/e", "/e/a.txt", "/e/😀", "/e/😀.txt", "/e/😀/deep.txt"]);
      const after = fresh();
      expect(await after.readFile("/e/😀.txt")).toBe("smile");
      expect(await after.readFile("/e/😀/deep.txt")).toBe("deep");
      expect(await after.exists("/d/😀.txt")).toBe(false);
    }));
});

describe("WorkspaceFs cp and mv", () => {
  it("cp copies a file and leaves the source", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/a.txt", "alpha");
      await fs.commit();
      const again = fresh();
      await again.cp("/a.txt", "/b.txt");
      expect(await again.readFile("/b.txt")).toBe("alpha");
      expect(await again.readFile("/a.txt")).toBe("alpha");
      expect(again.changedPaths()).toEqual(["/b.txt"]);
      await expect(again.cp("/nope", "/c")).rejects.toMatchObject({ code: "ENOENT" });
      await expect(again.cp("/a.txt", "/missing-dir/a.txt")).rejects.toMatchObject({ code: "ENOENT" });
    }));

  it("cp needs recursive for a folder, then copies its stored and uncommitted tree", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/src/lib", { recursive: true });
      await fs.writeFile("/src/lib/a.ts", "a");
      await fs.commit();
      const again = fresh();
      await again.writeFile("/src/b.ts", "b");
      await expect(again.cp("/src", "/copy")).rejects.toMatchObject({
        code: "EISDIR",
        message: "EISDIR: illegal operation on a directory, cp '/src'",
      });
      expect(await again.exists("/copy")).toBe(false);
      await again.cp("/src", "/copy", { recursive: true });
      expect(again.getAllPaths()).toEqual([
        "/copy",
        "/copy/b.ts",
        "/copy/lib",
        "/copy/lib/a.ts",
        "/src",
        "/src/b.ts",
        "/src/lib",
        "/src/lib/a.ts",
      ]);
      expect(await again.readFile("/copy/lib/a.ts")).toBe("a");
      expect(await again.readFile("/copy/b.ts")).toBe("b");
    }));

  it("cp refuses to copy a folder into itself, changing nothing", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/d");
      await fs.writeFile("/d/f", "x");
      await fs.commit();
      const again = fresh();
      await expect(again.cp("/d", "/d/inner", { recursive: true })).rejects.toMatchObject({
        code: "EINVAL",
        message: "EINVAL: cannot copy a directory into itself, cp '/d/inner'",
      });
      await expect(again.cp("/d", "/d/", { recursive: true })).rejects.toMatchObject({ code: "EINVAL" });
      expect(again.dirty).toBe(false);
    }));

  it("cp of the root into a folder of its own is refused at once, copying nothing", () =>
    withWorkspace(async ({ ws, fresh }) => {
      await ws.seed([
        ["/a.txt", "a"],
        ["/src/b.ts", "b"],
      ]);
      const fs = fresh();
      await expect(fs.cp("/", "/copy", { recursive: true })).rejects.toMatchObject({
        code: "EINVAL",
        message: "EINVAL: cannot copy a directory into itself, cp '/copy'",
      });
      expect(fs.dirty).toBe(false);
      expect(fs.changedPaths()).toEqual([]);
      expect(await fs.exists("/copy")).toBe(false);
      await expect(fs.cp("/", "/src/nested", { recursive: true })).rejects.toMatchObject({ code: "EINVAL" });
      expect(fs.dirty).toBe(false);
      expect(fs.getAllPaths()).toEqual(["/a.txt", "/src", "/src/b.ts"]);
    }));

  it("mv renames a file", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.writeFile("/old.txt", "content");
      await fs.mkdir("/dir");
      await fs.commit();
      const again = fresh();
      await again.mv("/old.txt", "/dir/new.txt");
      expect(await again.exists("/old.txt")).toBe(false);
      expect(await again.readFile("/dir/new.txt")).toBe("content");
      await again.commit();
      expect(fresh().getAllPaths()).toEqual(["/dir", "/dir/new.txt"]);
    }));

  it("mv moves a stored folder tree, and the store follows on commit", () =>
    withWorkspace(async ({ fresh, ws }) => {
      await ws.seed([
        ["/proj/src/main.ts", "main"],
        ["/proj/src/util/x.ts", "x"],
        ["/proj/README.md", "readme"],
      ]);
      const fs = fresh();
      await fs.mv("/proj", "/moved");
      expect(await fs.exists("/proj")).toBe(false);
      expect(await fs.exists("/proj/src/main.ts")).toBe(false);
      expect(await fs.readFile("/moved/src/util/x.ts")).toBe("x");
      expect(fresh().getAllPaths()[0]).toBe("/proj");
      await fs.commit();
      expect(fresh().getAllPaths()).toEqual([
        "/moved",
        "/moved/README.md",
        "/moved/src",
        "/moved/src/main.ts",
        "/moved/src/util",
        "/moved/src/util/x.ts",
      ]);
      expect(await fresh().readFile("/moved/README.md")).toBe("readme");
    }));

  it("mv onto itself is a no-op and into itself is refused", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/d");
      await fs.writeFile("/d/f", "x");
      await fs.commit();
      const again = fresh();
      await again.mv("/d/f", "/d/./f");
      await again.mv("/d", "/d/");
      expect(again.dirty).toBe(false);
      await expect(again.mv("/d", "/d/sub")).rejects.toMatchObject({ code: "EINVAL" });
      expect(again.dirty).toBe(false);
      expect(await again.readFile("/d/f")).toBe("x");
    }));

  it("mv keeps the mode and mtime of a file and a folder", () =>
    withWorkspace(async ({ fresh }) => {
      const when = new Date("2001-02-03T04:05:06.007Z");
      const dirWhen = new Date("1999-12-31T23:59:59.000Z");
      const fs = fresh();
      await fs.writeFile("/run.sh", "#!/bin/sh\n");
      await fs.chmod("/run.sh", 0o755);
      await fs.utimes("/run.sh", new Date(), when);
      await fs.mkdir("/dir");
      await fs.writeFile("/dir/inner", "i");
      await fs.chmod("/dir", 0o700);
      await fs.utimes("/dir", new Date(), dirWhen);
      await fs.commit();

      const check = async (view: WorkspaceFs) => {
        const file = await view.stat("/moved.sh");
        expect(file.mode).toBe(0o755);
        expect(file.mtime.toISOString()).toBe(when.toISOString());
        const dir = await view.stat("/dir2");
        expect(dir.mode).toBe(0o700);
        expect(dir.mtime.toISOString()).toBe(dirWhen.toISOString());
        expect(await view.readFile("/moved.sh")).toBe("#!/bin/sh\n");
        expect(await view.readFile("/dir2/inner")).toBe("i");
      };
      const again = fresh();
      await again.mv("/run.sh", "/moved.sh");
      await again.mv("/dir", "/dir2");
      await check(again);
      await again.commit();
      await check(fresh());
      // An uncommitted file keeps its mode and mtime through mv as well.
      const third = fresh();
      await third.writeFile("/new.sh", "n");
      await third.chmod("/new.sh", 0o750);
      await third.utimes("/new.sh", new Date(), when);
      await third.mv("/new.sh", "/new2.sh");
      expect(await third.stat("/new2.sh")).toMatchObject({ mode: 0o750, mtime: when });
      expect(third.changedPaths()).toEqual(["/new2.sh"]);
    }));

  it("mv onto an existing path follows rename's rules and changes nothing when it refuses", () =>
    withWorkspace(async ({ ws, fresh }) => {
      await ws.seed([
        ["/file.txt", "file"],
        ["/other.txt", "other"],
        ["/dir/a.txt", "a"],
        ["/full/b.txt", "b"],
      ]);
      const fs = fresh();
      await fs.mkdir("/empty");
      await fs.commit();
      const before = ws.list();

      const again = fresh();
      const cases: [Promise<unknown>, string, string][] = [
        [again.mv("/dir", "/file.txt"), "ENOTDIR", "ENOTDIR: not a directory, rename '/file.txt'"],
        [again.mv("/file.txt", "/dir"), "EISDIR", "EISDIR: illegal operation on a directory, rename '/dir'"],
        [again.mv("/file.txt", "/empty"), "EISDIR", "EISDIR: illegal operation on a directory, rename '/empty'"],
        [again.mv("/dir", "/full"), "ENOTEMPTY", "ENOTEMPTY: directory not empty, rename '/full'"],
        [again.mv("/dir", "/dir/sub"), "EINVAL", "EINVAL: cannot move a directory into itself, rename '/dir/sub'"],
        [
          again.mv("/dir", "/dir/a.txt/x"),
          "EINVAL",
          "EINVAL: cannot move a directory into itself, rename '/dir/a.txt/x'",
        ],
        [again.mv("/", "/root"), "EBUSY", "EBUSY: resource busy or locked, rename '/'"],
        [again.mv("/file.txt", "/nodir/f.txt"), "ENOENT", "ENOENT: no such file or directory, open '/nodir/f.txt'"],
        [again.mv("/dir", "/nodir/deeper/d"), "ENOENT", "ENOENT: no such file or directory, open '/nodir/deeper/d'"],
        [again.mv("/dir", "/other.txt/d"), "ENOTDIR", "ENOTDIR: not a directory, open '/other.txt/d'"],
        [again.mv("/missing", "/x"), "ENOENT", "ENOENT: no such file or directory, rename '/missing'"],
      ];
      for (const [promise, code, message] of cases) {
        const error = await promise.then(
          () => null,
          (e: unknown) => e,
        );
        expect(error, message).toBeInstanceOf(Error);
        expect(error).toMatchObject({ code, message });
      }
      expect(again.dirty).toBe(false);
      await again.commit();
      expect(ws.list()).toEqual(before);
    }));

  it("mv of a folder onto an existing empty folder replaces it", () =>
    withWorkspace(async ({ ws, fresh }) => {
      await ws.seed([["/src/sub/a.txt", "a"]]);
      const fs = fresh();
      await fs.mkdir("/target");
      await fs.chmod("/src", 0o700);
      await fs.commit();
      const again = fresh();
      await again.mv("/src", "/target");
      expect(await again.exists("/src")).toBe(false);
      expect(await again.readFile("/target/sub/a.txt")).toBe("a");
      expect((await again.stat("/target")).mode).toBe(0o700);
      await again.commit();
      expect(ws.allPaths()).toEqual(["/target", "/target/sub", "/target/sub/a.txt"]);
      expect((await fresh().stat("/target")).mode).toBe(0o700);
      expect(await fresh().readFile("/target/sub/a.txt")).toBe("a");
    }));

  it("mv of a file onto an existing file replaces it", () =>
    withWorkspace(async ({ ws, fresh }) => {
      await ws.seed([
        ["/a.txt", "new content"],
        ["/b.txt", "old content"],
      ]);
      const fs = fresh();
      await fs.mv("/a.txt", "/b.txt");
      await fs.commit();
      expect(ws.allPaths()).toEqual(["/b.txt"]);
      expect(await fresh().readFile("/b.txt")).toBe("new content");
    }));

  it("mv of a stored tree keeps every file's content, spilled ones included, and drops the old paths", () =>
    withWorkspace(async ({ ws, fresh, r2Keys }) => {
      const big = Uint8Array.from({ length: SPILL_BYTES + 1 }, (_, i) => (i * 13) % 251);
      const files: [string, string][] = [
        ["/proj/README.md", "readme"],
        ["/proj/src/main.ts", "main"],
        ["/proj/src/util/x.ts", "x"],
        ["/proj/src/util/y.ts", "y"],
        ["/proj/docs/guide.md", "guide"],
        ["/proj/empty.txt", ""],
      ];
      await ws.seed(files);
      const setup = fresh();
      await setup.mkdir("/proj/data");
      await setup.writeFile("/proj/data/big.bin", big);
      await setup.commit();
      expect(await r2Keys()).toHaveLength(1);

      const fs = fresh();
      await fs.mv("/proj", "/moved");
      await fs.commit();
      const after = fresh();
      for (const [path, content] of files) {
        const moved = `/moved${path.slice("/proj".length)}`;
        expect(await after.readFile(moved), moved).toBe(content);
        expect(await after.exists(path), path).toBe(false);
      }
      expect(await after.readFileBuffer("/moved/data/big.bin")).toEqual(big);
      expect(ws.allPaths().filter((p) => p === "/proj" || p.startsWith("/proj/"))).toEqual([]);
      expect(ws.allPaths()).toEqual([
        "/moved",
        "/moved/README.md",
        "/moved/data",
        "/moved/data/big.bin",
        "/moved/docs",
        "/moved/docs/guide.md",
        "/moved/empty.txt",
        "/moved/src",
        "/moved/src/main.ts",
        "/moved/src/util",
        "/moved/src/util/x.ts",
        "/moved/src/util/y.ts",
      ]);
      // The old object is deleted once the moved file is stored under its new path.
      expect(await r2Keys()).toHaveLength(1);
    }));
});

describe("WorkspaceFs errors", () => {
  it("carry a Node-style code and message naming the operation and the path as given", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      await fs.mkdir("/dir");
      await fs.writeFile("/file", "x");
      const cases: [Promise<unknown>, string, string][] = [
        [fs.readFile("/missing.txt"), "ENOENT", "ENOENT: no such file or directory, open '/missing.txt'"],
        [fs.readFile("/dir"), "EISDIR", "EISDIR: illegal operation on a directory, read '/dir'"],
        [fs.writeFile("/dir", "x"), "EISDIR", "EISDIR: illegal operation on a directory, open '/dir'"],
        [fs.writeFile("/nodir/a", "x"), "ENOENT", "ENOENT: no such file or directory, open '/nodir/a'"],
        [fs.writeFile("/file/a", "x"), "ENOTDIR", "ENOTDIR: not a directory, open '/file/a'"],
        [fs.appendFile("/dir", "x"), "EISDIR", "EISDIR: illegal operation on a directory, read '/dir'"],
        [fs.stat("/missing"), "ENOENT", "ENOENT: no such file or directory, stat '/missing'"],
        [fs.chmod("/missing", 0o600), "ENOENT", "ENOENT: no such file or directory, chmod '/missing'"],
        [
          fs.utimes("/missing", new Date(), new Date()),
          "ENOENT",
          "ENOENT: no such file or directory, utimes '/missing'",
        ],
        [fs.rm("/"), "EBUSY", "EBUSY: resource busy or locked, rm '/'"],
      ];
      for (const [promise, code, message] of cases) {
        const error = await promise.then(
          () => null,
          (e: unknown) => e,
        );
        expect(error, message).toBeInstanceOf(Error);
        expect(error).toMatchObject({ code, message });
      }
      expect(fs.changedPaths()).toEqual(["/dir", "/file"]);
    }));
});

describe("WorkspaceFs overlay", () => {
  it("keeps changes out of the store until commit, then shows them to every reader", () =>
    withWorkspace(async ({ fresh, ws }) => {
      const fs = fresh();
      expect(fs.dirty).toBe(false);
      await fs.mkdir("/d");
      await fs.writeFile("/d/a.txt", "a");
      expect(fs.dirty).toBe(true);
      expect(fs.changedPaths()).toEqual(["/d", "/d/a.txt"]);

      const other = fresh();
      expect(await other.exists("/d")).toBe(false);
      expect(await other.exists("/d/a.txt")).toBe(false);
      expect(await other.readdir("/")).toEqual([]);
      expect(ws.allPaths()).toEqual([]);

      await fs.commit();
      expect(fs.dirty).toBe(false);
      expect(fs.changedPaths()).toEqual([]);
      // The same reader (no overlay of its own) now sees the stored changes, as does the writer.
      expect(await other.readFile("/d/a.txt")).toBe("a");
      expect(await fs.readFile("/d/a.txt")).toBe("a");
      expect(ws.allPaths()).toEqual(["/d", "/d/a.txt"]);
    }));

  it("an uncommitted WorkspaceFs changes nothing (an interrupted call leaves the workspace as it was)", () =>
    withWorkspace(async ({ fresh, ws }) => {
      await ws.seed([["/keep.txt", "original"]]);
      const fs = fresh();
      await fs.writeFile("/keep.txt", "changed");
      await fs.rm("/keep.txt");
      await fs.mkdir("/new");
      // no commit
      const after = fresh();
      expect(await after.readFile("/keep.txt")).toBe("original");
      expect(after.getAllPaths()).toEqual(["/keep.txt"]);
    }));

  it("deleting a stored folder hides its stored descendants at once and deletes them on commit", () =>
    withWorkspace(async ({ fresh, ws }) => {
      await ws.seed([
        ["/d/a.txt", "a"],
        ["/d/sub/b.txt", "b"],
        ["/other.txt", "o"],
      ]);
      const fs = fresh();
      await fs.rm("/d", { recursive: true });
      for (const path of ["/d", "/d/a.txt", "/d/sub", "/d/sub/b.txt"]) {
        expect(await fs.exists(path), path).toBe(false);
        await expect(fs.stat(path)).rejects.toMatchObject({ code: "ENOENT" });
      }
      await expect(fs.readFile("/d/sub/b.txt")).rejects.toMatchObject({ code: "ENOENT" });
      await expect(fs.readdir("/d")).rejects.toMatchObject({ code: "ENOENT" });
      expect(await fs.readdir("/")).toEqual(["other.txt"]);
      // A folder made again at the same path starts empty: the stored children stay deleted.
      await fs.mkdir("/d");
      expect(await fs.readdir("/d")).toEqual([]);
      expect(await fs.exists("/d/sub/b.txt")).toBe(false);
      // The store still has them until commit.
      expect(ws.allPaths()).toEqual(["/d", "/d/a.txt", "/d/sub", "/d/sub/b.txt", "/other.txt"]);
      await fs.commit();
      expect(ws.allPaths()).toEqual(["/d", "/other.txt"]);
      expect(await fresh().readdir("/d")).toEqual([]);
    }));

  it("a failed commit keeps the changes in memory and the store unchanged", () =>
    withWorkspace(async ({ fresh, ws, r2Keys }) => {
      const fs = fresh();
      await fs.writeFile("/small.txt", "s");
      await fs.writeFile("/huge.bin", new Uint8Array(MAX_FILE_BYTES + 1));
      await expect(fs.commit()).rejects.toBeInstanceOf(WorkspaceFullError);
      await expect(fs.commit()).rejects.toThrow(`/huge.bin is larger than the 32 MiB limit per file`);
      expect(fs.dirty).toBe(true);
      expect(fs.changedPaths()).toEqual(["/huge.bin", "/small.txt"]);
      expect(ws.allPaths()).toEqual([]);
      expect(await r2Keys()).toEqual([]);
      // Dropping the oversized file lets the rest commit.
      await fs.rm("/huge.bin");
      await fs.commit();
      expect(ws.allPaths()).toEqual(["/small.txt"]);
    }));
});

describe("WorkspaceFs readOnly", () => {
  it("rejects every change with EROFS and changes nothing", () =>
    withWorkspace(async ({ fresh, ws }) => {
      await ws.seed([
        ["/d/f.txt", "content"],
        ["/e/g.txt", "g"],
      ]);
      const before = ws.list();
      const fs = fresh(true);
      const attempts: [string, () => Promise<unknown>][] = [
        ["writeFile", () => fs.writeFile("/d/f.txt", "changed")],
        ["writeFile new", () => fs.writeFile("/new.txt", "x")],
        ["appendFile", () => fs.appendFile("/d/f.txt", "more")],
        ["appendFile new", () => fs.appendFile("/new.txt", "x")],
        ["mkdir", () => fs.mkdir("/newdir")],
        ["mkdir recursive", () => fs.mkdir("/a/b/c", { recursive: true })],
        ["rm", () => fs.rm("/d/f.txt")],
        ["rm recursive force", () => fs.rm("/d", { recursive: true, force: true })],
        ["rm missing force", () => fs.rm("/missing", { force: true })],
        ["cp", () => fs.cp("/d/f.txt", "/copy.txt")],
        ["cp recursive", () => fs.cp("/d", "/dcopy", { recursive: true })],
        ["mv", () => fs.mv("/d/f.txt", "/moved.txt")],
        ["mv folder", () => fs.mv("/e", "/e2")],
        ["chmod", () => fs.chmod("/d/f.txt", 0o777)],
        ["utimes", () => fs.utimes("/d/f.txt", new Date(0), new Date(0))],
      ];
      for (const [name, attempt] of attempts) {
        const error = await attempt().then(
          () => null,
          (e: unknown) => e,
        );
        expect(error, name).toBeInstanceOf(Error);
        expect((error as Error).message, name).toMatch(/^EROFS: read-only file system/);
        expect((error as { code?: string }).code, name).toBe("EROFS");
      }
      expect(fs.dirty).toBe(false);
      expect(fs.changedPaths()).toEqual([]);
      await fs.commit();
      expect(ws.list()).toEqual(before);
      // Reading still works.
      expect(await fs.readFile("/d/f.txt")).toBe("content");
      expect(await fs.readdir("/")).toEqual(["d", "e"]);
      expect((await fs.stat("/e/g.txt")).size).toBe(1);
    }));
});

describe("Workspace spill to R2", () => {
  it("keeps a file of exactly SPILL_BYTES in SQLite", () =>
    withWorkspace(async ({ fresh, sql, r2Keys }) => {
      const fs = fresh();
      await fs.writeFile("/edge.bin", new Uint8Array(SPILL_BYTES).fill(7));
      await fs.commit();
      expect(await r2Keys()).toEqual([]);
      const row = sql.exec<{ r2_key: string | null }>("SELECT r2_key FROM workspace_files").one();
      expect(row.r2_key).toBeNull();
      expect(await fresh().readFileBuffer("/edge.bin")).toEqual(new Uint8Array(SPILL_BYTES).fill(7));
    }));

  it("stores a larger file in R2, reads it back, and deletes the object when it is replaced or removed", () =>
    withWorkspace(async ({ fresh, sql, prefix, r2Keys }) => {
      const big = Uint8Array.from({ length: SPILL_BYTES + 1 }, (_, i) => (i * 31) % 251);
      const fs = fresh();
      await fs.writeFile("/big.bin", big);
      await fs.commit();
      const keys = await r2Keys();
      expect(keys).toHaveLength(1);
      expect(keys[0]?.startsWith(prefix)).toBe(true);
      const row = sql
        .exec<{ r2_key: string | null; content: ArrayBuffer | null; size: number }>(
          "SELECT r2_key, content, size FROM workspace_files WHERE path = '/big.bin'",
        )
        .one();
      expect(row).toEqual({ r2_key: keys[0], content: null, size: SPILL_BYTES + 1 });
      expect(await fresh().readFileBuffer("/big.bin")).toEqual(big);
      expect((await fresh().stat("/big.bin")).size).toBe(SPILL_BYTES + 1);

      // Rewriting it large again replaces the object.
      const chmod = fresh();
      await chmod.chmod("/big.bin", 0o600);
      await chmod.commit();
      const replaced = await r2Keys();
      expect(replaced).toHaveLength(1);
      expect(replaced[0]).not.toBe(keys[0]);
      expect(await fresh().readFileBuffer("/big.bin")).toEqual(big);

      // Overwriting it with a small file moves it back into SQLite and deletes the R2 object.
      const small = fresh();
      await small.writeFile("/big.bin", "tiny now");
      await small.commit();
      expect(await r2Keys()).toEqual([]);
      expect(await fresh().readFile("/big.bin")).toBe("tiny now");

      // Removing a spilled file deletes its object too.
      const again = fresh();
      await again.writeFile("/big2.bin", big);
      await again.commit();
      expect(await r2Keys()).toHaveLength(1);
      const remove = fresh();
      await remove.rm("/big2.bin");
      await remove.commit();
      expect(await r2Keys()).toEqual([]);
    }));

  it("reports a spilled file whose R2 object is missing instead of reading it as empty", () =>
    withWorkspace(async ({ fresh, r2Keys }) => {
      const fs = fresh();
      await fs.writeFile("/big.bin", new Uint8Array(SPILL_BYTES + 10));
      await fs.commit();
      const [key] = await r2Keys();
      await env.RUNS.delete(key as string);
      await expect(fresh().readFileBuffer("/big.bin")).rejects.toThrow(/is missing from R2/);
    }));
});

describe("Workspace limits", () => {
  it("refuses a file over MAX_FILE_BYTES with WorkspaceFullError and stores nothing", () =>
    withWorkspace(async ({ fresh, ws, r2Keys }) => {
      const fs = fresh();
      await fs.writeFile("/too-big.bin", new Uint8Array(MAX_FILE_BYTES + 1));
      const error = await fs.commit().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkspaceFullError);
      expect(ws.allPaths()).toEqual([]);
      expect(await r2Keys()).toEqual([]);
    }));
});

describe("WorkspaceFs pending bytes", () => {
  // A quarter of the bound; every write shares this one buffer, so the test itself holds 16 MiB.
  const QUARTER = new Uint8Array(MAX_PENDING_BYTES / 4);

  it("refuses a write that takes one call's changes over MAX_PENDING_BYTES with ENOSPC, keeping the rest", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      for (const name of ["a", "b", "c", "d"]) await fs.writeFile(`/${name}.bin`, QUARTER);
      // Exactly MAX_PENDING_BYTES is allowed; one byte more is not.
      await expect(fs.writeFile("/e.bin", "x")).rejects.toMatchObject({
        code: "ENOSPC",
        message: "ENOSPC: no space left on device (one tool call may change at most 64 MiB of files), write '/e.bin'",
      });
      expect(await fs.exists("/e.bin")).toBe(false);
      expect(fs.changedPaths()).toEqual(["/a.bin", "/b.bin", "/c.bin", "/d.bin"]);
      // Appending and copying count too.
      await expect(fs.appendFile("/a.bin", "x")).rejects.toMatchObject({ code: "ENOSPC" });
      expect((await fs.stat("/a.bin")).size).toBe(QUARTER.byteLength);
      await expect(fs.cp("/a.bin", "/copy.bin")).rejects.toMatchObject({ code: "ENOSPC" });
      expect(await fs.exists("/copy.bin")).toBe(false);
    }));

  it("counts a file written again by its latest size, not once per write", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      for (let i = 0; i < 8; i++) await fs.writeFile("/same.bin", QUARTER);
      // Eight writes of a quarter each, but one file: three more quarters still fit.
      for (const name of ["b", "c", "d"]) await fs.writeFile(`/${name}.bin`, QUARTER);
      await expect(fs.writeFile("/e.bin", "x")).rejects.toMatchObject({ code: "ENOSPC" });
      // Shrinking a file gives its bytes back.
      await fs.writeFile("/same.bin", "small");
      await fs.writeFile("/e.bin", QUARTER.subarray(0, QUARTER.byteLength - 5));
      await expect(fs.writeFile("/f.bin", "x")).rejects.toMatchObject({ code: "ENOSPC" });
    }));

  it("frees the bytes of an uncommitted file that is removed", () =>
    withWorkspace(async ({ fresh }) => {
      const fs = fresh();
      for (const name of ["a", "b", "c", "d"]) await fs.writeFile(`/${name}.bin`, QUARTER);
      await expect(fs.writeFile("/e.bin", QUARTER)).rejects.toMatchObject({ code: "ENOSPC" });
      await fs.rm("/d.bin");
      await fs.writeFile("/e.bin", QUARTER);
      expect(fs.changedPaths()).toEqual(["/a.bin", "/b.bin", "/c.bin", "/e.bin"]);
      await expect(fs.writeFile("/f.bin", "x")).rejects.toMatchObject({ code: "ENOSPC" });
    }));

  it("starts from zero after a commit", () =>
    withWorkspace(async ({ fresh, ws }) => {
      const fs = fresh();
      for (const name of ["a", "b", "c", "d"]) await fs.writeFile(`/${name}.bin`, QUARTER.subarray(0, SPILL_BYTES));
      await fs.commit();
      for (const name of ["e", "f", "g", "h"]) await fs.writeFile(`/${name}.bin`, QUARTER);
      await expect(fs.writeFile("/i.bin", "x")).rejects.toMatchObject({ code: "ENOSPC" });
      expect(ws.allPaths()).toEqual(["/a.bin", "/b.bin", "/c.bin", "/d.bin"]);
    }));
});

describe("Workspace commit limits and conflicts", () => {
  it("refuses a commit that would hold more than MAX_WORKSPACE_ENTRIES rows, writing nothing", () =>
    withWorkspace(async ({ fresh, ws }) => {
      const fs = fresh();
      await fs.mkdir("/d");
      // The folder and MAX_WORKSPACE_ENTRIES files: one row too many.
      for (let i = 0; i < MAX_WORKSPACE_ENTRIES; i++) await fs.writeFile(`/d/${i}.txt`, "x");
      const error = await fs.commit({ key: "toolu_full", result: { content: "r", is_error: false } }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkspaceFullError);
      expect((error as Error).message).toBe(
        `the workspace would exceed its limit of ${MAX_WORKSPACE_ENTRIES} files and folders`,
      );
      expect(ws.allPaths()).toEqual([]);
      expect(ws.settled("toolu_full")).toBeUndefined();
      // At the limit exactly, the same changes commit.
      await fs.rm(`/d/${MAX_WORKSPACE_ENTRIES - 1}.txt`);
      await fs.commit({ key: "toolu_full", result: { content: "r", is_error: false } });
      expect(ws.list()).toHaveLength(MAX_WORKSPACE_ENTRIES);
      expect(ws.settled("toolu_full")).toEqual({ content: "r", is_error: false });
      // And one more row in a later commit is refused.
      const more = fresh();
      await more.writeFile("/one-more.txt", "x");
      await expect(more.commit()).rejects.toBeInstanceOf(WorkspaceFullError);
      expect(ws.list()).toHaveLength(MAX_WORKSPACE_ENTRIES);
      expect(ws.stat("/one-more.txt")).toBeUndefined();
    }));

  it("refuses a commit whose new file's folder another commit removed, writing nothing", () =>
    withWorkspace(async ({ fresh, ws }) => {
      const setup = fresh();
      await setup.mkdir("/dir");
      await setup.writeFile("/dir/old.txt", "old");
      await setup.commit();

      const writer = fresh();
      await writer.writeFile("/dir/new.txt", "new");
      await writer.writeFile("/elsewhere.txt", "also new");
      const remover = fresh();
      await remover.rm("/dir", { recursive: true });
      await remover.commit();
      expect(ws.allPaths()).toEqual([]);

      const error = await writer.commit({ key: "toolu_late", result: "r" }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(WorkspaceConflictError);
      expect((error as Error).message).toBe("/dir is no longer a folder, so /dir/new.txt cannot be saved");
      // Nothing of the commit was written: not the file, not the unrelated one, not its settled result.
      expect(ws.allPaths()).toEqual([]);
      expect(ws.settled("toolu_late")).toBeUndefined();
    }));

  it("refuses a commit whose new file's folder became a file", () =>
    withWorkspace(async ({ fresh, ws }) => {
      const setup = fresh();
      await setup.mkdir("/dir");
      await setup.commit();
      const writer = fresh();
      await writer.writeFile("/dir/new.txt", "new");
      const replacer = fresh();
      await replacer.rm("/dir");
      await replacer.writeFile("/dir", "now a file");
      await replacer.commit();
      await expect(writer.commit()).rejects.toBeInstanceOf(WorkspaceConflictError);
      expect(ws.allPaths()).toEqual(["/dir"]);
      expect(await fresh().readFile("/dir")).toBe("now a file");
    }));

  it("deletes the R2 object a failed commit uploaded for a spilled file", () =>
    withWorkspace(async ({ fresh, ws, r2Keys }) => {
      const setup = fresh();
      await setup.mkdir("/dir");
      await setup.commit();
      const writer = fresh();
      await writer.writeFile("/dir/big.bin", new Uint8Array(SPILL_BYTES + 1));
      const remover = fresh();
      await remover.rm("/dir");
      await remover.commit();
      await expect(writer.commit()).rejects.toBeInstanceOf(WorkspaceConflictError);
      expect(ws.allPaths()).toEqual([]);
      expect(await r2Keys()).toEqual([]);
      // The same commit with its folder back uploads again and keeps that object.
      const restore = fresh();
      await restore.mkdir("/dir");
      await restore.commit();
      await writer.commit();
      expect(await r2Keys()).toHaveLength(1);
      expect(await fresh().readFileBuffer("/dir/big.bin")).toEqual(new Uint8Array(SPILL_BYTES + 1));
    }));

  it("deletes the R2 object of a spilled file when the commit hits the entry limit", () =>
    withWorkspace(async ({ fresh, ws, r2Keys }) => {
      const fs = fresh();
      await fs.writeFile("/big.bin", new Uint8Array(SPILL_BYTES + 1));
      for (let i = 0; i < MAX_WORKSPACE_ENTRIES; i++) await fs.writeFile(`/${i}.txt`, "x");
      await expect(fs.commit()).rejects.toBeInstanceOf(WorkspaceFullError);
      expect(ws.allPaths()).toEqual([]);
      expect(await r2Keys()).toEqual([]);
    }));
});

describe("Workspace seed and list", () => {
  it("seed creates parent folders and list returns relative paths with sizes and ISO times", () =>
    withWorkspace(async ({ ws, fresh }) => {
      await ws.seed([
        ["/src/lib/util.ts", "export {};\n"],
        ["/src/main.ts", "main"],
        ["/README.md", "# hi"],
      ]);
      const list = ws.list();
      expect(list.map(({ path, type, size }) => ({ path, type, size }))).toEqual([
        { path: "README.md", type: "file", size: 4 },
        { path: "src", type: "directory", size: 0 },
        { path: "src/lib", type: "directory", size: 0 },
        { path: "src/lib/util.ts", type: "file", size: 11 },
        { path: "src/main.ts", type: "file", size: 4 },
      ]);
      for (const entry of list) {
        expect(entry.modified_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(new Date(entry.modified_at).toISOString()).toBe(entry.modified_at);
      }
      const fs = fresh();
      expect(await fs.readFile("/src/lib/util.ts")).toBe("export {};\n");
      expect((await fs.stat("/src/lib")).isDirectory).toBe(true);
      expect((await fs.stat("/src/main.ts")).mode).toBe(0o644);
      expect(ws.totalBytes()).toBe(4 + 11 + 4);
    }));

  it("seed leaves existing folders as they are", () =>
    withWorkspace(async ({ ws, fresh }) => {
      const fs = fresh();
      await fs.mkdir("/src");
      await fs.chmod("/src", 0o700);
      await fs.utimes("/src", new Date(), new Date(1_000));
      await fs.commit();
      await ws.seed([["/src/a.ts", "a"]]);
      const stat = await fresh().stat("/src");
      expect(stat.mode).toBe(0o700);
      expect(stat.mtime.getTime()).toBe(1_000);
      expect(ws.list().find((e) => e.path === "src")?.modified_at).toBe("1970-01-01T00:00:01.000Z");
    }));
});
