// `wrangler dev` as Outpost runs it (scripts/wrangler-dev-env.ts: the environment of npm run dev, the bench, the e2e
// tests and the crash test) calls nothing outside the machine when it starts. By default miniflare fetches the data
// of `request.cf` from workers.cloudflare.com at every start, unless NODE_ENV is `test` (as under vitest, which is
// why this test starts a dev server of its own, as npm run dev does, without it). On this machine, which has no
// network, that fetch fails and wrangler logs the failure with its stack: this test looks for it in the log.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { startWrangler } from "../../bench/wrangler.ts";
import { wranglerDevEnv } from "../../scripts/wrangler-dev-env.ts";

describe("wrangler dev as Outpost runs it", () => {
  it("starts without fetching request.cf's data from Cloudflare", async () => {
    const { NODE_ENV: _vitestSets, ...shell } = process.env;
    const dev = await startWrangler({ root: resolve(import.meta.dirname, "../.."), vars: {}, env: shell });
    try {
      expect((await fetch(`${dev.url}/`)).status).toBe(200);
      const log = readFileSync(dev.logFile, "utf8");
      expect(log).toContain(`Ready on ${dev.url}`);
      expect(log).not.toContain("Request.cf");
      expect(log).not.toContain("workers.cloudflare.com");
    } finally {
      await dev.stop();
    }
  });

  it("keeps the fetch off, and the trace collector, unless the environment turns them on", () => {
    expect(wranglerDevEnv({})).toMatchObject({ CLOUDFLARE_CF_FETCH_ENABLED: "false", X_LOCAL_OBSERVABILITY: "false" });
    expect(wranglerDevEnv({ CLOUDFLARE_CF_FETCH_ENABLED: "true", X_LOCAL_OBSERVABILITY: "true" })).toMatchObject({
      CLOUDFLARE_CF_FETCH_ENABLED: "true",
      X_LOCAL_OBSERVABILITY: "true",
    });
  });
});
