// A task's or turn's event stream (the SSE bytes its object's subscribe() returns, src/events/sse.ts) read back as
// event records, for the MCP server's progress notifications: the Worker reads the same stream a client of
// GET /v1/tasks/:id/events gets, so progress follows the event log and nothing else.
import type { EventRecord } from "../events/event-record.ts";

/** The records of an SSE byte stream, in order, until it ends or `signal` aborts (then the stream is cancelled). */
export async function* eventRecords(
  stream: ReadableStream<Uint8Array>,
  signal: AbortSignal,
): AsyncGenerator<EventRecord> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", cancel, { once: true });
  let buffer = "";
  try {
    while (!signal.aborted) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf("\n\n"); end !== -1; end = buffer.indexOf("\n\n")) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        // Comment lines (heartbeats) and `retry:` carry no event; a frame's data is one JSON line.
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data: "))
          .map((line) => line.slice(6))
          .join("\n");
        if (data) yield JSON.parse(data) as EventRecord;
      }
    }
  } finally {
    signal.removeEventListener("abort", cancel);
    cancel();
  }
}
