// The run bundle's flush (src/run-bundle/run-bundle.ts) in a fresh object with real storage and the real R2 binding:
// flushed again (a reader's flush and the alarm's can both reach it), it rewrites the archive with every file the
// first one held, the newest end-of-run files, and a manifest that lists every file but itself. The archive is
// streamed a file at a time: a file made in pieces (checkpoints.json) is made once more rather than held when it is
// large, and a file that is not the size it was listed with fails the flush with nothing written.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  BUNDLE_MANIFEST,
  type BundleManifest,
  type EndOfRun,
  RunBundle,
  type TextPieces,
} from "../../src/run-bundle/run-bundle.ts";
import { readTar, tarFiles } from "../../src/run-bundle/tar.ts";
import { jsonArray } from "../../src/runtime/bundle-upload.ts";
import { migrate } from "../../src/storage/migrations.ts";
import { diskStore, runsStore } from "../support/runs-bucket.ts";

const decoder = new TextDecoder();

describe("flushing a run bundle", () => {
  it("keeps every file when flushed a second time, and its manifest never lists itself", async () => {
    const taskId = crypto.randomUUID();
    const stub = env.TASKS.get(env.TASKS.idFromName(`bundle-flush-${taskId}`));
    const { archive, listed } = await runInDurableObject(stub, async (_instance, state) => {
      migrate(state.storage);
      const bundle = new RunBundle(
        state.storage.sql,
        runsStore(),
        () => taskId,
        undefined,
        (fn) => state.storage.transactionSync(fn),
      );
      await bundle.write("artifacts/turn_1_step-1_stdout.txt", "alpha");
      const end = (summary: string): EndOfRun => ({
        events: { all: function* () {} },
        summary,
        transcript: "t",
        files: [],
      });
      await bundle.flush(end("first"));
      await bundle.flush(end("second"));
      const object = await runsStore().get(`runs/${taskId}/bundle.tar`);
      return { archive: new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0)), listed: bundle.list() };
    });
    const entries = readTar(archive);
    const text = (path: string) => {
      const entry = entries.find((e) => e.path === path);
      return entry ? decoder.decode(archive.subarray(entry.offset, entry.offset + entry.size)) : null;
    };
    expect(entries.map((e) => e.path)).toStrictEqual([
      BUNDLE_MANIFEST,
      "artifacts/turn_1_step-1_stdout.txt",
      "events.jsonl",
      "llm_transcript.log",
      "final_summary.md",
    ]);
    expect([text("artifacts/turn_1_step-1_stdout.txt"), text("final_summary.md")]).toStrictEqual(["alpha", "second"]);
    const manifest = JSON.parse(text(BUNDLE_MANIFEST) ?? "{}") as BundleManifest;
    expect(manifest.files.map((f) => f.path)).toStrictEqual([
      "artifacts/turn_1_step-1_stdout.txt",
      "events.jsonl",
      "final_summary.md",
      "llm_transcript.log",
    ]);
    expect(listed.map((f) => [f.path, f.size, f.uploaded])).toStrictEqual(
      entries.map((e) => [e.path, e.size, true]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  });

  it.each([
    ["R2", runsStore],
    ["the self-hosted directory store", diskStore],
  ])(
    "writes a file made in pieces whole, made once when small and twice when large, beside the staged files (%s)",
    async (_name, open) => {
      const store = open();
      const taskId = crypto.randomUUID();
      const stub = env.TASKS.get(env.TASKS.idFromName(`bundle-flush-${taskId}`));
      // 9.6 MB of checkpoints, a checkpoint a piece (an archive over 8 MiB is streamed, not assembled), and a small
      // file made in pieces too.
      const checkpoints = Array.from({ length: 48 }, (_, i) => ({
        position: `turn_${i}`,
        text: `${i % 10}`.repeat(200_000),
      }));
      const made = { large: 0, small: 0 };
      const large: TextPieces = () => {
        made.large++;
        return jsonArray(checkpoints);
      };
      const small: TextPieces = () => {
        made.small++;
        return ["a", "b\n"];
      };
      const { archive } = await runInDurableObject(stub, async (_instance, state) => {
        migrate(state.storage);
        const bundle = new RunBundle(state.storage.sql, store, () => taskId);
        await bundle.write("artifacts/llm/decision_loop_turn_1_attempt_1_request.txt", "é".repeat(200_000));
        await bundle.write("artifacts/llm/decision_loop_turn_2_attempt_1_request.txt", "request 2");
        await bundle.flush({
          events: { all: function* () {} },
          summary: "done",
          transcript: "t",
          files: [
            { path: "checkpoints.json", content: large },
            { path: "small.txt", content: small },
          ],
        });
        const object = await store.get(`runs/${taskId}/bundle.tar`);
        return { archive: new Uint8Array((await object?.arrayBuffer()) ?? new ArrayBuffer(0)) };
      });
      const files = tarFiles(archive);
      expect(decoder.decode(files.get("checkpoints.json"))).toBe(`${JSON.stringify(checkpoints, null, 2)}\n`);
      expect(decoder.decode(files.get("small.txt"))).toBe("ab\n");
      expect(decoder.decode(files.get("artifacts/llm/decision_loop_turn_1_attempt_1_request.txt"))).toBe(
        "é".repeat(200_000),
      );
      expect(decoder.decode(files.get("artifacts/llm/decision_loop_turn_2_attempt_1_request.txt"))).toBe("request 2");
      expect(made).toStrictEqual({ large: 2, small: 1 });
    },
  );

  it("fails the flush with nothing written when a file is not the size it was listed with", async () => {
    const taskId = crypto.randomUUID();
    const stub = env.TASKS.get(env.TASKS.idFromName(`bundle-flush-${taskId}`));
    let made = 0;
    // Large enough to be made again for the write and to be streamed, and different the second time.
    const changing: TextPieces = () => [made++ === 0 ? "x".repeat(9_000_000) : "y".repeat(8_999_999)];
    const outcome = await runInDurableObject(stub, async (_instance, state) => {
      migrate(state.storage);
      const bundle = new RunBundle(state.storage.sql, runsStore(), () => taskId);
      await bundle.write("artifacts/turn_1_step-1_stdout.txt", "alpha");
      let marked = false;
      const error = await bundle
        .flush(
          {
            events: { all: function* () {} },
            summary: "done",
            transcript: "t",
            files: [{ path: "checkpoints.json", content: changing }],
          },
          () => {
            marked = true;
          },
        )
        .then(
          () => null,
          (e: unknown) => (e instanceof Error ? e.message : String(e)),
        );
      return { error, marked, listed: bundle.list(), stored: await runsStore().get(`runs/${taskId}/bundle.tar`) };
    });
    expect(outcome.error).toBe(
      "The archive's checkpoints.json has 8999999 bytes instead of the 9000000 it was listed with.",
    );
    expect(outcome.marked).toBe(false);
    expect(outcome.stored).toBeNull();
    expect(outcome.listed.map((f) => [f.path, f.uploaded])).toStrictEqual([
      ["artifacts/turn_1_step-1_stdout.txt", false],
    ]);
  });
});

describe("jsonArray", () => {
  it("makes JSON.stringify(items, null, 2) and a line break, an element a piece", () => {
    const items = [{ a: "line one\nline two", b: [1, { c: null }] }, [], "s", { empty: {} }];
    const pieces = [...jsonArray(items)];
    expect(pieces.join("")).toBe(`${JSON.stringify(items, null, 2)}\n`);
    expect(pieces).toHaveLength(items.length + 1);
    expect([...jsonArray([])].join("")).toBe("[]\n");
  });
});
