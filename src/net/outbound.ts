// The guard on every URL an agent's tools reach out to (MCP servers, WebFetch): http(s) only, and no private,
// loopback, link-local or otherwise internal address unless the operator allows it. Workers have no DNS lookup, so
// names are judged as written: literal addresses by range, and the reserved local names by suffix. The deployment's
// own agents may reach the hosts of OUTPOST_ALLOW_PRIVATE_HOSTS; an agent a tenant adds at runtime never does, only the
// host:port pairs OUTPOST_TENANT_PRIVATE_HOSTS gives its tenant (tenantOutboundPolicy).
import { BlockedUrlError, ConfigError } from "../errors.ts";

export interface OutboundPolicy {
  /** Hosts (as in URL.hostname, IPv6 in brackets) allowed even though they are private; "*" allows every host. */
  allowPrivateHosts: ReadonlySet<string>;
  /** Private hosts allowed at one port only, as `host:port` (the port always written, IPv6 in brackets). */
  allowPrivateOrigins?: ReadonlySet<string>;
  /** What a refusal of a private host says after its reason; absent: that OUTPOST_ALLOW_PRIVATE_HOSTS would allow it. */
  hint?: string;
}

/** OUTPOST_ALLOW_PRIVATE_HOSTS: a comma-separated list of hosts, or "*". Empty or unset allows none. */
export function outboundPolicy(allowPrivateHosts: string | undefined): OutboundPolicy {
  const hosts = (allowPrivateHosts ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  return { allowPrivateHosts: new Set(hosts) };
}

/** A tenant's name: TENANT_PATTERN of src/tenants/api-keys.ts, which net/ may not import. */
const TENANT_NAME = /^[a-z0-9][a-z0-9-]{0,39}$/;
/** One `host:port` of OUTPOST_TENANT_PRIVATE_HOSTS: a name or IPv4 address, or an IPv6 one in brackets, and a port. */
const HOST_PORT = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/i;

/**
 * The policy of an agent tenant `tenant` added at runtime (PUT /v1/agents/:name): no host of OUTPOST_ALLOW_PRIVATE_HOSTS,
 * which is the operator's, and only the private `host:port` pairs OUTPOST_TENANT_PRIVATE_HOSTS gives the tenant (a
 * JSON object, tenant → list of `host:port`). A setting that is not such an object is a ConfigError naming the entry.
 */
export function tenantOutboundPolicy(setting: string | undefined, tenant: string): OutboundPolicy {
  const text = setting?.trim() ?? "";
  const refuse = (what: string): never => {
    throw new ConfigError(
      `OUTPOST_TENANT_PRIVATE_HOSTS must be a JSON object of tenants to lists of "host:port": ${what}.`,
    );
  };
  if (text === "") return { allowPrivateHosts: new Set(), allowPrivateOrigins: new Set(), hint: TENANT_HINT };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    refuse("it is not a JSON object");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) refuse("it is not a JSON object");
  let mine: string[] = [];
  for (const [name, list] of Object.entries(value as Record<string, unknown>)) {
    if (!TENANT_NAME.test(name)) refuse(`"${name}" is not a tenant name`);
    if (!Array.isArray(list)) refuse(`the entry of "${name}" is not a list`);
    const origins = (list as unknown[]).map((entry) => {
      const match = typeof entry === "string" ? HOST_PORT.exec(entry.trim()) : null;
      const port = Number(match?.[2]);
      if (!match || port < 1 || port > 65_535) refuse(`${JSON.stringify(entry)} (of "${name}") is not a host:port`);
      return `${(match?.[1] ?? "").toLowerCase()}:${port}`;
    });
    if (name === tenant) mine = origins;
  }
  return { allowPrivateHosts: new Set(), allowPrivateOrigins: new Set(mine), hint: TENANT_HINT };
}

const TENANT_HINT =
  "An agent added at runtime reaches a private host only at a host:port that OUTPOST_TENANT_PRIVATE_HOSTS gives its tenant";

/**
 * A configured endpoint (a model's, an embedding provider's) that passed the guard, as the base URL an SDK client
 * joins its paths to: without a trailing slash. Throws BlockedUrlError as checkOutboundUrl does.
 */
export function checkedEndpoint(raw: string, policy: OutboundPolicy): string {
  return checkOutboundUrl(raw, policy).href.replace(/\/$/, "");
}

