// Bearer API keys on every /v1 route. Keys come from the OUTPOST_API_KEYS secret (comma-separated); they are
// compared as SHA-256 digests in constant time so response timing says nothing about a key.
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";

const encoder = new TextEncoder();

async function digest(value: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(value));
}

export const requireApiKey = createMiddleware<AppEnv>(async (c, next) => {
  const configured = (c.env.OUTPOST_API_KEYS ?? "")
    .split(",")
    .map((k) => k.trim())
    .filter((k) => k.length > 0);
  if (configured.length === 0) {
    throw new ApiError(503, "api_keys_not_configured", "No API keys are configured: set the OUTPOST_API_KEYS secret.");
  }
  const header = c.req.header("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) {
    throw new ApiError(401, "unauthorized", "Send your API key as 'Authorization: Bearer <key>'.", "authorization");
  }
  const presented = await digest(match[1]);
  // Who did what (e.g. a human decision) is recorded by this fingerprint, never by the key.
  c.set(
    "apiKeyId",
    `key_${[...new Uint8Array(presented).slice(0, 6)].map((b) => b.toString(16).padStart(2, "0")).join("")}`,
  );
  let ok = false;
  for (const key of configured) {
    // Compare against every key so the time taken does not depend on which one matched.
    if (crypto.subtle.timingSafeEqual(presented, await digest(key))) ok = true;
  }
  if (!ok) throw new ApiError(401, "unauthorized", "The API key is not valid.", "authorization");
  await next();
});
