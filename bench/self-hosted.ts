// The memory phase against self-hosted Outpost (`npm start`'s `workerd serve`, scripts/self-host/): the same bundle a
// deploy uploads, one workerd with Durable Objects on local disk, no wrangler and no dev proxy. It shows what an
// in-flight task holds where an operator runs Outpost on one machine, beside the wrangler dev figure of the headline.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needsPrivateNetwork } from "../scripts/self-host/config.ts";
import { buildBundle, readWranglerFacts, serve } from "../scripts/self-host/server.ts";
import { type MemoryResult, memoryPhase, selfHostedSnapshot } from "./memory.ts";
import { runOutpostTask } from "./outpost.ts";
import { runPool } from "./util.ts";
import { freePort, snapshotTree } from "./wrangler.ts";

export async function selfHostedMemory(options: {
  root: string;
  vars: Record<string, string>;
  tasks: number;
}): Promise<MemoryResult> {
  const work = mkdtempSync(join(tmpdir(), "outpost-bench-selfhost-"));
  try {
    const tree = join(work, "tree");
    snapshotTree(options.root, tree, {});
    const bundleFile = buildBundle(tree, join(work, "bundle"));
    const environment = new Map(Object.entries(options.vars));
    const server = await serve({
      root: options.root,
      facts: await readWranglerFacts(tree),
      options: { address: `127.0.0.1:${await freePort()}`, stateDir: join(work, "state") },
      bundleFile,
      environment,
      privateNetwork: needsPrivateNetwork(environment),
      logFile: join(work, "workerd.log"),
    });
    try {
      await runPool(2, 1, (i) => runOutpostTask(server.url, `self-hosted memory warm-up #${i}`));
      return await memoryPhase({
        baseUrl: server.url,
        snapshot: () => selfHostedSnapshot(server.pid),
        tasks: options.tasks,
      });
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
