// Run around every test file (vitest.config.ts setupFiles). Before its first test, each tenant's Durable Object that
// the tests' tasks report to is started. After its last test, the file waits until every directory report its tasks
// owe has been sent: a task's object reports to its tenant's object from its alarm up to the report interval after
// the task's last change (src/task-host/directory-report.ts; OUTPOST_DIRECTORY_REPORT_MS),
// and a report still in flight when the file's worker closes ends the run with vitest's "Closing rpc while "resolve"
// was pending" although every test passed.
import { env } from "cloudflare:workers";
import { afterAll, beforeAll } from "vitest";
import { reportIntervalMs } from "../../src/task-host/directory-report.ts";
import { lastApiCallAt } from "./helpers.ts";

/** The tenants of vitest.config.ts's keys (OUTPOST_API_KEYS, a JSON list of entries with a tenant each). */
const TENANTS = [
  ...new Set((JSON.parse(env.OUTPOST_API_KEYS ?? "[]") as { tenant: string }[]).map((key) => key.tenant)),
];
/** Past the report interval: the alarm's own latency and the report's round trip. */
const MARGIN_MS = 500;

beforeAll(async () => {
  await Promise.all(TENANTS.map((tenant) => env.TENANTS.get(env.TENANTS.idFromName(tenant)).agentList()));
});

afterAll(async () => {
  const wait = lastApiCallAt + reportIntervalMs(env) + MARGIN_MS - Date.now();
  if (lastApiCallAt > 0 && wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
});
