// Server-Sent Events over the event log: replay everything after the client's cursor, then follow live, then end
// after the terminal event. The stream is bytes so it can cross Durable Object RPC and become a Response body.
import { type EventRecord, TERMINAL_EVENT_TYPES } from "./event-record.ts";

/** The narrow view of the event log this needs (STYLE: small collaborators, narrow interfaces). */
export interface EventSource {
  readAfter(after: number, limit: number): EventRecord[];
  listen(listener: (record: EventRecord) => void): () => void;
}

export interface EventStreamOptions {
  /** True when the run has ended and its terminal event is in the log. */
  isFinished: () => boolean;
  /** A comment line this often keeps proxies from closing an idle stream (WHATWG suggests ~15 s). */
  heartbeatMs?: number;
  /** Close a reader that falls this many bytes behind; it reconnects with Last-Event-ID and loses nothing. */
  maxBufferedBytes?: number;
  /** Ends the stream and drops its subscription (the client is gone). */
  signal?: AbortSignal;
}

const encoder = new TextEncoder();
const REPLAY_BATCH = 500;
/** Pending frames past this size go out without waiting for the end of the tick. */
const MAX_CHUNK_CHARS = 32 * 1024;
/** Bytes a stream may queue before it reports backpressure. */
const QUEUE_HIGH_WATER_MARK = 64 * 1024;
/** Client reconnect delay sent in the `retry:` field. */
const RETRY_MS = 1000;

export function sseFrameText(record: EventRecord): string {
  return `id: ${record.seq}\nevent: ${record.event_type}\ndata: ${JSON.stringify(record)}\n\n`;
}

export function sseFrame(record: EventRecord): Uint8Array {
  return encoder.encode(sseFrameText(record));
}

export function openEventStream(
  source: EventSource,
  after: number,
  options: EventStreamOptions,
): ReadableStream<Uint8Array> {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024;
  let stopListening: (() => void) | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let cursor = after;

  const cleanup = () => {
    closed = true;
    stopListening?.();
    if (heartbeat !== undefined) clearInterval(heartbeat);
  };

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Frames written in the same tick (a replay, or the events one step appends together) go out as one chunk:
        // each chunk costs a trip through the stream plumbing between the object, the Worker and the client.
        let pending = "";
        let flushScheduled = false;
        const flush = () => {
          flushScheduled = false;
          if (!pending) return;
          controller.enqueue(encoder.encode(pending));
          pending = "";
          // desiredSize is the high-water mark minus what is queued, so this is the unread byte count.
          if (!closed && QUEUE_HIGH_WATER_MARK - (controller.desiredSize ?? 0) > maxBuffered) {
            controller.enqueue(encoder.encode(`event: stream_overflow\ndata: {"reconnect_after":${cursor}}\n\n`));
            finish();
          }
        };
        const write = (text: string) => {
          pending += text;
          if (pending.length >= MAX_CHUNK_CHARS) flush();
          else if (!flushScheduled) {
            flushScheduled = true;
            queueMicrotask(flush);
          }
        };
        const finish = () => {
          cleanup();
          if (pending) {
            controller.enqueue(encoder.encode(pending));
            pending = "";
          }
          controller.close();
        };
        const send = (record: EventRecord): boolean => {
          write(sseFrameText(record));
          if (TERMINAL_EVENT_TYPES.has(record.event_type)) {
            finish();
            return false;
          }
          return true;
        };
        write(`retry: ${RETRY_MS}\n\n`);
        // Replay and registration happen in one synchronous block: no append can slip between them.
        for (;;) {
          const batch = source.readAfter(cursor, REPLAY_BATCH);
          for (const record of batch) {
            cursor = record.seq;
            if (!send(record)) return;
          }
          if (batch.length < REPLAY_BATCH) break;
        }
        if (options.isFinished()) {
          finish();
          return;
        }
        stopListening = source.listen((record) => {
          if (closed) return;
          if (record.seq <= cursor) {
            // A cursor ahead of the log (a bad Last-Event-ID) must still see the run end, or the stream never would.
            if (TERMINAL_EVENT_TYPES.has(record.event_type)) finish();
            return;
          }
          cursor = record.seq;
          send(record);
        });
        options.signal?.addEventListener(
          "abort",
          () => {
            if (!closed) finish();
          },
          { once: true },
        );
        heartbeat = setInterval(() => {
          if (!closed) write(": keepalive\n\n");
        }, heartbeatMs);
      },
      cancel() {
        // The client went away: drop the subscription; the run itself is untouched.
        cleanup();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: QUEUE_HIGH_WATER_MARK }),
  );
}
