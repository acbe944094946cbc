// The ledger of a Durable Object's timers: one row per duty that is due at some moment (its kind, its due time, what
// it needs to know), and the object's one alarm always set to the earliest row. A duty is set and cleared by name;
// when the alarm comes, the rows that are due are handed, in the order the owner gives, to one handler per kind, and a
// row is deleted only after its handler has run without setting it again, so a duty interrupted by an eviction runs
// again. cloudflare/agents keeps an agent's schedules this way (one table, `_scheduleNextAlarm`).

/** One duty on the ledger. `payload` is whatever its handler needs, as JSON. */
export interface Timer<K extends string = string> {
  kind: K;
  /** Epoch ms. */
  due_at: number;
  payload: unknown;
  /** How many times its handler failed in a row (the next try backs off). */
  attempts: number;
}

type Row = {
  kind: string;
  due_at: number;
  payload: string;
  attempts: number;
};

/** The table, created by migration 11 (src/storage/migrations.ts). */
export const TIMERS_TABLE = "timers";

/** The alarm half of an object's storage. */
export type AlarmStorage = Pick<DurableObjectStorage, "getAlarm" | "setAlarm" | "deleteAlarm">;

export class TimerLedger<K extends string = string> {
  private readonly sql: SqlStorage;
  private readonly alarm: AlarmStorage;
  /** The rows, as this instance read or wrote them (the object is the table's only writer); null until first read. */
  private rows: Map<string, Timer<K>> | null = null;
  /** What each row was last set to by this instance: a handler that set its own row again keeps it. */
  private revisions = new Map<string, number>();
  private revision = 0;
  /** The alarm as this instance last set or read it (undefined: not known, read it). */
  private armed: number | null | undefined;
  /** The arm() under way: the next one waits for it. */
  private arming: Promise<void> = Promise.resolve();

  constructor(sql: SqlStorage, alarm: AlarmStorage) {
    this.sql = sql;
    this.alarm = alarm;
  }

  /** The table was just created, with the rest of a new object's storage: it holds nothing, and no alarm is set. */
  knownEmpty(): void {
    this.rows = new Map();
    this.armed = null;
  }

  /** Storage may differ from what this instance remembers (a rolled-back transaction, a test's edit). */
  invalidate(): void {
    this.rows = null;
    this.armed = undefined;
  }

  /** Every row, earliest first. */
  list(): Timer<K>[] {
    return [...this.load().values()].sort((a, b) => a.due_at - b.due_at);
  }

  get(kind: K): Timer<K> | null {
    return this.load().get(kind) ?? null;
  }

  has(kind: K): boolean {
    return this.load().has(kind);
  }

  /** Sets the duty `kind` due at `dueAt` (replacing its row, if any). Call arm() after, to move the alarm. */
  set(kind: K, dueAt: number, payload: unknown = null, attempts = 0): void {
    const rows = this.load();
    const current = rows.get(kind);
    const json = JSON.stringify(payload ?? null);
    this.revisions.set(kind, ++this.revision);
    if (
      current &&
      current.due_at === dueAt &&
      current.attempts === attempts &&
      JSON.stringify(current.payload) === json
    )
      return;
    this.sql.exec(
      `INSERT INTO ${TIMERS_TABLE} (kind, due_at, payload, attempts) VALUES (?, ?, ?, ?)
       ON CONFLICT (kind) DO UPDATE SET due_at = excluded.due_at, payload = excluded.payload, attempts = excluded.attempts`,
      kind,
      dueAt,
      json,
      attempts,
    );
    rows.set(kind, { kind, due_at: dueAt, payload: JSON.parse(json) as unknown, attempts });
  }

  /** Sets `kind` due at `dueAt` unless it is due sooner already. */
  setEarliest(kind: K, dueAt: number): void {
    const current = this.get(kind);
    if (current === null || current.due_at > dueAt) this.set(kind, dueAt, current?.payload ?? null);
  }

