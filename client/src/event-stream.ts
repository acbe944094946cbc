// An Outpost event stream as an async iterator: GET an events route as Server-Sent Events, parse each frame into
// its event record, and when the connection drops before the end, connect again with Last-Event-ID so the caller
// sees every event once, in order. It ends after the stream's own terminal event (a sub-agent's, forwarded to its
// parent's stream with a depth, ends nothing), on 204 (the run has ended and the cursor has every event), or when
// the caller's `until` says so. Frames are parsed by eventsource-parser, the WHATWG algorithm as a library.
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { OutpostError } from "./errors.ts";

/** An event as Outpost sends it (docs/reference/events.md): the SSE `id:` is `seq`. */
export interface OutpostEvent {
  seq: number;
  run_id: string;
  trace_id: string;
  span_id: string;
  timestamp: string;
  event_type: string;
  payload: Record<string, unknown>;
  redaction_mode: "full" | "redacted";
  /** On a parent's stream, a sub-agent's event: the task that emitted it, its parent, and its depth below the stream's task. */
  task_id?: string;
  parent_task_id?: string;
  depth?: number;
}

/** The events after which a task's or a session's stream ends (the event catalog's terminal events). */
export const TERMINAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  "run_finished",
  "run_failed",
  "run_canceled",
  "session_closed",
]);

/** Whether this event ends the stream it came on: a terminal event of the stream's own task, not a sub-agent's. */
export function isOwnTerminal(event: OutpostEvent): boolean {
  return event.depth === undefined && TERMINAL_EVENT_TYPES.has(event.event_type);
}

export interface EventStreamOptions {
  /** Start after this sequence number (0, the default, replays the whole log). */
  after?: number;
  /** Events of sub-agents down to this depth (the route's ?depth=); all by default. */
  depth?: number;
  /** Ends the iteration after the event for which this returns true (as well as after the terminal event). */
  until?: (event: OutpostEvent) => boolean;
  signal?: AbortSignal;
  /** Reconnections in a row that may fail (network errors, 502/503/504) before the iterator throws. Default 10. */
  maxRetries?: number;
}

/** What the stream reader needs from the client: one GET with the right headers. */
export type StreamFetch = (
  path: string,
  init: { headers: Record<string, string>; signal?: AbortSignal },
) => Promise<Response>;

const RETRYABLE_STATUSES = new Set([502, 503, 504]);
const DEFAULT_RETRY_MS = 1000;
const MAX_RETRY_MS = 10_000;
/** A connection that stayed open this long was healthy, events or not. */
const LONG_CONNECTION_MS = 5_000;

export async function* readEventStream(
  fetchStream: StreamFetch,
  path: string,
  options: EventStreamOptions = {},
): AsyncGenerator<OutpostEvent, void, undefined> {
  let cursor = options.after ?? 0;
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;
  const maxRetries = options.maxRetries ?? 10;
  const url = options.depth === undefined ? path : withQuery(path, "depth", String(options.depth));

  for (;;) {
    options.signal?.throwIfAborted();
    let response: Response;
    try {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (cursor > 0) headers["last-event-id"] = String(cursor);
      response = await fetchStream(url, { headers, ...(options.signal ? { signal: options.signal } : {}) });
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (++failures > maxRetries) throw error;
      await sleep(backoff(retryMs, failures), options.signal);
      continue;
    }
    if (response.status === 204) return;
    if (!response.ok) {
      if (RETRYABLE_STATUSES.has(response.status) && ++failures <= maxRetries) {
        await response.body?.cancel();
        await sleep(backoff(retryMs, failures), options.signal);
        continue;
      }
      throw await OutpostError.from(response);
    }
    if (!response.body) throw new OutpostError(response.status, "unexpected_response", "The event stream had no body.");

    // One connection: yield its events in order; stop at the end, or fall through to reconnect.
    const queue: OutpostEvent[] = [];
    let badFrame: Error | undefined;
    const parser = createParser({
      onEvent(message: EventSourceMessage) {
        try {
          queue.push(parseRecord(message));
        } catch (error) {
          badFrame = error instanceof Error ? error : new Error(String(error));
        }
      },
      onRetry(ms) {
        retryMs = ms;
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let progressed = false;
    const connectedAt = Date.now();
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<string>;
        try {
          chunk = await reader.read();
        } catch {
          if (options.signal?.aborted) throw options.signal.reason;
          break; // the connection broke mid-stream: resume from the cursor
        }
        if (chunk.done) break;
        parser.feed(chunk.value);
        if (badFrame) throw badFrame;
        while (queue.length > 0) {
          const event = queue.shift() as OutpostEvent;
          if (event.seq <= cursor) continue; // already seen before a reconnection
          cursor = event.seq;
          progressed = true;
          failures = 0;
          yield event;
          if (isOwnTerminal(event) || options.until?.(event)) return;
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
    // The server ended the connection before the terminal event (it closes a reader that falls far behind), or the
    // network dropped it: connect again from the cursor, at once after a connection that brought events or lasted (a
    // run waiting days for a person sends none), after a growing pause after one that ended quickly with none.
    if (progressed || Date.now() - connectedAt > LONG_CONNECTION_MS) {
      failures = 0;
      continue;
    }
    if (++failures > maxRetries) {
      throw new OutpostError(
        0,
        "stream_interrupted",
        `The event stream ended ${failures} times in a row with no new event.`,
      );
    }
    await sleep(backoff(retryMs, failures), options.signal);
  }
}

function parseRecord(message: EventSourceMessage): OutpostEvent {
  const record = JSON.parse(message.data) as OutpostEvent;
  if (
    typeof record !== "object" ||
    record === null ||
    typeof record.seq !== "number" ||
    typeof record.event_type !== "string"
  ) {
    throw new OutpostError(
      0,
      "unexpected_response",
      `An event frame was not an Outpost event: ${message.data.slice(0, 200)}`,
    );
  }
  return record;
}

function withQuery(path: string, name: string, value: string): string {
  return `${path}${path.includes("?") ? "&" : "?"}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
}

function backoff(baseMs: number, failures: number): number {
  return Math.min(MAX_RETRY_MS, baseMs * 2 ** Math.max(0, failures - 1));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
