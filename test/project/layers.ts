// The one table of allowed imports between the parts of src/ (and durable-objects/): test/project/layering.unit.test.ts
// checks every import against it, and scripts/build-architecture-docs.ts (npm run docs:architecture) writes it into
// docs/architecture.md, which test/project/docs.unit.test.ts keeps equal to it. Plain data and a renderer, read by the
// tests and by the script.

/**
 * The floor: lib/ imports nothing of src/, errors/ (the code registry, the ErrorInfo schema) only lib/, errors.ts only
 * errors/, contracts/ only lib/ and errors/. Every other module may import them (they are left out of the rows below).
 */
export const FLOOR = ["lib", "errors", "errors.ts", "contracts"] as const;

/**
 * What each part of the code may import besides the floor: a folder of src/ by its name, a file at the root of
 * src/ by its file name, and durable-objects/. Ordered from the bottom up; a row names only rows above it, except
 * env.ts (see TYPE_ONLY).
 */
export const LAYERS: Readonly<Record<string, readonly string[]>> = {
  lib: [],
  errors: ["lib"],
  "errors.ts": ["errors"],
  contracts: ["lib", "errors"],
  config: [],
  // The storage of run bundles and large files: R2, or a directory self-hosted (chosen in open-blob-store.ts).
  "blob-store": [],
  net: [],
  events: [],
  workspace: ["blob-store"],
  skills: ["blob-store"],
  tenants: ["env.ts"],
  storage: [],
  llm: ["net"],
  mcp: ["net"],
  approvals: ["events"],
  // The faults a run may inject (issue 17 §2) and the injector in front of the model's and MCP's transports.
  faults: ["llm"],
  // Test cases, evaluation configs and metrics (seed 004): graded from an ExecutionResult, model-graded through llm/.
  evaluations: ["faults", "llm"],
  tasks: ["approvals", "blob-store", "config", "events", "faults", "tenants", "workspace", "env.ts"],
  "run-bundle": ["blob-store", "events", "tasks"],
  // OpenTelemetry spans derived from the event log, exported after a run (wired in by task-host).
  telemetry: ["events", "net", "tasks", "env.ts"],
  "inbound-hooks": ["tasks", "tenants"],
  // Scheduled runs: their timing, their object's storage, and the task each fire starts.
  schedules: ["events", "tasks", "tenants", "env.ts"],
  callbacks: ["events", "net", "tasks", "env.ts"],
  // Collections of documents, their embeddings and search (issue 17 §4): below the tools that search them.
  knowledge: ["net", "env.ts"],
  tools: ["approvals", "events", "knowledge", "mcp", "net", "tasks", "workspace"],
  agents: [
    "approvals",
    "config",
    "evaluations",
    "events",
    "inbound-hooks",
    "knowledge",
    "llm",
    "mcp",
    "skills",
    "tenants",
    "tools",
  ],
  // Sub-agents on the object's side (issue 14): a parent's delegations, the child's report, the tree's budgets and
  // the forwarding of a child's events (wired in by task-host).
  subagents: ["agents", "events", "tasks", "env.ts"],
  // The application layer (issue 36): the commands every way in calls (starting a run, deciding, canceling, a
  // callback, a session's message, a child, a schedule's fire, an evaluation's run), each checking the principal's
  // tenant, scope, limits and rate in one place.
  commands: ["agents", "approvals", "callbacks", "events", "faults", "subagents", "tasks", "tenants", "env.ts"],
  runtime: [
    "agents",
    "approvals",
    "blob-store",
    "callbacks",
    "config",
    "events",
    "faults",
    "knowledge",
    "llm",
    "net",
    "run-bundle",
    "skills",
    "storage",
    "tasks",
    "tools",
    "workspace",
  ],
  workflows: ["agents", "approvals", "mcp", "tools"],
  // Evaluation runs: their object's storage, the report, the runs' tasks; graded by evaluations/.
  "evaluation-runs": ["evaluations", "faults", "llm", "tasks", "env.ts"],
  sessions: ["agents", "approvals", "events", "runtime", "tasks"],
  "task-host": [
    "commands",
    "agents",
    "approvals",
    "blob-store",
    "callbacks",
    "config",
    "evaluation-runs",
    "events",
    "faults",
    "knowledge",
    "llm",
    "net",
    "run-bundle",
    "runtime",
    "sessions",
    "skills",
    "storage",
    "subagents",
    "tasks",
    "telemetry",
    "tenants",
    "workflows",
    "workspace",
    "env.ts",
  ],
  "durable-objects": [
    "commands",
    "approvals",
    "blob-store",
    "callbacks",
    "evaluation-runs",
    "evaluations",
    "events",
    "faults",
    "knowledge",
    "llm",
    "run-bundle",
    "runtime",
    "schedules",
    "sessions",
    "storage",
    "task-host",
    "tasks",
    "tenants",
    "workspace",
    "env.ts",
  ],
  a2a: [
    "commands",
    "agents",
    "approvals",
    "callbacks",
    "durable-objects",
    "events",
    "runtime",
    "sessions",
    "tasks",
    "tools",
    "workspace",
  ],
  // The web console's pages and assets: they read nothing of the runtime (the browser script calls /v1).
  console: [],
  http: [
    "commands",
    "a2a",
    "agents",
    "approvals",
    "blob-store",
    "callbacks",
    "config",
    "console",
    "durable-objects",
    "evaluation-runs",
    "evaluations",
    "events",
    "faults",
    "inbound-hooks",
    "run-bundle",
    "knowledge",
    "runtime",
    "schedules",
    "sessions",
    "tasks",
    "tenants",
    "workflows",
    "workspace",
    "env.ts",
  ],
  // The MCP server (/mcp): built on the HTTP API's functions (auth, agent lookup, task creation), never the reverse.
  "mcp-server": ["commands", "agents", "durable-objects", "events", "http", "tasks", "env.ts"],
  "index.ts": ["durable-objects", "http", "mcp-server", "env.ts"],
  "env.ts": ["durable-objects", "index.ts"],
};

