// An outbound fetch for tools (WebFetch, the shell's curl): every URL, redirects included, passes the outbound
// guard; the whole exchange has a deadline; the body is read up to a byte limit and the rest is dropped.
import { checkOutboundUrl, type OutboundPolicy } from "./outbound.ts";

export interface GuardedFetchOptions {
  policy: OutboundPolicy;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface GuardedResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: Uint8Array;
  /** The URL that answered, after redirects. */
  url: string;
  /** True when the body was longer than maxBytes and was cut. */
  truncated: boolean;
}

export class FetchTimeoutError extends Error {}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function guardedFetch(url: string, options: GuardedFetchOptions): Promise<GuardedResponse> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  let current = checkOutboundUrl(url, options.policy);
  let method = options.method ?? "GET";
  let headers: Record<string, string> = { "user-agent": "Outpost/0.1", ...options.headers };
  let body = options.body;
  try {
    for (let hop = 0; ; hop++) {
      const response = await fetch(current, {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        redirect: "manual",
        signal,
      });
      const location = response.headers.get("location");
      if (REDIRECTS.has(response.status) && location) {
        await response.body?.cancel();
        if (hop >= (options.maxRedirects ?? 5))
          throw new Error(`too many redirects (more than ${options.maxRedirects ?? 5})`);
        const next = checkOutboundUrl(new URL(location, current), options.policy);
        // Credentials meant for one origin are not handed to another by a redirect.
        if (next.origin !== current.origin) headers = withoutCredentials(headers);
        current = next;
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      const { bytes, truncated } = await readLimited(response, options.maxBytes);
      return {
        status: response.status,
        statusText: response.statusText,
        headers: Object.fromEntries(response.headers),
        body: bytes,
        url: current.href,
        truncated,
      };
    }
  } catch (error) {
    if (deadline.aborted && !options.signal?.aborted) {
      throw new FetchTimeoutError(`${current.href} did not answer within ${options.timeoutMs / 1000} s`);
    }
    throw error;
  }
}

const CREDENTIAL_HEADERS = new Set(["authorization", "cookie", "proxy-authorization"]);

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));
}

async function readLimited(response: Response, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const room = maxBytes - size;
    if (value.byteLength > room) {
      chunks.push(value.subarray(0, room));
      size += room;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes, truncated };
}
