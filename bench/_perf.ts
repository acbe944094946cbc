import { spawn } from "node:child_process";
import { startEmulator } from "../emulator/server.ts";
import { API_KEY, LATENCY, SCRIPT } from "./config.ts";
import { httpJson } from "./http.ts";
import { runOutpostTask } from "./outpost.ts";
import { runPool, sleep } from "./util.ts";
import { cpuMs, startWrangler } from "./wrangler.ts";

const emulator = await startEmulator({ ttftMs: LATENCY.ttftMs, tokenDelayMs: LATENCY.tokenDelayMs, quiet: true });
const dev = await startWrangler({
  root: process.cwd(),
  vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
});
await httpJson("POST", `${emulator.url}/_emulator/scripts`, { body: SCRIPT });
await runPool(10, 2, (i) => runOutpostTask(dev.url, `w${i}`));
const perf = spawn("perf", ["record", "-F", "2000", "-g", "-o", "/tmp/perf.data", "-p", String(dev.workerPid)], {
  stdio: "inherit",
});
await sleep(1500);
const n = 50;
const a = cpuMs(dev.workerPid);
await runPool(n, 1, (i) => runOutpostTask(dev.url, `p${i}`));
console.log("CPU ms/task", ((cpuMs(dev.workerPid) - a) / n).toFixed(1));
perf.kill("SIGINT");
await new Promise((r) => perf.on("exit", r));
await dev.stop();
await emulator.close();
