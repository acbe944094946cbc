// `wrangler dev` as a benchmark fixture: start it in its own process group on a free port, wait until it answers,
// read the resident memory and CPU time of its processes from /proc, find the Worker's own port behind wrangler's
// dev proxy, and kill the whole group (wrangler leaves its workerd children running otherwise). It serves a
// snapshot of the Worker's sources taken at start, so edits made to the tree during a run cannot make wrangler
// rebuild and restart workerd halfway through a measurement. A caller may add files to the snapshot and serve one of
// them as the entry (the crash test wraps the Worker in an entry that registers an agent of its own), so nothing a
// test needs has to live in src/.
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { wranglerDevEnv } from "../scripts/wrangler-dev-env.ts";
import { httpJson } from "./http.ts";
import { sleep } from "./util.ts";

export interface WranglerDev {
  url: string;
  port: number;
  /** wrangler's pid, which is also its process group id. */
  pid: number;
  /** The workerd that runs the Worker; if this changes, wrangler restarted it and in-flight state was lost. */
  workerPid: number;
  logFile: string;
  /** Copies wrangler's log to `file` (it is deleted with the temporary directory on stop). */
  saveLog(file: string): void;
  stop(): Promise<void>;
  /** SIGKILL to the whole group at once, as a crashed machine would: no cleanup, the state folder stays. */
  kill(): Promise<void>;
}

/**
 * What the Worker's build reads: its config, sources, and the skills and agent files its [build] step compiles (with
 * that step's scripts). node_modules is linked, not copied.
 */
const SNAPSHOT_DIRS = ["src", "durable-objects", "skills", "agents", "workflows", "console"];
const SNAPSHOT_FILES = [
  "wrangler.toml",
  "package.json",
  "tsconfig.json",
  "scripts/build-skills.ts",
  "scripts/build-agents.ts",
  "scripts/build-workflows.ts",
  "scripts/build-console.ts",
  "scripts/build-docs-assets.ts",
  "scripts/generated-file.ts",
];

/** Copies what the Worker's build reads into `into`, plus `extraFiles` (also used by the self-hosted crash test). */
export function snapshotTree(root: string, into: string, extraFiles: Readonly<Record<string, string>>): void {
  for (const dir of SNAPSHOT_DIRS) cpSync(join(root, dir), join(into, dir), { recursive: true });
  mkdirSync(join(into, "scripts"), { recursive: true });
  for (const file of SNAPSHOT_FILES) copyFileSync(join(root, file), join(into, file));
  symlinkSync(join(root, "node_modules"), join(into, "node_modules"), "dir");
  for (const [file, contents] of Object.entries(extraFiles)) {
    const path = resolve(into, file);
    // Added, never replaced: what wrangler serves is the Worker's own code plus what the caller adds around it.
    if (!path.startsWith(`${into}/`) || existsSync(path)) throw new Error(`cannot add ${file} to the snapshot`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, contents);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

export async function startWrangler(options: {
  root: string;
  vars: Record<string, string>;
  /** Durable Object and R2 state; kept across restarts when given (otherwise a fresh folder, deleted on stop). */
  persistDir?: string;
  /** Files added to the snapshot: path relative to its root → contents. Files of the Worker cannot be replaced. */
  extraFiles?: Readonly<Record<string, string>>;
  /** The entry module to serve instead of wrangler.toml's `main` (a path in the snapshot, e.g. one of extraFiles). */
  main?: string;
  /** Further `wrangler dev` arguments, e.g. `--inspector-port <port>` for the profiler. */
  extraArgs?: readonly string[];
  /** The environment wrangler starts from (default this process's), before wranglerDevEnv's settings. */
  env?: NodeJS.ProcessEnv;
}): Promise<WranglerDev> {
  const port = await freePort();
  const workDir = mkdtempSync(join(tmpdir(), "outpost-bench-"));
  const tree = join(workDir, "tree");
  snapshotTree(options.root, tree, options.extraFiles ?? {});
  const persistDir = options.persistDir ?? join(workDir, "state");
  const logFile = join(workDir, "wrangler.log");
  const log = openSync(logFile, "a");
  const bin = resolve(options.root, "node_modules/.bin");
  const args = [
    "dev",
    ...(options.main ? [options.main] : []),
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--persist-to",
    persistDir,
  ];
  for (const [name, value] of Object.entries(options.vars)) args.push("--var", `${name}:${value}`);
  args.push("--show-interactive-dev-session=false", ...(options.extraArgs ?? []));
  const child: ChildProcess = spawn(join(bin, "wrangler"), args, {
    cwd: tree,
    detached: true,
    stdio: ["ignore", log, log],
    // node_modules/.bin first: wrangler's `#!/usr/bin/env node` then gets the project's Node 22, not the system 20.
    // As npm run dev runs it: wrangler's local trace collector off (scripts/wrangler-dev-env.ts).
    env: wranglerDevEnv({
      ...(options.env ?? process.env),
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      WRANGLER_SEND_METRICS: "false",
    }),
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error("wrangler did not start");
  let exited: string | null = null;
  child.on("exit", (code, signal) => {
    exited = `exited with ${signal ?? code}`;
  });
  const killGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-pid, signal);
    } catch {
      // group already gone
    }
  };
  // Last resort if the bench dies without reaching its cleanup.
  const onExit = () => {
    killGroup("SIGKILL");
    rmSync(workDir, { recursive: true, force: true });
  };
  process.on("exit", onExit);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    killGroup("SIGTERM");
    for (let i = 0; i < 50 && groupPids(pid).length > 0; i++) await sleep(100);
    if (groupPids(pid).length > 0) killGroup("SIGKILL");
    for (let i = 0; i < 20 && groupPids(pid).length > 0; i++) await sleep(100);
    process.off("exit", onExit);
    rmSync(workDir, { recursive: true, force: true });
  };

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (exited) {
      const tail = readFileSync(logFile, "utf8").slice(-2000);
      await stop();
      throw new Error(`wrangler dev ${exited} before it was ready:\n${tail}`);
    }
    try {
      const res = await httpJson("GET", `${url}/`, { timeoutMs: 2000 });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      const tail = readFileSync(logFile, "utf8").slice(-2000);
      await stop();
      throw new Error(`wrangler dev did not answer GET / within 90 s:\n${tail}`);
    }
    await sleep(200);
  }
  const worker = groupProcesses(pid).find((p) => p.comm === "workerd" && workerdRole(p.pid, port) === "worker");
  if (!worker) {
    await stop();
    throw new Error("wrangler dev answers, but its Worker's workerd process was not found");
  }
  const saveLog = (file: string) => copyFileSync(logFile, file);
  const kill = async () => {
    stopped = true;
    killGroup("SIGKILL");
    for (let i = 0; i < 50 && groupPids(pid).length > 0; i++) await sleep(100);
    process.off("exit", onExit);
    rmSync(workDir, { recursive: true, force: true });
  };
  return { url, port, pid, workerPid: worker.pid, logFile, saveLog, stop, kill };
}

