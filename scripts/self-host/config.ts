// The configuration of self-hosted Outpost (`npm start`, scripts/start.ts): the options an operator gives, the env
// file of secrets and variable overrides, and the workerd config (Cap'n Proto text) generated from them and from
// wrangler.toml, so that `workerd serve` runs the very bundle a deploy uploads with the same bindings:
// - the Durable Object classes of wrangler.toml, SQLite-backed, stored on local disk (`localDisk`), alarms included;
// - RUNS_DIRECTORY, workerd's disk service over <state>/runs, in place of the R2 bucket (src/blob-store/);
// - wrangler.toml's [vars] as text, except those the env file overrides; every name of the env file is bound with
//   `fromEnvironment`, so no secret is ever written into the generated config: workerd reads them from its own
//   environment, which the launcher fills from the env file;
// - the Worker's outbound network: public addresses only, unless the operator opens private hosts to tools or
//   callbacks; a model endpoint on this machine or its network (the emulator's) is reached through one external
//   server at its own address, which a small router Worker (the Worker's globalOutbound) sends only its origin to.
// It also decides where the model answers come from: the provider the env file names a key for, or the emulator,
// which is served only on loopback without TLS, or when --emulator asks for it.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export interface SelfHostOptions {
  /** host:port to listen on (workerd's socket address syntax). */
  address: string;
  /** PEM files for HTTPS; plain HTTP when absent. */
  tls?: { cert: string; key: string };
  /** Where everything the server keeps lives: Durable Objects, the runs directory, the bundle and config it serves. */
  stateDir: string;
  /** The env file of secrets and [vars] overrides (NAME=value lines), if any. */
  envFile?: string;
  /** --emulator: serve the model emulator in place of the model provider, wherever it listens. */
  emulator?: boolean;
}

/** The parts of wrangler.toml the config is made of (wrangler's own reading of it, unstable_readConfig). */
export interface WranglerFacts {
  name: string;
  compatibilityDate: string;
  compatibilityFlags: readonly string[];
  durableObjects: readonly { binding: string; className: string; sql: boolean }[];
  vars: Readonly<Record<string, unknown>>;
}

const USAGE =
  "npm start -- [--address host:port] [--tls-cert file --tls-key file] [--state dir] [--env-file file] [--emulator]";

/**
 * Options from the command line, each with a default: 127.0.0.1:8787, plain HTTP, state in <root>/.outpost, and the
 * env file <root>/.env when it exists.
 */
export function parseOptions(
  argv: readonly string[],
  root: string,
  exists: (path: string) => boolean,
): SelfHostOptions {
  const flags = new Map<string, string>();
  let emulator = false;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? "";
    if (flag === "--emulator") {
      emulator = true;
      continue;
    }
    const value = argv[i + 1];
    if (!["--address", "--tls-cert", "--tls-key", "--state", "--env-file"].includes(flag) || value === undefined) {
      throw new Error(`Unknown option or missing value: ${flag}\nUsage: ${USAGE}`);
    }
    flags.set(flag, value);
    i++;
  }
  const cert = flags.get("--tls-cert");
  const key = flags.get("--tls-key");
  if ((cert === undefined) !== (key === undefined)) throw new Error("--tls-cert and --tls-key go together.");
  const address = flags.get("--address") ?? "127.0.0.1:8787";
  if (!/^(\*|\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):\d{1,5}$/.test(address)) {
    throw new Error(`--address must be host:port, [ipv6]:port or *:port, not ${JSON.stringify(address)}`);
  }
  const defaultEnv = resolve(root, ".env");
  const envFile = flags.get("--env-file") ?? (exists(defaultEnv) ? defaultEnv : undefined);
  return {
    address,
    ...(cert && key ? { tls: { cert: resolve(cert), key: resolve(key) } } : {}),
    stateDir: resolve(root, flags.get("--state") ?? ".outpost"),
    ...(envFile ? { envFile: resolve(envFile) } : {}),
    emulator,
  };
}

