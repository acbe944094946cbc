// API keys on every /v1 route (POST /v1/hooks excepted: a signature authenticates a webhook). A key is looked up by
// its SHA-256 digest, so the configuration holds no usable key and a lookup's timing says nothing about one. What
// a key may do follows from the method: reading needs `read`, anything that changes a task needs `run`, and the
// admin routes need `admin` (which may do everything).
import { createMiddleware } from "hono/factory";
import { requireScope as requirePrincipalScope } from "../commands/principal.ts";
import { ApiError, ConfigError } from "../errors.ts";
import { sha256Hex } from "../lib/sha256.ts";
import { loadKeyRing, type Scope } from "../tenants/api-keys.ts";
import type { AppEnv } from "./app-env.ts";

export const requireApiKey = createMiddleware<AppEnv>(async (c, next) => {
  let ring: Awaited<ReturnType<typeof loadKeyRing>>;
  try {
    ring = await loadKeyRing(c.env.OUTPOST_API_KEYS);
  } catch (error) {
    console.error("OUTPOST_API_KEYS:", error instanceof ConfigError ? error.message : error);
    throw new ApiError("api_keys_invalid", "The API keys are misconfigured; the operator's logs say how.");
  }
  if (ring.keys.length === 0) {
    throw new ApiError("api_keys_not_configured", "No API keys are configured: set the OUTPOST_API_KEYS secret.");
  }
  const header = c.req.header("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) {
    throw new ApiError("unauthorized", "Send your API key as 'Authorization: Bearer <key>'.", "authorization");
  }
  const key = ring.byDigest.get(await sha256Hex(match[1]));
  if (!key) throw new ApiError("unauthorized", "The API key is not valid.", "authorization");
  // Who did what (e.g. a human decision) is recorded by the key's id, never by the key.
  c.set("apiKeyId", key.id);
  c.set("apiKey", key);
  c.set("tenant", key.tenant);
  await next();
});

/** The scope a request needs by its method: GET and HEAD read; everything else acts. */
export const requireMethodScope = createMiddleware<AppEnv>(async (c, next) => {
  const method = c.req.method;
  requireScope(c.get("apiKey").scopes, method === "GET" || method === "HEAD" ? "read" : "run");
  await next();
});

/** 403 insufficient_scope unless `scopes` include `needed`: the commands' one check (src/commands/principal.ts). */
export function requireScope(scopes: readonly Scope[], needed: Scope): void {
  requirePrincipalScope({ scopes }, needed);
}

/** For the admin routes. */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  requireScope(c.get("apiKey").scopes, "admin");
  await next();
});
