// WorkspaceFs cp and mv (files, folder trees, onto existing paths, into themselves) and the errors it raises, with
// a Node-style code and a message naming the operation and the path. Every test runs against a fresh Durable Object's real SQLite and the
// real R2 binding (test/support/workspace.ts).
import { describe, expect, it } from "vitest";
import { SPILL_BYTES } from "../../src/workspace/workspace.ts";
import type { WorkspaceFs } from "../../src/workspace/workspace-fs.ts";
import { withWorkspace } from "../support/workspace.ts";

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
