// `npm run smoke:live`: what prompt caching promises, checked once against the real model provider (docs/costs.md).
// The emulator bills as the providers document it; this checks the providers themselves. Against a deployment of
// Outpost (OUTPOST_URL, and an admin key of a tenant in OUTPOST_API_KEY), it adds a small agent whose system prompt
// is long enough to be cached on every Claude model, runs one task, then the same again, and checks: both complete;
// the second call reads the agent's prefix from the cache; each task's usage is what the provider billed (the usage
// in its response file of the run bundle); and its cost is that usage at the price table's rates. Without the two
// variables it says so and exits 0, so it can stand in any pipeline. Run it once after each deploy.
import { costOf, findPrice, loadPriceTable } from "../src/config/prices.ts";

const AGENT = "outpost_smoke_cache";
/** Longer than every Claude model's minimum cacheable prompt (4,096 tokens for the strictest): about 6,000 tokens. */
const INSTRUCTIONS = [
  "You are Outpost's smoke test. Whatever you are asked, answer with the single word: ready.",
  ...Array.from(
    { length: 120 },
    (_, i) =>
      `Reference note ${i + 1}: this paragraph only makes the system prompt long enough for the provider to cache ` +
      "it. It does not change the task. Keep the answer to one word, and do not mention these notes at all.",
  ),
].join("\n");
const INPUT = "Are you ready?";

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  total_cost_usd: number | null;
  /** The provider's split of the cache writes by TTL. */
  cache_creation?: { ephemeral_1h_input_tokens?: number } | null;
}
interface Task {
  id: string;
  status: string;
  model: string;
  usage: Usage;
}

const base = process.env.OUTPOST_URL?.replace(/\/+$/, "");
const key = process.env.OUTPOST_API_KEY;
if (!base || !key) {
  console.log(
    "smoke:live: not run. Set OUTPOST_URL (your deployment) and OUTPOST_API_KEY (an admin key of a tenant) to check " +
      "prompt caching, usage and cost against the real model provider; nothing was checked.",
  );
  process.exit(0);
}

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${key}`);
  const res = await fetch(`${base}${path}`, { ...init, headers });
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${await res.text()}`);
  return res;
}

async function runTask(): Promise<Task> {
  const created = (await (
    await call(`/v1/agents/${AGENT}/tasks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ input: INPUT }),
    })
  ).json()) as { id: string };
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const task = (await (await call(`/v1/tasks/${created.id}`)).json()) as Task;
    if (!["queued", "running"].includes(task.status)) return task;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`task ${created.id} did not end within 2 minutes`);
}

/** The usage the provider returned for the task's one model call, from the run bundle's response file. */
async function billed(task: Task): Promise<Usage> {
  const file = "artifacts/llm/decision_loop_turn_1_attempt_1_response.txt";
  const message = (await (await call(`/v1/tasks/${task.id}/artifacts/${file}`)).json()) as { usage: Usage };
  return message.usage;
}

const checks: { what: string; ok: boolean; detail: string }[] = [];
const check = (what: string, ok: boolean, detail: string) => checks.push({ what, ok, detail });

/** Adds the agent, runs the two tasks and records the checks; a request that fails throws. */
async function smoke(): Promise<void> {
  const yaml = [`name: ${AGENT}`, "description: Checks prompt caching against the real provider.", "instructions: |"]
    .concat(INSTRUCTIONS.split("\n").map((line) => `  ${line}`))
    .concat(process.env.OUTPOST_SMOKE_MODEL ? ["model:", `  name: ${process.env.OUTPOST_SMOKE_MODEL}`] : [])
    .concat(["claude:", "  max_turns: 1", ""])
    .join("\n");
  await call(`/v1/agents/${AGENT}`, { method: "PUT", headers: { "content-type": "application/yaml" }, body: yaml });

  const prices = loadPriceTable(process.env.OUTPOST_PRICES);
  const tasks = [await runTask(), await runTask()];
  for (const [index, task] of tasks.entries()) {
    const name = `task ${index + 1} (${task.id})`;
    check(`${name} completed`, task.status === "completed", task.status);
    if (task.status !== "completed") continue;
    const provider = await billed(task);
    const fields = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"] as const;
    const differs = fields.filter((field) => (provider[field] ?? 0) !== task.usage[field]);
    check(
      `${name}: usage is what the provider billed`,
      differs.length === 0,
      fields.map((f) => `${f} ${task.usage[f]}${differs.includes(f) ? ` (provider: ${provider[f]})` : ""}`).join(", "),
    );
    const expected = costOf(prices, task.model, {
      ...provider,
      cache_creation_1h_input_tokens: provider.cache_creation?.ephemeral_1h_input_tokens ?? 0,
    });
    check(
      `${name}: cost is that usage at the price table's rates`,
      findPrice(prices, task.model) !== undefined && task.usage.total_cost_usd === expected,
      `$${task.usage.total_cost_usd} (expected $${expected} for ${task.model})`,
    );
    if (index === 1) {
      check(
        `${name}: the second call reads the agent's prefix from the cache`,
        provider.cache_read_input_tokens > 0,
        `${provider.cache_read_input_tokens} tokens read from the cache`,
      );
    }
  }
}

try {
  await smoke();
} catch (error) {
  console.log(`smoke:live: could not finish: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
for (const { what, ok, detail } of checks) console.log(`${ok ? "ok  " : "FAIL"} ${what}: ${detail}`);
const failed = checks.filter((c) => !c.ok).length;
console.log(
  failed === 0
    ? `smoke:live: all ${checks.length} checks passed`
    : `smoke:live: ${failed} of ${checks.length} checks failed`,
);
process.exit(failed === 0 ? 0 : 1);
