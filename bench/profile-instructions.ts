// `npm run profile:instructions [-- <git revision> ...]`: how many machine instructions a bench task costs self-hosted
// Outpost, counted by valgrind's callgrind, for the working tree and for each revision named (built from `git
// archive`), one after the other, with each one's difference from the first. CPU time on this project's machines
// moves by 10–15 % between runs of the same code (other tenants of the host share its caches and cores), so a change
// worth 1–3 % cannot be seen in `npm run bench`; an instruction count does not depend on the machine's load, and with
// V8's --predictable (its compilers and garbage collector on the main thread, in a fixed order) runs of the same tree
// agree within about 0.5 %. The count is workerd's whole process: the Worker, every object, SQLite, the disk service
// the run bundle is written to. It measures work, not time: a commit's fsync or a wait costs few instructions.
// Each tree gets a fresh `workerd serve` (the bundle a deploy uploads) under callgrind; INSTRUCTION_WARMUP tasks
// (default 12) are run before the counters are zeroed, then INSTRUCTION_TASKS (default 30), the bench's 3-turn task
// at concurrency 1, each followed by the listing of its bundle as in the bench. Needs valgrind (Debian: apt-get install
// valgrind); callgrind's files are kept under bench/results/ for callgrind_annotate.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { API_KEY } from "./config.ts";
import { startBenchEmulator } from "./emulator-process.ts";
import { runOutpostTask } from "./outpost.ts";
import { buildSelfHosted } from "./self-hosted.ts";
import { fmt, runPool, sleep, table } from "./util.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const log = (line: string) => process.stderr.write(`[profile:instructions] ${line}\n`);
const TASKS = Number(process.env.INSTRUCTION_TASKS ?? "30");
const WARMUP = Number(process.env.INSTRUCTION_WARMUP ?? "12");
/** Under callgrind workerd starts 20–50 times slower than alone. */
const LISTEN_TIMEOUT_MS = 300_000;

interface Tree {
  label: string;
  path: string;
}

function run(command: string, args: readonly string[]): string {
  const result = spawnSync(command, args, { cwd: root, encoding: "utf8" });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")}: ${result.stderr.trim()}`);
  return result.stdout;
}

/** A revision's files, from `git archive`, with the working tree's node_modules (a revision's own may differ). */
function revisionTree(revision: string, into: string): Tree {
  const commit = run("git", ["rev-parse", "--short", `${revision}^{commit}`]).trim();
  mkdirSync(into, { recursive: true });
  const archive = join(into, "..", `${commit}.tar`);
  run("git", ["archive", "--output", archive, commit]);
  run("tar", ["-xf", archive, "-C", into]);
  symlinkSync(join(root, "node_modules"), join(into, "node_modules"), "dir");
  // Revisions before 2026-11-29 served GET /docs's files as static assets, which self-hosting now refuses to leave
  // unserved: the bench's task never asks for them, so the section goes (only under wrangler dev did it cost a task).
  const config = join(into, "wrangler.toml");
  writeFileSync(config, readFileSync(config, "utf8").replace(/^\[assets\]\n(?:[a-z_]+ = .*\n)*/m, ""));
  return { label: `${revision} (${commit})`, path: into };
}

/** Instructions counted in callgrind's dump file (its `totals:` line, else `summary:`). */
function dumpedInstructions(file: string): number {
  const text = readFileSync(file, "utf8");
  const match = /^totals:\s+(\d+)/m.exec(text) ?? /^summary:\s+(\d+)/m.exec(text);
  if (!match?.[1]) throw new Error(`${file}: no totals`);
  return Number(match[1]);
}

async function main(): Promise<void> {
  if (spawnSync("valgrind", ["--version"]).status !== 0) {
    log("valgrind is not installed (Debian: apt-get install valgrind)");
    process.exit(1);
  }
  const work = mkdtempSync(join(tmpdir(), "outpost-instructions-"));
  const results = resolve(root, "bench/results");
  mkdirSync(results, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const trees: Tree[] = process.argv.slice(2).map((revision, i) => revisionTree(revision, join(work, `revision-${i}`)));
  trees.push({ label: "working tree", path: root });
  const emulator = await startBenchEmulator();
  const rows: { label: string; perTask: number }[] = [];
  try {
    for (const [i, tree] of trees.entries()) {
      log(`${tree.label}: building…`);
      const build = await buildSelfHosted({
        root: tree.path,
        vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
      });
      const out = join(results, `callgrind-${stamp}-${i}.out`);
      try {
        const instructions = await build.withServer(
          async (server) => {
            log(`${tree.label}: ${WARMUP} warm-up tasks, then ${TASKS} counted, under callgrind…`);
            await runPool(WARMUP, 1, (k) => runOutpostTask(server.url, `instructions warm-up #${k}`));
            run("callgrind_control", ["--zero", String(server.pid)]);
            await runPool(TASKS, 1, (k) => runOutpostTask(server.url, `instructions #${k}`));
            // What the last task leaves for its object's alarm (its directory report) is counted with it.
            await sleep(2000);
            run("callgrind_control", ["--dump", String(server.pid)]);
            const dumps = readdirSync(results).filter((f) => f.startsWith(`callgrind-${stamp}-${i}.out.`));
            const dump = dumps.sort().at(-1);
            if (!dump) throw new Error(`callgrind wrote no dump for ${tree.label}`);
            return dumpedInstructions(join(results, dump));
          },
          {
            v8Flags: ["--predictable"],
            launcher: {
              command: ["valgrind", "--tool=callgrind", "--smc-check=all-non-file", `--callgrind-out-file=${out}`],
              listenTimeoutMs: LISTEN_TIMEOUT_MS,
            },
          },
        );
        rows.push({ label: tree.label, perTask: instructions / TASKS });
      } finally {
        build.remove();
      }
    }
  } finally {
    await emulator.close();
    rmSync(work, { recursive: true, force: true });
  }
  const first = rows[0]?.perTask ?? Number.NaN;
  console.log(
    `Instructions per bench task (3 model calls, 2 tool calls, and its bundle's listing) in self-hosted Outpost's workerd, counted by callgrind with V8's --predictable, ${TASKS} tasks after ${WARMUP}:`,
  );
  console.log(
    table(
      ["tree", "M instructions/task", "Δ vs first", "Δ %"],
      rows.map((row) => [
        row.label,
        fmt(row.perTask / 1e6, 2),
        fmt((row.perTask - first) / 1e6, 2),
        fmt(((row.perTask - first) / first) * 100, 1),
      ]),
    ),
  );
  console.log(`callgrind's files: ${results}/callgrind-${stamp}-*.out* (callgrind_annotate)`);
}

await main();
