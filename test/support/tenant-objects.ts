// Run before every test file (vitest.config.ts setupFiles): each tenant's Durable Object that the tests' tasks report
// to is started before the file's first test, so a file's first call to it never comes from a task's alarm (the
// directory report, src/task-host/directory-report.ts, up to a second after a task's last change) after the file's last
// test, while the file tears down.
import { env } from "cloudflare:workers";
import { beforeAll } from "vitest";

/** The tenants of vitest.config.ts's keys. */
const TENANTS = ["default", "beta", "limits", "lister", "authors"];

beforeAll(async () => {
  await Promise.all(TENANTS.map((tenant) => env.TENANTS.get(env.TENANTS.idFromName(tenant)).agentList()));
});
