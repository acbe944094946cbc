// One measured Outpost task over HTTP: POST it, stream its events over SSE to the end, and time the first event
// and the whole run. Afterwards the emulator's stats attribute model time to the task, and the events' own
// timestamps split the remaining overhead into phases (dispatch, stream drain, between turns, ...).
import type { IncomingHttpHeaders } from "node:http";
import { performance } from "node:perf_hooks";
import type { RequestRecord } from "../emulator/server.ts";
import { AGENT, API_KEY, MARKER, MODEL_TURNS } from "./config.ts";
import { httpJson, readSse } from "./http.ts";
import { epochNow } from "./util.ts";

export interface TaskEvent {
  seq: number;
  type: string;
  turn: number | null;
  /** The Durable Object's timestamp of the event (epoch ms, ms resolution). */
  at: number;
  /** When the bench received the frame (epoch ms). */
  arrivedAt: number;
}

export interface OutpostRun {
  taskId: string;
  t0: number;
  /** Epoch ms of t0, to line up with event and emulator timestamps. */
  t0Epoch: number;
  postMs: number;
  firstEventMs: number;
  totalMs: number;
  /** run_finished's arrival → the bundle listed as uploaded to R2 (the task's last piece of work). */
  bundleMs: number;
  events: TaskEvent[];
}

/**
 * How the client follows its task: POST it (202), then GET its events (the flow the headline measures); or one POST
 * with Accept: text/event-stream that answers with the events (the task's id in X-Task-Id).
 */
export type ClientFlow = "post, then events" | "streamed post";

export async function runOutpostTask(
  baseUrl: string,
  label: string,
  flow: ClientFlow = "post, then events",
): Promise<OutpostRun> {
  const t0 = performance.now();
  const t0Epoch = epochNow();
  const url = `${baseUrl}/v1/agents/${AGENT}/tasks`;
  const body = { input: `${MARKER} ${label}: plan a small project.` };
  let id: unknown;
  let postMs = 0;
  if (flow === "post, then events") {
    const created = await httpJson("POST", url, { apiKey: API_KEY, body });
    postMs = performance.now() - t0;
    id = (created.body as { id?: unknown } | null)?.id;
    if (created.status !== 202 || typeof id !== "string") {
      throw new Error(`POST /v1/agents/${AGENT}/tasks: HTTP ${created.status}: ${JSON.stringify(created.body)}`);
    }
  }
  let firstEventAt: number | null = null;
  const events: TaskEvent[] = [];
  const offset = t0Epoch - t0;
  const streamed =
    flow === "streamed post"
      ? {
          body,
          onHeaders: (headers: IncomingHttpHeaders) => {
            postMs = performance.now() - t0;
            id = headers["x-task-id"];
          },
        }
      : undefined;
  // The end of the task for the client is run_finished's arrival, not the stream's close.
  await readSse(
    streamed ? url : `${baseUrl}/v1/tasks/${String(id)}/events`,
    API_KEY,
    (frame) => {
      if (frame.id === null) return;
      firstEventAt ??= frame.arrivedAt;
      const record = JSON.parse(frame.data) as { seq: number; event_type: string; timestamp: string; payload: unknown };
      const payload = record.payload as { turn_index?: unknown } | null;
      events.push({
        seq: record.seq,
        type: record.event_type,
        turn: typeof payload?.turn_index === "number" ? payload.turn_index : null,
        at: Date.parse(record.timestamp),
        arrivedAt: frame.arrivedAt + offset,
      });
    },
    streamed,
  );
  if (typeof id !== "string") throw new Error(`POST /v1/agents/${AGENT}/tasks (streamed): no X-Task-Id`);
  const last = events.at(-1);
  if (last?.type !== "run_finished") {
    throw new Error(`task ${id} ended with ${last?.type ?? "no events"} instead of run_finished`);
  }
  if (firstEventAt === null) throw new Error(`task ${id}: no event frames`);
  // A task's work ends with its bundle in R2. Wait for that before the next task, so that "concurrency 1" means one
  // task's work at a time; under wrangler dev the R2 upload runs on the same thread as every object.
  const bundleStarted = performance.now();
  const listing = await httpJson("GET", `${baseUrl}/v1/tasks/${id}/artifacts`, { apiKey: API_KEY });
  const files = (listing.body as { artifacts?: { uploaded: boolean }[] } | null)?.artifacts ?? [];
  if (listing.status !== 200 || files.length === 0 || files.some((f) => !f.uploaded)) {
    throw new Error(`task ${id}: bundle not uploaded: HTTP ${listing.status} ${JSON.stringify(listing.body)}`);
  }
  const bundleMs = performance.now() - bundleStarted;
  const turns = events.filter((e) => e.type === "llm_response_received").length;
  if (turns !== MODEL_TURNS) throw new Error(`task ${id}: ${turns} model turns instead of ${MODEL_TURNS}`);
  return {
    taskId: id,
    t0,
    t0Epoch,
    postMs,
    firstEventMs: firstEventAt - t0,
    totalMs: last.arrivedAt - offset - t0,
    bundleMs,
    events,
  };
}

