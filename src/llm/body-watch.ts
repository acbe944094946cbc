// A model response body as the providers read it: the tail of what arrived is kept (so a MalformedResponseError can
// show it), and a stream that goes silent for too long is ended with the provider's own timeout error. One timer per
// idle period, not per chunk: each chunk only notes the time, and the timer re-arms for what is left. Two shapes: a
// ReadableStream for a client that reads the body itself (Gemini's), and an async iterable of the body's chunks for
// the Anthropic SDK, which iterates a body that offers one: no TransformStream between the network and the SDK.

/** Bytes kept from the end of a response. */
const TAIL_BYTES = 8192;

export class BodyWatch {
  private readonly chunks: Uint8Array[] = [];
  private bytes = 0;
  private stopTimer: (() => void) | undefined;

  /** The body, passed through: tail kept, idle for `idleMs` ends it with `idleError()`. */
  watch(body: ReadableStream<Uint8Array>, idleMs: number, idleError: () => Error): ReadableStream<Uint8Array> {
    let idle: { chunk(): void; stop(): void } | undefined;
    const keep = (chunk: Uint8Array) => this.keep(chunk);
    const watcher = new TransformStream<Uint8Array, Uint8Array>({
      start: (controller) => {
        idle = this.idleTimer(idleMs, () => controller.error(idleError()));
      },
      flush() {
        idle?.stop();
      },
      transform(chunk, controller) {
        idle?.chunk();
        keep(chunk);
        controller.enqueue(chunk);
      },
    });
    return body.pipeThrough(watcher);
  }

  /**
   * The body as an async iterable of its chunks, read straight from its reader. Tail kept; idle for `idleMs` cancels
   * the body and the pending read throws `idleError()`.
   */
  iterate(body: ReadableStream<Uint8Array>, idleMs: number, idleError: () => Error): AsyncIterable<Uint8Array> {
    const reader = body.getReader();
    let failed: Error | undefined;
    const idle = this.idleTimer(idleMs, () => {
      failed = idleError();
      reader.cancel(failed).catch(() => {});
    });
    const iterator: AsyncIterator<Uint8Array> = {
      next: async () => {
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch (error) {
          idle.stop();
          throw failed ?? error;
        }
        // A cancel for silence ends the pending read as done: the silence is the error.
        if (failed) throw failed;
        if (result.done) {
          idle.stop();
          return { done: true, value: undefined };
        }
        idle.chunk();
        this.keep(result.value);
        return { done: false, value: result.value };
      },
      return: async () => {
        idle.stop();
        await reader.cancel();
        return { done: true, value: undefined };
      },
    };
    return { [Symbol.asyncIterator]: () => iterator };
  }

  /** Ends the idle timer (the call is over). */
  stop(): void {
    this.stopTimer?.();
  }

  /**
   * The idle timer of one body: `onIdle` once `idleMs` pass without a chunk. One timer per idle period, not per chunk:
   * a chunk only notes the time, and the timer, when it fires early, re-arms for what is left. stop() (the call's end)
   * ends it.
   */
  private idleTimer(idleMs: number, onIdle: () => void): { chunk(): void; stop(): void } {
    let lastChunkAt = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const check = () => {
      const silentFor = Date.now() - lastChunkAt;
      if (silentFor < idleMs) timer = setTimeout(check, idleMs - silentFor);
      else onIdle();
    };
    timer = setTimeout(check, idleMs);
    const stop = () => clearTimeout(timer);
    this.stopTimer = stop;
    return {
      chunk: () => {
        lastChunkAt = Date.now();
      },
      stop,
    };
  }

  private keep(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.bytes += chunk.byteLength;
    while (this.bytes - (this.chunks[0]?.byteLength ?? 0) > TAIL_BYTES && this.chunks.length > 1) {
      this.bytes -= this.chunks.shift()?.byteLength ?? 0;
    }
  }

  /** What arrived last, decoded. */
  tail(): string {
    const decoder = new TextDecoder();
    return this.chunks.map((c) => decoder.decode(c, { stream: true })).join("") + decoder.decode();
  }
}
