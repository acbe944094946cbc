// The object's open client streams (SSE subscriptions and a streamed send's turn stream), by id, so the Worker can end
// one when its client disconnects (cancelling an RPC stream reaches the object only at its next write), and a
// drop_client fault (src/faults/) can close them all.
import { type EventStreamOptions, openEventStream } from "../events/sse.ts";
import type { TaskHost } from "./task-host.ts";

/** A stream opened for a client, or `finished`: the run has ended and the cursor is past its last event. */
export type Subscription = { id: string; stream: ReadableStream<Uint8Array> } | { finished: true };

type Opener = (registration: { signal: AbortSignal; onClose: () => void }) => ReadableStream<Uint8Array>;

export class ClientStreams {
  private readonly open = new Map<string, AbortController>();

  /** Registers a stream under a new id; it is forgotten when it closes. */
  subscribe(opener: Opener): Subscription {
    const id = crypto.randomUUID();
    const abort = new AbortController();
    this.open.set(id, abort);
    const stream = opener({ signal: abort.signal, onClose: () => this.open.delete(id) });
    return { id, stream };
  }

  /** Ends one stream (its client went). */
  end(id: string): void {
    this.open.get(id)?.abort();
  }

  /** Ends every stream; returns how many were open. */
  drop(): number {
    const open = [...this.open.values()];
    for (const subscription of open) subscription.abort();
    return open.length;
  }
}

/**
 * An event stream over the object's log, opened when the subscription is registered: the task's own events, and with
 * `tree` its sub-agents' down to `tree.maxDepth` levels (all when undefined).
 */
export function eventStreamOf(
  host: TaskHost,
  after: number,
  options: Omit<EventStreamOptions, "signal" | "onClose">,
  tree?: { maxDepth: number | undefined },
): Opener {
  const source = tree ? host.events.treeSource(tree.maxDepth) : host.events;
  return (registration) => openEventStream(source, after, { ...options, ...registration });
}
