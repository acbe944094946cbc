// Standard Webhooks signing of callbacks: each tenant's signing secret, derived from OUTPOST_WEBHOOK_SECRET, and the
// headers that sign one POST of a delivery.
import { Webhook } from "standardwebhooks";

/**
 * The Standard Webhooks signing secret of a tenant's callbacks: derived from OUTPOST_WEBHOOK_SECRET, so each tenant
 * verifies with its own secret (GET /v1/tenant shows it to an admin) and none can sign another's callbacks.
 */
export async function tenantSigningSecret(root: string, tenant: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(root),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`outpost-callbacks:${tenant}`)),
  );
  return `whsec_${btoa(String.fromCharCode(...mac))}`;
}

/** The webhook-id, webhook-timestamp and webhook-signature headers of one POST of `body`, sent at `at`. */
export function signatureHeaders(id: string, at: Date, body: string, secret: string): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}
