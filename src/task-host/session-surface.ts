// A chat session's RPCs (src/sessions/), over the same object, run and storage as a task's, one turn per message:
// creating it, sending a message by its busy policy, waiting for and streaming a turn, answering what a turn waits for,
// and closing it. The object's class (durable-objects/task-object.ts) delegates to this.
import type { DecisionInput, HumanDecision } from "../approvals/requests.ts";
import type { DecisionFailure } from "../approvals/resume.ts";
import type { RpcResult } from "../contracts/rpc.ts";
import { TERMINAL_EVENT_TYPES } from "../events/event-record.ts";
import { untilEvent } from "../events/wait.ts";
import type { SessionView, TurnView } from "../sessions/session.ts";
import { INTERRUPTED } from "../sessions/session-flow.ts";
import { turnStreamOptions } from "../sessions/turn-stream.ts";
import { isEnded, turnView } from "../sessions/turns.ts";
import type { StartOutcome, TaskInit } from "../tasks/task.ts";
import { type ClientStreams, eventStreamOf, type Subscription } from "./client-streams.ts";
import type { TaskHost } from "./task-host.ts";

export class SessionSurface {
  private readonly host: TaskHost;
  private readonly streams: ClientStreams;

  constructor(host: TaskHost, streams: ClientStreams) {
    this.host = host;
    this.streams = streams;
  }

  /** Creates the session, once (a repeat of the creating request gets the original answer, as for a task). */
  async startSession(init: TaskInit): Promise<StartOutcome<SessionView>> {
    const outcome = await this.host.createSession({ ...init, session: init.session ?? { busy: "reject" } });
    // Into the tenant's directory (GET /v1/sessions): one alarm, after which an idle session keeps none.
    if (outcome.outcome === "created") await this.host.supervisor.armOutbox();
    return outcome;
  }

  async session(): Promise<SessionView | null> {
    const session = this.host.session();
    if (!session) return null;
    this.host.supervisor.resumeIfIdle(session);
    return this.host.sessionView(session);
  }

  /** One turn, or null when the session or the turn is unknown. */
  async turn(turnId: string): Promise<TurnView | null> {
    const session = this.host.session();
    const turn = session ? this.host.turns.get(turnId) : null;
    return session && turn ? this.host.redactor.value(turnView(session.id, turn)) : null;
  }

  /**
   * A message (seed 004 send): a new turn by the session's busy policy. With `stream`, the answer carries the turn's
   * event stream from its turn_queued event to its turn_finished (send_streaming).
   */
  async send(
    message: string,
    options: { streaming: boolean },
  ): Promise<
    RpcResult<{ turn: TurnView; subscription?: Subscription }, "session_not_found" | "session_closed" | "session_busy">
  > {
    const { host } = this;
    const session = host.session();
    if (!session) return { ok: false, error: { code: "session_not_found", message: "No such session." } };
    const before = host.events.lastSeq();
    const sent = await host.sessions.send(message, options.streaming);
    if (!sent.ok) return { ok: false, error: { code: sent.code, message: sent.message } };
    // The stream is opened before the run can write anything, so no event of the turn is missed.
    const subscription = options.streaming ? this.openTurnStream(sent.turn.id, before) : undefined;
    if (sent.effect === "started") await host.supervisor.begin();
    else if (sent.effect === "interrupting") await this.interrupt();
    const turn = host.turns.get(sent.turn.id) ?? sent.turn;
    return {
      ok: true,
      value: { turn: host.redactor.value(turnView(session.id, turn)), ...(subscription ? { subscription } : {}) },
    };
  }

  /**
   * Stops the current turn for a newer message (busy: interrupt): the run here unwinds and its end starts the next
   * turn; a turn with no run here (waiting for a person, or resumed by the heartbeat later) ends now.
   */
  private async interrupt(): Promise<void> {
    const { host } = this;
    if (await host.supervisor.stopActive()) return;
    const current = host.turns.current();
    if (current?.interrupted) await host.sessions.finishTurn(current.id, { canceled: INTERRUPTED });
    if (host.record()?.status === "pending") await host.supervisor.begin();
  }

  /** Resolves when the turn has ended or waits for a person, or after `timeoutMs`: the turn as it is then. */
  async waitTurn(turnId: string, timeoutMs: number): Promise<TurnView | null> {
    const { host } = this;
    const session = host.session();
    if (!session || !host.turns.get(turnId)) return null;
    const settled = () => {
      const turn = host.turns.get(turnId);
      return !turn || isEnded(turn) || (turn.status === "running" && host.record()?.status === "input_required");
    };
    if (!settled() && timeoutMs > 0) {
      host.supervisor.resumeIfIdle(session);
      await untilEvent(
        host.events,
        (record) =>
          ((record.event_type === "turn_finished" && record.payload.turn_id === turnId) ||
            record.event_type === "input_requested" ||
            TERMINAL_EVENT_TYPES.has(record.event_type)) &&
          settled(),
        timeoutMs,
      );
    }
    return this.turn(turnId);
  }

  /**
   * The session's events after `after`, one stream across turns, ending with session_closed, with its sub-agents'
   * down to `maxDepth` levels (as for subscribe()); with `turnId`, one turn's own events, ending with its
   * turn_finished. `finished` as for subscribe().
   */
  async subscribeSession(
    after: number,
    turnId?: string,
    maxDepth?: number,
  ): Promise<Subscription | null | "turn_not_found"> {
    const { host } = this;
    const session = host.session();
    if (!session) return null;
    host.supervisor.resumeIfIdle(session);
    if (turnId === undefined) {
      if (session.status === "closed" && after >= host.events.lastSeq()) return { finished: true };
      return this.streams.subscribe(
        eventStreamOf(host, after, { isFinished: () => host.record()?.status === "closed" }, { maxDepth }),
      );
    }
    const turn = host.turns.get(turnId);
    if (!turn) return "turn_not_found";
    if (isEnded(turn) && turn.result !== null && after >= host.events.lastSeq()) return { finished: true };
    return this.openTurnStream(turnId, after);
  }

  /** A person's answer to what the session's current turn waits for (the same rules as a task's). */
  async resumeSession(
    decision: DecisionInput,
  ): Promise<
    RpcResult<
      { session: SessionView; decision: HumanDecision; replayed: boolean },
      "session_not_found" | DecisionFailure
    >
  > {
    if (!this.host.session()) return { ok: false, error: { code: "session_not_found", message: "No such session." } };
    const outcome = await this.host.supervisor.resume(decision);
    if (!outcome.ok) return { ok: false, error: outcome.error };
    const session = this.host.session();
    if (!session) return { ok: false, error: { code: "session_not_found", message: "No such session." } };
    return {
      ok: true,
      value: { session: this.host.sessionView(session), decision: outcome.decision, replayed: outcome.replayed },
    };
  }

  /**
   * Closes the session (seed 004 close): the turn under way is stopped and ends canceled, queued ones are dropped, its
   * MCP sessions end with the run, and no more messages are taken. Closing a closed session changes nothing.
   */
  async closeSession(): Promise<SessionView | null> {
    const { host } = this;
    const session = host.session();
    if (!session) return null;
    if (host.sessions.close("closed by client")) {
      // The run sees the session closed at its next step and unwinds without writing anything more.
      await host.supervisor.stopActive();
      await host.supervisor.afterClose();
    }
    const closed = host.session();
    return closed ? host.sessionView(closed) : null;
  }

  private openTurnStream(turnId: string, after: number): Subscription {
    return this.streams.subscribe(eventStreamOf(this.host, after, turnStreamOptions(this.host.turns, turnId, after)));
  }
}
