// A semantic fuzz of agent definitions (fast-check): PUT /v1/agents/:name with a definition that is right but for one
// key, which holds a plausible but wrong value: the wrong type, a number out of range, a name that names nothing, an
// empty or huge string, a duplicate. Whatever the key, the answer is a 400 validation_failed naming it (its path in
// the file, list items by index), never a 500, and nothing is stored. The malformed bodies (not YAML, not UTF-8,
// too large) are test/http/fuzz.test.ts's; here every body parses.
import fc, { type Arbitrary } from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { AgentSchema, AgentVersionListSchema } from "../../src/http/responses.ts";
import { utf8, VALIDATION_FAILED } from "../support/fuzz/oracles.ts";
import { type Case, fuzz, sentSummary } from "../support/fuzz/probe.ts";
import { api, apiJson, parseBody } from "../support/helpers.ts";

afterAll(() => {
  console.info(sentSummary());
});

/** The tenant's admin ("authors", vitest.config.ts): its agents are its own. */
const ADMIN = "test-author-key";
const NAME = "fuzzed_definition";

/** A definition that uses every key a tenant's agent may set, accepted as it is (the first test proves it). */
const BASE = {
  name: NAME,
  description: "Every key, each right.",
  role: "Fuzz target",
  instructions: "You help.",
  model: { provider: "anthropic", name: "claude-sonnet-5-5", max_tokens: 128_000 },
  claude: {
    working_directory: "project",
    permission_mode: "acceptAll",
    max_turns: 6,
    extended_thinking: { enabled: true, budget_tokens: 2048 },
    web_search: { max_uses: 2, allowed_domains: ["docs.python.org"] },
    bash: { enabled: true, excluded_commands: ["rm"], allow_unsafe: false },
    file_system: { read: true, write: false, edit: false },
    subagents: { enabled: true, max_parallel: 2, agents: ["planner"] },
    allowed_tools: ["TodoWrite", "Read", "Bash", "Task", "WebSearch", "WebFetch", "mcp__docs__*"],
  },
  tools: [
    {
      type: "mcp",
      name: "docs",
      url: "https://docs.example.com/mcp",
      required: false,
      tools: { search: { timeout_seconds: 30, fallback_tools: [] as unknown[] } },
    },
  ],
  web_fetch: { enabled: true, max_bytes: 65_536, timeout_seconds: 10 },
  max_budget_usd: 1.5,
  provider_wait_seconds: 120,
  context_window: { tokens: 1_000_000, compact_at: 0.8, compact_to: 0.1 },
  prompt_cache: { ttl: "5m" },
  redaction_mode: "full",
  tool_permissions: { Bash: "ask" },
  approval_timeout_seconds: 600,
  on_approval_timeout: "reject",
  response_format: { type: "object", properties: { answer: { type: "string" } } },
  test_cases: [{ name: "greets", input: "Hello" }],
  evaluations: { metrics: [{ type: "contains" }] },
};

type Path = readonly (string | number)[];

/** BASE with the value at `path` replaced (a list index one past the end appends). */
function withValue(path: Path, value: unknown): unknown {
  const copy = structuredClone(BASE) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path.at(-1) as string | number] = value;
  return copy;
}

// ---- Wrong values, by the kind of value a key takes -----------------------------------------------------------

const huge = fc.integer({ min: 10_000, max: 100_000 }).map((n) => "x".repeat(n));
const notString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.constant({}),
);
const notBoolean = fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null), fc.constant([]));
const notObject = fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.boolean(), fc.constant([1]));
const notList = fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.boolean(), fc.constant({ a: 1 }));

/**
 * Numbers outside [min, max] (no upper bound when max is Infinity), fractions where a whole number is due, and
 * numbers written as text.
 */
function outOfRange(min: number, max: number, whole = true): Arbitrary<unknown> {
  const below = fc.double({ min: -1e15, max: min, maxExcluded: true, noNaN: true });
  const above = Number.isFinite(max) ? [fc.double({ min: max, max: 1e15, minExcluded: true, noNaN: true })] : [];
  const fraction = fc
    .double({ min, max: Math.min(max, 1e12), noNaN: true })
    .filter((n) => !Number.isInteger(n) && String(n) !== String(Math.round(n)));
  return fc.oneof(below, ...above, ...(whole ? [fraction] : []), fc.constant(String(min)), fc.constant(true));
}