/** Where one task's wall time went, in ms; the parts add up to its total. */
export interface Breakdown {
  /** t0 → the first llm_request_sent: POST, task creation, run start, first request artifact. */
  start: number;
  /** llm_request_sent → the emulator starts reading the request (SDK, workerd fetch, connection), all turns. */
  dispatch: number;
  /** The emulator receiving the request body (its start → body complete), all turns. */
  bodyRead: number;
  /** The emulator's service time (configured latency included), all turns. */
  service: number;
  /** The emulator's last byte → llm_response_received: stream parsing and per-delta event appends, all turns. */
  drain: number;
  /** llm_response_received → the next llm_request_sent: tool step, journal, messages, request artifact. */
  between: number;
  /** The last llm_response_received → run_finished in the object. */
  finish: number;
  /** run_finished in the object → its SSE frame at the client. */
  delivery: number;
}

export interface OutpostSample {
  taskId: string;
  firstEventMs: number;
  postMs: number;
  totalMs: number;
  bundleMs: number;
  serviceMs: number;
  /** (task wall time − model time) / turns: includes creating the task and opening the stream. */
  overheadPerTurnMs: number;
  /**
   * The cost of a turn inside the run: (run_finished − the first llm_request_sent, both as the client received
   * them, − model time) / turns. Creating the task and opening the stream are measured by the first-event latency.
   */
  inRunOverheadPerTurnMs: number;
  modelCalls: number;
  events: number;
  /** Mean of (frame arrival − event timestamp) over the task's events. */
  meanEventDeliveryMs: number;
  breakdown: Breakdown | null;
}

export function outpostSample(run: OutpostRun, records: readonly RequestRecord[]): OutpostSample {
  const mine = records.filter((r) => r.task_id === run.taskId);
  const serviceMs = mine.reduce((sum, r) => sum + r.service_ms, 0);
  const delivery = run.events.map((e) => e.arrivedAt - e.at);
  const firstSent = run.events.find((e) => e.type === "llm_request_sent");
  const finished = run.events.find((e) => e.type === "run_finished");
  const inRun = firstSent && finished ? finished.arrivedAt - firstSent.arrivedAt : Number.NaN;
  return {
    taskId: run.taskId,
    firstEventMs: run.firstEventMs,
    postMs: run.postMs,
    totalMs: run.totalMs,
    bundleMs: run.bundleMs,
    serviceMs,
    overheadPerTurnMs: (run.totalMs - serviceMs) / MODEL_TURNS,
    inRunOverheadPerTurnMs: (inRun - serviceMs) / MODEL_TURNS,
    modelCalls: mine.length,
    events: run.events.length,
    meanEventDeliveryMs: delivery.reduce((s, v) => s + v, 0) / Math.max(1, delivery.length),
    breakdown: breakdown(run, mine),
  };
}

function breakdown(run: OutpostRun, records: readonly RequestRecord[]): Breakdown | null {
  const find = (type: string, turn: number) => run.events.find((e) => e.type === type && e.turn === turn);
  const finished = run.events.find((e) => e.type === "run_finished");
  const parts: Breakdown = {
    start: 0,
    dispatch: 0,
    bodyRead: 0,
    service: 0,
    drain: 0,
    between: 0,
    finish: 0,
    delivery: 0,
  };
  for (let turn = 1; turn <= MODEL_TURNS; turn++) {
    const sent = find("llm_request_sent", turn);
    const received = find("llm_response_received", turn);
    // The emulator counts turns from 0 (assistant messages so far); a retried call has several records.
    const record = records.filter((r) => r.turn === turn - 1 && r.status === 200).at(-1);
    if (!sent || !received || !record) return null;
    if (turn === 1) parts.start = sent.at - run.t0Epoch;
    parts.dispatch += record.started_at_ms - sent.at;
    parts.bodyRead += record.ended_at_ms - record.started_at_ms - record.service_ms;
    parts.service += record.service_ms;
    parts.drain += received.at - record.ended_at_ms;
    const next = find("llm_request_sent", turn + 1);
    if (turn < MODEL_TURNS) {
      if (!next) return null;
      parts.between += next.at - received.at;
    } else {
      if (!finished) return null;
      parts.finish = finished.at - received.at;
    }
  }
  if (!finished) return null;
  parts.delivery = finished.arrivedAt - finished.at;
  return parts;
}
