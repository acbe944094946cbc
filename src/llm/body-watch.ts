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
    // A pull stream over the body's own reader rather than pipeThrough(TransformStream): each chunk costs one read
    // and one enqueue, with no pipe pump or second queue between (the profile showed the pipe as a hot spot).
    const reader = body.getReader();
    let timedOut = false;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        const check = () => {
          const silentFor = Date.now() - lastChunkAt;
          if (silentFor < idleMs) {
            idle = setTimeout(check, idleMs - silentFor);
            return;
          }
          timedOut = true;
          controller.error(idleError());
          reader.cancel().catch(() => {});
        };
        this.stopTimer = () => clearTimeout(idle);
        idle = setTimeout(check, idleMs);
      },
      pull: async (controller) => {
        const { done, value } = await reader.read();
        if (timedOut) return;
        if (done) {
          clearTimeout(idle);
          controller.close();
          return;
        }
        lastChunkAt = Date.now();
        keep(value);
        controller.enqueue(value);
      },
      cancel: (reason) => {
        clearTimeout(idle);
        return reader.cancel(reason);
      },
    });
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
