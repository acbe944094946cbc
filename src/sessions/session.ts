// A chat session (seed 004 AgentSession, ChatSession): a conversation with one agent that lasts across messages, each
// message a turn that runs on the same durable machinery as a task (a task is a session of one turn). Its statuses
// (seed 004 section 8), its busy policy, and the session and turn as the API shows them. Wire types: zod schemas built
// on first use (z.lazy), like every wire schema.
import { z } from "zod";
import { PendingInputSchema } from "../approvals/requests.ts";
import { ExecutionResultSchema } from "../contracts/execution-result.ts";
import { AgentUsageSchema } from "../contracts/usage.ts";
import { BUSY_POLICIES, TaskMetadataSchema } from "../tasks/task.ts";
import { WaitingForSchema } from "../tasks/waiting-for.ts";

/**
 * Seed 004's lifecycle: ready between turns, processing (or streaming, for a turn sent with send_streaming) while one
 * runs, input_required while a turn waits for a person, closed once closed. A session is ready as soon as it exists:
 * its object has nothing to initialise before the first message.
 */
export const SESSION_STATUSES = ["ready", "processing", "streaming", "input_required", "closed"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** A turn: queued behind another (busy: enqueue), under way (or waiting for a person: the session says), or ended. */
export const TURN_STATUSES = ["queued", "running", "completed", "failed", "canceled"] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];
export const ENDED_TURN_STATUSES: ReadonlySet<TurnStatus> = new Set(["completed", "failed", "canceled"]);

/** One message of a session and what it produced. */
export const TurnViewSchema = z.lazy(() =>
  z.strictObject({
    id: z.uuid({ version: "v4" }),
    session_id: z.uuid({ version: "v4" }),
    /** Its place in the session, from 1. */
    index: z.number().int().positive(),
    message: z.string(),
    status: z.enum(TURN_STATUSES),
    /** Sent with send_streaming (Accept: text/event-stream). */
    streaming: z.boolean(),
    created_at: z.iso.datetime(),
    started_at: z.iso.datetime().nullable(),
    ended_at: z.iso.datetime().nullable(),
    /** Seed 004 ExecutionResult, once the turn has ended; null before. */
    result: ExecutionResultSchema.nullable(),
  }),
);
export type TurnView = z.infer<typeof TurnViewSchema>;

/** Seed 004 section 3b: the history as plain `{role, content}` text, one pair per turn. */
export const HistoryEntrySchema = z.lazy(() =>
  z.strictObject({ role: z.enum(["user", "assistant"]), content: z.string() }),
);
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;

/** The session as its object returns it: what GET /v1/sessions/:id shows, without its links. */
export const SessionViewSchema = z.lazy(() =>
  z.strictObject({
    id: z.uuid({ version: "v4" }),
    agent: z.string(),
    /** The version of a tenant's own agent (PUT /v1/agents/:name) every turn runs; null for an agent of the Worker. */
    agent_version: z.number().int().positive().nullable(),
    status: z.enum(SESSION_STATUSES),
    busy: z.enum(BUSY_POLICIES),
    metadata: TaskMetadataSchema,
    model: z.string(),
    history: z.array(HistoryEntrySchema),
    /** Usage of every turn so far. */
    usage: AgentUsageSchema,
    turns: z.array(TurnViewSchema),
    /** The turn under way or waiting for a person; null when the session is ready or closed. */
    current_turn_id: z.uuid({ version: "v4" }).nullable(),
    /** What the current turn waits for while the status is input_required; null otherwise. */
    pending_input: PendingInputSchema.nullable(),
    /** What the current turn waits for other than a person (its model provider), as a task's waiting_for; else null. */
    waiting_for: WaitingForSchema.nullable(),
    created_at: z.iso.datetime(),
    closed_at: z.iso.datetime().nullable(),
    retention_days: z.number().int().positive(),
    /** When the session's storage is deleted (closed_at + retention_days); null while it is open. */
    expires_at: z.iso.datetime().nullable(),
    /** Sequence number of the newest event of the session's stream. */
    last_event_seq: z.number().int().nonnegative(),
  }),
);
export type SessionView = z.infer<typeof SessionViewSchema>;