export interface ProcessInfo {
  pid: number;
  comm: string;
  rssKiB: number;
}

/** Processes whose process group is `pgid` (wrangler, its Node child, esbuild, the workerd processes). */
export function groupPids(pgid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the parenthesised comm: state ppid pgrp ...
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid) pids.push(Number(entry));
    } catch {
      // process exited while scanning
    }
  }
  return pids;
}

/**
 * Whether this kernel keeps each thread's time on a CPU in nanoseconds (/proc/<pid>/task/<tid>/schedstat's first
 * field): a process that has run has some, so this one's reads 0 only where the kernel does not keep it.
 */
const SCHEDSTAT = (() => {
  try {
    return Number(readFileSync("/proc/self/schedstat", "utf8").split(" ")[0]) > 0;
  } catch {
    return false;
  }
})();

/**
 * CPU time of a process in ms: the sum of its threads' time on a CPU to the nanosecond (schedstat) where the kernel
 * keeps it, else user + system from /proc/<pid>/stat, in clock ticks of 10 ms (a 12 ms message reads as 10 or 20).
 */
export function cpuMs(pid: number): number {
  try {
    if (SCHEDSTAT) {
      let ns = 0;
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
        } catch {
          // the thread ended while the list was read
        }
      }
      return ns / 1e6;
    }
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

export function groupProcesses(pgid: number): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const pid of groupPids(pgid)) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const comm = /^Name:\s*(.+)$/m.exec(status)?.[1]?.trim() ?? "?";
      const rssKiB = Number(/^VmRSS:\s*(\d+)\s*kB/m.exec(status)?.[1] ?? 0);
      out.push({ pid, comm, rssKiB });
    } catch {
      // gone
    }
  }
  return out.sort((a, b) => a.pid - b.pid);
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}

/** The pid of wrangler's dev proxy, the workerd that owns the public port (undefined if it is not found). */
export function devProxyPid(dev: Pick<WranglerDev, "pid" | "port">): number | undefined {
  return groupProcesses(dev.pid).find((p) => p.comm === "workerd" && workerdRole(p.pid, dev.port) === "proxy")?.pid;
}

/** "proxy" is wrangler's dev proxy (it owns the public port); "worker" runs Outpost and its Durable Objects. */
export function workerdRole(pid: number, publicPort: number): "proxy" | "worker" {
  return cmdline(pid).includes(`entry=127.0.0.1:${publicPort}`) ? "proxy" : "worker";
}

/**
 * The port of the workerd that runs the Worker itself, found by asking each of its listening sockets for GET /.
 * Requests there skip wrangler's dev proxy (a second workerd), which production does not have. Null if not found.
 */
export async function findDirectPort(pgid: number, publicPort: number): Promise<number | null> {
  const workers = groupProcesses(pgid).filter(
    (p) => p.comm === "workerd" && workerdRole(p.pid, publicPort) === "worker",
  );
  const listening = listeningPortsByInode();
  for (const { pid } of workers) {
    const ports: number[] = [];
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const link = (() => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return "";
          }
        })();
        const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
        const port = inode ? listening.get(inode) : undefined;
        if (port !== undefined) ports.push(port);
      }
    } catch {
      continue;
    }
    for (const port of ports) {
      try {
        const res = await httpJson("GET", `http://127.0.0.1:${port}/`, { timeoutMs: 1000 });
        const body = res.body as { name?: unknown } | null;
        if (res.status === 200 && body && body.name === "outpost") return port;
      } catch {
        // not an HTTP entry socket
      }
    }
  }
  return null;
}

/** inode → port of IPv4 sockets in LISTEN state on 127.0.0.1. */
function listeningPortsByInode(): Map<string, number> {
  const map = new Map<string, number>();
  if (!existsSync("/proc/net/tcp")) return map;
  for (const line of readFileSync("/proc/net/tcp", "utf8").split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 10 || cols[3] !== "0A") continue;
    const [addr, portHex] = (cols[1] ?? "").split(":");
    if (addr !== "0100007F" || !portHex) continue;
    map.set(cols[9] ?? "", Number.parseInt(portHex, 16));
  }
  return map;
}
