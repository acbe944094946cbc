// A task's spans leave its object once, after its run has ended: from the alarm that uploads the run bundle (the run's
// own path and its terminal event's delivery never wait for it), built from the event log (src/telemetry/
// genai-spans.ts) and POSTed to the operator's collector (src/telemetry/otlp-export.ts). A root task exports its whole
// tree: its sub-agents forwarded their events to its log before they reported their end, so a child exports nothing
// itself. A failed export is logged, redacted, and not tried again: the run is never failed by its telemetry.
// Telemetry off (no endpoint) costs nothing: the object builds no exporter at all.
import type { EventRecord } from "../events/event-record.ts";
import type { Redactor } from "../events/redaction.ts";
import type { TaskRecord } from "../tasks/task-store.ts";
import { genAiSpans } from "./genai-spans.ts";
import { exportSpans, type OtelConfig } from "./otlp-export.ts";

/** Set in the task's state once its spans were sent (or the attempt failed): a bundle upload retried sends none. */
export const TELEMETRY_EXPORTED_KEY = "telemetry_exported";

export interface RunTelemetryDeps {
  /** The exporter's configuration (null: off); throws ConfigError for a bad one (logged, nothing sent). */
  config: () => OtelConfig | null;
  events: { all(): Iterable<EventRecord>; forwarded(): Iterable<EventRecord> };
  state: { get<T>(key: string): T | undefined; put(key: string, value: unknown): void };
  redactor: Pick<Redactor, "text">;
}

export class RunTelemetry {
  private readonly deps: RunTelemetryDeps;

  constructor(deps: RunTelemetryDeps) {
    this.deps = deps;
  }

  /** Exports the ended run's spans, once; never throws. */
  async runEnded(task: TaskRecord): Promise<void> {
    const { state, events, redactor } = this.deps;
    if (task.parent_task_id !== null || state.get<boolean>(TELEMETRY_EXPORTED_KEY) === true) return;
    try {
      const config = this.deps.config();
      if (config === null) return;
      const spans = await genAiSpans(
        { id: task.id, kind: task.kind, assigned_agent: task.assigned_agent, traceId: task.traceId },
        events.all(),
        events.forwarded(),
      );
      await exportSpans(config, spans);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      console.warn("telemetry export failed; the run's spans were not sent", task.id, redactor.text(message));
    }
    // Recorded after the attempt: an eviction before this line sends the same spans again, with the same ids.
    state.put(TELEMETRY_EXPORTED_KEY, true);
  }
}
