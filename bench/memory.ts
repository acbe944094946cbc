// The memory phase: hold many tasks in flight (their model call never answers), read the resident memory of
// wrangler's processes while they wait, then cancel every task.
import { AGENT, API_KEY, STALL_MARKER } from "./config.ts";
import { httpJson } from "./http.ts";
import { round, runPool, sleep } from "./util.ts";
import { groupProcesses, workerdRole } from "./wrangler.ts";

export interface RssSnapshot {
  /** The workerd running Outpost (the Worker and every Durable Object). */
  workerMiB: number;
  /** wrangler's dev proxy, a second workerd (not part of a deployment). */
  proxyMiB: number;
  /** Both workerd processes. */
  workerdMiB: number;
  /** Every process in wrangler's group: wrangler's Node processes, esbuild, both workerd. */
  totalMiB: number;
  processes: { pid: number; name: string; rssMiB: number }[];
}

export function rssSnapshot(pgid: number, publicPort: number): RssSnapshot {
  const processes = groupProcesses(pgid).map((p) => ({
    pid: p.pid,
    name: p.comm === "workerd" ? `workerd (${workerdRole(p.pid, publicPort)})` : p.comm,
    rssMiB: round(p.rssKiB / 1024, 1),
  }));
  const sum = (filter: (name: string) => boolean) =>
    round(
      processes.filter((p) => filter(p.name)).reduce((s, p) => s + p.rssMiB, 0),
      1,
    );
  return {
    workerMiB: sum((n) => n === "workerd (worker)"),
    proxyMiB: sum((n) => n === "workerd (proxy)"),
    workerdMiB: sum((n) => n.startsWith("workerd")),
    totalMiB: sum(() => true),
    processes,
  };
}

export interface MemoryResult {
  tasks: number;
  /** Seconds from the first POST until every task had sent its model request. */
  secondsToAllInFlight: number;
  idle: RssSnapshot;
  inFlight: RssSnapshot;
  afterCancel: RssSnapshot;
  /** (in flight − idle) / tasks, for the workerd running Outpost. */
  perTaskKiB: number;
}

export async function memoryPhase(options: {
  baseUrl: string;
  pgid: number;
  publicPort: number;
  tasks: number;
}): Promise<MemoryResult> {
  const { baseUrl, pgid, publicPort, tasks } = options;
  const idle = rssSnapshot(pgid, publicPort);
  const started = Date.now();
  const ids = await runPool(tasks, 20, async (i) => {
    const res = await httpJson("POST", `${baseUrl}/v1/agents/${AGENT}/tasks`, {
      apiKey: API_KEY,
      body: { input: `${STALL_MARKER} stalled task ${i}: plan a small project.` },
    });
    const id = (res.body as { id?: unknown } | null)?.id;
    if (res.status !== 202 || typeof id !== "string") {
      throw new Error(`memory phase: POST task ${i}: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
    }
    return id;
  });

  try {
    // In flight = running, with llm_request_sent (seq 3, after task_created and run_started) in its log.
    let pending = ids;
    const deadline = Date.now() + 60_000;
    while (pending.length > 0) {
      if (Date.now() > deadline)
        throw new Error(`memory phase: ${pending.length} tasks never sent their model request`);
      const states = await runPool(pending.length, 20, async (i) => {
        const id = pending[i] as string;
        const res = await httpJson("GET", `${baseUrl}/v1/tasks/${id}`, { apiKey: API_KEY });
        const body = res.body as { status?: string; last_event_seq?: number } | null;
        if (body?.status !== "running" && body?.status !== "pending") {
          throw new Error(`memory phase: task ${id} is ${body?.status ?? `HTTP ${res.status}`} instead of in flight`);
        }
        return body.status === "running" && (body.last_event_seq ?? 0) >= 3;
      });
      pending = pending.filter((_, i) => !states[i]);
      if (pending.length > 0) await sleep(250);
    }
    const secondsToAllInFlight = (Date.now() - started) / 1000;
    // Let the outgoing model requests settle before reading memory.
    await sleep(1000);
    const inFlight = rssSnapshot(pgid, publicPort);
    await cancelAll(baseUrl, ids);
    await sleep(1000);
    const afterCancel = rssSnapshot(pgid, publicPort);
    return {
      tasks,
      secondsToAllInFlight: round(secondsToAllInFlight, 1),
      idle,
      inFlight,
      afterCancel,
      perTaskKiB: round(((inFlight.workerMiB - idle.workerMiB) * 1024) / tasks, 0),
    };
  } catch (error) {
    await cancelAll(baseUrl, ids).catch(() => {});
    throw error;
  }
}

async function cancelAll(baseUrl: string, ids: readonly string[]): Promise<void> {
  const failures: string[] = [];
  await runPool(ids.length, 20, async (i) => {
    const id = ids[i] as string;
    const res = await httpJson("POST", `${baseUrl}/v1/tasks/${id}/cancel`, { apiKey: API_KEY });
    const status = (res.body as { status?: string } | null)?.status;
    if (res.status !== 200 || status !== "canceled") failures.push(`${id}: HTTP ${res.status} ${status ?? ""}`);
  });
  if (failures.length > 0) {
    throw new Error(`memory phase: ${failures.length} cancels failed, e.g. ${failures.slice(0, 3).join("; ")}`);
  }
}
