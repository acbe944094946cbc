// `npm run bench:console`: how fast the web console opens a big run. Starts the model emulator and `wrangler dev`,
// runs one task of about 5,000 events (a runtime agent whose scripted turns each call TodoWrite many times over), then
// opens its page in headless Chromium (Debian's /usr/bin/chromium through playwright-core) several times, each in a
// fresh page with the key already in sessionStorage, and reports in the page's own clock (ms since navigation start):
// the first timeline row painted, every event rendered (the timeline's data-seq reaches the task's last event), the
// longest main-thread task while loading (PerformanceObserver longtask), and, once loaded, how long a click on the
// Files tab takes to show the file browser (to the next frame). Prints a table and writes bench/results/console.json.
// A measurement, not a test: it asserts nothing about the figures.
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startEmulator } from "../emulator/server.ts";
import { launchChromium } from "./chromium.ts";
import { httpJson } from "./http.ts";
import { fmt, table } from "./util.ts";
import { startWrangler } from "./wrangler.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const log = (line: string) => process.stderr.write(`[bench:console] ${line}\n`);

const API_KEY = "bench-console-key";
const AGENT = "console_bench";
const MARKER = "[outpost-bench-console]";
/** Model turns that call tools, and TodoWrite calls in each: each call is 3 events (started, list updated, completed). */
const TOOL_TURNS = 20;
const CALLS_PER_TURN = 82;
const RUNS = 5;

/** The little of the page's globals that the wait below reads (this file is type-checked without the DOM's types). */
interface PageGlobal {
  document: { querySelector(selector: string): { getAttribute(name: string): string | null } | null };
}

interface Sample {
  firstRowMs: number;
  allEventsMs: number;
  longestTaskMs: number;
  clickToFilesMs: number;
}

function scriptTurns(): unknown[] {
  const turns: unknown[] = [];
  for (let turn = 1; turn <= TOOL_TURNS; turn++) {
    const content: unknown[] = [{ type: "text", text: `Turn ${turn}: writing ${CALLS_PER_TURN} task lists.` }];
    for (let call = 0; call < CALLS_PER_TURN; call++) {
      content.push({
        type: "tool_use",
        name: "TodoWrite",
        input: { todos: [{ content: `step ${turn}.${call} ${"detail ".repeat(call % 7)}`, status: "pending" }] },
      });
    }
    turns.push({ content });
  }
  turns.push({ content: [{ type: "text", text: "All the lists are written." }] });
  return turns;
}

