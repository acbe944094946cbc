// A chat session (src/sessions/): the resource, its receipts, a turn, its messages, artifacts and workspace.

import { z } from "zod";
import { HumanDecisionSchema } from "../../approvals/requests.ts";
import { StoredMessageSchema } from "../../runtime/conversation.ts";
import { SESSION_STATUSES, SessionViewSchema, TurnViewSchema } from "../../sessions/session.ts";
import { Count, TaskId } from "./common.ts";
import { ArtifactSchema, DecisionReceiptSchema, WorkspaceEntrySchema } from "./tasks.ts";

// ---- Sessions (src/sessions/) ---------------------------------------------------------------------------------

/** Where everything about a session is. */
export const SessionLinksSchema = z.strictObject({
  self: z.url(),
  /** GET lists the conversation; POST sends a message. */
  messages: z.url(),
  events: z.url(),
  resume: z.url(),
  artifacts: z.url(),
  workspace: z.url(),
  trace: z.url(),
});
export type SessionLinks = z.infer<typeof SessionLinksSchema>;

/** A session as a key that may read it gets it (POST /v1/agents/:name/sessions, GET and DELETE /v1/sessions/:id). */
export const SessionResourceSchema = SessionViewSchema.unwrap().extend({ links: SessionLinksSchema });
export type SessionResource = z.infer<typeof SessionResourceSchema>;

/** A session as a key without `read` gets it: its id, status and links. */
export const SessionReceiptSchema = z.strictObject({
  id: TaskId,
  status: z.enum(SESSION_STATUSES),
  last_event_seq: Count,
  links: SessionLinksSchema,
});
export type SessionReceipt = z.infer<typeof SessionReceiptSchema>;

export const SessionResponseSchema = z.union([SessionResourceSchema, SessionReceiptSchema]);
export type SessionResponse = z.infer<typeof SessionResponseSchema>;

/** Where everything about a turn is. */
export const TurnLinksSchema = z.strictObject({ self: z.url(), events: z.url(), session: z.url() });
export type TurnLinks = z.infer<typeof TurnLinksSchema>;

/**
 * A turn (one message and what it produced) as a key that may read it gets it: POST /v1/sessions/:id/messages (200
 * once it has ended, with its seed 004 ExecutionResult as `result`; 202 while it runs or is queued) and
 * GET /v1/sessions/:id/turns/:turn_id.
 */
export const TurnResourceSchema = TurnViewSchema.unwrap().extend({ links: TurnLinksSchema });
export type TurnResource = z.infer<typeof TurnResourceSchema>;

/** A turn as a key without `read` gets it. */
export const TurnReceiptSchema = TurnViewSchema.unwrap()
  .pick({ id: true, session_id: true, index: true, status: true })
  .extend({ links: TurnLinksSchema });
export type TurnReceipt = z.infer<typeof TurnReceiptSchema>;

export const TurnResponseSchema = z.union([TurnResourceSchema, TurnReceiptSchema]);
export type TurnResponse = z.infer<typeof TurnResponseSchema>;

/** GET /v1/sessions/:id/messages: the conversation, redacted. */
export const SessionMessageListSchema = z.strictObject({
  session_id: TaskId,
  messages: z.array(StoredMessageSchema),
});
export type SessionMessageList = z.infer<typeof SessionMessageListSchema>;

/** POST /v1/sessions/:id/resume: the session with the decision on record. */
export const ResumedSessionSchema = SessionResourceSchema.extend({ decision: HumanDecisionSchema });
export const ResumedSessionReceiptSchema = SessionReceiptSchema.extend({ decision: DecisionReceiptSchema });
export const SessionResumeResponseSchema = z.union([ResumedSessionSchema, ResumedSessionReceiptSchema]);
export type SessionResumeResponse = z.infer<typeof SessionResumeResponseSchema>;

/** GET /v1/sessions/:id/artifacts: the session's run bundle (uploaded to R2 once it is closed). */
export const SessionArtifactListSchema = z.strictObject({ session_id: TaskId, artifacts: z.array(ArtifactSchema) });
export type SessionArtifactList = z.infer<typeof SessionArtifactListSchema>;

/** GET /v1/sessions/:id/workspace: the session's workspace, shared by its turns. */
export const SessionWorkspaceListSchema = z.strictObject({ session_id: TaskId, files: z.array(WorkspaceEntrySchema) });
export type SessionWorkspaceList = z.infer<typeof SessionWorkspaceListSchema>;
