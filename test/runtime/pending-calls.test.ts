// Model calls in flight on record (src/runtime/pending-calls.ts), over a task object's real storage: a started call
// is written with its first deltas' progress, or once RECORD_WITHIN_MS have passed without any, never in a commit of
// its own; a call that ends before either is never written; what a later instance finds is what was written. And the
// conversation's count, read from its cached context.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MessageLog } from "../../src/runtime/conversation.ts";
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
  fn: (calls: PendingCalls, rows: () => unknown[], sql: SqlStorage, storage: DurableObjectStorage) => Promise<T>,
): Promise<T> {
  const stub = env.TASKS.get(env.TASKS.idFromName(`pending-calls-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    migrate(state.storage);
    const sql = state.storage.sql;
    const rows = () => sql.exec("SELECT key, input_tokens, output_chars FROM runtime_pending_calls").toArray();
    return fn(new PendingCalls(sql), rows, sql, state.storage);
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

  it("finds an earlier instance's calls again after a rolled-back look, and looks no more once it found none", async () => {
    const out = await inObject(async (calls, _rows, sql, storage) => {
      calls.start(call("turn_1"));
      calls.progress("turn_1", 10);
      const later = new PendingCalls(sql);
      const rolledBack = (() => {
        try {
          return storage.transactionSync(() => {
            const found = later.takeAbandoned();
            throw new Error(`rolled back after finding ${found.length}`);
          });
        } catch (error) {
          return error instanceof Error ? error.message : String(error);
        }
      })();
      const again = later.takeAbandoned().map((c) => c.key);
      const afterThat = later.takeAbandoned();
      // A row this instance writes is its own, never abandoned; and a row written behind its back (as no code does)
      // is not looked for again.
      later.start(call("turn_2"));
      later.progress("turn_2", 3);
      sql.exec(
        "INSERT INTO runtime_pending_calls (key, model, input_tokens, cache_creation_input_tokens, cache_read_input_tokens) VALUES ('x', 'm', 1, 0, 0)",
      );
      return { rolledBack, again, afterThat, last: later.takeAbandoned() };
    });
    expect(out).toEqual({ rolledBack: "rolled back after finding 1", again: ["turn_1"], afterThat: [], last: [] });
  });
});

describe("MessageLog.count", () => {
  it("is the number of stored messages, counted once and kept in step, through replays, gaps and rollbacks", async () => {
    const counts = await inObject(async (_calls, _rows, sql, storage) => {
      const log = new MessageLog(sql);
      const stored = () => sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runtime_messages").one().n;
      const seen: [number, number][] = [];
      log.record(0, { role: "user", content: "hi" });
      seen.push([log.count(), stored()]);
      log.record(1, { role: "assistant", content: "hello" });
      seen.push([log.count(), stored()]);
      // A replayed step records an index again: nothing changes.
      log.record(1, { role: "assistant", content: "hello" });
      seen.push([log.count(), stored()]);
      // An index past the end (no code does this) drops the cache rather than let it disagree.
      log.record(3, { role: "user", content: "later" });
      seen.push([log.count(), stored()]);
      // A message recorded in a transaction that rolls back is forgotten with it (the supervisor invalidates).
      try {
        storage.transactionSync(() => {
          log.record(4, { role: "assistant", content: "gone" });
          throw new Error("rolled back");
        });
      } catch {
        log.invalidate();
      }
      seen.push([log.count(), stored()]);
      return seen;
    });
    expect(counts).toEqual([
      [1, 1],
      [2, 2],
      [2, 2],
      [3, 3],
      [3, 3],
    ]);
  });
});
