// Token deltas coalesced into fewer events. Every event is a SQLite write that must be durable before its SSE frame
// leaves the object (the output gate), so one event per streamed chunk costs a commit per chunk. The first delta of
// a call goes out at once (time to first token matters to a watcher); later ones are batched for up to
// DELTA_WINDOW_MS, or until a block changes or the batch grows large. Nothing is dropped or reordered: the batch is
// flushed before any other event of the call.

export type DeltaKind = "text" | "thinking";

export type DeltaSink = (kind: DeltaKind, index: number, text: string) => void;

/**
 * Longest a delta waits for company. A model streams a chunk every 10–50 ms, so a window shorter than that merges
 * next to nothing and a long answer costs a commit per chunk; 50 ms (20 events a second at most, per call) is still
 * under what a reader of streaming text notices.
 */
export const DELTA_WINDOW_MS = 50;
/** A batch this large goes out at once. */
const MAX_BATCH_CHARS = 2048;

/**
 * How many leading characters of a block's unsent text may go out now (Redactor.releasable): the rest could be the
 * start of a secret that the next delta completes, and is kept until it is whole or the block ends.
 */
export type HoldBack = (text: string) => number;

export class DeltaBatcher {
  private readonly sink: DeltaSink;
  private readonly releasable: HoldBack;
  private pending: { kind: DeltaKind; index: number; text: string } | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sentAny = false;

  constructor(sink: DeltaSink, releasable: HoldBack = (text) => text.length) {
    this.sink = sink;
    this.releasable = releasable;
  }

  add(kind: DeltaKind, index: number, text: string): void {
    // Another block begins: the previous one is complete, held tail included.
    if (this.pending && (this.pending.kind !== kind || this.pending.index !== index)) this.flush();
    if (this.pending) this.pending.text += text;
    else this.pending = { kind, index, text };
    if (!this.sentAny || this.pending.text.length >= MAX_BATCH_CHARS) {
      this.release();
      if (!this.pending) return;
    }
    this.timer ??= setTimeout(() => this.release(), DELTA_WINDOW_MS);
  }

  /** Emits everything that is waiting. Call before any other event of the same call, and when the stream ends. */
  flush(): void {
    this.emit(Number.POSITIVE_INFINITY);
  }

  /** Emits what may go now, keeping a tail that could still become a secret. */
  private release(): void {
    this.emit(this.pending ? this.releasable(this.pending.text) : 0);
  }

  private emit(count: number): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.pending;
    if (!batch || count <= 0) return;
    const out = batch.text.slice(0, count);
    const rest = batch.text.slice(out.length);
    this.pending = rest ? { ...batch, text: rest } : null;
    this.sentAny = true;
    this.sink(batch.kind, batch.index, out);
  }
}
