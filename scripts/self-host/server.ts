// Self-hosted Outpost as a process: builds the bundle exactly as a deploy does (`wrangler deploy --dry-run`, which
// runs wrangler.toml's [build] and bundles `main`), writes the workerd config next to it (config.ts), and runs
// `workerd serve` in its own process group with the env file's values in its environment. Used by `npm start`
// (scripts/start.ts), the self-hosted crash test and the tests that need a real workerd disk service.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { connect } from "node:net";
import { join, resolve } from "node:path";
import { capnpText, privateModelEndpoint, type SelfHostOptions, type WranglerFacts, workerdConfig } from "./config.ts";

/** wrangler.toml (or another wrangler config of the tree, `configFile`) as wrangler itself reads it. */
export async function readWranglerFacts(root: string, configFile = "wrangler.toml"): Promise<WranglerFacts> {
  const { unstable_readConfig } = await import("wrangler");
  const config = unstable_readConfig({ config: join(root, configFile) });
  const sqlite = new Set(
    config.migrations.flatMap((m: { new_sqlite_classes?: string[] }) => m.new_sqlite_classes ?? []),
  );
  if (!config.compatibility_date) throw new Error("wrangler.toml has no compatibility_date");
  // Not bound self-hosted: a Worker that needs static assets would find its binding missing only at a request.
  if (config.assets) throw new Error("wrangler.toml has [assets], which self-hosting does not serve");
  return {
    name: config.name ?? "outpost",
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    durableObjects: config.durable_objects.bindings.map((b: { name: string; class_name: string }) => ({
      binding: b.name,
      className: b.class_name,
      sql: sqlite.has(b.class_name),
    })),
    vars: config.vars,
  };
}

/**
 * The Worker's bundle, as a deploy uploads it, into `outDir`; returns its one module's path. `main` serves another entry of the tree
 * instead of wrangler.toml's (the crash test wraps the Worker in one that adds an agent); `configFile`, another
 * wrangler config of the tree (the bench's workerd floor, bench/workerd-floor/).
 */
export function buildBundle(root: string, outDir: string, main?: string, configFile?: string): string {
  rmSync(outDir, { recursive: true, force: true });
  const bin = resolve(root, "node_modules/.bin");
  const config = configFile ? ["--config", configFile] : [];
  const args = ["deploy", ...(main ? [main] : []), ...config, "--dry-run", "--outdir", outDir];
  const built = spawnSync(join(bin, "wrangler"), args, {
    cwd: root,
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}`, WRANGLER_SEND_METRICS: "false" },
  });
  if (built.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${built.stdout}\n${built.stderr}`);
  // One module, named after the entry (index.js for src/index.ts).
  const modules = readdirSync(outDir).filter((file) => file.endsWith(".js"));
  if (modules.length !== 1) throw new Error(`wrangler deploy --dry-run wrote ${modules.length} modules to ${outDir}`);
  return join(outDir, modules[0] ?? "");
}

export interface SelfHosted {
  url: string;
  /** workerd's pid, also its process group id. */
  pid: number;
  logFile: string;
  /** SIGTERM, then SIGKILL if it lingers. */
  stop(): Promise<void>;
  /** SIGKILL to the process group at once, as a crashed machine would: the state directory stays as it was. */
  kill(): Promise<void>;
  /** Resolves when workerd exits, with its exit code or signal. */
  exited: Promise<string>;
}

/**
 * Writes the config for `bundleFile` into the state directory and serves it. `environment` is workerd's whole
 * environment: the env file's entries and what the launcher adds (the Worker sees each as a binding); a model endpoint
 * it names on this machine or its network (the emulator's) is opened to the Worker at its own origin only.
 */
export async function serve(input: {
  root: string;
  facts: WranglerFacts;
  options: SelfHostOptions;
  bundleFile: string;
  environment: ReadonlyMap<string, string>;
  privateNetwork: boolean;
  /** Where workerd's output goes; inherited (the terminal) when absent. */
  logFile?: string;
  /** More of workerd's own options (the bench's turn profile passes --async-trace). */
  workerdArgs?: readonly string[];
  /** V8's own flags, in the config (the instruction profile passes --predictable). */
  v8Flags?: readonly string[];
  /** A command workerd runs under (the instruction profile's valgrind), and how long to wait for it to listen. */
  launcher?: { command: readonly string[]; listenTimeoutMs: number };
}): Promise<SelfHosted> {
  const { options } = input;
  mkdirSync(resolve(options.stateDir, "durable-objects"), { recursive: true });
  mkdirSync(resolve(options.stateDir, "runs"), { recursive: true });
  const configFile = resolve(options.stateDir, "workerd.capnp");
  writeFileSync(
    configFile,
    workerdConfig({
      facts: input.facts,
      options,
      bundleFile: input.bundleFile,
      environment: new Set(input.environment.keys()),
      privateNetwork: input.privateNetwork,
      modelEndpoint: privateModelEndpoint(input.environment),
      ...(input.v8Flags ? { v8Flags: input.v8Flags } : {}),
    }),
  );
  const { root, environment, logFile, workerdArgs, launcher } = input;
  return runWorkerd(root, configFile, Object.fromEntries(environment), logFile, undefined, workerdArgs, launcher);
}

