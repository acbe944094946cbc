// Test configuration. "unit": the test files named *.unit.test.ts run in Node, their subject pure code that needs no
// Workers runtime (test/project/layering.unit.test.ts refuses a cloudflare: import on their way). "workers": every
// other test file under test/ runs inside workerd (the same runtime as production) through the Cloudflare vitest
// plugin; the model emulator and real MCP servers run in Node (test/support/global-setup.ts), reached over real HTTP.
// "telemetry" and "tree-budget": the same for a few files, with one more setting. "e2e": test/e2e/ runs in Node
// against the Worker served by `wrangler dev` (test/e2e/support/global-setup.ts), as the client, the CLI and the
// console meet it in use.
import { createHash } from "node:crypto";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig, defineProject } from "vitest/config";
import {
  TEST_AWS_ACCESS_KEY_ID,
  TEST_AWS_SECRET_ACCESS_KEY,
  TEST_FOUNDRY_KEY,
  TEST_OAUTH_TOKEN,
  TEST_WRONG_SECRET,
} from "./emulator/credentials.ts";

const sha256 = (key: string) => createHash("sha256").update(key).digest("hex");

/** The test deployment's keys, stored hashed as in production (test/support/helpers.ts names them). */
const API_KEYS = [
  { tenant: "default", scopes: ["admin"], sha256: sha256("test-key-1") },
  { tenant: "default", scopes: ["admin"], sha256: sha256("test-key-2") },
  { id: "reader", tenant: "default", scopes: ["read"], sha256: sha256("test-read-key") },
  // May act but not read: POSTs answer it with ids, status and links only (src/http/task-resource.ts).
  { id: "runner", tenant: "default", scopes: ["run"], sha256: sha256("test-run-key") },
  { id: "beta-runner", tenant: "beta", scopes: ["run", "read"], sha256: sha256("test-beta-key") },
  { id: "beta-admin", tenant: "beta", scopes: ["admin"], sha256: sha256("test-beta-admin") },
  // A tenant of its own for the listing tests (test/tenants/directory.test.ts): no other test's tasks appear in it.
  { id: "lister", tenant: "lister", scopes: ["admin"], sha256: sha256("test-lister-key") },
  // A tenant of its own for its own agents (test/tenants/agent-versions.test.ts): an admin, and a key that may run.
  { id: "author", tenant: "authors", scopes: ["admin"], sha256: sha256("test-author-key") },
  { id: "author-runner", tenant: "authors", scopes: ["run", "read"], sha256: sha256("test-author-runner") },
  // A tenant of its own for the MCP server's tests (test/mcp-server/): the tools it lists are its agents only.
  { id: "mcp-admin", tenant: "mcp", scopes: ["admin"], sha256: sha256("test-mcp-key") },
  {
    id: "limited",
    tenant: "limits",
    scopes: ["run", "read"],
    sha256: sha256("test-limited-key"),
    rate_limit_per_minute: 3,
  },
  // Tenant "limits" without `run`: the key stored work acts as once it has lost `run` (test/commands/stored-work.test.ts).
  { id: "limits-reader", tenant: "limits", scopes: ["read"], sha256: sha256("test-limits-read-key") },
];

/**
 * The test files that run with OpenTelemetry export on (project "telemetry"): the same deployment as "workers" plus a
 * collector, the emulator's /v1/traces. Everywhere else telemetry is off, as it is by default.
 */
const TELEMETRY_ON = ["test/telemetry/genai-spans.test.ts"];
/** The collector's headers secret in project "telemetry" (test/telemetry/genai-spans.test.ts checks it arrives). */
const OTEL_HEADERS = "x-collector-token=test-otel-token,x-team=outpost%20tests";

/**
 * The test files that run with the operator's default tree budget set (project "tree-budget"): the same deployment as
 * "workers" plus OUTPOST_DEFAULT_TREE_BUDGET_USD, which would otherwise cap every other test's trees of sub-agents.
 */
const TREE_BUDGET_ON = ["test/subagents/default-tree-budget.test.ts"];

/** A project running test files inside workerd against the outside services of test/support/global-setup.ts. */
function workersProject(
  name: string,
  files: { include: string[]; exclude: string[] },
  telemetry: boolean,
  extra: Record<string, string> = {},
) {
  return defineProject({
    plugins: [
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            ...testBindings(inject),
            ...(telemetry ? { OUTPOST_OTEL_ENDPOINT: inject("emulatorUrl"), OUTPOST_OTEL_HEADERS: OTEL_HEADERS } : {}),
            ...extra,
          },
        },
      })),
    ],
    test: {
      name,
      globalSetup: ["./test/support/global-setup.ts"],
      setupFiles: ["./test/support/tenant-objects.ts"],
      include: files.include,
      exclude: files.exclude,
      testTimeout: 30_000,
      hookTimeout: 30_000,
    },
  });
}

