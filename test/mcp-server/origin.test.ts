// The MCP server's guard against DNS rebinding (MCP's Streamable HTTP transport: a server MUST answer 403 to an
// Origin it does not allow): a request to /mcp that carries an Origin outside OUTPOST_ALLOWED_ORIGINS is refused
// before anything else, its key included, in the transport's JSON-RPC error shape with Outpost's error as its data. A
// request without Origin (every non-browser client) passes. The test deployment allows https://console.outpost.test
// (vitest.config.ts); the setting's parsing is checked here too.
import { describe, expect, it } from "vitest";
import { allowedOrigins } from "../../src/http/origins.ts";
import { api, UUID_V4 } from "../support/helpers.ts";

const MCP_KEY = "test-mcp-key";
const ALLOWED = "https://console.outpost.test";

/** tools/list as the SDK's client posts it, with `origin` if given. */
function toolsList(origin: string | null, key: string | null = MCP_KEY): Promise<Response> {
  return api("/mcp", {
    method: "POST",
    key,
    headers: {
      accept: "application/json, text/event-stream",
      ...(origin === null ? {} : { origin }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
}

async function expectOriginRefused(res: Response): Promise<void> {
  expect(res.status).toBe(403);
  expect(res.headers.get("content-type")).toBe("application/json");
  const requestId = res.headers.get("x-request-id");
  expect(requestId).toMatch(UUID_V4);
  expect(await res.json()).toStrictEqual({
    jsonrpc: "2.0",
    error: {
      code: -32000,
      message: expect.stringContaining("OUTPOST_ALLOWED_ORIGINS"),
      data: {
        code: "origin_not_allowed",
        message: expect.stringContaining("OUTPOST_ALLOWED_ORIGINS"),
        field: "origin",
        request_id: requestId,
      },
    },
    id: null,
  });
}

describe("/mcp and the Origin header", () => {
  it("answers 403 to an Origin that is not allowed, in the transport's error shape", async () => {
    await expectOriginRefused(await toolsList("https://attacker.example"));
  });

  it("refuses the Origin before the key: a rebinding page's request without one gets 403, not 401", async () => {
    await expectOriginRefused(await toolsList("http://127.0.0.1.nip.io:8787", null));
  });

  it("refuses an origin that differs from an allowed one by scheme, port or host, and the opaque origin null", async () => {
    for (const origin of [
      "http://console.outpost.test",
      "https://console.outpost.test:8443",
      "https://evil.console.outpost.test",
      "null",
    ]) {
      await expectOriginRefused(await toolsList(origin));
    }
  });

  it("refuses the Origin on GET and DELETE too", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await api("/mcp", { method, key: MCP_KEY, headers: { origin: "https://attacker.example" } });
      await expectOriginRefused(res);
    }
  });

  it("serves a request whose Origin is allowed", async () => {
    const res = await toolsList(ALLOWED);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"tools"');
  });

  it("serves a request without Origin, as every non-browser client sends it", async () => {
    const res = await toolsList(null);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"tools"');
  });
});

describe("OUTPOST_ALLOWED_ORIGINS", () => {
  it("allows none when it is unset or empty", () => {
    expect(allowedOrigins(undefined)).toEqual({ origins: new Set(), invalid: [] });
    expect(allowedOrigins(" ")).toEqual({ origins: new Set(), invalid: [] });
  });

  it("reads a comma-separated list of origins, normalized as browsers send them", () => {
    expect(allowedOrigins("https://App.Example.com, http://localhost:5173/ ,https://a.example:443")).toEqual({
      origins: new Set(["https://app.example.com", "http://localhost:5173", "https://a.example"]),
      invalid: [],
    });
  });

  it("names the entries that are not origins (a path, another scheme, a wildcard), and allows none of them", () => {
    expect(allowedOrigins("https://ok.example,https://a.example/path,ftp://b.example,*,null")).toEqual({
      origins: new Set(["https://ok.example"]),
      invalid: [1, 2, 3, 4],
    });
  });
});