/** Whether `address` (host:port) listens on loopback only: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackAddress(address: string): boolean {
  const host = address
    .slice(0, address.lastIndexOf(":"))
    .replace(/^\[(.*)\]$/, "$1")
    .toLowerCase();
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The secrets of the other providers and of Claude's other ways in (docs/providers.md). */
const OTHER_PROVIDER_KEYS = [
  "CLAUDE_CODE_OAUTH_TOKEN",
  "ANTHROPIC_FOUNDRY_API_KEY",
  "AWS_ACCESS_KEY_ID",
  "GOOGLE_SERVICE_ACCOUNT_JSON",
  "GEMINI_API_KEY",
  "OPENAI_API_KEY",
];

/**
 * Where the model's answers come from: the provider the env file gives a key (or an endpoint) for; the emulator when
 * it gives none and the server is for this machine only (loopback, no TLS), or when --emulator asks for it; else no
 * start, with what to set (`refused`). Agents that name no provider call Anthropic, whose key and endpoint are
 * ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL; the emulator stands in for it. An exposed server with another provider's key
 * (or Claude's through OAuth or a cloud) starts without the emulator. Messages never hold a value.
 */
export function modelSource(
  options: Pick<SelfHostOptions, "address" | "tls" | "envFile" | "emulator">,
  values: ReadonlyMap<string, string>,
): { kind: "provider" | "emulator" } | { kind: "refused"; message: string } {
  const given = ["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"].filter((name) => values.get(name));
  // A deployment whose agents use another provider (or Claude through another way in) names that provider's key.
  const other = OTHER_PROVIDER_KEYS.filter((name) => values.get(name));
  if (options.emulator === true) {
    if (given.length === 0) return { kind: "emulator" };
    return {
      kind: "refused",
      message: `--emulator serves the model emulator in place of the model provider, but the env file sets ${given.join(" and ")}: remove ${given.length > 1 ? "them" : "it"}, or drop --emulator.`,
    };
  }
  if (given.length > 0) return { kind: "provider" };
  const exposed = !isLoopbackAddress(options.address)
    ? `it would listen on ${options.address}, which is not loopback`
    : options.tls
      ? "it would serve TLS"
      : null;
  if (exposed === null) return { kind: "emulator" };
  // Exposed, with another provider's key: Claude agents, if any, fail with provider_not_configured, saying so.
  if (other.length > 0) return { kind: "provider" };
  return {
    kind: "refused",
    message:
      `No model key: the env file sets neither ANTHROPIC_API_KEY nor ANTHROPIC_BASE_URL, and ${exposed}, so whoever ` +
      "calls it would get the model emulator's canned replies. " +
      `Put ANTHROPIC_API_KEY in ${options.envFile ?? "an env file (--env-file)"}, or pass --emulator to serve the emulator on purpose.`,
  };
}

/**
 * An env file's entries: `NAME=value` per line, `#` comments and blank lines skipped, an optional `export `, values
 * optionally in double quotes (JSON escapes) or single quotes (taken as written). A bad line is named by its number,
 * never by its content, which may be a secret.
 */
export function parseEnvFile(text: string, file: string): Map<string, string> {
  const entries = new Map<string, string>();
  text.split(/\r?\n/).forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(trimmed);
    if (!match) throw new Error(`${file}:${index + 1}: expected NAME=value`);
    const [, name = "", raw = ""] = match;
    let value = raw;
    if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) {
      try {
        value = JSON.parse(raw) as string;
      } catch {
        throw new Error(`${file}:${index + 1}: the quoted value of ${name} is not a valid double-quoted string`);
      }
    } else if (raw.length >= 2 && raw.startsWith("'") && raw.endsWith("'")) {
      value = raw.slice(1, -1);
    }
    entries.set(name, value);
  });
  return entries;
}

