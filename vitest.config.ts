// Test configuration: every test file runs inside workerd (the same runtime as production) through the
// Cloudflare vitest plugin; the model emulator and real MCP servers run in Node (test/global-setup.ts), reached over real HTTP.
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          ANTHROPIC_BASE_URL: inject<string>("emulatorUrl"),
          ANTHROPIC_API_KEY: "test-model-key",
          OUTPOST_API_KEYS: "test-key-1,test-key-2",
          OUTPOST_PRICES: "",
          OUTPOST_DEFAULT_MODEL: "",
          // The real MCP servers of test/mcp-servers.ts listen on loopback.
          OUTPOST_ALLOW_PRIVATE_HOSTS: "127.0.0.1",
          MCP_TEST_TOKEN: "test-mcp-token",
        },
      },
    })),
  ],
  test: {
    globalSetup: ["./test/global-setup.ts"],
    include: ["test/**/*.test.ts"],
    // Test files mostly wait on I/O (the emulator, MCP servers, alarms): two at a time roughly halves the run on a
    // 2-core machine without starving the timing-sensitive tests (the default on 2 cores is one at a time).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
