import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { transform } from "esbuild";
import { defineConfig } from "vitest/config";

const tc39Decorators = {
  name: "tc39-decorators",
  enforce: "pre" as const,
  async transform(code: string, id: string) {
    if (!/\.ts$/.test(id) || !/^\s*@\w/m.test(code)) return null;
    const r = await transform(code, { loader: "ts", target: "es2022", sourcemap: true, sourcefile: id });
    return { code: r.code, map: r.map };
  },
};
export default defineConfig({
  root: "/work/main",
  plugins: [
    tc39Decorators,
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          ANTHROPIC_BASE_URL: inject<string>("emulatorUrl"),
          ANTHROPIC_API_KEY: "test-model-key",
          OUTPOST_API_KEYS: "test-key-1,test-key-2",
          OUTPOST_PRICES: "",
          OUTPOST_DEFAULT_MODEL: "",
        },
      },
    })),
  ],
  test: {
    globalSetup: ["./test/global-setup.ts"],
    include: [".probe/**/*.probe.ts"],
    testTimeout: 30_000,
  },
});
