// Model calls in flight on record (src/runtime/pending-calls.ts), over a task object's real storage: a started call
// is written with its first deltas' progress, or once RECORD_WITHIN_MS have passed without any, never in a commit of
// its own; a call that ends before either is never written; what a later instance finds is what was written.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { PendingCalls, RECORD_WITHIN_MS } from "../../src/runtime/pending-calls.ts";
import { migrate } from "../../src/storage/migrations.ts";

const call = (key: string) => ({
  key,
  model: "claude-sonnet-4-5",
  input_tokens: 1200,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 300,
});

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn` with PendingCalls over a fresh object's storage, and the rows it leaves. */
async function inObject<T>(
  fn: (calls: PendingCalls, rows: () => unknown[], sql: SqlStorage) => Promise<T>,
): Promise<T> {
  const stub = env.TASKS.get(env.TASKS.idFromName(`pending-calls-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    migrate(state.storage);
    const sql = state.storage.sql;
    const rows = () => sql.exec("SELECT key, input_tokens, output_chars FROM runtime_pending_calls").toArray();
    return fn(new PendingCalls(sql), rows, sql);
  });
}

describe("PendingCalls", () => {
  it("writes a started call with its first progress, not before", async () => {
    const rows = await inObject(async (calls, rows) => {
      calls.start(call("turn_1"));
      const before = rows();
      calls.progress("turn_1", 42);
      return { before, after: rows() };
    });
    expect(rows.before).toEqual([]);
    expect(rows.after).toEqual([{ key: "turn_1", input_tokens: 1200, output_chars: 42 }]);
  });

  it("writes a started call that has no deltas once RECORD_WITHIN_MS have passed", async () => {
    const rows = await inObject(async (calls, rows) => {
      calls.start(call("turn_1"));
      await wait(RECORD_WITHIN_MS * 3);
      return rows();
    });
    expect(rows).toEqual([{ key: "turn_1", input_tokens: 1200, output_chars: 0 }]);
  });

  it("never writes a call that settles first, even after the wait", async () => {
    const rows = await inObject(async (calls, rows) => {
      calls.start(call("turn_1"));
      calls.settle("turn_1");
      await wait(RECORD_WITHIN_MS * 3);
      return rows();
    });
    expect(rows).toEqual([]);
  });

  it("gives back a broken call whether or not it was written, and removes it", async () => {
    const out = await inObject(async (calls, rows) => {
      calls.start(call("turn_1"));
      const unwritten = calls.take("turn_1");
      calls.start(call("turn_2"));
      calls.progress("turn_2", 7);
      const written = calls.take("turn_2");
      return { unwritten, written, left: rows() };
    });
    expect(out.unwritten).toEqual({ ...call("turn_1"), output_chars: 0 });
    expect(out.written).toEqual({ ...call("turn_2"), output_chars: 7 });
    expect(out.left).toEqual([]);
  });

  it("hands a later instance the calls an earlier one wrote and did not settle", async () => {
    const abandoned = await inObject(async (calls, _rows, sql) => {
      calls.start(call("turn_1"));
      calls.progress("turn_1", 10);
      calls.progress("turn_1", 25);
      // The instance is gone; the next one opens the same storage.
      return new PendingCalls(sql).takeAbandoned();
    });
    expect(abandoned).toEqual([{ ...call("turn_1"), output_chars: 25 }]);
  });
});
