// The outbound URL guard shared by MCP connections and WebFetch: private, loopback, link-local and other internal
// targets are refused unless configuration names the host; only http(s), and no credentials in URLs. Then the
// guarded fetch of WebFetch and curl against the fixture servers: every redirect hop is guarded, and credentials
// do not follow a redirect to another origin.
import { describe, expect, inject, it } from "vitest";
import { BlockedUrlError } from "../../src/errors.ts";
import { guardedFetch } from "../../src/net/guarded-fetch.ts";
import { checkOutboundUrl, outboundPolicy, privateReason, tenantOutboundPolicy } from "../../src/net/outbound.ts";
import { errorOf } from "../support/helpers.ts";

const none = outboundPolicy(undefined);

function blocked(url: string, policy = none): BlockedUrlError {
  try {
    checkOutboundUrl(url, policy);
  } catch (error) {
    expect(error).toBeInstanceOf(BlockedUrlError);
    return error as BlockedUrlError;
  }
  throw new Error(`${url} was allowed`);
}

describe("checkOutboundUrl", () => {
  it.each([
    ["http://127.0.0.1/", "loopback"],
    ["http://127.1.2.3:8080/x", "loopback"],
    ["http://2130706433/", "loopback"], // decimal form of 127.0.0.1, normalized by the URL parser
    ["http://0x7f.1/", "loopback"], // hex form
    ["http://10.1.2.3/", "private"],
    ["http://172.16.0.1/", "private"],
    ["http://172.31.255.255/", "private"],
    ["http://192.168.1.1/", "private"],
    ["http://169.254.169.254/latest/meta-data/", "link-local"],
    ["http://100.64.0.1/", "carrier-grade NAT"],
    ["http://0.0.0.0/", "this network"],
    ["http://224.0.0.1/", "multicast"],
    ["http://[::1]/", "loopback"],
    ["http://[::]/", "unspecified"],
    ["http://[::ffff:127.0.0.1]/", "loopback"],
    ["http://[::ffff:a9fe:a9fe]/", "link-local"],
    ["http://[64:ff9b::10.0.0.1]/", "private"],
    ["http://[fd00::1]/", "unique-local"],
    ["http://[fe80::1]/", "link-local"],
    ["http://localhost:8787/", "loopback name"],
    ["http://api.localhost/", "loopback name"],
    ["http://printer.local/", "local network name"],
    ["http://metadata.google.internal/", "local network name"],
    ["http://localhost./", "loopback name"],
    ["http://printer.local./", "local network name"],
    ["http://metadata.google.internal./", "local network name"],
    ["http://[::ffff:0:7f00:1]/", "loopback"],
    ["http://[fec0::1]/", "site-local"],
    ["http://[2002:7f00:1::]/", "6to4"],
    ["http://[2002:a00:1::1]/", "6to4"],
    ["http://[2001:0:4136:e378::1]/", "Teredo"],
  ])("refuses %s (%s)", (url, reason) => {
    const error = blocked(url);
    expect(error.code).toBe("url_not_allowed");
    expect(error.message).toContain(reason);
    expect(error.message).toContain("OUTPOST_ALLOW_PRIVATE_HOSTS");
  });

  it.each([
    "https://example.com/",
    "http://8.8.8.8/",
    "http://172.32.0.1/",
    "http://192.169.0.1/",
    "http://[2606:4700::1111]/",
    "https://mcp.example.com:8443/mcp",
    "http://[2002:808:808::1]/",
    "https://example.com./",
  ])("allows the public URL %s", (url) => {
    expect(checkOutboundUrl(url, none).href).toBe(new URL(url).href);
  });

  it("refuses other schemes and credentials in the URL", () => {
    expect(blocked("ftp://example.com/").message).toContain("scheme ftp:");
    expect(blocked("file:///etc/passwd").message).toContain("scheme file:");
    const withCredentials = blocked("https://user:pw@example.com/");
    expect(withCredentials.message).toContain("credentials");
    // The refusal reaches events and logs: it names the URL without them.
    expect(withCredentials.url).toBe("https://example.com/");
    expect(withCredentials.message).not.toContain("user:pw");
    expect(blocked("not a url").message).toContain("not a valid absolute URL");
  });

  it("allows exactly the private hosts configuration names, or all with *", () => {
    const policy = outboundPolicy(" 127.0.0.1 , Printer.Local ");
    expect(checkOutboundUrl("http://127.0.0.1:9000/mcp", policy).port).toBe("9000");
    expect(checkOutboundUrl("http://printer.local/", policy).hostname).toBe("printer.local");
    expect(checkOutboundUrl("http://printer.local./", policy).hostname).toBe("printer.local.");
    expect(blocked("http://127.0.0.2/", policy).code).toBe("url_not_allowed");
    expect(blocked("http://localhost/", policy).code).toBe("url_not_allowed");
    expect(checkOutboundUrl("http://10.0.0.1/", outboundPolicy("*")).hostname).toBe("10.0.0.1");
  });

  it("judges hosts as the URL parser normalizes them", () => {
    expect(privateReason("example.com")).toBeNull();
    expect(privateReason("[2001:db8::1]")).toBeNull();
    expect(privateReason("[::ffff:8.8.8.8]")).toBeNull();
    expect(privateReason("[not:an:ip::x::]")).toContain("cannot be parsed");
  });
});

