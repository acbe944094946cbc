// A Google service account's OAuth access token, made in the Worker with WebCrypto: the account's JSON key (from a
// Worker secret) signs a JWT (RS256) that the account's token endpoint exchanges for an access token (RFC 7523, what
// google-auth-library's JWT client does), kept per isolate until five minutes before it expires.
import { z } from "zod";
import { ProviderNotConfiguredError } from "../errors.ts";
import { checkOutboundUrl, type OutboundPolicy } from "../net/outbound.ts";

/** The scope Vertex AI needs. */
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
/** A token is refreshed this long before it expires, so no call starts with one about to lapse. */
const REFRESH_MARGIN_MS = 5 * 60_000;
/** Lifetime asked of Google, its maximum. */
const JWT_LIFETIME_S = 3600;

/** The fields of a service account's JSON key that the exchange needs. */
const ServiceAccountSchema = z.object({
  client_email: z.string().min(1),
  private_key: z.string().includes("PRIVATE KEY"),
  private_key_id: z.string().optional(),
  project_id: z.string().optional(),
  token_uri: z.url().default("https://oauth2.googleapis.com/token"),
});
export type ServiceAccount = z.output<typeof ServiceAccountSchema>;

/** The service account in the secret `secretName`, or a ProviderNotConfiguredError that names it (never its value). */
export function parseServiceAccount(secretName: string, json: string): ServiceAccount {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    raw = undefined;
  }
  const parsed = ServiceAccountSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new ProviderNotConfiguredError(
    "anthropic",
    `The Worker secret ${secretName} is not a service account's JSON key (with client_email, private_key and token_uri).`,
  );
}

/** What the token endpoint answered when it refused the account: the reason, never the assertion. */
export class TokenRefusedError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const cache = new Map<string, { token: string; expiresAt: number }>();

/**
 * An access token for `account`: the cached one while it has more than REFRESH_MARGIN_MS left, else a new one. A
 * refusal by the token endpoint is a TokenRefusedError; a failure to reach it is thrown as the fetch threw it.
 */
export async function accessToken(account: ServiceAccount, outbound: OutboundPolicy): Promise<string> {
  const key = `${account.token_uri}\n${account.client_email}\n${account.private_key_id ?? ""}\n${await sha256(account.private_key)}`;
  const cached = cache.get(key);
  if (cached && cached.expiresAt - Date.now() > REFRESH_MARGIN_MS) return cached.token;
  const tokenUri = checkOutboundUrl(account.token_uri, outbound).href;
  const response = await fetch(tokenUri, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
      assertion: await signedAssertion(account, tokenUri),
    }),
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof body.access_token !== "string") {
    const reason = [body.error, body.error_description].filter((part) => typeof part === "string").join(": ");
    throw new TokenRefusedError(response.status, reason || `HTTP ${response.status}`);
  }
  const expiresIn = typeof body.expires_in === "number" ? body.expires_in : JWT_LIFETIME_S;
  cache.set(key, { token: body.access_token, expiresAt: Date.now() + expiresIn * 1000 });
  return body.access_token;
}

async function signedAssertion(account: ServiceAccount, audience: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const header = { alg: "RS256", typ: "JWT", ...(account.private_key_id ? { kid: account.private_key_id } : {}) };
  const claims = {
    iss: account.client_email,
    scope: CLOUD_PLATFORM_SCOPE,
    aud: audience,
    iat: now,
    exp: now + JWT_LIFETIME_S,
  };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  const key = await crypto.subtle.importKey(
    "pkcs8",
    pemToDer(account.private_key),
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signature = await crypto.subtle.sign("RSASSA-PKCS1-v1_5", key, new TextEncoder().encode(input));
  return `${input}.${base64url(new Uint8Array(signature))}`;
}

function pemToDer(pem: string): ArrayBuffer {
  const base64 = pem.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)).buffer;
}

function base64url(data: string | Uint8Array): string {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}
