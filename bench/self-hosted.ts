// Self-hosted Outpost (`npm start`'s `workerd serve`, scripts/self-host/) as a benchmark fixture: the same bundle a
// deploy uploads, one workerd with Durable Objects on local disk, no wrangler, no dev proxy and none of the dev
// server's own Workers in the request path (its entry Worker, the assets router, the outbound Worker, the R2
// simulator). The bundle is built once; each phase gets a fresh server on fresh state. The bench measures a level of
// tasks there (what a task costs in the runtime an operator runs) and the memory phase (what an in-flight task holds).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needsPrivateNetwork } from "../scripts/self-host/config.ts";
import { buildBundle, readWranglerFacts, type SelfHosted, serve } from "../scripts/self-host/server.ts";
import { type MemoryResult, memoryPhase, selfHostedSnapshot } from "./memory.ts";
import { runOutpostTask } from "./outpost.ts";
import { runPool } from "./util.ts";
import { freePort, snapshotTree } from "./wrangler.ts";

/** How a server is started beyond its build: more of workerd's options, V8 flags, a launcher (serve()'s own). */
export type ServerOptions = Pick<Parameters<typeof serve>[0], "workerdArgs" | "v8Flags" | "launcher">;

export interface SelfHostedBuild {
  /** Runs `phase` against a fresh server on fresh state (started with `options`), then stops the server. */
  withServer<T>(phase: (server: SelfHosted) => Promise<T>, options?: ServerOptions): Promise<T>;
  /** Deletes the build and every server's state. */
  remove(): void;
}

/**
 * Snapshots the tree and builds the deploy bundle once, for servers given `vars` as their environment. With
 * `wranglerConfig` (a path in the tree), the Worker of that config instead, built from the tree as it is: the bench's
 * workerd floor, which has no build step writing into the tree.
 */
export async function buildSelfHosted(options: {
  root: string;
  vars: Record<string, string>;
  wranglerConfig?: string;
}): Promise<SelfHostedBuild> {
  const work = mkdtempSync(join(tmpdir(), "outpost-bench-selfhost-"));
  try {
    const { wranglerConfig } = options;
    const tree = wranglerConfig ? options.root : join(work, "tree");
    if (!wranglerConfig) snapshotTree(options.root, tree, {});
    const bundleFile = buildBundle(tree, join(work, "bundle"), undefined, wranglerConfig);
    const facts = await readWranglerFacts(tree, wranglerConfig);
    const environment = new Map(Object.entries(options.vars));
    let servers = 0;
    return {
      async withServer(phase, serverOptions = {}) {
        const n = servers++;
        const server = await serve({
          root: options.root,
          facts,
          options: { address: `127.0.0.1:${await freePort()}`, stateDir: join(work, `state-${n}`) },
          bundleFile,
          environment,
          privateNetwork: needsPrivateNetwork(environment),
          logFile: join(work, `workerd-${n}.log`),
          ...serverOptions,
        });
        try {
          return await phase(server);
        } finally {
          await server.stop();
        }
      },
      remove() {
        rmSync(work, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
}

/** The memory phase against a self-hosted server: `tasks` tasks whose model call does not answer. */
export async function selfHostedMemory(server: SelfHosted, tasks: number): Promise<MemoryResult> {
  await runPool(2, 1, (i) => runOutpostTask(server.url, `self-hosted memory warm-up #${i}`));
  return memoryPhase({ baseUrl: server.url, snapshot: () => selfHostedSnapshot(server.pid), tasks });
}
