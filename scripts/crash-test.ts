// npm run test:crash: the crash test's scenarios (scripts/crash-scenarios.ts) against `wrangler dev`, killed with its
// workerd processes mid-run and started again on the same --persist-to folder.
import { resolve } from "node:path";
import { startWrangler } from "../bench/wrangler.ts";
import { runCrashTest } from "./crash-scenarios.ts";

const ROOT = resolve(import.meta.dirname, "..");

await runCrashTest("wrangler dev", (setup) =>
  startWrangler({
    root: ROOT,
    vars: setup.vars,
    persistDir: setup.stateDir,
    extraFiles: setup.extraFiles,
    main: setup.main,
  }),
);
