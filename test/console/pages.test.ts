// The web console's server side (src/console/): its pages are public shells that hold no data, every answer carries
// the strict Content-Security-Policy, the bundled script and stylesheet are served under their version, and the
// browser script has no way to turn event data into markup. What the pages do in a browser is tested in
// test/e2e/console.test.ts.
import { describe, expect, it } from "vitest";
import { CONSOLE_ASSETS_VERSION, CONSOLE_SCRIPT, CONSOLE_STYLES } from "../../src/console/assets.generated.ts";
import { api, script, startTask, uniqueMarker, waitForTask } from "../support/helpers.ts";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The console's browser sources, as code: their comments (which may name what the code must not do) left out. */
const browserSources: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(import.meta.glob<string>("../../console/*.ts", { query: "?raw", import: "default", eager: true })).map(
    ([file, text]) => [file, text.replace(/\/\*[\s\S]*?\*\/|(^|[^:])\/\/.*$/gm, "$1")],
  ),
);

describe("the console's pages", () => {
  it("serves each page without a key, as HTML with the strict Content-Security-Policy", async () => {
    for (const path of ["/console", "/console/tasks/anything", "/console/sessions", "/console/sessions/anything"]) {
      const res = await api(path, { key: null });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toBe("text/html; charset=UTF-8");
      expect(res.headers.get("content-security-policy"), path).toBe(CSP);
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(res.headers.get("x-frame-options"), path).toBe("DENY");
      expect(res.headers.get("cache-control"), path).toBe("no-cache");
      const html = await res.text();
      expect(html.startsWith('<!doctype html><html lang="en">'), path).toBe(true);
      // One script, loaded from this origin; nothing inline (the policy would block it anyway).
      expect(
        [...html.matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map((m) => [m[0].match(/src="([^"]+)"/)?.[1], m[1]]),
      ).toEqual([[`/console/app.js?v=${CONSOLE_ASSETS_VERSION}`, ""]]);
      expect(html).not.toMatch(/\son[a-z]+=/);
    }
  });

  it("holds no data: a task's page is the same bytes for any id, with neither its id nor its input", async () => {
    const marker = uniqueMarker("console-shell");
    await script(marker, [{ content: [{ type: "text", text: `secret answer ${marker}` }] }]);
    const task = await startTask("assistant", `Say the word ${marker}`);
    await waitForTask(task.id);
    const page = await (await api(`/console/tasks/${task.id}`, { key: null })).text();
    const other = await (await api("/console/tasks/some-other-id", { key: null })).text();
    expect(page).toBe(other);
    expect(page).not.toContain(task.id);
    expect(page).not.toContain(marker);
  });

  it("serves the bundled script and stylesheet, cached for good under their version and revalidated without it", async () => {
    const js = await api(`/console/app.js?v=${CONSOLE_ASSETS_VERSION}`, { key: null });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(js.headers.get("content-security-policy")).toBe(CSP);
    expect(await js.text()).toBe(CONSOLE_SCRIPT);
    const css = await api(`/console/app.css?v=${CONSOLE_ASSETS_VERSION}`, { key: null });
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toBe(CONSOLE_STYLES);
    const icon = await api("/console/icon.svg", { key: null });
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(await icon.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const stale = await api("/console/app.js?v=old", { key: null });
    expect(stale.headers.get("cache-control")).toBe("no-cache");
  });

  it("answers a path it does not serve with 404 route_not_found", async () => {
    const res = await api("/console/tasks", { key: null });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("route_not_found");
  });
});

describe("the console's browser script", () => {
  it("never writes markup: no innerHTML, outerHTML, insertAdjacentHTML, document.write or eval in console/", () => {
    expect(Object.keys(browserSources).length).toBeGreaterThan(5);
    const sinks = Object.entries(browserSources).flatMap(([file, text]) =>
      [...text.matchAll(/\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function\()/g)].map(
        (m) => `${file}: ${m[1]}`,
      ),
    );
    expect(sinks).toEqual([]);
  });

  it("keeps the key in sessionStorage only, never in localStorage, a cookie or a URL", () => {
    const all = Object.values(browserSources).join("\n");
    expect(all).not.toMatch(/localStorage|document\.cookie/);
    expect(all).toContain("sessionStorage.setItem(STORAGE_KEY, key)");
    expect(CONSOLE_SCRIPT).not.toMatch(/localStorage|document\.cookie/);
  });
});
