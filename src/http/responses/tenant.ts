// The tenant: GET /v1/tenant.

import { z } from "zod";
import { SCOPES } from "../../tenants/api-keys.ts";

// ---- The tenant --------------------------------------------------------------------------------------------------

/** GET /v1/tenant (admin): who the key belongs to, the tenant's keys and its callback signing secret. */
export const TenantSchema = z.strictObject({
  tenant: z.string(),
  /** The request's key: its configured id, or key_<12 hex digits of its digest>. */
  key_id: z.string(),
  /** The tenant's keys: ids and scopes, never digests. */
  keys: z.array(
    z.strictObject({
      id: z.string(),
      scopes: z.array(z.enum(SCOPES)),
      /** The key's own limit on task creations a minute; null: the deployment's. */
      rate_limit_per_minute: z.number().int().positive().nullable(),
    }),
  ),
  default_rate_limit_per_minute: z.number().int().positive(),
  /** Standard Webhooks: verify callbacks with this; null when the deployment does not sign callbacks. */
  webhook_signing_secret: z.string().nullable(),
});
export type TenantView = z.infer<typeof TenantSchema>;