/**
 * `workerd serve --experimental -I / <config>`, in its own process group: localDisk needs --experimental; `-I /` lets the config embed files by absolute path (the bundle, TLS keys).
 */
async function runWorkerd(
  root: string,
  configFile: string,
  environment: Record<string, string>,
  logFile: string | undefined,
  url?: string,
  workerdArgs: readonly string[] = [],
  launcher?: { command: readonly string[]; listenTimeoutMs: number },
): Promise<SelfHosted> {
  const log = logFile ? openSync(logFile, "a") : undefined;
  const args = ["serve", "--experimental", ...workerdArgs, "-I", "/", configFile, "config"];
  // Under a launcher, workerd's own binary: node_modules/.bin/workerd is a script that starts it.
  const [command = "", ...prefix] = launcher
    ? [...launcher.command, workerdBinary(root)]
    : [resolve(root, "node_modules/.bin/workerd")];
  const child: ChildProcess = spawn(command, [...prefix, ...args], {
    detached: true,
    stdio: log === undefined ? "inherit" : ["ignore", log, log],
    // Only what the Worker is given: no other variable of the launcher's environment reaches workerd.
    env: environment,
  });
  if (log !== undefined) closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error("workerd did not start");
  const exited = new Promise<string>((done) => child.on("exit", (code, signal) => done(String(signal ?? code))));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // already gone
    }
  };
  const stop = async () => {
    signal("SIGTERM");
    const timer = setTimeout(() => signal("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const kill = async () => {
    signal("SIGKILL");
    await exited;
  };
  const socket = url === undefined ? socketOf(configFile) : { ...hostAndPort(new URL(url).host), url };
  const listenTimeoutMs = launcher?.listenTimeoutMs ?? 60_000;
  const deadline = Date.now() + listenTimeoutMs;
  // Ready once its socket accepts a connection: workerd listens only after it has loaded the config and the
  // Worker. A TCP connect rather than a request, so a certificate made for another name does not stand in the way.
  while (!(await accepts(socket.host, socket.port))) {
    if (gone) {
      const tail = logFile ? readFileSync(logFile, "utf8").slice(-2000) : "";
      throw new Error(`workerd exited with ${await exited} before it listened:\n${tail}`);
    }
    if (Date.now() > deadline) {
      await kill();
      throw new Error(`workerd did not listen on ${socket.url} within ${listenTimeoutMs / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: socket.url, pid, logFile: logFile ?? "", stop, kill, exited };
}

function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((done) => {
    const connection = connect({ host, port }, () => {
      connection.end();
      done(true);
    });
    connection.once("error", () => done(false));
  });
}

/** Where the config's socket listens, as this machine reaches it, and its URL (http or https). */
function socketOf(configFile: string): { host: string; port: number; url: string } {
  const text = readFileSync(configFile, "utf8");
  const match = /sockets = \[\(name = "[^"]+", address = "([^"]+)", (https?)/.exec(text);
  if (!match) throw new Error(`no socket in ${configFile}`);
  const [, address = "", protocol = "http"] = match;
  const { host, port } = hostAndPort(address);
  const bracketed = host.includes(":") ? `[${host}]` : host;
  return { host, port, url: `${protocol}://${bracketed}:${port}` };
}

/** "host:port", "[v6]:port" or "*:port" (every interface: reached on loopback). */
function hostAndPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(":");
  const host = address.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const port = Number(address.slice(colon + 1));
  if (host === "*" || host === "0.0.0.0") return { host: "127.0.0.1", port };
  if (host === "::") return { host: "::1", port };
  return { host, port };
}

/**
 * A bare workerd disk service over `directory` on 127.0.0.1:`port`: what the RUNS_DIRECTORY binding reaches,
 * exposed over HTTP so the disk blob store's tests can run against the real thing.
 */
export async function serveDiskDirectory(root: string, directory: string, port: number): Promise<SelfHosted> {
  mkdirSync(directory, { recursive: true });
  const configFile = join(directory, "..", `disk-${port}.capnp`);
  writeFileSync(
    configFile,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "runs", disk = (path = ${capnpText(directory)}, writable = true, allowDotfiles = true))],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "runs")],
);
`,
  );
  return runWorkerd(root, configFile, {}, undefined, `http://127.0.0.1:${port}`);
}

/** The workerd executable the npm package installs (its bin script is a Node launcher of it). */
function workerdBinary(root: string): string {
  const require = createRequire(resolve(root, "package.json"));
  return require.resolve(
    `@cloudflare/workerd-${process.platform}-${process.arch === "x64" ? "64" : process.arch}/bin/workerd`,
  );
}
