// The memory phase: hold many tasks in flight (their model call never answers), read the resident memory of
// wrangler's processes while they wait, then cancel every task. wrangler dev's workerd grows with every request it
// serves, whatever the request (about 35 KiB for a Worker that only answers "ok"), so a control follows: as many
// requests that leave nothing behind as the phase made, to tell the tasks' memory from the requests'.
import { readFileSync } from "node:fs";
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

/** Self-hosted (`npm start`): one workerd, no dev proxy and no wrangler. */
export function selfHostedSnapshot(pid: number): RssSnapshot {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN);
  const rssMiB = round(rssKiB / 1024, 1);
  return {
    workerMiB: rssMiB,
    proxyMiB: 0,
    workerdMiB: rssMiB,
    totalMiB: rssMiB,
    processes: [{ pid, name: "workerd (npm start)", rssMiB }],
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
  /** HTTP requests the phase made until the in-flight reading: the tasks' POSTs and the GETs that polled them. */
  requests: number;
  /**
   * The control, after the phase: as many GETs of one unknown task as the phase made requests, which create nothing
   * that stays (one object, answering 404). What wrangler dev's workerd grows by per request, whatever it serves.
   */
  control: { requests: number; before: RssSnapshot; after: RssSnapshot; perRequestKiB: number };
  /** perTaskKiB less the control's growth for the phase's requests: what the in-flight tasks themselves hold. */
  netPerTaskKiB: number;
}

export async function memoryPhase(options: {
  baseUrl: string;
  /** Reads the processes' memory: rssSnapshot for wrangler dev, selfHostedSnapshot for `npm start`. */
  snapshot: () => RssSnapshot;
  tasks: number;
}): Promise<MemoryResult> {
  const { baseUrl, snapshot, tasks } = options;
  const idle = snapshot();
  const started = Date.now();
  let requests = tasks;
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
      requests += pending.length;
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
    const inFlight = snapshot();
    await cancelAll(baseUrl, ids);
    await sleep(1000);
    const afterCancel = snapshot();
    const control = await requestGrowth(baseUrl, snapshot, requests);
    const grossKiB = (inFlight.workerMiB - idle.workerMiB) * 1024;
    return {
      tasks,
      secondsToAllInFlight: round(secondsToAllInFlight, 1),
      idle,
      inFlight,
      afterCancel,
      perTaskKiB: round(grossKiB / tasks, 0),
      requests,
      control,
      netPerTaskKiB: round((grossKiB - control.perRequestKiB * requests) / tasks, 0),
    };
  } catch (error) {
    await cancelAll(baseUrl, ids).catch(() => {});
    throw error;
  }
}

/** The control: `requests` GETs of one task id that does not exist, at the phase's concurrency. */
async function requestGrowth(
  baseUrl: string,
  snapshot: () => RssSnapshot,
  requests: number,
): Promise<MemoryResult["control"]> {
  const unknown = crypto.randomUUID();
  const get = () => httpJson("GET", `${baseUrl}/v1/tasks/${unknown}`, { apiKey: API_KEY });
  // The one object it creates, created before the first reading.
  const first = await get();
  if (first.status !== 404) throw new Error(`memory control: GET of an unknown task: HTTP ${first.status}`);
  await sleep(1000);
  const before = snapshot();
  await runPool(requests, 20, async () => {
    const res = await get();
    if (res.status !== 404) throw new Error(`memory control: GET of an unknown task: HTTP ${res.status}`);
  });
  await sleep(1000);
  const after = snapshot();
  return {
    requests,
    before,
    after,
    perRequestKiB: round(((after.workerMiB - before.workerMiB) * 1024) / requests, 1),
  };
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