async function main(): Promise<void> {
  const emulator = await startEmulator({ quiet: true });
  const dev = await startWrangler({
    root,
    vars: { ANTHROPIC_BASE_URL: emulator.url, OUTPOST_API_KEYS: API_KEY, OUTPOST_RATE_LIMIT_PER_MINUTE: "1000000" },
  });
  log(`wrangler dev at ${dev.url}`);
  const browser = await launchChromium();
  try {
    const put = await httpJson("PUT", `${dev.url}/v1/agents/${AGENT}`, {
      apiKey: API_KEY,
      body: {
        name: AGENT,
        description: "Writes many task lists (the console benchmark's big run).",
        instructions: "Write the task lists you are asked for.",
        claude: { allowed_tools: ["TodoWrite"], max_turns: TOOL_TURNS + 1 },
      },
    });
    if (put.status !== 201 && put.status !== 200)
      throw new Error(`PUT agent: ${put.status} ${JSON.stringify(put.body)}`);
    const scripted = await httpJson("POST", `${emulator.url}/_emulator/scripts`, {
      body: { match: MARKER, turns: scriptTurns() },
    });
    if (scripted.status !== 201) throw new Error(`emulator script: ${scripted.status}`);
    const created = await httpJson("POST", `${dev.url}/v1/agents/${AGENT}/tasks`, {
      apiKey: API_KEY,
      body: { input: `${MARKER} Write the lists.` },
    });
    const id = (created.body as { id: string }).id;
    let task = { status: "pending", last_event_seq: 0 };
    for (let i = 0; i < 20 && !["completed", "failed", "canceled"].includes(task.status); i++) {
      task = (await httpJson("GET", `${dev.url}/v1/tasks/${id}?wait=60`, { apiKey: API_KEY, timeoutMs: 70_000 }))
        .body as typeof task;
    }
    if (task.status !== "completed") throw new Error(`the big run ended ${task.status}`);
    const events = task.last_event_seq;
    log(`task ${id}: ${events} events`);

    const samples: Sample[] = [];
    // Run 0 warms up (wrangler's first requests compile the Worker; Chromium's first page loads its caches): not kept.
    for (let run = 0; run <= RUNS; run++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      // Browser-side code as text: this file is type-checked without the DOM's types.
      await page.addInitScript(`
        sessionStorage.setItem("outpost.apiKey", ${JSON.stringify(API_KEY)});
        window.__longest = 0;
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) window.__longest = Math.max(window.__longest, entry.duration);
        }).observe({ type: "longtask", buffered: true });
        new MutationObserver((_, observer) => {
          if (document.querySelector(".timeline .ev")) {
            window.__firstRow = performance.now();
            observer.disconnect();
          }
        }).observe(document, { childList: true, subtree: true });
      `);
      await page.goto(`${dev.url}/console/tasks/${id}`);
      // A function, not a string: the page's Content-Security-Policy forbids eval, which a string predicate needs.
      await page.waitForFunction(
        (seq) =>
          (globalThis as unknown as PageGlobal).document.querySelector(".timeline")?.getAttribute("data-seq") === seq,
        String(events),
        { timeout: 60_000, polling: "raf" },
      );
      const loaded = (await page.evaluate(
        "({ allEventsMs: performance.now(), firstRowMs: window.__firstRow, longestTaskMs: window.__longest })",
      )) as Omit<Sample, "clickToFilesMs">;
      const clickToFilesMs = (await page.evaluate(`new Promise((done) => {
        const tab = [...document.querySelectorAll(".tabs button")].find((b) => b.textContent === "Files");
        const started = performance.now();
        tab.click();
        requestAnimationFrame(() => setTimeout(() => done(performance.now() - started), 0));
      })`)) as number;
      if (run > 0) samples.push({ ...loaded, clickToFilesMs });
      log(
        `${run === 0 ? "warm-up" : `run ${run}`}: all ${events} events rendered at ${Math.round(loaded.allEventsMs)} ms`,
      );
      await context.close();
    }
    const median = (pick: (s: Sample) => number) => {
      const sorted = samples.map(pick).sort((a, b) => a - b);
      return Math.round(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN);
    };
    const result = {
      events,
      runs: RUNS,
      /** The machine's 1-minute load average at the end: the figures are only comparable at a similar load. */
      loadAverage: Math.round((loadavg()[0] ?? 0) * 10) / 10,
      best: { allEventsMs: Math.round(Math.min(...samples.map((s) => s.allEventsMs))) },
      median: {
        firstRowMs: median((s) => s.firstRowMs),
        allEventsMs: median((s) => s.allEventsMs),
        longestTaskMs: median((s) => s.longestTaskMs),
        clickToFilesMs: median((s) => s.clickToFilesMs),
      },
      samples,
    };
    console.log(
      table(
        [`measure (median of ${RUNS} runs, ms since navigation start; load average ${result.loadAverage})`, "ms"],
        [
          ["first timeline row painted", fmt(result.median.firstRowMs, 0)],
          [`all ${events} events rendered`, fmt(result.median.allEventsMs, 0)],
          [`all ${events} events rendered, best run`, fmt(result.best.allEventsMs, 0)],
          ["longest main-thread task while loading", fmt(result.median.longestTaskMs, 0)],
          ["click on Files → next frame, after loading", fmt(result.median.clickToFilesMs, 0)],
        ],
      ),
    );
    mkdirSync(resolve(root, "bench/results"), { recursive: true });
    writeFileSync(resolve(root, "bench/results/console.json"), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await browser.close();
    await dev.stop();
    await emulator.close();
  }
}

await main();
