// npm run test:crash:selfhost: the crash test's scenarios (scripts/crash-scenarios.ts) against self-hosted Outpost,
// `workerd serve` as `npm start` runs it (scripts/self-host/): the bundle built once by `wrangler deploy --dry-run`
// from a snapshot of the tree (with the crash test's entry added), Durable Objects on local disk, the blob store in a
// directory, variables and secrets through workerd's environment. Each crash SIGKILLs workerd; the restart serves the
// same bundle on the same state directory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, snapshotTree } from "../bench/wrangler.ts";
import { runCrashTest } from "./crash-scenarios.ts";
import { needsPrivateNetwork } from "./self-host/config.ts";
import { buildBundle, readWranglerFacts, serve } from "./self-host/server.ts";

const ROOT = resolve(import.meta.dirname, "..");
const work = mkdtempSync(join(tmpdir(), "outpost-selfhost-crash-"));
let bundle: { file: string; tree: string } | undefined;

try {
  await runCrashTest("workerd serve (self-hosted)", async (setup) => {
    if (!bundle) {
      const tree = join(work, "tree");
      snapshotTree(ROOT, tree, setup.extraFiles);
      bundle = { tree, file: buildBundle(tree, join(work, "bundle"), setup.main) };
    }
    const environment = new Map(Object.entries(setup.vars));
    const server = await serve({
      root: ROOT,
      facts: await readWranglerFacts(bundle.tree),
      options: { address: `127.0.0.1:${await freePort()}`, stateDir: setup.stateDir },
      bundleFile: bundle.file,
      environment,
      privateNetwork: needsPrivateNetwork(environment),
      logFile: join(work, "workerd.log"),
    });
    return { url: server.url, workerPid: server.pid, kill: server.kill, stop: server.stop };
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}
