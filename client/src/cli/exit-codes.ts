// The CLI's exit codes (documented in docs/cli.md) and the one error class a command throws to end with one: main.ts
// prints its code and message and exits with its exit code. Scripts branch on the code, never on the message.

export const EXIT = {
  /** The command did what it was asked; a followed run completed. */
  ok: 0,
  /** A followed run (or chat turn) ended failed or canceled. */
  taskFailed: 1,
  /** Bad arguments or configuration (a missing API key, an unreadable --file). */
  usage: 2,
  /** The API refused the request (its error code is printed), or there was nothing to answer. */
  api: 3,
  /** The server could not be reached. */
  unreachable: 4,
  /** The run waits for a person and nobody could be asked here (no terminal, or --json): answer it, then `watch`. */
  waiting: 5,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the CLI reports itself: a stable code (the API's, or one of the CLI's own) and a message. */
export class CliError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  readonly field: string | undefined;

  constructor(code: string, message: string, exitCode: ExitCode, field?: string) {
    super(message);
    this.name = "CliError";
    this.code = code;
    this.exitCode = exitCode;
    this.field = field;
  }
}

/** A command that ends with an exit code but has already said why (a failed run, a request left waiting). */
export class CommandExit extends Error {
  readonly exitCode: ExitCode;

  constructor(exitCode: ExitCode) {
    super(`exit ${exitCode}`);
    this.name = "CommandExit";
    this.exitCode = exitCode;
  }
}
