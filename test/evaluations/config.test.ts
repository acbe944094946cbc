// Seed 004 test_cases and evaluations on an agent (src/evaluations/config.ts): one schema, the same from an agents/
// YAML file, a TypeScript agent's definition and a PUT /v1/agents/:name body; a broken case or metric refused with
// its key (and line, in a file) at build time and with a 400 naming the field at PUT.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { AgentFileError, parseAgentFile } from "../../src/agents/agent-file.ts";
import { fileAgentClasses } from "../../src/agents/file-agents.ts";
import { ConfigError } from "../../src/errors.ts";
import { AgentSchema } from "../../src/http/responses.ts";
import { api, errorOf, expectError, parseBody } from "../support/helpers.ts";

const PATH = "agents/support.yaml";

const FILE = `name: support
instructions: Answer support questions.
test_cases:
  - name: refund
    input: How do I get a refund?
    context:
      - role: user
        content: Hello.
      - role: assistant
        content: Hi, how can I help?
    expected_output: Open Settings, then Billing.
    ground_truth: Go to Settings > Billing and press Refund.
    expected_tools:
      - Read
      - name: Grep
        arguments: { pattern: refund }
    files:
      docs/billing.md: "# Billing"
    tags: [billing, smoke]
evaluations:
  model:
    provider: anthropic
    name: claude-haiku-4-5
  metrics:
    - type: contains
    - type: tool_calls
      in_order: false
    - type: rouge_l
      threshold: 0.4
    - type: g_eval
      name: Helpfulness
      criteria: The answer tells the user how to get a refund.
      threshold: 0.7
`;

function refusal(source: string): AgentFileError {
  const error = errorOf(() => parseAgentFile(PATH, source));
  expect(error).toBeInstanceOf(AgentFileError);
  return error as AgentFileError;
}

describe("an agent file's test_cases and evaluations", () => {
  it("become the agent's testCases and evaluations, defaults filled in", () => {
    const file = parseAgentFile(PATH, FILE);
    const cls = fileAgentClasses([file]).support;
    if (!cls) throw new Error("no class");
    const agent = new cls();
    expect(agent.testCases).toEqual([
      {
        name: "refund",
        input: "How do I get a refund?",
        context: [
          { role: "user", content: "Hello." },
          { role: "assistant", content: "Hi, how can I help?" },
        ],
        expected_output: "Open Settings, then Billing.",
        ground_truth: "Go to Settings > Billing and press Refund.",
        expected_tools: [{ name: "Read" }, { name: "Grep", arguments: { pattern: "refund" } }],
        files: { "docs/billing.md": "# Billing" },
        tags: ["billing", "smoke"],
      },
    ]);
    expect(agent.evaluations).toEqual({
      model: { provider: "anthropic", name: "claude-haiku-4-5" },
      metrics: [
        { type: "contains", threshold: 1, case_sensitive: false },
        { type: "tool_calls", threshold: 1, in_order: false },
        { type: "rouge_l", threshold: 0.4 },
        {
          type: "g_eval",
          name: "Helpfulness",
          criteria: "The answer tells the user how to get a refund.",
          threshold: 0.7,
        },
      ],
    });
  });

  it("is refused with the file's line and key for a case without input", () => {
    const error = refusal("name: support\ninstructions: Help.\ntest_cases:\n  - name: a\n    expected_output: x\n");
    expect(error.message).toBe("agents/support.yaml:4: test_cases.0.input: must be text");
  });

  it("is refused for two cases of the same name", () => {
    const error = refusal(
      "name: support\ninstructions: Help.\ntest_cases:\n  - name: a\n    input: x\n  - name: a\n    input: y\n",
    );
    expect(error.message).toBe('agents/support.yaml:6: test_cases.1.name: "a" names another case too');
  });

  it("is refused for an unknown metric type, a metric without its threshold, and an unknown key", () => {
    const base = "name: support\ninstructions: Help.\nevaluations:\n  metrics:\n";
    expect(refusal(`${base}    - type: perplexity\n`).message).toBe(
      "agents/support.yaml:5: evaluations.metrics.0.type: type must be one of exact_match, contains, regex, json_schema, tool_calls, bleu, rouge_l, g_eval",
    );
    expect(refusal(`${base}    - type: bleu\n`).message).toBe(
      "agents/support.yaml:5: evaluations.metrics.0.threshold: must be a number from 0 to 1",
    );
    expect(refusal(`${base}    - type: contains\n      treshold: 1\n`).message).toBe(
      "agents/support.yaml:6: evaluations.metrics.0.treshold: unknown key",
    );
  });

  it("is refused for a case_timeout_seconds that is not a whole number of seconds from 1 to a day", () => {
    const base = "name: support\ninstructions: Help.\nevaluations:\n  metrics: [{ type: contains }]\n";
    expect(refusal(`${base}  case_timeout_seconds: 0\n`).message).toBe(
      "agents/support.yaml:5: evaluations.case_timeout_seconds: must be at least 1",
    );
    expect(refusal(`${base}  case_timeout_seconds: 1.5\n`).message).toBe(
      "agents/support.yaml:5: evaluations.case_timeout_seconds: must be a whole number of seconds",
    );
    expect(refusal(`${base}  case_timeout_seconds: 86401\n`).message).toBe(
      "agents/support.yaml:5: evaluations.case_timeout_seconds: must be at most 86400",
    );
  });

  it("is refused for a json_schema metric with no schema on an agent without response_format", () => {
    const error = refusal("name: support\ninstructions: Help.\nevaluations:\n  metrics:\n    - type: json_schema\n");
    expect(error.message).toBe(
      "agents/support.yaml:5: evaluations.metrics.0.schema is needed: the agent has no response_format to check against.",
    );
  });

  it("is refused for an openai_compatible grader without an endpoint", () => {
    const error = refusal(
      "name: support\ninstructions: Help.\nevaluations:\n  model:\n    provider: openai_compatible\n  metrics:\n    - type: contains\n",
    );
    expect(error.message).toBe(
      "agents/support.yaml:4: evaluations.model: endpoint is required for openai_compatible (its base URL).",
    );
  });
});

