// The bench's model emulator in a process of its own (`node emulator/main.ts`), at the bench's latency. Not in the
// bench's own process: there it would share one event loop with the client reading Outpost's SSE streams, and since
// a commit releases a step's SSE frames and its model request at the same moment, the emulator would see each request
// only after the client had handled the frames, which counted the client's work as Outpost's overhead (the floor's
// loop runs in a process of its own, so it never paid that).
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { RequestRecord } from "../emulator/server.ts";
import { LATENCY, SCRIPT } from "./config.ts";
import { httpJson } from "./http.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface EmulatorProcess {
  url: string;
  pid: number;
  /** Every request it has answered, as GET /_emulator/stats gives them. */
  stats(): Promise<RequestRecord[]>;
  /** POST /_emulator/scripts. */
  register(script: unknown): Promise<void>;
  close(): Promise<void>;
}

/**
 * How the emulator bills and paces a prompt (the cost case's): Anthropic's prompt cache (off by default, as in the
 * tests), and time to first token that grows with the prompt's uncached tokens.
 */
export interface EmulatorBilling {
  promptCache?: boolean;
  prefillMsPer1kTokens?: number;
}

/** Starts the emulator at the bench's latency on a free port of 127.0.0.1. */
export async function startEmulatorProcess(billing: EmulatorBilling = {}): Promise<EmulatorProcess> {
  const args = [resolve(root, "emulator/main.ts"), "--host", "127.0.0.1", "--port", "0", "--quiet"];
  args.push("--ttft-ms", String(LATENCY.ttftMs), "--token-delay-ms", String(LATENCY.tokenDelayMs));
  if (billing.promptCache) args.push("--prompt-cache");
  if (billing.prefillMsPer1kTokens !== undefined) {
    args.push("--prefill-ms-per-1k-tokens", String(billing.prefillMsPer1kTokens));
  }
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const url = await new Promise<string>((ok, fail) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const match = /emulator listening on (\S+)/.exec(out);
      if (match?.[1]) ok(match[1]);
    });
    child.once("exit", (code) => fail(new Error(`the emulator exited (${code}) before listening: ${out}`)));
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("the emulator did not start");
  return {
    url,
    pid,
    async stats() {
      const res = await httpJson("GET", `${url}/_emulator/stats`);
      if (res.status !== 200) throw new Error(`emulator stats: HTTP ${res.status}`);
      return (res.body as { requests: RequestRecord[] }).requests;
    },
    async register(script) {
      const res = await httpJson("POST", `${url}/_emulator/scripts`, { body: script });
      if (res.status !== 201) throw new Error(`emulator script: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
    },
    async close() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The emulator at the bench's latency, answering the bench's 3-turn task (SCRIPT): what every profiler drives. */
export async function startBenchEmulator(): Promise<EmulatorProcess> {
  const emulator = await startEmulatorProcess();
  try {
    await emulator.register(SCRIPT);
  } catch (error) {
    await emulator.close();
    throw error;
  }
  return emulator;
}
