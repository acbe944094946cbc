// CLI entry for the model emulator (offline dev, benchmarks): flags override EMULATOR_* environment variables.
import { type EmulatorOptions, startEmulator } from "./server.ts";

const USAGE =
  "usage: node emulator/main.ts [--host H] [--port N] [--ttft-ms N] [--token-delay-ms N] [--prompt-cache]\n" +
  "       [--prefill-ms-per-1k-tokens N] [--quiet]";

function numberOption(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    process.stderr.write(`emulator: ${name} must be a non-negative number, got "${raw}"\n${USAGE}\n`);
    process.exit(2);
  }
  return value;
}

function parseArgs(argv: string[]): EmulatorOptions {
  const flags = new Map<string, string>();
  let quiet = process.env.EMULATOR_QUIET === "1";
  // Bill prompt caching as the providers do, for every request (emulator/billing.ts).
  let promptCache = process.env.EMULATOR_PROMPT_CACHE === "1";
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--quiet") {
      quiet = true;
      continue;
    }
    if (arg === "--prompt-cache") {
      promptCache = true;
      continue;
    }
    if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    const [flag, inline] = arg.split("=", 2) as [string, string | undefined];
    if (!["--host", "--port", "--ttft-ms", "--token-delay-ms", "--prefill-ms-per-1k-tokens"].includes(flag)) {
      process.stderr.write(`emulator: unknown argument "${arg}"\n${USAGE}\n`);
      process.exit(2);
    }
    flags.set(flag, inline ?? argv[++i] ?? "");
  }
  const options: EmulatorOptions = { quiet, promptCache };
  const host = flags.get("--host") ?? process.env.EMULATOR_HOST;
  if (host) options.host = host;
  const port = numberOption("port", flags.get("--port") ?? process.env.EMULATOR_PORT);
  if (port !== undefined) options.port = port;
  const ttftMs = numberOption("ttft-ms", flags.get("--ttft-ms") ?? process.env.EMULATOR_TTFT_MS);
  if (ttftMs !== undefined) options.ttftMs = ttftMs;
  const tokenDelayMs = numberOption(
    "token-delay-ms",
    flags.get("--token-delay-ms") ?? process.env.EMULATOR_TOKEN_DELAY_MS,
  );
  if (tokenDelayMs !== undefined) options.tokenDelayMs = tokenDelayMs;
  const prefill = numberOption(
    "prefill-ms-per-1k-tokens",
    flags.get("--prefill-ms-per-1k-tokens") ?? process.env.EMULATOR_PREFILL_MS_PER_1K_TOKENS,
  );
  if (prefill !== undefined) options.prefillMsPer1kTokens = prefill;
  return options;
}

const emulator = await startEmulator(parseArgs(process.argv.slice(2)));
process.stdout.write(`emulator listening on ${emulator.url}\n`);

let closing = false;
const shutdown = (): void => {
  if (closing) return;
  closing = true;
  emulator.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
