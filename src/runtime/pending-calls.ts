// Model calls in flight, on record, so the waste of an interrupted one can be counted (issue 4: recovery is
// visible in usage). A call is noted when its stream starts (message_start carries its input tokens) and its output
// grows with every batch of deltas; a completed or failed call is removed (one whose stream broke is counted as
// wasted then). A row still there when a later instance of the object runs is a call an eviction or restart cut
// short: the provider billed it, and nothing came of it.
export type PendingCall = {
  key: string;
  model: string;
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_chars: number;
};

export class PendingCalls {
  private readonly sql: SqlStorage;
  /** Calls started by this instance: never mistaken for abandoned ones. */
  private readonly mine = new Set<string>();

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  start(call: Omit<PendingCall, "output_chars">): void {
    this.mine.add(call.key);
    this.sql.exec(
      `INSERT OR REPLACE INTO runtime_pending_calls (key, model, input_tokens, cache_creation_input_tokens,
        cache_read_input_tokens, output_chars) VALUES (?, ?, ?, ?, ?, 0)`,
      call.key,
      call.model,
      call.input_tokens,
      call.cache_creation_input_tokens,
      call.cache_read_input_tokens,
    );
  }

  progress(key: string, outputChars: number): void {
    this.sql.exec("UPDATE runtime_pending_calls SET output_chars = ? WHERE key = ?", outputChars, key);
  }

  settle(key: string): void {
    this.mine.delete(key);
    this.sql.exec("DELETE FROM runtime_pending_calls WHERE key = ?", key);
  }

  /** Removes and returns a call of this instance's that failed after it started (its stream broke); null if none. */
  take(key: string): PendingCall | null {
    const row = this.sql.exec<PendingCall>("SELECT * FROM runtime_pending_calls WHERE key = ?", key).toArray()[0];
    this.settle(key);
    return row ?? null;
  }

  /** Removes and returns the calls an earlier instance left unfinished. */
  takeAbandoned(): PendingCall[] {
    const rows = this.sql.exec<PendingCall>("SELECT * FROM runtime_pending_calls").toArray();
    const abandoned = rows.filter((row) => !this.mine.has(row.key));
    for (const row of abandoned) this.sql.exec("DELETE FROM runtime_pending_calls WHERE key = ?", row.key);
    return abandoned;
  }
}
