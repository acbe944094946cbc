// The browser origins the deployment serves (OUTPOST_ALLOWED_ORIGINS): the one allow-list that /mcp checks a
// request's Origin against (DNS rebinding: a page of another site that reaches this server through a name it
// controls carries its own Origin), and that the console and browser clients will use for CORS. None by default. A
// request without Origin is not a browser's cross-origin request, and passes.
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";

/** The origins allowed, as browsers serialize them, and the positions of the entries that are not origins. */
export interface AllowedOrigins {
  origins: ReadonlySet<string>;
  invalid: readonly number[];
}

let cached: { source: string; parsed: AllowedOrigins } | undefined;

/**
 * OUTPOST_ALLOWED_ORIGINS read: comma-separated `scheme://host[:port]` (http or https), each normalized as a browser
 * sends it (lower-case host, no default port, no trailing slash). An entry that is not one (a path, another scheme,
 * a wildcard, `null`) allows nothing and is reported by its position.
 */
export function allowedOrigins(source: string | undefined): AllowedOrigins {
  const value = source ?? "";
  if (cached?.source === value) return cached.parsed;
  const origins = new Set<string>();
  const invalid: number[] = [];
  const entries = value.trim() === "" ? [] : value.split(",").map((entry) => entry.trim());
  entries.forEach((entry, index) => {
    const origin = originOf(entry);
    if (origin === null) invalid.push(index);
    else origins.add(origin);
  });
  const parsed = { origins, invalid };
  cached = { source: value, parsed };
  return parsed;
}

function originOf(entry: string): string | null {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return null;
  }
  const bare = url.pathname === "/" && url.search === "" && url.hash === "" && !url.username && !url.password;
  if ((url.protocol !== "https:" && url.protocol !== "http:") || !bare || !/^[a-z]+:\/\/[^/]+\/?$/i.test(entry)) {
    return null;
  }
  return url.origin;
}

/**
 * Why the request's Origin is refused (403 origin_not_allowed, naming `origin`), or null: no Origin, or an allowed one.
 * Entries of the setting that are not origins are logged by position (the setting is the operator's to fix).
 */
export function originRefusal(env: Pick<Env, "OUTPOST_ALLOWED_ORIGINS">, origin: string | undefined): ApiError | null {
  if (origin === undefined) return null;
  const allowed = allowedOrigins(env.OUTPOST_ALLOWED_ORIGINS);
  if (allowed.invalid.length > 0) {
    console.error(`OUTPOST_ALLOWED_ORIGINS: entries ${allowed.invalid.join(", ")} (from 0) are not origins; ignored`);
  }
  if (allowed.origins.has(origin)) return null;
  return new ApiError(
    "origin_not_allowed",
    "Requests from this Origin are refused: the deployment allows the origins listed in OUTPOST_ALLOWED_ORIGINS only.",
    "origin",
  );
}
