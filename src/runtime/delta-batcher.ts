// Token deltas coalesced into fewer events. Every event is a SQLite write that must be durable before its SSE frame
// leaves the object (the output gate), so one event per streamed chunk costs a commit per chunk. The first delta of
// a call goes out at once (time to first token matters to a watcher); later ones are batched for a few
// milliseconds, or until a block changes or the batch grows large. Nothing is dropped or reordered: the batch is
// flushed before any other event of the call.

export type DeltaKind = "text" | "thinking";

export type DeltaSink = (kind: DeltaKind, index: number, text: string) => void;

/** Longest a delta waits for company. Well under what a reader notices, long enough to merge a burst. */
export const DELTA_WINDOW_MS = 15;
/** A batch this large goes out at once. */
const MAX_BATCH_CHARS = 2048;

export class DeltaBatcher {
  private readonly sink: DeltaSink;
  private pending: { kind: DeltaKind; index: number; text: string } | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sentAny = false;

  constructor(sink: DeltaSink) {
    this.sink = sink;
  }

  add(kind: DeltaKind, index: number, text: string): void {
    if (this.pending && (this.pending.kind !== kind || this.pending.index !== index)) this.flush();
    if (this.pending) this.pending.text += text;
    else this.pending = { kind, index, text };
    if (!this.sentAny || this.pending.text.length >= MAX_BATCH_CHARS) {
      this.flush();
      return;
    }
    this.timer ??= setTimeout(() => this.flush(), DELTA_WINDOW_MS);
  }

  /** Emits what is waiting. Call before any other event of the same call, and when the stream ends. */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.pending;
    if (!batch) return;
    this.pending = null;
    this.sentAny = true;
    this.sink(batch.kind, batch.index, batch.text);
  }
}