export function readEnvFile(file: string): Map<string, string> {
  return parseEnvFile(readFileSync(file, "utf8"), file);
}

/** A Cap'n Proto text literal. */
export function capnpText(value: string): string {
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '"' || char === "\\") out += `\\${char}`;
    else if (char === "\n") out += "\\n";
    else if (char === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += char;
  }
  return `${out}"`;
}

/**
 * Whether the Worker's whole outbound network opens to this machine and its network: only when the operator opens
 * private hosts to tools, a tenant's own agents or callbacks (Outpost's own network guard then decides per host, as on
 * Cloudflare).
 */
export function needsPrivateNetwork(values: ReadonlyMap<string, string>): boolean {
  return Boolean(
    values.get("OUTPOST_ALLOW_PRIVATE_HOSTS") ||
      values.get("OUTPOST_TENANT_PRIVATE_HOSTS") ||
      values.get("OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS"),
  );
}

/**
 * ANTHROPIC_BASE_URL when it is on this machine or its network (the emulator's, a gateway's): the one origin the
 * Worker reaches there through the `model-endpoint` server, without opening private addresses to anything else. Null
 * when it is public, absent or not a URL.
 */
export function privateModelEndpoint(values: ReadonlyMap<string, string>): URL | null {
  const base = values.get("ANTHROPIC_BASE_URL");
  if (!base) return null;
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  const host = url.hostname;
  const local =
    host === "localhost" ||
    host === "[::1]" ||
    /^127\./.test(host) ||
    /^10\./.test(host) ||
    /^192\.168\./.test(host) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(host);
  return local ? url : null;
}

/**
 * The Worker's globalOutbound when a model endpoint is private: every outbound request of the Worker comes here, and
 * only the endpoint's own origin goes to its external server; the rest goes to `internet` (public addresses only).
 */
function outboundRouter(endpoint: URL): string {
  return `// Written by npm start (scripts/self-host/config.ts): the Worker's outbound requests.
const MODEL_ORIGIN = ${JSON.stringify(endpoint.origin)};
export default {
  fetch(request, env) {
    return new URL(request.url).origin === MODEL_ORIGIN ? env.MODEL_ENDPOINT.fetch(request) : env.INTERNET.fetch(request);
  },
};
`;
}

/** The external server of a private model endpoint: its host and port, over HTTP or TLS. */
function modelEndpointServer(endpoint: URL): string {
  const port = endpoint.port || (endpoint.protocol === "https:" ? "443" : "80");
  const address = capnpText(`${endpoint.hostname}:${port}`);
  if (endpoint.protocol === "http:") return `external = (address = ${address}, http = ())`;
  const host = capnpText(endpoint.hostname.replace(/^\[(.*)\]$/, "$1"));
  return `external = (address = ${address}, https = (options = (), tlsOptions = (trustBrowserCas = true), certificateHost = ${host}))`;
}

/**
 * The workerd config (for `workerd serve -I /`, see below); `environment` names what workerd's environment will hold (the env file's names, and what the
 * launcher adds), never their values.
 */
