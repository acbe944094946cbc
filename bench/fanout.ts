// The fan-out case of `npm run bench` (issue 14): one parent task that delegates FANOUT_CHILDREN sub-tasks with the
// Task tool in one turn, each child a task in its own Durable Object making one model call. The same tree runs with
// every child at once (max_parallel = FANOUT_CHILDREN) and with one child at a time (max_parallel 1): the same work,
// timed from the POST to the parent's run_finished as the client sees it on the parent's stream. The ratio shows what
// running children side by side saves; CPU per tree, what a tree of eleven objects costs the Worker.
// The agents are the tenant's own (PUT /v1/agents/:name: the bench key is a development key, admin of its tenant),
// so nothing of the benchmark lives in agents/.
import { performance } from "node:perf_hooks";
import { API_KEY, FANOUT_CHILD_TTFT_MS, FANOUT_CHILDREN, FANOUT_TREES } from "./config.ts";
import { httpJson, readSse } from "./http.ts";
import { round, type Summary, summarize } from "./util.ts";
import { cpuMs, type WranglerDev } from "./wrangler.ts";

const CHILD = "bench_fanout_child";
const PARALLEL = "bench_fanout_parallel";
const SEQUENTIAL = "bench_fanout_sequential";
const MARKER = "[outpost-bench-fanout]";
const CHILD_MARKER = "[outpost-bench-fanout-child]";

export interface FanoutResult {
  children: number;
  trees: number;
  childTtftMs: number;
  /** POST → the parent's run_finished at the client, ms. */
  parallelMs: Summary;
  sequentialMs: Summary;
  /** parallel p50 ÷ sequential p50. */
  ratio: number;
  /** The Outpost workerd's CPU per tree (parent and children), ms. */
  parallelCpuMsPerTree: number;
  sequentialCpuMsPerTree: number;
}

/** The emulator's scripts: the parent delegates every part at once, then answers; each child answers once. */
export function fanoutScripts(): unknown[] {
  const tasks = Array.from({ length: FANOUT_CHILDREN }, (_, i) => ({
    type: "tool_use",
    name: "Task",
    input: { agent: CHILD, description: `part ${i + 1}`, prompt: `${CHILD_MARKER} Part ${i + 1}: answer in a line.` },
  }));
  return [
    {
      match: MARKER,
      turns: [
        { content: [{ type: "text", text: "Delegating every part." }, ...tasks] },
        { content: [{ type: "text", text: "Every part is done." }] },
      ],
    },
    {
      match: CHILD_MARKER,
      turns: [{ content: [{ type: "text", text: "This part is done." }], ttft_ms: FANOUT_CHILD_TTFT_MS }],
    },
  ];
}

async function putAgent(baseUrl: string, definition: Record<string, unknown>): Promise<void> {
  const res = await httpJson("PUT", `${baseUrl}/v1/agents/${definition.name}`, { apiKey: API_KEY, body: definition });
  if (res.status !== 201 && res.status !== 200) {
    throw new Error(`PUT /v1/agents/${definition.name}: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  }
}

async function defineAgents(baseUrl: string): Promise<void> {
  await putAgent(baseUrl, {
    name: CHILD,
    description: "Answers one part of a fanned-out request.",
    instructions: "Answer the part you are given in one line.",
    claude: { max_turns: 2 },
  });
  for (const [name, maxParallel] of [
    [PARALLEL, FANOUT_CHILDREN],
    [SEQUENTIAL, 1],
  ] as const) {
    await putAgent(baseUrl, {
      name,
      description: "Splits a request into parts and delegates each.",
      instructions: "Delegate every part with Task, then sum up.",
      claude: { max_turns: 3, subagents: { enabled: true, max_parallel: maxParallel, agents: [CHILD] } },
    });
  }
}

/** One tree: POST the parent, read its stream to its end; ms from the POST to its run_finished frame. */
async function runTree(baseUrl: string, agent: string, label: string): Promise<number> {
  const t0 = performance.now();
  const created = await httpJson("POST", `${baseUrl}/v1/agents/${agent}/tasks`, {
    apiKey: API_KEY,
    body: { input: `${MARKER} ${label}: split this request.` },
  });
  const id = (created.body as { id?: unknown } | null)?.id;
  if (created.status !== 202 || typeof id !== "string") {
    throw new Error(`POST /v1/agents/${agent}/tasks: HTTP ${created.status}: ${JSON.stringify(created.body)}`);
  }
  let finishedAt: number | null = null;
  let delegated = 0;
  await readSse(`${baseUrl}/v1/tasks/${id}/events`, API_KEY, (frame) => {
    if (frame.id === null) return;
    const record = JSON.parse(frame.data) as { event_type: string; task_id?: string };
    // The parent's own events: a stream that carries its children's marks theirs with their task_id.
    if (record.task_id !== undefined && record.task_id !== id) return;
    if (record.event_type === "subagent_finished") delegated++;
    if (record.event_type === "run_finished") finishedAt = frame.arrivedAt;
  });
  if (finishedAt === null) throw new Error(`fan-out task ${id} did not finish with run_finished`);
  if (delegated !== FANOUT_CHILDREN) throw new Error(`fan-out task ${id}: ${delegated} children finished`);
  return (finishedAt as number) - t0;
}

async function measure(dev: WranglerDev, baseUrl: string, agent: string): Promise<{ ms: Summary; cpu: number }> {
  const before = cpuMs(dev.workerPid);
  const times: number[] = [];
  for (let i = 0; i < FANOUT_TREES; i++) times.push(await runTree(baseUrl, agent, `${agent} #${i}`));
  return { ms: summarize(times), cpu: round((cpuMs(dev.workerPid) - before) / FANOUT_TREES) };
}

export async function runFanout(dev: WranglerDev, baseUrl: string): Promise<FanoutResult> {
  await defineAgents(baseUrl);
  // One tree of each, not counted: the first delegation loads the tenant's agents and warms the children's code.
  await runTree(baseUrl, PARALLEL, "warm-up parallel");
  await runTree(baseUrl, SEQUENTIAL, "warm-up sequential");
  const parallel = await measure(dev, baseUrl, PARALLEL);
  const sequential = await measure(dev, baseUrl, SEQUENTIAL);
  return {
    children: FANOUT_CHILDREN,
    trees: FANOUT_TREES,
    childTtftMs: FANOUT_CHILD_TTFT_MS,
    parallelMs: parallel.ms,
    sequentialMs: sequential.ms,
    ratio: round(parallel.ms.p50 / sequential.ms.p50),
    parallelCpuMsPerTree: parallel.cpu,
    sequentialCpuMsPerTree: sequential.cpu,
  };
}