/** An agent name that is none of this deployment's nor the tenant's (or no agent name at all). */
const unknownAgent = fc.oneof(
  fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/).map((s) => `zz_none_${s}`),
  fc.constantFrom("", "Planner", "planner ", "a-b", NAME, "planner"),
  huge,
);

/** A tool name this agent cannot use: no built-in it runs, no server it declares. */
const RUNNABLE = new Set(["AskUser", "Bash", "Edit", "Glob", "Grep", "Read", "Task", "TodoWrite", "WebFetch", "Write"]);
const unknownTool = fc.oneof(
  fc.string({ maxLength: 20 }).filter((s) => !RUNNABLE.has(s) && !s.startsWith("mcp__docs__") && s !== "WebSearch"),
  fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/).map((server) => `mcp__zz${server}__tool`),
  fc.constantFrom("", "NoSuchTool", "todowrite", "NotebookEdit", "mcp__docs", "mcp____x", "TodoWrite"),
  huge,
);

/** A web search domain that is none: a wildcard host, a scheme, no dot, spaces, a duplicate. */
const badDomain = fc.oneof(
  fc.string({ maxLength: 8 }).map((s) => `*${s}`),
  fc.webUrl(),
  fc.stringMatching(/^[a-z]{1,12}$/),
  fc.constantFrom("", " ", "exa mple.com", "docs.python.org", "example.com:443", "-x.com"),
  huge.map((s) => `${s}.com`),
);

/** Each key with the wrong values it may be given, and the field the answer must name. */
interface Slot {
  path: Path;
  field: string;
  wrong: Arbitrary<unknown>;
}

const slot = (path: Path, wrong: Arbitrary<unknown>, field = path.join(".")): Slot => ({ path, field, wrong });

