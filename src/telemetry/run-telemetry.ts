// A run's spans leave its object after the run: built from the event log (src/telemetry/genai-spans.ts) and POSTed to
// the operator's collector (src/telemetry/otlp-export.ts). A task's go once it has ended, from the alarm that uploads
// its bundle (the run's own path and its terminal event's delivery never wait for them). A session's go turn by
// turn: those of each turn that has ended, when its run stops (in the background, so the next turn never waits for
// a collector), and the rest when it is closed. A root task exports its whole tree: its sub-agents forwarded their
// events to its log before they reported their end, so a child exports nothing itself. A failed export is logged,
// redacted, and not tried again: a run is never failed by its telemetry. Telemetry off (no endpoint) costs nothing:
// the object builds no exporter at all.
import { z } from "zod";
import type { EventRecord } from "../events/event-record.ts";
import type { Redactor } from "../events/redaction.ts";
import { stateKey, type TypedState } from "../lib/state-key.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { type GenAiSpan, genAiSpans } from "./genai-spans.ts";
import { exportSpans, type OtelConfig } from "./otlp-export.ts";

/** Set in a task's state once its spans were sent (or the attempt failed): a retried bundle upload sends none. */
export const TELEMETRY_EXPORTED_KEY = stateKey("telemetry_exported", z.boolean());
/** In a session's state: the turns whose spans were sent (or whose attempt failed). */
export const TELEMETRY_EXPORTED_TURNS_KEY = stateKey("telemetry_exported_turns", z.array(z.string()));

export interface RunTelemetryDeps {
  /** The exporter's configuration (null: off); throws ConfigError for a bad one (logged, nothing sent). */
  config: () => OtelConfig | null;
  events: { all(): Iterable<EventRecord>; forwarded(): Iterable<EventRecord> };
  state: Pick<TypedState, "get" | "put">;
  redactor: Pick<Redactor, "text">;
  /** Keeps the object at work until a background export is done (the object's ctx.waitUntil). */
  waitUntil: (promise: Promise<unknown>) => void;
}

export class RunTelemetry {
  private readonly deps: RunTelemetryDeps;

  constructor(deps: RunTelemetryDeps) {
    this.deps = deps;
  }

  /** The task or session has ended: exports what it has not exported yet, once; never throws. */
  async runEnded(record: TaskRecord): Promise<void> {
    const { state } = this.deps;
    if (record.parent_task_id !== null) return;
    if (record.kind === "session") {
      await this.exportTurns(record);
      return;
    }
    if (state.get(TELEMETRY_EXPORTED_KEY) === true) return;
    await this.send(record, () => true);
    // Recorded after the attempt, so that a retried bundle upload sends nothing: an eviction before this line sends
    // the same spans again, with the same ids, rather than none.
    state.put(TELEMETRY_EXPORTED_KEY, true);
  }

  /** A session's run stopped: the turns that have ended are exported in the background. */
  runStopped(record: TaskRecord): void {
    if (record.kind === "session" && record.parent_task_id === null) this.deps.waitUntil(this.exportTurns(record));
  }

  /** Exports the spans of the session's ended turns not exported yet. */
  private async exportTurns(session: TaskRecord): Promise<void> {
    const { state, events } = this.deps;
    const done = new Set(state.get(TELEMETRY_EXPORTED_TURNS_KEY) ?? []);
    const ended: string[] = [];
    for (const event of events.all()) {
      const turnId = event.event_type === "turn_finished" ? event.payload.turn_id : undefined;
      if (typeof turnId === "string" && !done.has(turnId)) ended.push(turnId);
    }
    if (ended.length === 0) return;
    // Chosen and recorded synchronously, before any await, so two exports under way (a turn's, the close's) never
    // pick the same turn; an eviction in the middle of the POST loses those turns' spans.
    state.put(TELEMETRY_EXPORTED_TURNS_KEY, [...done, ...ended]);
    const turns = new Set(ended);
    await this.send(session, (span) => span.turnId !== null && turns.has(span.turnId));
  }

  private async send(record: TaskRecord, keep: (span: GenAiSpan) => boolean): Promise<void> {
    const { events, redactor } = this.deps;
    try {
      const config = this.deps.config();
      if (config === null) return;
      const spans = await genAiSpans(
        { id: record.id, kind: record.kind, assigned_agent: record.assigned_agent, traceId: record.traceId },
        events.all(),
        events.forwarded(),
      );
      await exportSpans(config, spans.filter(keep));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      console.warn("telemetry export failed; the run's spans were not sent", record.id, redactor.text(message));
    }
  }
}
