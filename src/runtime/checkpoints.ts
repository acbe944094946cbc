// Checkpoints (seed 003 Checkpoint): after every step of the default loop the run records where it is, so a client
// can look back at any point of a run and fork a new task from it. A checkpoint's state follows seed 003 State:
// messages (append reducer: a checkpoint keeps how many of the conversation's messages it covers, never a copy),
// next_action, current_agent, routing_key and metadata (replaced, never merged). Positions are unique, so a replayed
// run records nothing twice, and sequence numbers increase strictly.
//
// A checkpoint and its summary are wire types (GET /v1/tasks/:id/checkpoints[/:checkpoint_id]): zod schemas, built on
// first use (z.lazy) like every wire schema. The summary is the checkpoint_saved event's payload with its task and
// time.
import { z } from "zod";
import { EVENT_CATALOG } from "../contracts/events.ts";
import type { NextAction } from "../contracts/runtime.ts";
import { type JsonObject, JsonObjectSchema } from "../lib/json.ts";
import { MessageContentSchema, type MessageLog, type StoredMessage } from "./conversation.ts";

/** A checkpoint as the list shows it: where it is, and how much of the conversation it covers. */
export const CheckpointSummarySchema = z.lazy(() =>
  EVENT_CATALOG.checkpoint_saved.payload.extend({
    task_id: z.uuid({ version: "v4" }),
    created_at: z.iso.datetime(),
  }),
);
export type CheckpointSummary = z.infer<typeof CheckpointSummarySchema>;

/** Seed 003 State at a checkpoint. */
export const CheckpointStateSchema = z.lazy(() =>
  z.strictObject({
    /** The conversation up to the checkpoint (append reducer). */
    messages: z.array(z.strictObject({ role: z.enum(["user", "assistant"]), content: MessageContentSchema })),
    next_action: EVENT_CATALOG.checkpoint_saved.payload.shape.next_action,
    current_agent: z.string(),
    routing_key: z.string().nullable(),
    /** What the run noted at the checkpoint (e.g. the model turns taken, `turn`); replaced, never merged. */
    metadata: JsonObjectSchema,
  }),
);
export type CheckpointState = z.infer<typeof CheckpointStateSchema>;

/** One checkpoint with its state (GET /v1/tasks/:id/checkpoints/:checkpoint_id). */
export const CheckpointSchema = z.lazy(() =>
  CheckpointSummarySchema.unwrap()
    .omit({ message_count: true, next_action: true })
    .extend({ state: CheckpointStateSchema }),
);
export type Checkpoint = z.infer<typeof CheckpointSchema>;

type Row = {
  sequence: number;
  checkpoint_id: string;
  position: string;
  message_count: number;
  next_action: string;
  current_agent: string;
  routing_key: string | null;
  metadata: string;
  created_at: string;
  awaiting_human: number;
};

export class CheckpointLog {
  private readonly sql: SqlStorage;
  private readonly conversation: MessageLog;
  private readonly taskId: () => string;

  constructor(sql: SqlStorage, conversation: MessageLog, taskId: () => string) {
    this.sql = sql;
    this.conversation = conversation;
    this.taskId = taskId;
  }

  /** Records a checkpoint at `position` covering the conversation as it stands; a replay of a position is a no-op. */
  record(
    position: string,
    state: Omit<CheckpointState, "messages" | "metadata"> & { metadata: Record<string, unknown> },
    awaitingHuman = false,
  ): CheckpointSummary | null {
    // A position recorded before (a replayed step) records nothing. Not left to an INSERT OR IGNORE's conflict: an
    // ignored insert would still use up a sequence number; the NOT EXISTS means no insert is tried. Only the new row
    // is read back, so that a checkpoint costs the same at the hundredth step as at the first.
    const row = this.sql
      .exec<Row>(
        `INSERT INTO runtime_checkpoints (checkpoint_id, position, message_count, next_action, current_agent,
          routing_key, metadata, created_at, awaiting_human)
         SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM runtime_checkpoints WHERE position = ?)
         RETURNING *`,
        crypto.randomUUID(),
        position,
        this.conversation.count(),
        state.next_action,
        state.current_agent,
        state.routing_key,
        JSON.stringify(state.metadata),
        new Date().toISOString(),
        awaitingHuman ? 1 : 0,
        position,
      )
      .toArray()[0];
    return row ? this.summary(row) : null;
  }

  list(): CheckpointSummary[] {
    return this.rows().map((row) => this.summary(row));
  }

  get(checkpointId: string): Checkpoint | null {
    const row = this.sql
      .exec<Row>("SELECT * FROM runtime_checkpoints WHERE checkpoint_id = ?", checkpointId)
      .toArray()[0];
    return row ? this.checkpoint(row, this.conversation.list()) : null;
  }

  /**
   * Every checkpoint with its state, oldest first, one at a time, the conversation read once for all of them (the run
   * bundle writes them a piece each): a checkpoint's state holds the conversation up to it, so all of a long run's
   * states together grow with the square of its length.
   */
  *each(): Iterable<Checkpoint> {
    const conversation = this.conversation.list();
    for (const row of this.rows()) yield this.checkpoint(row, conversation);
  }

  private rows(): Row[] {
    return this.sql.exec<Row>("SELECT * FROM runtime_checkpoints ORDER BY sequence").toArray();
  }

  private summary(row: Row): CheckpointSummary {
    return {
      checkpoint_id: row.checkpoint_id,
      task_id: this.taskId(),
      position: row.position,
      sequence: row.sequence,
      created_at: row.created_at,
      awaiting_human: row.awaiting_human === 1,
      message_count: row.message_count,
      next_action: row.next_action as NextAction,
    };
  }

  /** The checkpoint with its state: its summary, the counts and next action moved into the state. */
  private checkpoint(row: Row, conversation: readonly StoredMessage[]): Checkpoint {
    const { message_count, next_action, ...place } = this.summary(row);
    const messages = conversation.slice(0, message_count).map((m) => ({ role: m.role, content: m.content }));
    return {
      ...place,
      state: {
        messages,
        next_action,
        current_agent: row.current_agent,
        routing_key: row.routing_key,
        metadata: JSON.parse(row.metadata) as JsonObject,
      },
    };
  }
}
