// Waiting for the event log: a reader that blocks (`?wait=`) until an event it cares about is appended, or until its
// time runs out, whichever comes first. Nothing is polled: the log's listeners are called as each event is appended.
import type { EventRecord } from "./event-record.ts";

/** Resolves once `until` holds for an appended event, or after `timeoutMs`. */
export function untilEvent(
  source: { listen(listener: (record: EventRecord) => void): () => void },
  until: (record: EventRecord) => boolean,
  timeoutMs: number,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, timeoutMs);
    const stop = source.listen((record) => {
      if (until(record)) done();
    });
    function done() {
      clearTimeout(timer);
      stop();
      resolve();
    }
  });
}
