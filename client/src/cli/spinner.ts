// The spinner shown on a terminal while the model thinks: one line on stderr, redrawn in place and erased before any
// other output, so streamed text never mixes with it. Off the terminal (a pipe, --json) it draws nothing.

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/** Fast enough to look alive, slow enough not to flood a slow terminal. */
const FRAME_MS = 80;

export interface Spinner {
  /** Shows the spinner with this label (or changes the label of the one shown). */
  start(label: string): void;
  /** Erases it; nothing happens when none is shown. */
  stop(): void;
  readonly active: boolean;
}

export function createSpinner(enabled: boolean, stream: NodeJS.WriteStream = process.stderr): Spinner {
  let timer: ReturnType<typeof setInterval> | undefined;
  let label = "";
  let frame = 0;
  let startedAt = 0;
  const draw = () => {
    const seconds = Math.floor((Date.now() - startedAt) / 1000);
    const glyph = FRAMES[frame++ % FRAMES.length] ?? "";
    stream.write(`\r\x1b[2K${glyph} ${label}${seconds >= 2 ? ` ${seconds}s` : ""}`);
  };
  return {
    start(text) {
      if (!enabled) return;
      label = text;
      if (timer !== undefined) return;
      startedAt = Date.now();
      stream.write("\x1b[?25l");
      draw();
      timer = setInterval(draw, FRAME_MS);
      // A spinner never keeps the process alive.
      timer.unref();
    },
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      stream.write("\r\x1b[2K\x1b[?25h");
    },
    get active() {
      return timer !== undefined;
    },
  };
}
