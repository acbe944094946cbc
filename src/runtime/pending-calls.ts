// Model calls in flight, on record, so the waste of an interrupted one can be counted (issue 4: recovery is
// visible in usage). A call is noted when its stream starts (message_start carries its input tokens) and its output
// grows with every batch of deltas; a completed or failed call is removed (one whose stream broke is counted as
// wasted then). A row still there when a later instance of the object runs is a call an eviction or restart cut
// short: the provider billed it, and nothing came of it.
//
// The start is written with the call's first batch of deltas (which goes out at once), or RECORD_WITHIN_MS after
// message_start if none has come by then, not in a commit of its own: a call that ends sooner is never written at
// all. An eviction in that window loses the record of one call's input, as it loses the deltas still batched.
import { DELTA_WINDOW_MS } from "./delta-batcher.ts";

export type PendingCall = {
  key: string;
  model: string;
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_chars: number;
};

/** Longest a started call waits to be written with its first deltas: the delta batcher's window. */
export const RECORD_WITHIN_MS = DELTA_WINDOW_MS;

export class PendingCalls {
  private readonly sql: SqlStorage;
  /** Calls started by this instance: never mistaken for abandoned ones. */
  private readonly mine = new Set<string>();
  /** Whether a look for an earlier instance's calls has found none (a look that found some may be rolled back). */
  private noneAbandoned = false;
  /** Calls started and not yet written, each with the timer that writes it. */
  private readonly unwritten = new Map<string, { call: PendingCall; timer: ReturnType<typeof setTimeout> }>();

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /** The table was just created, empty, by this instance (a new task's object): no earlier instance left a call. */
  knownEmpty(): void {
    this.noneAbandoned = true;
  }

  start(call: Omit<PendingCall, "output_chars">): void {
    this.mine.add(call.key);
    this.forget(call.key);
    const timer = setTimeout(() => this.write(call.key), RECORD_WITHIN_MS);
    this.unwritten.set(call.key, { call: { ...call, output_chars: 0 }, timer });
  }

  progress(key: string, outputChars: number): void {
    const waiting = this.unwritten.get(key);
    if (waiting) {
      waiting.call.output_chars = outputChars;
      this.write(key);
      return;
    }
    this.sql.exec("UPDATE runtime_pending_calls SET output_chars = ? WHERE key = ?", outputChars, key);
  }

  settle(key: string): void {
    this.mine.delete(key);
    // Never written: there is no row to remove.
    if (this.forget(key)) return;
    this.sql.exec("DELETE FROM runtime_pending_calls WHERE key = ?", key);
  }

  /** Removes and returns a call of this instance's that failed after it started (its stream broke); null if none. */
  take(key: string): PendingCall | null {
    const waiting = this.unwritten.get(key)?.call;
    if (waiting) {
      this.settle(key);
      return waiting;
    }
    const row = this.sql.exec<PendingCall>("SELECT * FROM runtime_pending_calls WHERE key = ?", key).toArray()[0];
    this.settle(key);
    return row ?? null;
  }

  /** Writes a started call's row now. */
  private write(key: string): void {
    const waiting = this.unwritten.get(key);
    if (!waiting) return;
    this.forget(key);
    const { call } = waiting;
    this.sql.exec(
      `INSERT OR REPLACE INTO runtime_pending_calls (key, model, input_tokens, cache_creation_input_tokens,
        cache_read_input_tokens, output_chars) VALUES (?, ?, ?, ?, ?, ?)`,
      call.key,
      call.model,
      call.input_tokens,
      call.cache_creation_input_tokens,
      call.cache_read_input_tokens,
      call.output_chars,
    );
  }

  /** Drops a call not yet written, and its timer; whether there was one. */
  private forget(key: string): boolean {
    const waiting = this.unwritten.get(key);
    if (!waiting) return false;
    clearTimeout(waiting.timer);
    this.unwritten.delete(key);
    return true;
  }

  /** Removes and returns the calls an earlier instance left unfinished. */
  takeAbandoned(): PendingCall[] {
    // Once a look has found none, none can appear: every row written after it is this instance's own.
    if (this.noneAbandoned) return [];
    const rows = this.sql.exec<PendingCall>("SELECT * FROM runtime_pending_calls").toArray();
    const abandoned = rows.filter((row) => !this.mine.has(row.key));
    this.noneAbandoned = abandoned.length === 0;
    for (const row of abandoned) this.sql.exec("DELETE FROM runtime_pending_calls WHERE key = ?", row.key);
    return abandoned;
  }
}
