// `npm run dev`: serves Outpost locally under wrangler (workerd). With no ANTHROPIC_API_KEY it starts the model
// emulator first and points the Worker at it, so the demo agents work offline; with a key it calls Claude. Without
// an OpenAI key in .dev.vars, the knowledge tools' embeddings come from the emulator too.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startEmulator } from "../emulator/server.ts";
import { wranglerDevEnv } from "./wrangler-dev-env.ts";

const DEV_API_KEY = "dev-key";
const port = process.env.PORT ?? "8787";
const emulatorPort = Number(process.env.EMULATOR_PORT ?? "8788");

/** Keys set in .dev.vars (wrangler's local secrets file), without printing any value. */
function devVarNames(): Set<string> {
  if (!existsSync(".dev.vars")) return new Set();
  const names = readFileSync(".dev.vars", "utf8")
    .split("\n")
    .map((line) => /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  return new Set(names);
}

const devVars = devVarNames();
const hasKey = Boolean(process.env.ANTHROPIC_API_KEY) || devVars.has("ANTHROPIC_API_KEY");
const baseUrl = process.env.ANTHROPIC_BASE_URL;
const args = ["dev", "--port", port, "--ip", "127.0.0.1", "--show-interactive-dev-session=false"];
let emulator: Awaited<ReturnType<typeof startEmulator>> | undefined;

if (baseUrl) {
  args.push("--var", `ANTHROPIC_BASE_URL:${baseUrl}`);
  console.log(`[outpost] model endpoint: ${baseUrl}`);
} else if (!hasKey) {
  emulator = await startEmulator({ port: emulatorPort, quiet: true, promptCache: true });
  args.push("--var", `ANTHROPIC_BASE_URL:${emulator.url}`);
  console.log(
    `[outpost] No ANTHROPIC_API_KEY set: using the local model emulator at ${emulator.url} ` +
      "(deterministic replies, no network). Set ANTHROPIC_API_KEY (or put it in .dev.vars) to call Claude.",
  );
} else {
  console.log("[outpost] ANTHROPIC_API_KEY is set: model calls go to Claude.");
}

// Embeddings for the knowledge tools (docs/knowledge.md): the emulator's /v1/embeddings unless an OpenAI key or
// endpoint is configured in .dev.vars.
if (!devVars.has("OPENAI_API_KEY") && !devVars.has("OPENAI_BASE_URL")) {
  emulator ??= await startEmulator({ port: emulatorPort, quiet: true, promptCache: true });
  args.push("--var", `OPENAI_BASE_URL:${emulator.url}/v1`, "--var", "OPENAI_API_KEY:dev-embeddings-key");
  console.log(
    `[outpost] embeddings (knowledge tools): the emulator's ${emulator.url}/v1/embeddings. Put OPENAI_API_KEY in .dev.vars for OpenAI's.`,
  );
}

let secretsFile: string | undefined;
if (process.env.ANTHROPIC_API_KEY && !devVars.has("ANTHROPIC_API_KEY")) {
  // Hand wrangler the exported key alone, in a private file it reads as local secrets; passing the whole process
  // environment would expose every variable of this shell to the Worker.
  const dir = mkdtempSync(join(tmpdir(), "outpost-dev-"));
  secretsFile = join(dir, "secrets.env");
  writeFileSync(secretsFile, `ANTHROPIC_API_KEY=${JSON.stringify(process.env.ANTHROPIC_API_KEY)}\n`, { mode: 0o600 });
  args.push("--env-file", secretsFile);
}
if (!process.env.OUTPOST_API_KEYS && !devVars.has("OUTPOST_API_KEYS")) {
  args.push("--var", `OUTPOST_API_KEYS:${DEV_API_KEY}`);
  console.log(`[outpost] API key for this dev server: ${DEV_API_KEY}  (Authorization: Bearer ${DEV_API_KEY})`);
}
// Local stand-ins so callbacks and the example GitHub hook work out of the box; values in .dev.vars win.
const DEV_VARS: Record<string, string> = {
  OUTPOST_WEBHOOK_SECRET: "dev-webhook-secret",
  GITHUB_WEBHOOK_SECRET: "dev-github-secret",
  // Callbacks to a receiver on this machine, over plain http.
  OUTPOST_HTTP_CALLBACK_HOSTS: "127.0.0.1,localhost",
  OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost",
  OUTPOST_ALLOW_PRIVATE_HOSTS: "127.0.0.1,localhost",
  // A development server may inject faults, so that test cases asking for them run (docs/evaluations.md).
  OUTPOST_FAULT_INJECTION: "on",
};
for (const [name, value] of Object.entries(DEV_VARS)) {
  if (devVars.has(name)) continue;
  args.push("--var", `${name}:${value}`);
}
console.log(
  "[outpost] dev secrets: GITHUB_WEBHOOK_SECRET=dev-github-secret, OUTPOST_WEBHOOK_SECRET=dev-webhook-secret",
);
if (process.env.X_LOCAL_OBSERVABILITY === undefined) {
  console.log("[outpost] wrangler's local trace collector is off (X_LOCAL_OBSERVABILITY=true turns it on)");
}
console.log(`[outpost] serving on http://127.0.0.1:${port}`);

const wrangler = spawn("wrangler", args, { stdio: "inherit", env: wranglerDevEnv(process.env) });
const stop = (signal: NodeJS.Signals) => {
  wrangler.kill(signal);
};
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));
wrangler.on("exit", async (code) => {
  if (secretsFile) rmSync(dirname(secretsFile), { recursive: true, force: true });
  await emulator?.close();
  process.exit(code ?? 0);
});
