// The ledger of timers (src/storage/timer-ledger.ts) over a real object's SQLite and alarm: the alarm follows the
// earliest row, due rows run in the owner's order and are deleted once their handler has run, a handler that sets its
// own row keeps it, and one that throws keeps it with a backoff.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TimerLedger } from "../../src/storage/timer-ledger.ts";

type Kind = "a" | "b" | "c";
const ORDER: readonly Kind[] = ["a", "b", "c"];

/** A ledger over an object of its own, its table created as migration 11 creates it. */
async function withLedger<T>(fn: (ledger: TimerLedger<Kind>, storage: DurableObjectStorage) => Promise<T>): Promise<T> {
  const stub = env.TASKS.get(env.TASKS.idFromName(`timers-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    state.storage.sql.exec(
      "CREATE TABLE timers (kind TEXT PRIMARY KEY, due_at INTEGER NOT NULL, payload TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0)",
    );
    return fn(new TimerLedger<Kind>(state.storage.sql, state.storage), state.storage);
  });
}

const alive = () => true;
const noError = () => {
  throw new Error("no handler was to fail");
};

describe("the ledger of timers", () => {
  it("keeps the object's one alarm at the earliest row, and none when it is empty", async () => {
    const seen = await withLedger(async (ledger, storage) => {
      const now = Date.now();
      ledger.set("b", now + 60_000);
      ledger.set("a", now + 90_000, { request: "r1" });
      await ledger.arm();
      const first = await storage.getAlarm();
      ledger.setEarliest("a", now + 30_000);
      await ledger.arm();
      const sooner = await storage.getAlarm();
      ledger.clear("a");
      ledger.clear("b");
      await ledger.arm();
      return { now, first, sooner, payload: ledger.get("b"), empty: await storage.getAlarm() };
    });
    expect(seen.first).toBe(seen.now + 60_000);
    expect(seen.sooner).toBe(seen.now + 30_000);
    expect(seen.payload).toBeNull();
    expect(seen.empty).toBeNull();
  });

  it("reads its rows back in a new instance, with their payloads", async () => {
    const rows = await withLedger(async (ledger, storage) => {
      ledger.set("c", 5_000, { call: "k1" });
      ledger.set("a", 1_000);
      return new TimerLedger<Kind>(storage.sql, storage).list();
    });
    expect(rows).toEqual([
      { kind: "a", due_at: 1_000, payload: null, attempts: 0 },
      { kind: "c", due_at: 5_000, payload: { call: "k1" }, attempts: 0 },
    ]);
  });

  it("runs the due rows in the owner's order and deletes each once its handler has run; later ones wait", async () => {
    const seen = await withLedger(async (ledger, storage) => {
      const now = Date.now();
      ledger.set("c", now - 10);
      ledger.set("a", now - 5);
      ledger.set("b", now + 3_600_000);
      const ran: Kind[] = [];
      await ledger.fire(ORDER, async (timer) => void ran.push(timer.kind), { alive, onError: noError });
      return { ran, left: ledger.list().map((t) => t.kind), alarm: await storage.getAlarm(), b: ledger.get("b") };
    });
    expect(seen.ran).toEqual(["a", "c"]);
    expect(seen.left).toEqual(["b"]);
    expect(seen.alarm).toBe(seen.b?.due_at);
  });

  it("counts the earliest row due when the alarm comes, even if the clock is a little behind it", async () => {
    const ran = await withLedger(async (ledger) => {
      ledger.set("b", Date.now() + 50);
      ledger.set("c", Date.now() + 60_000);
      const kinds: Kind[] = [];
      await ledger.fire(ORDER, async (timer) => void kinds.push(timer.kind), { alive, onError: noError });
      return kinds;
    });
    expect(ran).toEqual(["b"]);
  });

  it("keeps a row its handler set again, at the new time", async () => {
    const left = await withLedger(async (ledger) => {
      const again = Date.now() + 30_000;
      ledger.set("a", Date.now());
      await ledger.fire(ORDER, async () => ledger.set("a", again), { alive, onError: noError });
      return { row: ledger.get("a"), again };
    });
    expect(left.row?.due_at).toBe(left.again);
  });

  it("keeps a row whose handler threw, due again after a backoff that doubles, and goes on with the others", async () => {
    const seen = await withLedger(async (ledger) => {
      ledger.set("a", Date.now());
      ledger.set("b", Date.now());
      const errors: string[] = [];
      const ran: Kind[] = [];
      const run = async (timer: { kind: Kind }) => {
        if (timer.kind === "a") throw new Error("R2 is down");
        ran.push(timer.kind);
      };
      const onError = (_timer: unknown, error: unknown) => errors.push((error as Error).message);
      const before = Date.now();
      await ledger.fire(ORDER, run, { alive, onError });
      const first = ledger.get("a");
      ledger.set("a", Date.now(), first?.payload, first?.attempts);
      await ledger.fire(ORDER, run, { alive, onError });
      return { before, first, second: ledger.get("a"), errors, ran };
    });
    expect(seen.errors).toEqual(["R2 is down", "R2 is down"]);
    expect(seen.ran).toEqual(["b"]);
    expect(seen.first?.attempts).toBe(1);
    expect(seen.first?.due_at).toBeGreaterThanOrEqual(seen.before + 30_000);
    expect(seen.second?.attempts).toBe(2);
    expect(seen.second?.due_at).toBeGreaterThanOrEqual(seen.before + 60_000);
  });

  it("stops when a duty deleted the storage, and drops a due row no handler knows", async () => {
    const seen = await withLedger(async (ledger, storage) => {
      storage.sql.exec("INSERT INTO timers (kind, due_at, payload) VALUES ('gone', ?, 'null')", Date.now() - 1);
      ledger.invalidate();
      ledger.set("a", Date.now());
      ledger.set("b", Date.now());
      const ran: Kind[] = [];
      await ledger.fire(ORDER, async (timer) => void ran.push(timer.kind), { alive, onError: noError });
      const kindsAfterFirst = storage.sql.exec<{ kind: string }>("SELECT kind FROM timers").toArray();
      ledger.set("a", Date.now());
      ledger.set("b", Date.now());
      let deleted = false;
      const stopped: Kind[] = [];
      await ledger.fire(
        ORDER,
        async (timer) => {
          stopped.push(timer.kind);
          deleted = true;
        },
        { alive: () => !deleted, onError: noError },
      );
      return { ran, kindsAfterFirst, stopped };
    });
    expect(seen.ran).toEqual(["a", "b"]);
    expect(seen.kindsAfterFirst).toEqual([]);
    expect(seen.stopped).toEqual(["a"]);
  });
});
