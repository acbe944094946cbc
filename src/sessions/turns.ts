// A session's turns in its Durable Object (table sessions_turns, src/storage/migrations.ts): one row per message, in order, with where the
// turn starts in the conversation and in the step journal, the usage before it, and its ExecutionResult once it has
// ended. Queued turns (busy: enqueue) wait here in order. Every write is a check-and-set on the status, so a late
// write of an interrupted run cannot change a turn that has moved on.

import type { ExecutionResult } from "../contracts/execution-result.ts";
import type { AgentUsage } from "../contracts/usage.ts";
import { ENDED_TURN_STATUSES, type TurnStatus, type TurnView } from "./session.ts";

interface TurnRow extends Record<string, SqlStorageValue> {
  id: string;
  idx: number;
  message: string;
  status: string;
  streaming: number;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  first_message: number | null;
  start_model_turn: number | null;
  usage_before: string | null;
  started_seq: number | null;
  interrupted: number;
  result: string | null;
}

/** A turn as the object works with it. */
export interface Turn {
  id: string;
  index: number;
  message: string;
  status: TurnStatus;
  streaming: boolean;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** The conversation index of the user message that starts it (set when it starts). */
  firstMessage: number | null;
  /** Model turns the conversation had taken before it: its steps are numbered on from there. */
  startModelTurn: number | null;
  usageBefore: AgentUsage | null;
  /** The sequence number of its turn_started event: its events follow. */
  startedSeq: number | null;
  /** A newer message interrupts it (busy: interrupt): it ends canceled as soon as its run has stopped. */
  interrupted: boolean;
  result: ExecutionResult | null;
}

/** Where a starting turn begins. */
export interface TurnStart {
  firstMessage: number;
  startModelTurn: number;
  usageBefore: AgentUsage;
  startedSeq: number;
}

export class TurnLog {
  private readonly sql: SqlStorage;
  private cache: Turn | null | undefined;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  /**
   * The turn under way or waiting for a person for it, if any (at most one). Cached: the run asks at every event
   * whether its turn is still the current one, and the rows change only through this class.
   */
  current(): Turn | null {
    if (this.cache === undefined)
      this.cache = this.one("SELECT * FROM sessions_turns WHERE status = 'running' LIMIT 1");
    return this.cache;
  }

  /** Forgets the cached current turn (after a rolled-back transaction). */
  invalidate(): void {
    this.cache = undefined;
  }

  /** The turn started last, if any. */
  lastStarted(): Turn | null {
    return this.one("SELECT * FROM sessions_turns WHERE started_at IS NOT NULL ORDER BY idx DESC LIMIT 1");
  }

  count(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sessions_turns").one().n;
  }

  /** The oldest queued turn, if any. */
  nextQueued(): Turn | null {
    return this.one("SELECT * FROM sessions_turns WHERE status = 'queued' ORDER BY idx LIMIT 1");
  }

  get(id: string): Turn | null {
    return this.one("SELECT * FROM sessions_turns WHERE id = ?", id);
  }

  list(): Turn[] {
    return this.sql.exec<TurnRow>("SELECT * FROM sessions_turns ORDER BY idx").toArray().map(fromRow);
  }

  /** Adds a turn at the end, queued; start() moves it to running. */
  add(id: string, message: string, streaming: boolean): Turn {
    const next = this.sql.exec<{ n: number }>("SELECT COALESCE(MAX(idx), 0) + 1 AS n FROM sessions_turns").one().n;
    this.sql.exec(
      "INSERT INTO sessions_turns (id, idx, message, status, streaming, created_at) VALUES (?, ?, ?, 'queued', ?, ?)",
      id,
      next,
      message,
      streaming ? 1 : 0,
      new Date().toISOString(),
    );
    const turn = this.get(id);
    if (!turn) throw new Error(`Turn ${id} was not stored.`);
    return turn;
  }

  /** queued → running, recording where the turn starts. Returns whether this call started it. */
  start(id: string, start: TurnStart): boolean {
    this.cache = undefined;
    return (
      this.sql.exec(
        `UPDATE sessions_turns SET status = 'running', started_at = ?, first_message = ?, start_model_turn = ?,
          usage_before = ?, started_seq = ? WHERE id = ? AND status = 'queued'`,
        new Date().toISOString(),
        start.firstMessage,
        start.startModelTurn,
        JSON.stringify(start.usageBefore),
        start.startedSeq,
        id,
      ).rowsWritten > 0
    );
  }

  /** Marks the running turn as interrupted by a newer message. Returns whether it was running. */
  interrupt(id: string): boolean {
    this.cache = undefined;
    return (
      this.sql.exec("UPDATE sessions_turns SET interrupted = 1 WHERE id = ? AND status = 'running'", id).rowsWritten > 0
    );
  }

  /** Ends a turn that has not ended, with its result (none for a queued turn dropped at close). */
  end(id: string, status: "completed" | "failed" | "canceled", result: ExecutionResult | null): boolean {
    this.cache = undefined;
    return (
      this.sql.exec(
        "UPDATE sessions_turns SET status = ?, ended_at = ?, result = ? WHERE id = ? AND status IN ('queued', 'running')",
        status,
        new Date().toISOString(),
        result ? JSON.stringify(result) : null,
        id,
      ).rowsWritten > 0
    );
  }

  private one(query: string, ...bindings: SqlStorageValue[]): Turn | null {
    const row = this.sql.exec<TurnRow>(query, ...bindings).toArray()[0];
    return row ? fromRow(row) : null;
  }
}

export function isEnded(turn: Turn): boolean {
  return ENDED_TURN_STATUSES.has(turn.status);
}

export function turnView(sessionId: string, turn: Turn): TurnView {
  return {
    id: turn.id,
    session_id: sessionId,
    index: turn.index,
    message: turn.message,
    status: turn.status,
    streaming: turn.streaming,
    created_at: turn.createdAt,
    started_at: turn.startedAt,
    ended_at: turn.endedAt,
    result: turn.result,
  };
}

function fromRow(row: TurnRow): Turn {
  return {
    id: row.id,
    index: row.idx,
    message: row.message,
    status: row.status as TurnStatus,
    streaming: row.streaming === 1,
    createdAt: row.created_at,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    firstMessage: row.first_message,
    startModelTurn: row.start_model_turn,
    usageBefore: row.usage_before ? (JSON.parse(row.usage_before) as AgentUsage) : null,
    startedSeq: row.started_seq,
    interrupted: row.interrupted === 1,
    result: row.result ? (JSON.parse(row.result) as ExecutionResult) : null,
  };
}