export function workerdConfig(input: {
  facts: WranglerFacts;
  options: SelfHostOptions;
  bundleFile: string;
  environment: ReadonlySet<string>;
  privateNetwork: boolean;
  /** A model endpoint on this machine or its network (privateModelEndpoint): reachable at its own origin only. */
  modelEndpoint?: URL | null;
  /** V8's own flags (workerd's config field v8Flags). */
  v8Flags?: readonly string[];
}): string {
  const { facts, options, environment } = input;
  // Absolute: workerd runs with `-I /`, so an embed's absolute path is read from there (a relative one cannot leave the
  // config file's folder).
  const file = (path: string) => capnpText(resolve(path));
  const doDir = resolve(options.stateDir, "durable-objects");
  const runsDir = resolve(options.stateDir, "runs");

  const bindings: string[] = [];
  for (const object of facts.durableObjects) {
    bindings.push(`(name = ${capnpText(object.binding)}, durableObjectNamespace = ${capnpText(object.className)})`);
  }
  bindings.push(`(name = "RUNS_DIRECTORY", service = "runs")`);
  for (const [name, value] of Object.entries(facts.vars)) {
    if (environment.has(name)) continue;
    bindings.push(
      typeof value === "string"
        ? `(name = ${capnpText(name)}, text = ${capnpText(value)})`
        : `(name = ${capnpText(name)}, json = ${capnpText(JSON.stringify(value))})`,
    );
  }
  for (const name of [...environment].sort()) {
    bindings.push(`(name = ${capnpText(name)}, fromEnvironment = ${capnpText(name)})`);
  }

  const namespaces = facts.durableObjects.map(
    (o) =>
      `(className = ${capnpText(o.className)}, uniqueKey = ${capnpText(`${facts.name}-${o.className}`)}, enableSql = ${o.sql})`,
  );
  const protocol = options.tls
    ? `https = (options = (), tlsOptions = (keypair = (privateKey = embed ${file(options.tls.key)}, certificateChain = embed ${file(options.tls.cert)})))`
    : "http = ()";
  const allow = input.privateNetwork ? `["public", "private", "local"]` : `["public"]`;
  // With the whole network open, the endpoint needs no way of its own.
  const endpoint = input.privateNetwork ? null : (input.modelEndpoint ?? null);
  const services = [
    `(name = "outpost", worker = .outpost)`,
    ...(endpoint
      ? [`(name = "outbound", worker = .outbound)`, `(name = "model-endpoint", ${modelEndpointServer(endpoint)})`]
      : []),
    `(name = "durable-objects", disk = (path = ${capnpText(doDir)}, writable = true))`,
    // Keys hold dot-folders (runs/<id>/.journal/): the directory is the Worker's alone, nothing else is served from it.
    `(name = "runs", disk = (path = ${capnpText(runsDir)}, writable = true, allowDotfiles = true))`,
    `(name = "internet", network = (allow = ${allow}, tlsOptions = (trustBrowserCas = true)))`,
  ];
  const v8Flags = input.v8Flags?.length ? `\n  v8Flags = [${input.v8Flags.map(capnpText).join(", ")}],` : "";
  return `# Written by \`npm start\` (scripts/self-host/) at every start, from wrangler.toml and its options. It names the
# secrets the Worker reads (fromEnvironment) but holds none of their values. Edit the options, not this file.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (${v8Flags}
  services = [
    ${services.join(",\n    ")},
  ],
  sockets = [(name = "http", address = ${capnpText(options.address)}, ${protocol}, service = "outpost")],
);

const outpost :Workerd.Worker = (
  modules = [(name = "index.js", esModule = embed ${file(input.bundleFile)})],
  compatibilityDate = ${capnpText(facts.compatibilityDate)},
  compatibilityFlags = [${facts.compatibilityFlags.map(capnpText).join(", ")}],
  bindings = [
    ${bindings.join(",\n    ")},
  ],
  durableObjectNamespaces = [
    ${namespaces.join(",\n    ")},
  ],
  # Each object's SQLite database (alarms included) in <state>/durable-objects/<uniqueKey>/.
  durableObjectStorage = (localDisk = "durable-objects"),${endpoint ? `\n  globalOutbound = "outbound",` : ""}
);
${
  endpoint
    ? `
# The Worker's outbound requests: only the model endpoint's origin reaches it; the rest goes to the internet.
const outbound :Workerd.Worker = (
  modules = [(name = "outbound.js", esModule = ${capnpText(outboundRouter(endpoint))})],
  compatibilityDate = ${capnpText(facts.compatibilityDate)},
  bindings = [(name = "INTERNET", service = "internet"), (name = "MODEL_ENDPOINT", service = "model-endpoint")],
);
`
    : ""
}`;
}