/** The test deployment's vars and secrets, around the outside services' URLs. */
function testBindings(
  inject: (key: "emulatorUrl" | "vertexServiceAccount" | "vertexServiceAccountUnknown" | "mcpUrl" | "webUrl") => string,
) {
  return {
    ANTHROPIC_BASE_URL: inject("emulatorUrl"),
    // Fault injection on for the default tenant only: test/faults/ checks another tenant is refused.
    OUTPOST_FAULT_INJECTION: "default",
    ANTHROPIC_API_KEY: "test-model-key",
    OUTPOST_API_KEYS: JSON.stringify(API_KEYS),
    OUTPOST_RATE_LIMIT_PER_MINUTE: "100000",
    OUTPOST_WEBHOOK_SECRET: "test-webhook-root-secret",
    // Callback receivers in the tests listen on loopback over plain http, and retry quickly. The receiver is also
    // reachable as [::ffff:7f00:1] (127.0.0.1 IPv4-mapped), which only the tools' list below allows: callbacks
    // must not inherit it (test/callbacks/policy.test.ts).
    OUTPOST_HTTP_CALLBACK_HOSTS: "127.0.0.1,[::ffff:7f00:1]",
    OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS: "127.0.0.1",
    OUTPOST_CALLBACK_RETRY_SECONDS: "0.2,0.2,0.2,0.2,0.2",
    TEST_GITHUB_HOOK_SECRET: "test-github-hook-secret",
    // The example triage agent's hook (agents/triage.yaml).
    GITHUB_WEBHOOK_SECRET: "test-github-webhook-secret",
    // The emulator's embeddings (OpenAI's /v1/embeddings, Azure's deployments) for the knowledge tools' collections.
    // AZURE_OPENAI_API_KEY is left unset on purpose (test/knowledge/collections.test.ts checks the refusal).
    OPENAI_BASE_URL: `${inject("emulatorUrl")}/v1`,
    OPENAI_API_KEY: "test-embeddings-key",
    AZURE_OPENAI_ENDPOINT: inject("emulatorUrl"),
    // Keys of the agents that use the emulator's OpenAI-compatible and Gemini endpoints.
    TEST_OPENAI_KEY: "test-openai-key",
    TEST_GEMINI_KEY: "test-gemini-key",
    // The credentials of the auth providers the emulator checks (test/llm/auth-providers.test.ts), and one
    // that every endpoint refuses.
    TEST_OAUTH_TOKEN,
    TEST_FOUNDRY_KEY,
    TEST_WRONG_SECRET,
    TEST_AWS_ACCESS_KEY_ID,
    TEST_AWS_SECRET_ACCESS_KEY,
    TEST_VERTEX_CREDENTIALS: inject("vertexServiceAccount"),
    TEST_VERTEX_CREDENTIALS_UNKNOWN: inject("vertexServiceAccountUnknown"),
    // Standard Webhooks secrets are base64 after whsec_.
    TEST_STANDARD_HOOK_SECRET: `whsec_${Buffer.from("test-standard-hook-secret").toString("base64")}`,
    OUTPOST_PRICES: "",
    OUTPOST_DEFAULT_MODEL: "",
    // The real MCP servers of test/support/mcp-servers.ts listen on loopback. [::ffff:7f00:1] is for the callback policy
    // test only: a host the tools may reach that callbacks may not.
    OUTPOST_ALLOW_PRIVATE_HOSTS: "127.0.0.1,[::ffff:7f00:1]",
    // Agents a tenant adds at runtime never use that list: "default" is given the shared MCP server's and the fixture
    // web server's host:port, every other tenant nothing (test/net/runtime-agent-hosts.test.ts).
    OUTPOST_TENANT_PRIVATE_HOSTS: JSON.stringify({
      default: [new URL(inject("mcpUrl")).host, new URL(inject("webUrl")).host],
    }),
    // Low enough for a test to reach (test/tenants/agent-caps.test.ts), high enough for any other test file.
    OUTPOST_MAX_RUNTIME_AGENTS: "16",
    OUTPOST_MAX_AGENT_VERSIONS: "4",
    MCP_TEST_TOKEN: "test-mcp-token",
    // A floor above cron's minute (test/schedules/schedule-limits.test.ts): no schedule fires twice within 5 minutes.
    OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS: "300",
    // The one browser origin /mcp serves (test/mcp-server/origin.test.ts); any other Origin is refused.
    OUTPOST_ALLOWED_ORIGINS: "https://console.outpost.test",
  };
}

/** The test files of project "unit", in Node: a file's name says where it runs. */
const UNIT = "test/**/*.unit.test.ts";

const unit = defineProject({
  test: {
    name: "unit",
    environment: "node",
    include: [UNIT],
    // workerd refuses eval and new Function in production (not under the vitest pool); so does this project, so that
    // code tested here cannot come to rely on them (test/workflows/condition.unit.test.ts checks it is refused).
    execArgv: ["--disallow-code-generation-from-strings"],
    // Vitest hands a test every .css file as empty text; the console's stylesheets, read with `?raw`, keep theirs,
    // so that test/project/file-size.unit.test.ts can count their lines.
    css: { include: [/\/console\/.+\.css\?raw$/] },
  },
});

const workers = workersProject(
  "workers",
  { include: ["test/**/*.test.ts"], exclude: ["test/e2e/**", UNIT, ...TELEMETRY_ON, ...TREE_BUDGET_ON] },
  false,
);
const telemetry = workersProject("telemetry", { include: TELEMETRY_ON, exclude: [] }, true);
const treeBudget = workersProject("tree-budget", { include: TREE_BUDGET_ON, exclude: [] }, false, {
  OUTPOST_DEFAULT_TREE_BUDGET_USD: "0.01",
});

const e2e = defineProject({
  test: {
    name: "e2e",
    environment: "node",
    globalSetup: ["./test/e2e/support/global-setup.ts"],
    include: ["test/e2e/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});

export default defineConfig({
  test: {
    projects: [unit, workers, telemetry, treeBudget, e2e],
    // Test files mostly wait on I/O (the emulator, MCP servers, alarms, wrangler dev): two at a time roughly halves
    // the run on a 2-core machine without starving the timing-sensitive tests (the default on 2 cores is one).
    maxWorkers: 2,
  },
});
