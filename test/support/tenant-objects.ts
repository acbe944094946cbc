// Run before every test file (vitest.config.ts setupFiles): each tenant's Durable Object that the tests' tasks report
// to is started before the file's first test. A task's object reports to its tenant's object from its alarm, up to a
// second after the task's last change (src/task-host/directory-report.ts), so in a file whose tests never call the
// tenant's object themselves, the first call came from such an alarm, often after the file's last test: the worker
// then closed while workerd still resolved the object's module ("Closing rpc while "resolve" was pending").
import { env } from "cloudflare:workers";
import { beforeAll } from "vitest";

/** The tenants of vitest.config.ts's keys. */
const TENANTS = ["default", "beta", "limits", "lister", "authors"];

beforeAll(async () => {
  await Promise.all(TENANTS.map((tenant) => env.TENANTS.get(env.TENANTS.idFromName(tenant)).agentList()));
});
