// A wrangler dev instance to measure against, warmed up, and replaced by a fresh one when wrangler restarts its
// workerd mid-phase (a rebuild: a file it watches changed). A restart loses every in-flight object and leaves
// half-run tasks that would resume on their heartbeat alarm later, so the phase is re-run on a new instance with
// new storage instead of being patched up.
import { findDirectPort, groupProcesses, startWrangler, type WranglerDev, workerdRole } from "./wrangler.ts";

export interface SessionOptions {
  root: string;
  vars: Record<string, string>;
  /** Runs on each new instance before it is measured. */
  warmup: (dev: WranglerDev, directUrl: string | null) => Promise<void>;
  log: (line: string) => void;
  /** Saves wrangler's log under this name when an instance is stopped. */
  saveLog: (dev: WranglerDev, name: string) => void;
}

export class DevSession {
  readonly options: SessionOptions;
  dev: WranglerDev | null = null;
  /** The Worker's own workerd port, behind wrangler's dev proxy (null if it could not be found). */
  directUrl: string | null = null;
  /** Phases re-run because wrangler restarted workerd under them. */
  reruns: string[] = [];
  private instances = 0;

  constructor(options: SessionOptions) {
    this.options = options;
  }

  /** Stops the current instance (if any) and starts a fresh one with empty storage, warmed up unless told not to. */
  async fresh(warm = true): Promise<WranglerDev> {
    await this.stop();
    const { log } = this.options;
    const dev = await startWrangler({ root: this.options.root, vars: this.options.vars });
    this.dev = dev;
    this.instances++;
    log(`wrangler dev ready at ${dev.url} (pgid ${dev.pid})`);
    const port = await findDirectPort(dev.pid, dev.port);
    this.directUrl = port === null ? null : `http://127.0.0.1:${port}`;
    log(this.directUrl ? `the Worker's own workerd answers at ${this.directUrl}` : "the Worker's own port not found");
    if (warm) await this.options.warmup(dev, this.directUrl);
    return dev;
  }

  /** Whether the workerd that was running Outpost when `dev` started still is. */
  workerAlive(dev: WranglerDev): boolean {
    return groupProcesses(dev.pid).some(
      (p) => p.pid === dev.workerPid && p.comm === "workerd" && workerdRole(p.pid, dev.port) === "worker",
    );
  }

  /**
   * Runs a phase; if workerd was restarted during it, re-runs it on a fresh instance (at most twice). With `fresh`,
   * every attempt gets a new instance (warmed up unless `warm` is false).
   */
  async phase<T>(
    name: string,
    fn: (dev: WranglerDev, directUrl: string | null) => Promise<T>,
    options: { fresh?: boolean; warm?: boolean } = {},
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const dev = options.fresh || !this.dev ? await this.fresh(options.warm ?? true) : this.dev;
      let result: T | undefined;
      let failure: unknown = null;
      try {
        result = await fn(dev, this.directUrl);
      } catch (error) {
        failure = error;
      }
      if (this.workerAlive(dev)) {
        if (failure !== null) throw failure;
        return result as T;
      }
      if (attempt >= 3) throw new Error(`wrangler restarted workerd during ${name} ${attempt} times; giving up`);
      this.reruns.push(name);
      this.options.log(`wrangler restarted workerd during ${name}; re-running it on a fresh instance`);
      if (!options.fresh) await this.fresh(options.warm ?? true);
    }
  }

  async stop(): Promise<void> {
    const dev = this.dev;
    if (!dev) return;
    this.dev = null;
    this.directUrl = null;
    try {
      this.options.saveLog(dev, `wrangler-${this.instances}.log`);
    } catch {
      // the log is a convenience
    }
    await dev.stop();
  }
}
