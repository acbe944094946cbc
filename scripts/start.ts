// `npm start`: Outpost in production on one machine, under `workerd serve` (scripts/self-host/): the bundle a deploy
// uploads, Durable Objects in SQLite on local disk, run bundles and large files in a directory, secrets from an env
// file. Options: --address host:port (default 127.0.0.1:8787), --tls-cert/--tls-key (PEM files: HTTPS), --state dir
// (default .outpost), --env-file file (default .env when present), --emulator. See docs/operations/self-hosting.md.
// Like `npm run dev`, with no ANTHROPIC_API_KEY (and no ANTHROPIC_BASE_URL) it starts the model emulator and points
// the Worker at it, so the demo agents answer from a fresh clone: on loopback without TLS only, unless --emulator
// asks for it (anywhere else it refuses to start, saying what to set: a server others reach does not answer with
// canned replies by accident). With no OUTPOST_API_KEYS it generates one key, kept in <state>/api-key (mode 0600)
// across restarts.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startEmulator } from "../emulator/server.ts";
import { modelSource, needsPrivateNetwork, parseOptions, readEnvFile } from "./self-host/config.ts";
import { buildBundle, readWranglerFacts, serve } from "./self-host/server.ts";

const ROOT = resolve(import.meta.dirname, "..");
const say = (line: string) => console.log(`[outpost] ${line}`);

const options = parseOptions(process.argv.slice(2), ROOT, existsSync);
const environment = options.envFile ? readEnvFile(options.envFile) : new Map<string, string>();
if (options.envFile) say(`env file: ${options.envFile} (${environment.size} names)`);
const model = modelSource(options, environment);
if (model.kind === "refused") {
  console.error(`[outpost] ${model.message}`);
  process.exit(1);
}
mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });

let emulator: Awaited<ReturnType<typeof startEmulator>> | undefined;
if (model.kind === "emulator") {
  emulator = await startEmulator({ port: Number(process.env.EMULATOR_PORT ?? "0"), quiet: true });
  environment.set("ANTHROPIC_BASE_URL", emulator.url);
  say(
    options.emulator
      ? `--emulator: the model emulator at ${emulator.url} answers every model call (deterministic replies, no network).`
      : `No ANTHROPIC_API_KEY in the env file: using the local model emulator at ${emulator.url} (deterministic ` +
          "replies, no network). Put ANTHROPIC_API_KEY in the env file to call Claude.",
  );
}

if (!environment.get("OUTPOST_API_KEYS")) {
  const keyFile = join(options.stateDir, "api-key");
  if (!existsSync(keyFile)) writeFileSync(keyFile, `op_${randomBytes(24).toString("hex")}\n`, { mode: 0o600 });
  environment.set("OUTPOST_API_KEYS", readFileSync(keyFile, "utf8").trim());
  say(`No OUTPOST_API_KEYS in the env file: one admin key is in ${keyFile} (Authorization: Bearer <its content>).`);
}

say("building the bundle (wrangler deploy --dry-run)");
const facts = await readWranglerFacts(ROOT);
const bundleFile = buildBundle(ROOT, join(options.stateDir, "bundle"));
const server = await serve({
  root: ROOT,
  facts,
  options,
  bundleFile,
  environment,
  privateNetwork: needsPrivateNetwork(environment),
});
say(`serving on ${server.url} (state in ${options.stateDir})`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await server.stop();
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
const how = await server.exited;
await emulator?.close();
if (!stopping) {
  console.error(`[outpost] workerd exited (${how})`);
  process.exit(1);
}
