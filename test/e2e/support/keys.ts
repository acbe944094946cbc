// The API keys of the end-to-end deployment (test/e2e/support/global-setup.ts gives wrangler dev their digests, as
// production stores them): an admin of the tenant "e2e", a key of the same tenant that may only read, an admin
// of another tenant, for what must stay apart, and an admin of a tenant of its own for the tests that add agents
// (the tenant's agents are its listing: added under "e2e", they would change what a test running beside lists).
import { createHash } from "node:crypto";

export const E2E_ADMIN_KEY = "e2e-admin-key";
export const E2E_READ_KEY = "e2e-read-key";
export const E2E_OTHER_TENANT_KEY = "e2e-other-tenant-key";
export const E2E_AGENTS_KEY = "e2e-agents-key";
/** An admin of a tenant of its own for `npm run smoke:live` (test/e2e/smoke-live.test.ts), which adds an agent. */
export const E2E_SMOKE_KEY = "e2e-smoke-key";

const sha256 = (key: string) => createHash("sha256").update(key).digest("hex");

/** OUTPOST_API_KEYS for the deployment. */
export function e2eKeyRing(): string {
  return JSON.stringify([
    { id: "e2e-admin", tenant: "e2e", scopes: ["admin"], sha256: sha256(E2E_ADMIN_KEY) },
    { id: "e2e-reader", tenant: "e2e", scopes: ["read"], sha256: sha256(E2E_READ_KEY) },
    { id: "e2e-other", tenant: "e2e-other", scopes: ["admin"], sha256: sha256(E2E_OTHER_TENANT_KEY) },
    { id: "e2e-agents", tenant: "e2e-agents", scopes: ["admin"], sha256: sha256(E2E_AGENTS_KEY) },
    { id: "e2e-smoke", tenant: "e2e-smoke", scopes: ["admin"], sha256: sha256(E2E_SMOKE_KEY) },
  ]);
}
