// /v1/sessions: the tenant's sessions, newest first (listing.ts). /v1/sessions/:id: a chat session (seed 004 AgentSession; src/sessions/). Read it, send it a message (seed 004 send,
// or send_streaming with Accept: text/event-stream), follow its events across turns or one turn's, answer what a turn
// waits for, and close it. A session is created on its agent: POST /v1/agents/:name/sessions (routes/agents.ts).
import type { Context } from "hono";
import { Hono } from "hono";
import type { Subscription } from "../../../durable-objects/task-object.ts";
import { decisionInput, decisionRefused } from "../../commands/decisions.ts";
import type { Adapter } from "../../commands/principal.ts";
import { resumeSession, sendSessionMessage } from "../../commands/task-control.ts";
import { ApiError } from "../../errors.ts";
import type { SessionView, TurnView } from "../../sessions/session.ts";
import type { AppEnv } from "../app-env.ts";
import { requireRead, streamResponse, wantsStream } from "../event-stream.ts";
import { listSessions } from "../listing.ts";
import type {
  SessionLinks,
  SessionMessageList,
  SessionResponse,
  SessionResumeResponse,
  TurnLinks,
  TurnResponse,
} from "../responses.ts";
import { EventCursor, EventDepth, ResumeBody, SendMessageBody, WaitQuery } from "../schemas.ts";
import { commandContext } from "../task-creation.ts";
import { decisionResource, mayRead } from "../task-resource.ts";
import { jsonBody, parseWith } from "../validation.ts";
import { sessionNotFound, sessionStub } from "./session-stub.ts";
import { sessionFileRoutes } from "./task-files.ts";

/** How long POST /v1/sessions/:id/messages waits for the turn's end unless ?wait= says (seconds). */
const DEFAULT_SEND_WAIT_SECONDS = 30;

function sessionLinks(c: Context<AppEnv>, id: string): SessionLinks {
  const self = `${new URL(c.req.url).origin}/v1/sessions/${id}`;
  return {
    self,
    messages: `${self}/messages`,
    events: `${self}/events`,
    resume: `${self}/resume`,
    artifacts: `${self}/artifacts`,
    workspace: `${self}/workspace`,
    trace: `${self}/trace`,
  };
}

export function sessionResource(c: Context<AppEnv>, session: SessionView): SessionResponse {
  const links = sessionLinks(c, session.id);
  if (!mayRead(c)) return { id: session.id, status: session.status, last_event_seq: session.last_event_seq, links };
  return { ...session, links };
}

function turnResource(c: Context<AppEnv>, turn: TurnView): TurnResponse {
  const session = `${new URL(c.req.url).origin}/v1/sessions/${turn.session_id}`;
  const self = `${session}/turns/${turn.id}`;
  const links: TurnLinks = { self, events: `${self}/events`, session };
  if (!mayRead(c)) return { id: turn.id, session_id: turn.session_id, index: turn.index, status: turn.status, links };
  return { ...turn, links };
}

/** An SSE cursor from Last-Event-ID or ?after= (0 without either). */
function cursorOf(c: Context<AppEnv>): number {
  const header = c.req.header("last-event-id");
  const query = c.req.query("after");
  if (header !== undefined) return parseWith(EventCursor, header.trim(), "last-event-id");
  if (query !== undefined) return parseWith(EventCursor, query, "after");
  return 0;
}

/**
 * A message to the session (seed 004 send; POST /v1/sessions/:id/messages and the MCP server's session tools), sent
 * through the command (src/commands/task-control.ts): its turn, and with `streaming` the turn's event stream. 404,
 * 409 session_busy or session_closed when refused. `opened`: the first message of a session the same call opened.
 */
export async function sendMessage(
  c: Context<AppEnv>,
  { id }: ReturnType<typeof sessionStub>,
  message: string,
  streaming: boolean,
  adapter: Adapter = "v1",
  opened = false,
): Promise<{ turn: TurnView; subscription?: Subscription }> {
  const sent = await sendSessionMessage(commandContext(c, adapter), id, message, { streaming, opened });
  if (!sent) throw sessionNotFound(id);
  return sent;
}