/** Returns the parsed URL, or throws BlockedUrlError saying why it may not be fetched. */
export function checkOutboundUrl(raw: string | URL, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BlockedUrlError(String(raw), "it is not a valid absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BlockedUrlError(url.href, `the scheme ${url.protocol} is not http or https`);
  }
  if (url.username || url.password) {
    // The refusal names the URL without its credentials: the error reaches events and logs.
    const shown = new URL(url.href);
    shown.username = "";
    shown.password = "";
    throw new BlockedUrlError(shown.href, "credentials in URLs are not accepted");
  }
  // "localhost." is "localhost": a fully qualified name's trailing dot changes nothing about where it resolves.
  const host = url.hostname.toLowerCase().replace(/\.+$/, "");
  const reason = privateReason(host);
  if (reason && !allowsPrivate(policy, host, url)) {
    throw new BlockedUrlError(url.href, reason, {
      privateHost: true,
      ...(policy.hint ? { hint: policy.hint } : {}),
    });
  }
  return url;
}

function allowsPrivate(policy: OutboundPolicy, host: string, url: URL): boolean {
  if (policy.allowPrivateHosts.has("*") || policy.allowPrivateHosts.has(host)) return true;
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return policy.allowPrivateOrigins?.has(`${host}:${port}`) ?? false;
}

/** Why a host is internal, or null for a public one. `host` is URL.hostname (IPv4 already normalized). */
export function privateReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "localhost is a loopback name";
  if (host.endsWith(".local") || host.endsWith(".internal") || host.endsWith(".home.arpa")) {
    return `${host} is a local network name`;
  }
  if (host.startsWith("[")) return ipv6Reason(host.slice(1, -1));
  const v4 = parseIpv4(host);
  return v4 === null ? null : ipv4Reason(v4);
}

const IPV4_BLOCKS: readonly [string, number, string][] = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

function parseIpv4(host: string): number | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

function ipv4Reason(address: number): string | null {
  for (const [base, bits, label] of IPV4_BLOCKS) {
    const size = 2 ** (32 - bits);
    const start = parseIpv4(base) ?? 0;
    if (address >= start && address < start + size) return `the address is ${label} (${base}/${bits})`;
  }
  return null;
}

/** Expands an IPv6 literal (as URL.hostname writes it, without brackets) to its eight 16-bit groups. */
function ipv6Groups(text: string): number[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part ? part.split(":") : []);
  const head = parse(halves[0] ?? "");
  const tail = parse(halves[1] ?? "");
  const last = (tail.length ? tail : head).at(-1);
  const embedded: number[] = [];
  if (last?.includes(".")) {
    const v4 = parseIpv4(last);
    if (v4 === null) return null;
    (tail.length ? tail : head).pop();
    embedded.push(Math.floor(v4 / 65536), v4 % 65536);
  }
  const groups = [...head, ...tail].map((g) => Number.parseInt(g, 16));
  if (groups.some((g) => Number.isNaN(g))) return null;
  const missing = 8 - groups.length - embedded.length;
  if (halves.length === 1 && missing !== 0) return null;
  const headGroups = head.map((g) => Number.parseInt(g, 16));
  const tailGroups = tail.map((g) => Number.parseInt(g, 16));
  return halves.length === 1
    ? [...headGroups, ...embedded]
    : [...headGroups, ...new Array<number>(missing).fill(0), ...tailGroups, ...embedded];
}

function ipv6Reason(text: string): string | null {
  const g = ipv6Groups(text);
  if (!g) return "the IPv6 address cannot be parsed";
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, h = 0, i = 0] = g;
  const prefixZero = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (prefixZero && f === 0 && h === 0 && i <= 1)
    return i === 1 ? "the address is loopback (::1)" : "the address is unspecified (::)";
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d) addresses reach the IPv4 address inside.
  if (prefixZero && (f === 0xffff || f === 0)) return ipv4Reason(h * 65536 + i);
  // SIIT IPv4-translated addresses (::ffff:0:a.b.c.d) too.
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0xffff && f === 0) return ipv4Reason(h * 65536 + i);
  // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits.
  if (a === 0x2002) {
    const inner = ipv4Reason(b * 65536 + c);
    if (inner) return `the 6to4 address wraps an IPv4 address that is ${inner.replace(/^the address is /, "")}`;
  }
  if (a === 0x2001 && b === 0) return "the address is a Teredo tunnel (2001::/32)";
  if ((a & 0xffc0) === 0xfec0) return "the address is site-local (fec0::/10)";
  // NAT64 (64:ff9b::/96) also embeds an IPv4 address.
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return ipv4Reason(h * 65536 + i);
  if ((a & 0xfe00) === 0xfc00) return "the address is unique-local (fc00::/7)";
  if ((a & 0xffc0) === 0xfe80) return "the address is link-local (fe80::/10)";
  if ((a & 0xff00) === 0xff00) return "the address is multicast (ff00::/8)";
  return null;
}
