// The durable step journal: each step of a run is recorded when it starts and when it completes, with its result.
// A replay after an eviction returns completed results instead of running them again, and counts the attempts of a
// step that was interrupted. Results over the SQLite row limit are kept in R2 beside the run bundle.
import type { BlobStore } from "../blob-store/blob-store.ts";
import { WorkflowError } from "../errors.ts";
import { randomHex } from "../events/event-record.ts";
import type { Json, JsonObject } from "../lib/json.ts";

interface StepRow extends Record<string, SqlStorageValue> {
  name: string;
  status: string;
  attempts: number;
  /** The attempts the runtime chose to make (a provider's refusal retried), which an interruption's limit leaves out. */
  retries: number;
  span_id: string;
  result: string | null;
  result_key: string | null;
}

export interface StoredResult {
  inline: string | null;
  key: string | null;
}

export type StepLookup =
  | { state: "completed"; result: unknown }
  | { state: "started"; attempt: number; spanId: string; interrupted: boolean };

/** Attempts of one step before the run fails instead of trying again. */
export const MAX_STEP_ATTEMPTS = 3;
/** Keep step rows well under the 2 MB SQLite row limit; larger results live in R2. */
const INLINE_RESULT_LIMIT = 1024 * 1024;

export class StepJournal {
  private readonly sql: SqlStorage;
  private readonly bucket: BlobStore;
  private readonly spillPrefix: () => string;

  constructor(sql: SqlStorage, bucket: BlobStore, spillPrefix: () => string) {
    this.sql = sql;
    this.bucket = bucket;
    this.spillPrefix = spillPrefix;
  }

  /**
   * Returns the stored result of a completed step, or records a new attempt. `interrupted` is true when an earlier
   * attempt started and never completed (the object was evicted or restarted during it).
   */
  async begin(name: string): Promise<StepLookup> {
    const now = new Date().toISOString();
    // A step met for the first time (nearly every step) is recorded in one statement; only a step that has a row
    // already (a replay after an eviction) is read.
    const spanId = randomHex(8);
    const recorded = this.sql.exec(
      `INSERT INTO runtime_steps (name, status, attempts, span_id, started_at) VALUES (?, 'started', 1, ?, ?)
       ON CONFLICT(name) DO NOTHING`,
      name,
      spanId,
      now,
    );
    if (recorded.rowsWritten > 0) return { state: "started", attempt: 1, spanId, interrupted: false };
    const row = this.sql.exec<StepRow>("SELECT * FROM runtime_steps WHERE name = ?", name).one();
    if (row.status === "completed") {
      if (row.result_key) {
        const object = await this.bucket.get(row.result_key);
        if (!object) throw new Error(`Step result ${row.result_key} is missing from R2`);
        return { state: "completed", result: JSON.parse(await object.text()) };
      }
      return { state: "completed", result: JSON.parse(row.result ?? "null") };
    }
    // A step parked on a wait for the provider (park()): the run goes on with its next attempt, which was chosen.
    if (row.status === "waiting") return this.nextAttempt(name, row, now);
    if (row.attempts - row.retries >= MAX_STEP_ATTEMPTS) {
      // A step that dies with its object every time (out of memory, CPU limit) must not be paid for forever.
      throw new WorkflowError(
        `Step "${name}" was interrupted ${row.attempts} times and will not be run again.`,
        "step_attempts_exhausted",
      );
    }
    this.sql.exec("UPDATE runtime_steps SET attempts = attempts + 1, started_at = ? WHERE name = ?", now, name);
    return { state: "started", attempt: row.attempts + 1, spanId: row.span_id, interrupted: true };
  }

  /**
   * The step's next attempt, chosen by the runtime (the provider refused the last one and the call is tried again):
   * counted as an attempt, and not against the limit on interruptions.
   */
  retry(name: string): Promise<StepLookup> {
    const row = this.sql.exec<StepRow>("SELECT * FROM runtime_steps WHERE name = ?", name).toArray()[0];
    if (!row) return this.begin(name);
    return Promise.resolve(this.nextAttempt(name, row, new Date().toISOString()));
  }