const SLOTS: readonly Slot[] = [
  slot(["name"], fc.oneof(notString, huge, fc.constantFrom("", "Bad Name", "other_agent", "9lives"))),
  slot(["description"], notString),
  slot(["role"], fc.oneof(notString, fc.constantFrom("", "   "))),
  slot(["instructions"], fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constantFrom("", "  ", []))),
  slot(["instructions"], fc.constantFrom({}, { inline: "" }, { inline: 3 }), "instructions.inline"),
  slot(["unknown_key"], fc.jsonValue({ maxDepth: 2 })),
  slot(["max_turns"], fc.integer({ min: 1, max: 9 })),
  slot(["model"], notObject),
  slot(["model", "provider"], fc.oneof(notString, fc.constantFrom("openai", "claude", ""))),
  slot(["model", "name"], fc.oneof(notString, huge, fc.constant(""))),
  slot(["model", "max_tokens"], outOfRange(1, 128_000)),
  slot(["model", "temperature"], fc.oneof(outOfRange(0, 2, false), fc.constantFrom(0.5, 1))),
  slot(["claude"], notObject),
  slot(["claude", "max_turn"], fc.integer()),
  slot(["claude", "working_directory"], fc.oneof(notString, fc.constantFrom("../up", "/etc", "a/../../b"))),
  slot(["claude", "permission_mode"], fc.oneof(notString, fc.constantFrom("yolo", "ask", ""))),
  slot(["claude", "max_turns"], outOfRange(1, 1_000)),
  slot(["claude", "extended_thinking", "budget_tokens"], outOfRange(1_024, 100_000)),
  slot(["claude", "extended_thinking", "enabled"], notBoolean),
  slot(["claude", "web_search", "max_uses"], outOfRange(1, Number.POSITIVE_INFINITY)),
  slot(["claude", "web_search", "allowed_domains", 1], badDomain),
  slot(["claude", "web_search", "allowed_domains"], fc.oneof(notList, fc.constant([]))),
  slot(["claude", "bash", "enabled"], notBoolean),
  slot(["claude", "bash", "excluded_commands", 1], fc.oneof(notString, fc.constantFrom("", "rm -rf", "a;b"))),
  slot(["claude", "file_system", "read"], notBoolean),
  slot(["claude", "subagents", "max_parallel"], outOfRange(1, 16)),
  slot(["claude", "subagents", "agents", 1], unknownAgent),
  slot(["claude", "allowed_tools", 7], unknownTool),
  slot(["claude", "allowed_tools"], notList),
  slot(["tools"], notList),
  slot(
    ["tools", 1],
    fc.constantFrom({ type: "mcp", name: "docs", url: "https://other.example.com/mcp" }),
    "tools.1.name",
  ),
  slot(["tools", 0, "name"], fc.oneof(notString, huge, fc.constantFrom("", "a b", "a__b", "_x"))),
  slot(
    ["tools", 0, "url"],
    fc.oneof(
      notString,
      fc.constantFrom(
        "not a url",
        "ftp://x.example.com/mcp",
        "http://127.0.0.1:9/mcp",
        "https://10.0.0.1/mcp",
        "http://localhost/mcp",
      ),
    ),
  ),
  slot(["tools", 0, "transport"], fc.oneof(notString, fc.constantFrom("stdio", "ws", ""))),
  slot(["tools", 0, "required"], notBoolean),
  slot(["tools", 0, "tools", "search", "timeout_seconds"], outOfRange(1, 3_600)),
  slot(["tools", 0, "tools", "search", "fallback_tools", 0], fc.oneof(unknownTool, fc.constant("mcp__docs__search"))),
  slot(["web_fetch", "max_bytes"], outOfRange(1, 10 * 1024 * 1024)),
  slot(["web_fetch", "timeout_seconds"], outOfRange(1, 120)),
  slot(
    ["max_budget_usd"],
    fc.oneof(
      fc.double({ min: -1e9, max: 0, noNaN: true }),
      notBoolean.filter((v) => typeof v !== "number"),
    ),
  ),
  slot(["provider_wait_seconds"], outOfRange(1, 86_400)),
  slot(["context_window", "compact_at"], outOfRange(0.2, 0.95, false)),
  slot(["context_window", "tokens"], outOfRange(1_024, Number.POSITIVE_INFINITY)),
  slot(["redaction_mode"], fc.oneof(notString, fc.constantFrom("partial", "none", ""))),
  slot(["tool_permissions", "Bash"], fc.oneof(notString, fc.constantFrom("maybe", "deny", ""))),
  slot(["tool_permissions", "NoSuchTool"], fc.constantFrom("allow", "ask")),
  slot(["tool_permissions", "mcp__other__*"], fc.constantFrom("allow", "ask")),
  slot(["approval_timeout_seconds"], fc.oneof(fc.integer({ max: 0 }), fc.constantFrom("600", 1.5))),
  slot(["on_approval_timeout"], fc.oneof(notString, fc.constantFrom("explode", ""))),
  slot(["tenants"], fc.constantFrom(["authors"], ["other"]), "tenants"),
  slot(["hooks"], fc.constant({ gh: { scheme: "github", secret: "GITHUB_WEBHOOK_SECRET", input: "x" } }), "hooks"),
];

function caseOf(s: Slot, value: unknown): Case {
  const body = JSON.stringify(withValue(s.path, value));
  return {
    probe: {
      method: "PUT",
      path: `/v1/agents/${NAME}`,
      headers: [
        ["content-type", "application/json"],
        ["authorization", `Bearer ${ADMIN}`],
      ],
      body: utf8.encode(body),
    },
    expected: VALIDATION_FAILED(s.field),
  };
}

/** PUT of BASE: its first version, or the same version again. */
async function putBase(): Promise<Response> {
  return api(`/v1/agents/${NAME}`, {
    method: "PUT",
    body: JSON.stringify(BASE),
    headers: { "content-type": "application/json" },
    key: ADMIN,
  });
}

describe("a semantic fuzz of agent definitions", () => {
  it("accepts the base definition, every key right", async () => {
    const res = await putBase();
    expect([200, 201]).toContain(res.status);
    expect((await parseBody(res, AgentSchema)).source).toEqual({ kind: "runtime", version: 1 });
  });

  it("answers every key's wrong values with 400 naming the key, never a 500, and stores no version", async () => {
    expect([200, 201]).toContain((await putBase()).status);
    await fuzz(
      fc.constantFrom(...SLOTS).chain((s) => s.wrong.map((value) => caseOf(s, value))),
      400,
    );
    const versions = await apiJson(`/v1/agents/${NAME}/versions`, AgentVersionListSchema, { key: ADMIN });
    expect(versions.versions.map((v) => v.version)).toEqual([1]);
  });
});
