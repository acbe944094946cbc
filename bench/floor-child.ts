// The floor's runs in a process of their own, so that its CPU time is the SDK loop's alone: in the bench's process
// the emulator's work would be counted with it. `node bench/floor-child.ts <emulatorUrl> <label> <concurrency>
// <runs>` warms up, then runs the floor loop and prints one JSON line: the runs and the CPU ms they took.

import { createFloorClient, type FloorRun, runFloorTask } from "./floor.ts";
import { runPool } from "./util.ts";

/** What the child prints. */
export interface FloorChildResult {
  runs: FloorRun[];
  cpuMs: number;
  elapsedMs: number;
}

const [emulatorUrl, label, concurrencyArg, runsArg] = process.argv.slice(2);
if (!emulatorUrl || !label || !concurrencyArg || !runsArg) {
  throw new Error("usage: floor-child.ts <emulatorUrl> <label> <concurrency> <runs>");
}
const client = createFloorClient(emulatorUrl);
await runPool(6, 2, (i) => runFloorTask(client, `floor-warmup-${label}-${i}-${Date.now()}`));
const before = process.cpuUsage();
const started = performance.now();
const runs = await runPool(Number(runsArg), Number(concurrencyArg), (i) =>
  runFloorTask(client, `floor-${label}-${i}-${Date.now()}`),
);
const elapsedMs = performance.now() - started;
const used = process.cpuUsage(before);
const result: FloorChildResult = { runs, cpuMs: (used.user + used.system) / 1000, elapsedMs };
process.stdout.write(`${JSON.stringify(result)}\n`);
