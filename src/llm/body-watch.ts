// A model response body as the providers read it: the tail of what arrived is kept (so a MalformedResponseError can
// show it), and a stream that goes silent for too long is ended with the provider's own timeout error. One timer per
// idle period, not per chunk: each chunk only notes the time, and the timer re-arms for what is left.

/** Bytes kept from the end of a response. */
const TAIL_BYTES = 8192;

export class BodyWatch {
  private readonly chunks: Uint8Array[] = [];
  private bytes = 0;
  private stopTimer: (() => void) | undefined;

  /** The body, passed through: tail kept, idle for `idleMs` ends it with `idleError()`. */
  watch(body: ReadableStream<Uint8Array>, idleMs: number, idleError: () => Error): ReadableStream<Uint8Array> {
    let idle: ReturnType<typeof setTimeout> | undefined;
    let lastChunkAt = Date.now();
    const keep = (chunk: Uint8Array) => {
      this.chunks.push(chunk);
      this.bytes += chunk.byteLength;
      while (this.bytes - (this.chunks[0]?.byteLength ?? 0) > TAIL_BYTES && this.chunks.length > 1) {
        this.bytes -= this.chunks.shift()?.byteLength ?? 0;
      }
    };
    const watcher = new TransformStream<Uint8Array, Uint8Array>({
      start: (controller) => {
        const check = () => {
          const silentFor = Date.now() - lastChunkAt;
          if (silentFor < idleMs) {
            idle = setTimeout(check, idleMs - silentFor);
            return;
          }
          controller.error(idleError());
        };
        this.stopTimer = () => clearTimeout(idle);
        idle = setTimeout(check, idleMs);
      },
      flush() {
        clearTimeout(idle);
      },
      transform(chunk, controller) {
        lastChunkAt = Date.now();
        keep(chunk);
        controller.enqueue(chunk);
      },
    });
    return body.pipeThrough(watcher);
  }

  /** Ends the idle timer (the call is over). */
  stop(): void {
    this.stopTimer?.();
  }

  /** What arrived last, decoded. */
  tail(): string {
    const decoder = new TextDecoder();
    return this.chunks.map((c) => decoder.decode(c, { stream: true })).join("") + decoder.decode();
  }
}