  /** The step waits on a timer for its next attempt (the provider is down or limiting): not an interruption. */
  park(name: string): void {
    this.sql.exec("UPDATE runtime_steps SET status = 'waiting' WHERE name = ? AND status = 'started'", name);
  }

  private nextAttempt(name: string, row: StepRow, now: string): StepLookup {
    this.sql.exec(
      "UPDATE runtime_steps SET attempts = attempts + 1, retries = retries + 1, status = 'started', started_at = ? WHERE name = ?",
      now,
      name,
    );
    return { state: "started", attempt: row.attempts + 1, spanId: row.span_id, interrupted: false };
  }

  async complete(name: string, result: unknown): Promise<void> {
    const { inline, key } = await this.store(name, result);
    this.sql.exec(
      "UPDATE runtime_steps SET status = 'completed', result = ?, result_key = ?, completed_at = ? WHERE name = ?",
      inline,
      key,
      new Date().toISOString(),
      name,
    );
  }

  /**
   * The ledger of tool calls: for each tool_use id, the result of its completed step, if any, and the ids whose step
   * started and never completed (the default loop names tool steps turn_<n>_tool_<tool_use id>).
   */
  async settledToolCalls(toolUseIds: readonly string[]): Promise<{ settled: JsonObject; started: string[] }> {
    const wanted = new Set(toolUseIds);
    const settled: JsonObject = {};
    const started: string[] = [];
    const rows = this.sql
      .exec<{ name: string; status: string }>(
        "SELECT name, status FROM runtime_steps WHERE name LIKE 'turn\\_%' ESCAPE '\\'",
      )
      .toArray();
    for (const row of rows) {
      const id = /^turn_\d+_tool_(.+)$/.exec(row.name)?.[1];
      if (id === undefined || !wanted.has(id)) continue;
      // A call that started and never completed: it runs now, or an eviction, a crash or a cancel cut it short.
      if (row.status !== "completed") {
        started.push(id);
        continue;
      }
      const lookup = await this.begin(row.name);
      // A step's result is kept as JSON (store()), so what begin() parses back is JSON.
      if (lookup.state === "completed") settled[id] = lookup.result as Json;
    }
    return { settled, started };
  }

  /**
   * Forgets a started step that stopped on purpose (it waits for a person): when the run goes on, the step starts
   * afresh as attempt 1, not as an interrupted one.
   */
  release(name: string): void {
    this.sql.exec("DELETE FROM runtime_steps WHERE name = ? AND status = 'started'", name);
  }

  /**
   * A result as a step row holds it: inline, or (over the row limit) in R2 with its key. Large results are put in
   * R2 here, before any row names them.
   */
  async store(name: string, result: unknown): Promise<StoredResult> {
    const json = JSON.stringify(result ?? null);
    // A UTF-16 length can undercount UTF-8 bytes up to 3×; measure exactly only when that could matter.
    if (json.length * 3 > INLINE_RESULT_LIMIT && new TextEncoder().encode(json).byteLength > INLINE_RESULT_LIMIT) {
      const key = `${this.spillPrefix()}steps/${encodeURIComponent(name)}.json`;
      await this.bucket.put(key, json);
      return { inline: null, key };
    }
    return { inline: json, key: null };
  }

  /**
   * Records a step as completed without running it (a fork inherits its origin's settled calls), with a result
   * prepared by store(). Synchronous, so it can join the transaction that creates the task.
   */
  seedCompleted(name: string, stored: StoredResult): void {
    const now = new Date().toISOString();
    this.sql.exec(
      `INSERT OR IGNORE INTO runtime_steps (name, status, attempts, span_id, result, result_key, started_at,
        completed_at) VALUES (?, 'completed', 0, ?, ?, ?, ?, ?)`,
      name,
      randomHex(8),
      stored.inline,
      stored.key,
      now,
      now,
    );
  }

  counts(): { completed: number; started: number } {
    const row = this.sql
      .exec<{ completed: number; started: number }>(
        "SELECT SUM(status = 'completed') AS completed, SUM(status IN ('started', 'waiting')) AS started FROM runtime_steps",
      )
      .one();
    return { completed: row.completed ?? 0, started: row.started ?? 0 };
  }
}