/**
 * The Worker's bindings name the Durable Object classes, which import most of src/: env.ts is imported, and
 * imports, for types only, so its cycle never exists at runtime.
 */
export const TYPE_ONLY = "env.ts";

/** The marker lines around the table's block in docs/architecture.md. */
export const LAYERS_START =
  "<!-- The table of allowed imports, written by npm run docs:architecture from test/project/layers.ts. -->";
export const LAYERS_END = "<!-- End of the table of allowed imports. -->";

const WIDTH = 118;
const LABEL = 17;

/** A row's label as the page spells it: a folder with its slash, a file as it is. */
function label(layer: string): string {
  return layer.endsWith(".ts") ? layer : `${layer}/`;
}

/**
 * The table as docs/architecture.md shows it: first the parts that import nothing but the floor, then each other
 * row, bottom up, its imports wrapped under the first.
 */
export function renderLayers(): string {
  const floor = new Set<string>(FLOOR);
  const rows = Object.entries(LAYERS).filter(([layer]) => !floor.has(layer));
  const alone = rows.filter(([, imports]) => imports.length === 0).map(([layer]) => label(layer));
  const lines = [`${alone.join("  ")}   (nothing else)`];
  for (const [layer, imports] of rows) {
    if (imports.length === 0) continue;
    const words = imports.map((name, i) => `${name}${i < imports.length - 1 ? "," : ""}`);
    let line = `${label(layer).padEnd(LABEL)}→`;
    for (const word of words) {
      if (line.length + 1 + word.length > WIDTH) {
        lines.push(line);
        line = " ".repeat(LABEL + 1);
      }
      line += ` ${word}`;
    }
    lines.push(line);
  }
  return ["```", ...lines, "```"].join("\n");
}