export const sessionRoutes = new Hono<AppEnv>()
  .get("/", async (c) => c.json(await listSessions(c)))
  .get("/:id", async (c) => {
    const { id, stub } = sessionStub(c);
    const session = await stub.session();
    if (!session) throw sessionNotFound(id);
    return c.json(sessionResource(c, session));
  })
  .get("/:id/messages", async (c) => {
    const { id, stub } = sessionStub(c);
    const messages = await stub.messages("session");
    if (!messages) throw sessionNotFound(id);
    return c.json({ session_id: id, messages } satisfies SessionMessageList);
  })
  .get("/:id/trace", async (c) => {
    const { id, stub } = sessionStub(c);
    const trace = await stub.runTrace("session");
    if (!trace) throw sessionNotFound(id);
    return c.json(trace);
  })
  .post("/:id/messages", async (c) => {
    const { id, stub } = sessionStub(c);
    const body = await jsonBody(c, SendMessageBody);
    const streaming = wantsStream(c);
    if (streaming) requireRead(c, "A streamed answer");
    const waitParam = c.req.query("wait");
    const waitSeconds = waitParam === undefined ? DEFAULT_SEND_WAIT_SECONDS : parseWith(WaitQuery, waitParam, "wait");
    const { turn, subscription } = await sendMessage(c, { id, stub }, body.message, streaming);
    const location = turnResource(c, turn).links.self;
    if (subscription && "id" in subscription) {
      return streamResponse(c, stub, subscription, { location, "x-turn-id": turn.id });
    }
    const settled = waitSeconds > 0 ? await stub.waitTurn(turn.id, Math.round(waitSeconds * 1000)) : turn;
    const now = settled ?? turn;
    c.header("Location", location);
    // 200 with the ExecutionResult once the turn has ended; 202 while it runs, waits for a person or is queued.
    return c.json(turnResource(c, now), now.result ? 200 : 202);
  })
  .get("/:id/turns/:turn_id", async (c) => {
    const { id, stub } = sessionStub(c);
    const turnId = c.req.param("turn_id");
    const waitParam = c.req.query("wait");
    const waitSeconds = waitParam === undefined ? 0 : parseWith(WaitQuery, waitParam, "wait");
    const turn =
      waitSeconds > 0 ? await stub.waitTurn(turnId, Math.round(waitSeconds * 1000)) : await stub.turn(turnId);
    if (turn) return c.json(turnResource(c, turn));
    if (!(await stub.session())) throw sessionNotFound(id);
    throw new ApiError("turn_not_found", `Session ${id} has no turn "${turnId}".`, "turn_id");
  })
  .get("/:id/events", async (c) => {
    const { id, stub } = sessionStub(c);
    const depth = c.req.query("depth");
    const maxDepth = depth === undefined ? undefined : parseWith(EventDepth, depth, "depth");
    const subscription = await stub.subscribeSession(cursorOf(c), undefined, maxDepth);
    if (!subscription) throw sessionNotFound(id);
    if (subscription === "turn_not_found" || "finished" in subscription) return c.body(null, 204);
    return streamResponse(c, stub, subscription);
  })
  .get("/:id/turns/:turn_id/events", async (c) => {
    const { id, stub } = sessionStub(c);
    const turnId = c.req.param("turn_id");
    const subscription = await stub.subscribeSession(cursorOf(c), turnId);
    if (!subscription) throw sessionNotFound(id);
    if (subscription === "turn_not_found") {
      throw new ApiError("turn_not_found", `Session ${id} has no turn "${turnId}".`, "turn_id");
    }
    // The turn has ended and the client has every event up to its end.
    if ("finished" in subscription) return c.body(null, 204);
    return streamResponse(c, stub, subscription);
  })
  .post("/:id/resume", async (c) => {
    const { id } = sessionStub(c);
    const ctx = commandContext(c);
    const decided = await resumeSession(
      ctx,
      id,
      decisionInput(ctx.principal, await jsonBody(c, ResumeBody), "session"),
    );
    if (!decided) throw sessionNotFound(id);
    if ("refused" in decided) throw decisionRefused(decided.refused);
    const { session, decision, replayed } = decided.decided;
    if (replayed) c.header("Idempotent-Replayed", "true");
    return c.json({
      ...sessionResource(c, session),
      decision: decisionResource(c, decision),
    } as SessionResumeResponse);
  })
  .delete("/:id", async (c) => {
    const { id, stub } = sessionStub(c);
    const session = await stub.closeSession();
    if (!session) throw sessionNotFound(id);
    return c.json(sessionResource(c, session));
  })
  .route("/", sessionFileRoutes);
