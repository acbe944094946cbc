// GET /docs in a real browser (Debian's Chromium driven by playwright-core, bench/chromium.ts) against the Worker under `wrangler dev`:
// the page renders every operation of /openapi.json, and nothing it loads or calls leaves the Worker's origin (no CDN,
// no validator badge, no telemetry).
import { mkdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { launchChromium } from "../../bench/chromium.ts";
import { outpostUrl } from "./support/harness.ts";

describe("GET /docs in Chromium", () => {
  it("renders every operation of the document, loading everything from the Worker's origin only", async () => {
    const origin = new URL(outpostUrl()).origin;
    const doc = (await (await fetch(`${origin}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const operationIds = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      page.on("request", (request) => requested.push(request.url()));
      const problems: string[] = [];
      page.on("pageerror", (error) => problems.push(error.message));
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(message.text());
      });
      page.on("response", (response) => {
        if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
      });
      try {
        await page.goto(`${origin}/docs`);
        await page.waitForSelector(".opblock", { timeout: 30_000 });
        await page.waitForLoadState("networkidle");
        const rendered = await page.locator(".opblock").count();
        expect(rendered).toBe(operationIds.length);
        expect(await page.locator(".info .title").first().textContent()).toContain("Outpost");
      } catch (error) {
        mkdirSync(".tmp", { recursive: true });
        await page.screenshot({ path: ".tmp/e2e-docs.png", fullPage: true });
        throw error;
      }
      expect(requested.filter((url) => new URL(url).origin !== origin)).toEqual([]);
      expect(requested.map((url) => new URL(url).pathname).sort()).toEqual(
        [
          "/docs",
          "/docs/swagger-ui.css",
          "/docs/swagger-ui-bundle.js",
          "/docs/swagger-initializer.js",
          "/openapi.json",
        ].sort(),
      );
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
