// One turn's event stream (send_streaming, and GET /v1/sessions/:id/turns/:turn_id/events): from its turn_queued
// event, skipping the events of turns before it until its turn_started, to its turn_finished.
import type { EventRecord } from "../events/event-record.ts";
import { TERMINAL_EVENT_TYPES } from "../events/event-record.ts";
import type { EventStreamOptions } from "../events/sse.ts";
import { isEnded, type TurnLog } from "./turns.ts";

export function turnStreamOptions(
  turns: Pick<TurnLog, "get">,
  turnId: string,
  after: number,
): Pick<EventStreamOptions, "isFinished" | "endsAt" | "include"> {
  const turn = turns.get(turnId);
  // A cursor at or past its turn_started is in the middle of the turn: everything after it is the turn's.
  let started = turn?.startedSeq !== null && turn?.startedSeq !== undefined && after >= turn.startedSeq;
  const ofTurn = (record: EventRecord) => record.payload.turn_id === turnId;
  return {
    isFinished: () => {
      const now = turns.get(turnId);
      return now === null || isEnded(now);
    },
    endsAt: (record) =>
      TERMINAL_EVENT_TYPES.has(record.event_type) || (record.event_type === "turn_finished" && ofTurn(record)),
    include: (record) => {
      if (record.event_type === "turn_started" && ofTurn(record)) started = true;
      return (
        started ||
        (record.event_type === "turn_queued" && ofTurn(record)) ||
        TERMINAL_EVENT_TYPES.has(record.event_type)
      );
    },
  };
}
