// The run bundle's flush (src/run-bundle/run-bundle.ts) in a fresh object with real storage and the real R2 binding:
// flushed again (a reader's flush and the alarm's can both reach it), it rewrites the archive with every file the
// first one held, the newest end-of-run files, and a manifest that lists every file but itself. The archive is
// streamed a file at a time: a file made in pieces (checkpoints.json) is made once more rather than held when it is
// large, and a file that is not the size it was listed with fails the flush with nothing written.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Redactor } from "../../src/events/redaction.ts";
import type { TextPieces } from "../../src/run-bundle/bundle-archive.ts";
import { BUNDLE_MANIFEST, type BundleManifest, type EndOfRun, RunBundle } from "../../src/run-bundle/run-bundle.ts";
import { readTar, tarFiles } from "../../src/run-bundle/tar.ts";
import { checkpointsJson, jsonArray } from "../../src/runtime/bundle-upload.ts";
import type { Checkpoint } from "../../src/runtime/checkpoints.ts";
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

describe("checkpointsJson", () => {
  /** Checkpoints over one conversation, as CheckpointLog.each gives them: each holds the messages up to it. */
  function checkpointsOver(conversation: Checkpoint["state"]["messages"], counts: number[]): Checkpoint[] {
    return counts.map((count, i) => ({
      checkpoint_id: crypto.randomUUID(),
      task_id: "5d1e3b2a-0f4c-4d6e-8a9b-1c2d3e4f5a6b",
      position: `turn_${i}_model`,
      sequence: i + 1,
      created_at: "2026-11-29T05:00:00.000Z",
      awaiting_human: i === 2,
      state: {
        messages: conversation.slice(0, count),
        next_action: i === counts.length - 1 ? "finish" : "model_turn",
        current_agent: "planner",
        routing_key: i === 1 ? "r" : null,
        // The fourth one's metadata holds a field with the placeholder's own name and text; every string in a
        // value is escaped, so only a field can look like it.
        metadata: i === 3 ? { turn: i, messages: "\u0000outpost:messages\u0000" } : { turn: i, note: 'quote " and \\' },
      },
    }));
  }
  const secret = "s3cret-value-0123456789";
  const conversation: Checkpoint["state"]["messages"] = [
    { role: "user", content: "Plan a project.\nTwo lines, a tab\t, unicode é 🚀" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Writing it down." },
        { type: "tool_use", id: "toolu_1", name: "TodoWrite", input: { todos: [{ content: "a", status: "pending" }] } },
      ],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: `token ${secret} and sk-ant-api03-abcdefghijklmnop`,
          is_error: false,
        },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "authorization: Bearer abcdef123456" }] },
    { role: "user", content: "\u0000outpost:messages\u0000 is only text here" },
  ];

  it("makes exactly jsonArray of the checkpoints with their conversations redacted, each message redacted once", () => {
    const redactor = new Redactor([secret]);
    // The fourth checkpoint's metadata holds a field like the placeholder: that one is written whole, the same.
    const checkpoints = checkpointsOver(conversation, [0, 1, 3, 4, 5, 5]);
    const expected = [
      ...jsonArray(
        checkpoints.map((c) => ({ ...c, state: { ...c.state, messages: redactor.value(c.state.messages) } })),
      ),
    ].join("");
    let redacted = 0;
    const text = [
      ...checkpointsJson(checkpoints, (messages) => {
        redacted += messages.length;
        return redactor.value(messages);
      }),
    ].join("");
    expect(text).toBe(expected);
    expect(text).not.toContain(secret);
    expect(JSON.parse(text)).toHaveLength(6);
    // Five messages, each redacted once, and the fourth checkpoint's four again (it was written whole).
    expect(redacted).toBe(5 + 4);
  });

  it("makes [] for a run with no checkpoint", () => {
    expect([...checkpointsJson([], (m) => m)].join("")).toBe("[]\n");
  });
});
