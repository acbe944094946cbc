// GET /v1/tenant (admin): who the key belongs to, the tenant's keys (ids and scopes, never digests), and the secret
// that verifies the tenant's signed callbacks.
import { Hono } from "hono";
import { tenantSigningSecret } from "../../callbacks/signing.ts";
import { loadKeyRing } from "../../tenants/api-keys.ts";
import type { AppEnv } from "../app-env.ts";
import { requireAdmin } from "../auth.ts";
import type { TenantView } from "../responses.ts";
import { rateLimitPerMinute } from "../task-creation.ts";

export const tenantRoutes = new Hono<AppEnv>().get("/", requireAdmin, async (c) => {
  const tenant = c.get("tenant");
  const ring = await loadKeyRing(c.env.OUTPOST_API_KEYS);
  const root = c.env.OUTPOST_WEBHOOK_SECRET;
  return c.json({
    tenant,
    key_id: c.get("apiKeyId"),
    keys: ring.keys
      .filter((k) => k.tenant === tenant)
      .map((k) => ({
        id: k.id,
        scopes: [...k.scopes],
        rate_limit_per_minute: k.rateLimitPerMinute,
      })),
    default_rate_limit_per_minute: rateLimitPerMinute(c, null),
    // Standard Webhooks: verify callbacks with this (null when the deployment does not sign callbacks).
    webhook_signing_secret: root ? await tenantSigningSecret(root, tenant) : null,
  } satisfies TenantView);
});
