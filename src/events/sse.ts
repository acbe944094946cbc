// Server-Sent Events over the event log: replay everything after the client's cursor, then follow live, then end
// after the terminal event (or the event the caller names: a session turn's end). The stream is bytes so it can cross Durable Object RPC and become a Response body.
import { type EventRecord, isOwnTerminal, recordJson } from "./event-record.ts";

/** The narrow view of the event log this needs (STYLE: small collaborators, narrow interfaces). */
export interface EventSource {
  readAfter(after: number, limit: number): EventRecord[];
  listen(listener: (record: EventRecord) => void): () => void;
}

export interface EventStreamOptions {
  /** True when what the stream follows has ended and its last event is in the log. */
  isFinished: () => boolean;
  /**
   * The event the stream ends after: by default the stream's own task's terminal event (a task's run, a session; a
   * sub-agent's, forwarded up the tree, ends nothing). A session turn's stream
   * (src/sessions/) ends after that turn's turn_finished as well.
   */
  endsAt?: (record: EventRecord) => boolean;
  /** Which events the stream sends (default: all); the others move the cursor on without a frame. */
  include?: (record: EventRecord) => boolean;
  /** A comment line this often keeps proxies from closing an idle stream (WHATWG suggests ~15 s). */
  heartbeatMs?: number;
  /** Close a reader that falls this many bytes behind; it reconnects with Last-Event-ID and loses nothing. */
  maxBufferedBytes?: number;
  /** Ends the stream and drops its subscription (the client is gone). */
  signal?: AbortSignal;
  /** Called once when the stream ends, however it ends. */
  onClose?: () => void;
}

const encoder = new TextEncoder();
const REPLAY_BATCH = 500;
/** Pending frames past this size go out without waiting for the end of the tick. */
const MAX_CHUNK_CHARS = 32 * 1024;
/** Most text one replay pull queues. */
const MAX_PULL_CHARS = 256 * 1024;
/** Bytes a stream may queue before it reports backpressure. */
const QUEUE_HIGH_WATER_MARK = 64 * 1024;
/** Client reconnect delay sent in the `retry:` field. */
const RETRY_MS = 1000;

export function sseFrameText(record: EventRecord): string {
  return `id: ${record.seq}\nevent: ${record.event_type}\ndata: ${recordJson(record)}\n\n`;
}

export function sseFrame(record: EventRecord): Uint8Array {
  return encoder.encode(sseFrameText(record));
}

/**
 * The replay is pulled: a batch is read from the log only when the reader has room, so a log of any length streams
 * in bounded memory. Once the replay has caught up, the stream listens for new events in the same synchronous step
 * as its last read, so no event can fall between the two.
 */
export function openEventStream(
  source: EventSource,
  after: number,
  options: EventStreamOptions,
): ReadableStream<Uint8Array> {
  const endsAt = options.endsAt ?? isOwnTerminal;
  const include = options.include ?? (() => true);
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxBuffered = options.maxBufferedBytes ?? 8 * 1024 * 1024;
  let stopListening: (() => void) | undefined;
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let live = false;
  let cursor = after;
  let pending = "";
  let flushScheduled = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;

  const cleanup = () => {
    closed = true;
    stopListening?.();
    if (heartbeat !== undefined) clearInterval(heartbeat);
    options.onClose?.();
  };
  const finish = () => {
    if (closed) return;
    cleanup();
    const rest = pending;
    pending = "";
    if (rest) controller.enqueue(encoder.encode(rest));
    controller.close();
  };
  // Frames written in the same tick (the events one step appends together) go out as one chunk: each chunk costs a
  // trip through the stream plumbing between the object, the Worker and the client.
  const flush = () => {
    flushScheduled = false;
    if (closed || !pending) return;
    // Take the text before enqueueing: an enqueue can call pull() at once, which writes and flushes again.
    const text = pending;
    pending = "";
    controller.enqueue(encoder.encode(text));
    // Live events are pushed whatever the reader's pace; the replay is pulled, so only a live reader can fall behind.
    // desiredSize is the high-water mark minus what is queued, so this is the unread byte count.
    if (live && QUEUE_HIGH_WATER_MARK - (controller.desiredSize ?? 0) > maxBuffered) {
      controller.enqueue(encoder.encode(`event: stream_overflow\ndata: {"reconnect_after":${cursor}}\n\n`));
      finish();
    }
  };
  const write = (text: string) => {
    if (closed) return;
    pending += text;
    if (live && pending.length >= MAX_CHUNK_CHARS) flush();
    else if (!flushScheduled) {
      flushScheduled = true;
      queueMicrotask(flush);
    }
  };
  /** Writes one event's frame; false once the stream has ended with it. */
  const send = (record: EventRecord): boolean => {
    cursor = record.seq;
    if (include(record)) write(sseFrameText(record));
    if (endsAt(record)) {
      finish();
      return false;
    }
    return true;
  };
  const goLive = () => {
    live = true;
    stopListening = source.listen((record) => {
      if (closed) return;
      if (record.seq <= cursor) {
        // A cursor ahead of the log (a bad Last-Event-ID) must still see the run end, or the stream never would.
        if (endsAt(record)) finish();
        return;
      }
      send(record);
    });
    heartbeat = setInterval(() => write(": keepalive\n\n"), heartbeatMs);
  };

  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        if (options.signal?.aborted) {
          cleanup();
          controller.close();
          return;
        }
        // Listening from the start: the client may leave in the middle of a long, pulled replay.
        options.signal?.addEventListener("abort", finish, { once: true });
        write(`retry: ${RETRY_MS}\n\n`);
      },
      pull() {
        if (live || closed) return;
        const batch = source.readAfter(cursor, REPLAY_BATCH);
        let sent = 0;
        for (const record of batch) {
          if (!send(record)) return;
          sent++;
          // Bound one pull's bytes as well as its rows: a few events can be large.
          if (pending.length >= MAX_PULL_CHARS) break;
        }
        flush();
        if (sent < batch.length || batch.length === REPLAY_BATCH || closed) return;
        // Caught up: end here if the run is over, otherwise follow it.
        if (options.isFinished()) finish();
        else goLive();
      },
      cancel() {
        // The client went away: drop the subscription; the run itself is untouched.
        if (!closed) cleanup();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: QUEUE_HIGH_WATER_MARK }),
  );
}
