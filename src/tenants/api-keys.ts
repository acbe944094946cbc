// API keys: each belongs to a tenant and carries scopes. OUTPOST_API_KEYS holds them as SHA-256 digests (a JSON
// list), so the configuration never contains a usable key; a plain comma-separated list of keys is still accepted
// for local development (each such key is an admin of the "default" tenant).
import { z } from "zod";
import { ConfigError } from "../errors.ts";
import { sha256Hex } from "../lib/sha256.ts";

export const SCOPES = ["read", "run", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** Tenant names are part of object names and URLs: lowercase letters, digits and dashes. */
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9-]{0,39}$/;
export const DEFAULT_TENANT = "default";

const KeyEntry = z.strictObject({
  /** Shown in decisions and the key list; never the key. Defaults to key_<first 12 hex digits of the digest>. */
  id: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/)
    .optional(),
  tenant: z.string().regex(TENANT_PATTERN),
  scopes: z.array(z.enum(SCOPES)).min(1),
  /** SHA-256 of the key, hex. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Tasks this key may create per minute; OUTPOST_RATE_LIMIT_PER_MINUTE otherwise. */
  rate_limit_per_minute: z.number().int().min(1).max(100_000).optional(),
});

export interface ApiKey {
  id: string;
  tenant: string;
  scopes: readonly Scope[];
  rateLimitPerMinute: number | null;
}

export interface KeyRing {
  /** By hex SHA-256 of the key. */
  byDigest: ReadonlyMap<string, ApiKey>;
  keys: readonly ApiKey[];
}

function fingerprintId(digest: string): string {
  return `key_${digest.slice(0, 12)}`;
}

let cached: { source: string; ring: Promise<KeyRing> } | undefined;

/** The key ring for this OUTPOST_API_KEYS value (parsed once per isolate). A broken value is a ConfigError. */
export function loadKeyRing(source: string | undefined): Promise<KeyRing> {
  const value = source ?? "";
  if (cached?.source !== value) cached = { source: value, ring: parseKeyRing(value) };
  return cached.ring;
}

async function parseKeyRing(source: string): Promise<KeyRing> {
  const trimmed = source.trim();
  const keys: (ApiKey & { digest: string })[] = [];
  if (trimmed.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (cause) {
      throw new ConfigError("OUTPOST_API_KEYS is not valid JSON.", { cause });
    }
    const result = z.array(KeyEntry).safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0];
      // Name the place, never the value: the list may sit next to real secrets in logs.
      throw new ConfigError(`OUTPOST_API_KEYS[${issue?.path.join(".") ?? ""}]: ${issue?.message ?? "invalid"}`);
    }
    for (const entry of result.data) {
      keys.push({
        id: entry.id ?? fingerprintId(entry.sha256),
        tenant: entry.tenant,
        scopes: entry.scopes,
        rateLimitPerMinute: entry.rate_limit_per_minute ?? null,
        digest: entry.sha256,
      });
    }
  } else {
    for (const key of trimmed.split(",").map((k) => k.trim())) {
      if (!key) continue;
      const digest = await sha256Hex(key);
      keys.push({
        id: fingerprintId(digest),
        tenant: DEFAULT_TENANT,
        scopes: ["admin"],
        rateLimitPerMinute: null,
        digest,
      });
    }
  }
  const byDigest = new Map<string, ApiKey>();
  const ids = new Set<string>();
  for (const { digest, ...key } of keys) {
    if (byDigest.has(digest)) throw new ConfigError(`OUTPOST_API_KEYS lists the key ${key.id} twice.`);
    if (ids.has(key.id)) throw new ConfigError(`OUTPOST_API_KEYS: two keys have the id ${key.id}.`);
    byDigest.set(digest, key);
    ids.add(key.id);
  }
  return { byDigest, keys: [...byDigest.values()] };
}

/** Whether a key with `scopes` may do what `needed` allows; admin may do everything. */
export function hasScope(scopes: readonly Scope[], needed: Scope): boolean {
  return scopes.includes(needed) || scopes.includes("admin");
}
