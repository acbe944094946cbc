// The `outpost` CLI as a user runs it: `node client/bin/outpost.js …` in a child process against the dev server,
// configured by OUTPOST_URL and OUTPOST_API_KEY; with stdin and stdout pipes (what a script sees), or under a
// pseudo-terminal (what a person sees) made by util-linux's `script`, which needs no native module.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { outpostUrl } from "./harness.ts";
import { E2E_ADMIN_KEY } from "./keys.ts";

const BIN = resolve(import.meta.dirname, "../../../client/bin/outpost.js");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to its end with pipes (no terminal), feeding `stdin` (empty by default). */
export function runCli(
  args: string[],
  options: { key?: string; stdin?: string; cwd?: string; url?: string } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv(options.key, options.url),
    stdio: ["pipe", "pipe", "pipe"],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  child.stdin.end(options.stdin ?? "");
  return new Promise((done, fail) => {
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

export interface PtySession {
  /** Everything the terminal showed so far, without colours and cursor moves. */
  screen(): string;
  /** Resolves once the screen matches; fails after 20 s with what it showed. */
  waitFor(pattern: RegExp): Promise<void>;
  /** Types into the terminal ("\r" is Enter, "\x03" Ctrl-C). */
  type(keys: string): void;
  /** The CLI's exit code. */
  exited: Promise<number | null>;
}

/** Runs the CLI under a pseudo-terminal of 100×30 (util-linux `script`; `stty` sizes it, else it is 0 wide). */
export function runCliInTerminal(args: string[], options: { key?: string } = {}): PtySession {
  const command = `stty cols 100 rows 30; exec ${[process.execPath, BIN, ...args].map(shellQuote).join(" ")}`;
  const child = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], {
    env: { ...cliEnv(options.key), TERM: "xterm-256color" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let raw = "";
  const collect = (chunk: Buffer) => {
    raw += chunk.toString("utf8");
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const screen = () => stripVTControlCharacters(raw);
  return {
    screen,
    async waitFor(pattern) {
      for (let i = 0; i < 400; i++) {
        if (pattern.test(screen())) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`The terminal never showed ${pattern}:\n${screen()}`);
    },
    type(keys) {
      child.stdin.write(keys);
    },
    exited: new Promise((done) => child.on("close", done)),
  };
}

/** `url`: where the CLI finds Outpost (a proxy in front of it, say); the dev server by default. */
function cliEnv(key: string = E2E_ADMIN_KEY, url: string = outpostUrl()): NodeJS.ProcessEnv {
  // Only what the CLI needs: a developer's FORCE_COLOR or OUTPOST_* settings never change what a test sees.
  return { PATH: process.env.PATH, HOME: process.env.HOME, OUTPOST_URL: url, OUTPOST_API_KEY: key };
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