describe("guardedFetch redirects", () => {
  const WEB_URL = inject("webUrl");
  // The fixture servers listen on 127.0.0.1: the policy names that host, as the test configuration does.
  const policy = outboundPolicy("127.0.0.1");
  const credentials = {
    Authorization: "Bearer secret-x",
    cookie: "session=abc",
    "Proxy-Authorization": "Basic cHJveHk=",
  };

  async function echoed(path: string): Promise<{ url: string; body: Record<string, unknown> }> {
    const res = await guardedFetch(`${WEB_URL}${path}`, {
      policy,
      headers: credentials,
      maxBytes: 64 * 1024,
      timeoutMs: 5_000,
    });
    expect(res.status).toBe(200);
    return { url: res.url, body: JSON.parse(new TextDecoder().decode(res.body)) };
  }

  it("drops Authorization, Cookie and Proxy-Authorization when a redirect leaves the origin (another port)", async () => {
    const { url, body } = await echoed("/redirect-cross-origin");
    expect(new URL(url).origin).not.toBe(new URL(WEB_URL).origin);
    expect(body).toEqual({ origin: "other", authorization: null, cookie: null, "proxy-authorization": null });
  });

  it("keeps them on a same-origin redirect", async () => {
    const { url, body } = await echoed("/redirect-same-origin");
    expect(url).toBe(`${WEB_URL}/echo-credentials`);
    expect(body).toEqual({
      origin: "main",
      authorization: "Bearer secret-x",
      cookie: "session=abc",
      "proxy-authorization": "Basic cHJveHk=",
    });
  });

  it("refuses a redirect to a private address before fetching it", async () => {
    const error = await guardedFetch(`${WEB_URL}/redirect-private`, {
      policy,
      maxBytes: 1024,
      timeoutMs: 5_000,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(BlockedUrlError);
    expect((error as BlockedUrlError).message).toContain("http://10.0.0.1/admin is not allowed");
  });
});

describe("tenantOutboundPolicy", () => {
  const setting = JSON.stringify({ acme: ["10.0.0.5:8443", "[fd00::1]:443", "db.internal:80"] });

  it("admits a private host at the ports given, default ports included, and nothing else", () => {
    const acme = tenantOutboundPolicy(setting, "acme");
    expect(checkOutboundUrl("https://10.0.0.5:8443/mcp", acme).host).toBe("10.0.0.5:8443");
    expect(checkOutboundUrl("https://[fd00::1]/mcp", acme).hostname).toBe("[fd00::1]");
    expect(checkOutboundUrl("http://db.internal/x", acme).hostname).toBe("db.internal");
    for (const url of [
      "https://10.0.0.5/mcp",
      "http://10.0.0.5:8080/",
      "https://db.internal/",
      "http://127.0.0.1:8443/",
    ]) {
      expect(errorOf(() => checkOutboundUrl(url, acme))).toBeInstanceOf(BlockedUrlError);
    }
    expect(
      errorOf(() => checkOutboundUrl("https://10.0.0.5:8443/", tenantOutboundPolicy(setting, "other"))),
    ).toBeInstanceOf(BlockedUrlError);
    expect(checkOutboundUrl("https://example.com/", tenantOutboundPolicy(undefined, "acme")).hostname).toBe(
      "example.com",
    );
  });

  it("refuses a setting that is not an object of tenants to host:port lists, naming the entry", () => {
    for (const [bad, at] of [
      ["[]", "a JSON object"],
      ["{not json", "a JSON object"],
      ['{"acme": "10.0.0.5:80"}', '"acme"'],
      ['{"acme": ["10.0.0.5"]}', '"10.0.0.5"'],
      ['{"acme": ["*"]}', '"*"'],
      ['{"acme": ["10.0.0.5:0"]}', '"10.0.0.5:0"'],
      ['{"Not A Tenant": []}', '"Not A Tenant"'],
    ] as const) {
      const error = errorOf(() => tenantOutboundPolicy(bad, "acme"));
      expect(error.message).toContain("OUTPOST_TENANT_PRIVATE_HOSTS");
      expect(error.message).toContain(at);
    }
  });
});
