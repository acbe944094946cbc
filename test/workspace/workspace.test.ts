// The workspace store (Durable Object SQLite, large files spilled to R2): spilling, the entry and size limits, a
// commit's limits and conflicts, seeding and listing. Every test runs against a fresh Durable Object's real SQLite
// and the real R2 binding (test/support/workspace.ts).
import { describe, expect, it } from "vitest";
import { MAX_FILE_BYTES, MAX_WORKSPACE_ENTRIES } from "../../src/workspace/limits.ts";
import { SPILL_BYTES, WorkspaceConflictError, WorkspaceFullError } from "../../src/workspace/workspace.ts";
import { runsBucket } from "../support/runs-bucket.ts";
import { withWorkspace } from "../support/workspace.ts";

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
      await runsBucket().delete(key as string);
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
