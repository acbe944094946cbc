// WorkspaceFs as an in-memory overlay of one call's changes: nothing is visible to another WorkspaceFs until the
// commit, a read-only one refuses every change, and one call's pending bytes are bounded. Every test runs against a
// fresh Durable Object's real SQLite and the real R2 binding (test/support/workspace.ts).
import { describe, expect, it } from "vitest";
import { MAX_FILE_BYTES } from "../../src/workspace/limits.ts";
import { SPILL_BYTES, WorkspaceFullError } from "../../src/workspace/workspace.ts";
import { MAX_PENDING_BYTES } from "../../src/workspace/workspace-fs.ts";
import { withWorkspace } from "../support/workspace.ts";

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