  /** Sets `kind` at `dueAt`, or clears it when `dueAt` is null. */
  setOrClear(kind: K, dueAt: number | null): void {
    if (dueAt === null) this.clear(kind);
    else this.set(kind, dueAt);
  }

  clear(kind: K): void {
    const rows = this.load();
    this.revisions.set(kind, ++this.revision);
    if (!rows.has(kind)) return;
    this.sql.exec(`DELETE FROM ${TIMERS_TABLE} WHERE kind = ?`, kind);
    rows.delete(kind);
  }

  /** When the earliest duty is due, or null when none is. */
  earliest(): number | null {
    let due: number | null = null;
    for (const timer of this.load().values()) if (due === null || timer.due_at < due) due = timer.due_at;
    return due;
  }

  /**
   * Sets the object's alarm to the earliest row (or deletes it when the ledger is empty), if it is not set so. Calls
   * run one after another, each reading the rows when its turn comes: two interleaved could leave the alarm at what
   * the first read while remembering what the second set, and a row would then never come due.
   */
  arm(): Promise<void> {
    const turn = this.arming.then(() => this.armNow());
    // A failed call fails its caller; the next one still runs.
    this.arming = turn.catch(() => undefined);
    return turn;
  }

  private async armNow(): Promise<void> {
    if (this.armed === undefined) this.armed = await this.alarm.getAlarm();
    const due = this.earliest();
    if (this.armed === due) return;
    // Remembered before the write: if it fails, the alarm is read again next time.
    this.armed = due;
    try {
      if (due === null) await this.alarm.deleteAlarm();
      else await this.alarm.setAlarm(due);
    } catch (error) {
      this.armed = undefined;
      throw error;
    }
  }

  /**
   * The alarm came: the object's alarm is unset now. Runs each row that is due, in `order`, through `run`, and deletes
   * it once its handler has returned without setting it again. The alarm's firing makes the earliest row due even if
   * the clock says a few ms early. A handler that throws keeps its row, due again after a backoff (30 s, doubling up
   * to an hour); `onError` hears of it. `alive` is asked before each duty (a duty may delete the object's storage).
   * Arms the alarm for what is left.
   */
  async fire(
    order: readonly K[],
    run: (timer: Timer<K>) => Promise<void>,
    options: { alive: () => boolean; onError: (timer: Timer<K>, error: unknown) => void },
  ): Promise<void> {
    this.armed = null;
    const horizon = Math.max(Date.now(), this.earliest() ?? 0);
    for (const kind of order) {
      if (!options.alive()) return;
      const timer = this.get(kind);
      if (!timer || timer.due_at > horizon) continue;
      const revision = this.revisions.get(kind);
      try {
        await run(timer);
        if (!options.alive()) return;
        if (this.revisions.get(kind) === revision) this.clear(kind);
      } catch (error) {
        options.onError(timer, error);
        if (!options.alive()) return;
        if (this.revisions.get(kind) !== revision) continue;
        const backoff = Math.min(30_000 * 2 ** timer.attempts, 3_600_000);
        this.set(kind, Date.now() + backoff, timer.payload, timer.attempts + 1);
      }
    }
    if (!options.alive()) return;
    // A row no handler knows (written by a newer version, rolled back since) would bring the alarm back at once.
    for (const timer of this.list()) if (!order.includes(timer.kind) && timer.due_at <= horizon) this.clear(timer.kind);
    await this.arm();
  }

  private load(): Map<string, Timer<K>> {
    if (this.rows) return this.rows;
    const rows = new Map<string, Timer<K>>();
    for (const row of this.sql.exec<Row>(`SELECT kind, due_at, payload, attempts FROM ${TIMERS_TABLE}`)) {
      rows.set(row.kind, {
        kind: row.kind as K,
        due_at: row.due_at,
        payload: JSON.parse(row.payload) as unknown,
        attempts: row.attempts,
      });
    }
    this.rows = rows;
    return rows;
  }
}
