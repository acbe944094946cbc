// What the bench's separate cases (bench/cost.ts, bench/waits.ts, bench/compaction.ts) share: a target row shaped as
// the headline's (these figures have no floor), and the script that runs one case alone (`npm run bench:<case>`):
// it prints the case's report and a PASS or MISS line per target, writes bench/results/<name>.json, and exits 0
// even if a target is missed, non-zero only if the case itself failed.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { closeHttpAgent } from "./http.ts";
import { round } from "./util.ts";

export interface CaseTarget {
  name: string;
  value: number;
  limit: string;
  pass: boolean;
  ratioToFloor: null;
  platformFloor: null;
  platformPass: null;
}

/** A target of a case no floor has a figure for. */
export function caseTarget(name: string, value: number, limit: string, pass: boolean): CaseTarget {
  return { name, value, limit, pass, ratioToFloor: null, platformFloor: null, platformPass: null };
}

/** Runs a case alone when `module` (its import.meta.url) is the script node was started with. */
export function runCaseAlone<R extends object>(
  module: string,
  name: string,
  run: (root: string) => Promise<R>,
  report: (result: R) => string[],
  targets: (result: R) => CaseTarget[],
): void {
  if (process.argv[1] !== fileURLToPath(module)) return;
  const log = (line: string) => process.stderr.write(`[bench:${name}] ${line}\n`);
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const main = async () => {
    const started = performance.now();
    try {
      const result = await run(root);
      const met = targets(result);
      const lines = met.map((t) => `${t.pass ? "PASS" : "MISS"}  ${t.name}: ${t.value} (${t.limit})`);
      console.log(["", ...report(result), "", ...lines].join("\n"));
      const file = resolve(root, `bench/results/${name}.json`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${JSON.stringify({ ...result, targets: met }, null, 2)}\n`);
      log(`wrote ${file}; ${round((performance.now() - started) / 1000, 1)} s in all`);
    } finally {
      closeHttpAgent();
    }
  };
  process.on("SIGINT", () => process.exit(130));
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      log(`FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    },
  );
}