/** A TypeScript agent class, as an author writes one. */
class TsAgent extends Agent {}

describe("a TypeScript agent's testCases and evaluations", () => {
  it("are checked by the same schema", () => {
    const agent = new TsAgent({
      name: "ts_evals",
      systemPrompt: "Help.",
      testCases: [{ name: "one", input: "2+2?", expected_output: "4", expected_tools: [] }],
      evaluations: { metrics: [{ type: "exact_match" }] },
    });
    expect(agent.testCases).toEqual([{ name: "one", input: "2+2?", expected_output: "4", expected_tools: [] }]);
    expect(agent.evaluations).toEqual({ metrics: [{ type: "exact_match", threshold: 1, case_sensitive: true }] });
    const error = errorOf(
      () =>
        new TsAgent({
          name: "ts_evals",
          systemPrompt: "Help.",
          evaluations: { metrics: [{ type: "bleu", threshold: 2 }] },
        }),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe('Agent "ts_evals": evaluations.metrics.0.threshold: must be at most 1.');
  });

  it("refuse a json_schema metric whose schema has a pattern RegExp refuses", () => {
    const error = errorOf(
      () =>
        new TsAgent({
          name: "ts_evals",
          systemPrompt: "Help.",
          evaluations: {
            metrics: [{ type: "json_schema", schema: { properties: { a: { type: "string", pattern: "((" } } } }],
          },
        }),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      'Agent "ts_evals": evaluations.metrics.0.schema.properties.a.pattern: "((" is not valid JavaScript RegExp ' +
        "syntax (Invalid regular expression: /((/u: Unterminated group).",
    );
  });

  it("default to none", () => {
    const agent = new TsAgent({ name: "ts_plain", systemPrompt: "Help." });
    expect(agent.testCases).toEqual([]);
    expect(agent.evaluations).toBeNull();
  });
});

describe("PUT /v1/agents/:name with test_cases and evaluations", () => {
  const ADMIN = "test-author-key";
  const put = (name: string, body: string) =>
    api(`/v1/agents/${name}`, { method: "PUT", body, headers: { "content-type": "application/yaml" }, key: ADMIN });
  const unique = (label: string) => `${label}_${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;

  it("stores an agent with them", async () => {
    const name = unique("evals");
    const res = await put(name, FILE.replace("name: support", `name: ${name}`));
    expect(res.status).toBe(201);
    expect((await parseBody(res, AgentSchema)).name).toBe(name);
  });

  it("answers 400 naming the field of a bad case", async () => {
    const name = unique("evals");
    const body = `name: ${name}\ninstructions: Help.\ntest_cases:\n  - name: a\n    input: x\n    expected_tools: [{ arguments: {} }]\n`;
    await expectError(await put(name, body), 400, "validation_failed", "test_cases.0.expected_tools.0.name");
  });

  it("answers 400 for a regex metric whose pattern RE2 refuses", async () => {
    const name = unique("evals");
    const body = `name: ${name}\ninstructions: Help.\nevaluations:\n  metrics:\n    - type: regex\n      pattern: "(?<=a)b"\n`;
    const error = await expectError(await put(name, body), 400, "validation_failed", "evaluations.metrics.0.pattern");
    expect(error.error.message).toMatch(/^Invalid evaluations\.metrics\.0\.pattern: not valid RE2 syntax/);
  });

  it("answers 400 naming the pattern of a schema that RE2 or RegExp refuses, in response_format or a metric", async () => {
    const name = unique("evals");
    // Lookbehind is RegExp syntax, not RE2: refused where re2js loads (PUT, the build of agents/).
    const lookbehind = `name: ${name}\ninstructions: Help.\nresponse_format:\n  type: object\n  properties:\n    a: { type: string, pattern: "(?<=a)b" }\n`;
    const format = await expectError(
      await put(name, lookbehind),
      400,
      "validation_failed",
      "response_format.properties.a.pattern",
    );
    expect(format.error.message).toMatch(
      /^Invalid response_format\.properties\.a\.pattern: "\(\?<=a\)b" is not valid RE2 syntax/,
    );
    const metric = `name: ${name}\ninstructions: Help.\nevaluations:\n  metrics:\n    - type: json_schema\n      schema: { type: object, properties: { a: { type: string, pattern: "((" } } }\n`;
    // RegExp refuses "((": refused by the definition's own check, which names the key and its line.
    const error = await expectError(
      await put(name, metric),
      400,
      "validation_failed",
      "evaluations.metrics.0.schema.properties.a.pattern",
    );
    expect(error.error.message).toBe(
      'body:6: evaluations.metrics.0.schema.properties.a.pattern: "((" is not valid JavaScript RegExp syntax ' +
        "(Invalid regular expression: /((/u: Unterminated group).",
    );
  });

  it("answers 400 for a grader endpoint or key secret, which are the deployment's", async () => {
    const name = unique("evals");
    const body = `name: ${name}\ninstructions: Help.\nevaluations:\n  model:\n    provider: openai_compatible\n    endpoint: https://llm.example.com/v1\n  metrics:\n    - type: contains\n`;
    await expectError(await put(name, body), 400, "validation_failed", "evaluations.model.endpoint");
  });
});
