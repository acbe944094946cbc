// The run bundle's flush (src/run-bundle/run-bundle.ts) in a fresh object with real storage and the real R2 binding:
// flushed again (a reader's flush and the alarm's can both reach it), it rewrites the archive with every file the
// first one held, the newest end-of-run files, and a manifest that lists every file but itself.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BUNDLE_MANIFEST, type BundleManifest, type EndOfRun, RunBundle } from "../../src/run-bundle/run-bundle.ts";
import { readTar } from "../../src/run-bundle/tar.ts";
import { migrate } from "../../src/storage/migrations.ts";
import { runsStore } from "../support/runs-bucket.ts";

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
});
