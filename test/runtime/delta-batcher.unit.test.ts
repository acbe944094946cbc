// The delta batcher: fewer token events without losing, reordering or delaying the first token.
import { describe, expect, it } from "vitest";
import { DELTA_WINDOW_MS, DeltaBatcher, type DeltaKind } from "../../src/runtime/delta-batcher.ts";

function recorder() {
  const out: [DeltaKind, number, string][] = [];
  const batcher = new DeltaBatcher((kind, index, text) => out.push([kind, index, text]));
  return { out, batcher };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("DeltaBatcher", () => {
  it("emits the first delta at once and merges the next ones until the window closes", async () => {
    const { out, batcher } = recorder();
    batcher.add("text", 0, "Hello");
    expect(out).toEqual([["text", 0, "Hello"]]);
    batcher.add("text", 0, " big");
    batcher.add("text", 0, " world");
    expect(out).toHaveLength(1);
    await wait(DELTA_WINDOW_MS * 3);
    expect(out).toEqual([
      ["text", 0, "Hello"],
      ["text", 0, " big world"],
    ]);
  });

  it("flushes before switching block or kind, so the order of blocks is kept", () => {
    const { out, batcher } = recorder();
    batcher.add("thinking", 0, "Let me");
    batcher.add("thinking", 0, " think.");
    batcher.add("text", 1, "Answer");
    batcher.add("text", 1, " here.");
    batcher.flush();
    expect(out).toEqual([
      ["thinking", 0, "Let me"],
      ["thinking", 0, " think."],
      ["text", 1, "Answer here."],
    ]);
  });

  it("sends a large batch without waiting for the window", () => {
    const { out, batcher } = recorder();
    batcher.add("text", 0, "a");
    batcher.add("text", 0, "b".repeat(2100));
    expect(out).toEqual([
      ["text", 0, "a"],
      ["text", 0, "b".repeat(2100)],
    ]);
  });

  it("emits nothing on a flush with nothing pending, and nothing after the window once flushed", async () => {
    const { out, batcher } = recorder();
    batcher.flush();
    batcher.add("text", 0, "x");
    batcher.add("text", 0, "y");
    batcher.flush();
    await wait(DELTA_WINDOW_MS * 3);
    expect(out).toEqual([
      ["text", 0, "x"],
      ["text", 0, "y"],
    ]);
  });
});
