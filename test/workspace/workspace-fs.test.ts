// WorkspaceFs, the IFileSystem the tools change the workspace through: reading and writing files in every encoding,
// metadata, folders, rm, and names above U+FFFF. Every test runs against a fresh Durable Object's real SQLite and
// the real R2 binding (test/support/workspace.ts).
import { describe, expect, it } from "vitest";
import { withWorkspace } from "../support/workspace.ts";

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
