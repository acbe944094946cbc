// Seed 004 structured output through the HTTP API, against the emulator over real HTTP: an agent with a
// response_format gets the schema in its system prompt, its final answer is validated, a mismatch is asked for once
// more with the validation errors, and a second mismatch fails the task (invalid_structured_output) keeping the
// answer. The validated value is structured_output in the task and in the ExecutionResult.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseAgentFile } from "../../src/agents/agent-file.ts";
import { parseDefinition } from "../../src/agents/definition.ts";
import { SkillAgent } from "../../src/agents/skill-agent.ts";
import { ExecutionResultSchema } from "../../src/contracts/execution-result.ts";
import { ConfigError } from "../../src/errors.ts";
import { AgentSchema, InvocationSchema } from "../../src/http/responses.ts";
import {
  api,
  defineAgent,
  errorOf,
  modelRequest,
  parseBody,
  script,
  startTask,
  textOf,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** A zod schema, as a TypeScript agent gives it. */
const Ticket = z.strictObject({
  title: z.string().min(1),
  priority: z.enum(["low", "high"]),
});
const typed = defineAgent({ responseFormat: Ticket, maxTurns: 4 });

const say = (text: string) => ({ content: [{ type: "text" as const, text }] });

async function run(label: string, replies: string[]) {
  const marker = uniqueMarker(label);
  await script(marker, replies.map(say));
  const task = await startTask(typed, `File a ticket ${marker}`);
  return waitForTask(task.id);
}

describe("structured output", () => {
  it("gives the model the schema and keeps the valid answer as the task's structured_output", async () => {
    const task = await run("so-valid", ['{"title": "Printer on fire", "priority": "high"}']);
    expect(task).toMatchObject({
      status: "completed",
      result: '{"title": "Printer on fire", "priority": "high"}',
      structured_output: { title: "Printer on fire", priority: "high" },
    });
    const request = (await modelRequest(task.id, 1)) as unknown as { system: unknown };
    expect(textOf(request.system)).toContain("Answer with a single JSON value that conforms to this JSON Schema");
    expect(textOf(request.system)).toContain('"priority":{"type":"string","enum":["low","high"]}');
  });

  it("gets a schema-valid answer from the emulator's default reply, so structured output runs offline", async () => {
    // Unscripted: the emulator reads the schema from the system prompt (the first enum member, the prompt as text).
    const input = `File a ticket ${uniqueMarker("so-default")}`;
    const task = await waitForTask((await startTask(typed, input)).id);
    const answer = { title: input.slice(0, 80), priority: "low" };
    expect(task).toMatchObject({ status: "completed", result: JSON.stringify(answer), structured_output: answer });
  });

  it("accepts the JSON inside a code fence", async () => {
    const task = await run("so-fence", ['```json\n{"title": "Fence", "priority": "low"}\n```']);
    expect(task.structured_output).toEqual({ title: "Fence", priority: "low" });
  });

  it("asks once more with the validation errors, and keeps the fixed answer", async () => {
    const task = await run("so-fixed", [
      '{"title": "Leak", "priority": "urgent"}',
      '{"title": "Leak", "priority": "high"}',
    ]);
    expect(task).toMatchObject({ status: "completed", structured_output: { title: "Leak", priority: "high" } });
    const second = await modelRequest(task.id, 2);
    const reask = second.messages.at(-1);
    expect(reask?.role).toBe("user");
    expect(textOf(reask?.content)).toMatch(
      /^Your answer does not conform to the required JSON Schema:\n- #\/priority: /,
    );
    expect(textOf(reask?.content)).toContain("Answer again with only the JSON value.");
  });

  it("fails with invalid_structured_output after a second mismatch, keeping the answer and naming the errors", async () => {
    const task = await run("so-twice", ["Sure! Here is your ticket.", '{"title": ""}']);
    expect(task.status).toBe("failed");
    expect(task.result).toBe('{"title": ""}');
    expect(task.structured_output).toBeNull();
    expect(task.error).toMatchObject({ code: "invalid_structured_output", retryable: false });
    expect(task.error?.message).toContain('Instance does not have required property "priority"');
  });

  it("puts the validated value in the ExecutionResult of an invocation", async () => {
    const marker = uniqueMarker("so-invoke");
    await script(marker, [say('{"title": "Invoke", "priority": "low"}')]);
    const res = await api(`/v1/agents/${typed}/invoke?wait=20`, {
      method: "POST",
      body: JSON.stringify({ message: `Ticket please ${marker}` }),
    });
    expect(res.status).toBe(200);
    const result = ExecutionResultSchema.parse((await parseBody(res, InvocationSchema)).result);
    expect(result).toMatchObject({ structured_output: { title: "Invoke", priority: "low" }, is_error: false });
  });

  it("shows the agent's response_format, and takes it from an agent file as a JSON Schema", async () => {
    const described = await parseBody(await api(`/v1/agents/${typed}`), AgentSchema);
    expect(described.response_format).toMatchObject({ type: "object", required: ["title", "priority"] });
    const file = parseAgentFile(
      "agents/tickets.yaml",
      "name: tickets\ninstructions: File tickets.\nresponse_format:\n  type: object\n  required: [title]\n",
    );
    expect(file.definition.responseFormat).toEqual({ type: "object", required: ["title"] });
  });

  it("refuses a response_format that is not a schema, and one on a skill agent", () => {
    const typeless = errorOf(() =>
      parseDefinition({ name: "bad", systemPrompt: "Work.", responseFormat: { type: 12 } }),
    );
    expect(typeless).toBeInstanceOf(ConfigError);
    expect(typeless.message).toBe('Agent "bad": responseFormat.type 12 is not a JSON type.');
    const nested = errorOf(() =>
      parseDefinition({
        name: "bad",
        systemPrompt: "Work.",
        responseFormat: { type: "object", properties: { a: { type: "text" } } },
      }),
    );
    expect(nested.message).toBe('Agent "bad": responseFormat.properties.a.type "text" is not a JSON type.');
    const required = errorOf(() =>
      parseDefinition({ name: "bad", systemPrompt: "Work.", responseFormat: { type: "object", required: "a" } }),
    );
    expect(required.message).toBe('Agent "bad": responseFormat.required must be a list of property names.');
    // The validator compiles patterns with RegExp at each answer: one it refuses would throw there.
    const pattern = errorOf(() =>
      parseDefinition({
        name: "bad",
        systemPrompt: "Work.",
        responseFormat: { type: "object", properties: { a: { type: "string", pattern: "((" } } },
      }),
    );
    expect(pattern).toBeInstanceOf(ConfigError);
    expect(pattern.message).toBe(
      'Agent "bad": responseFormat.properties.a.pattern: "((" is not valid JavaScript RegExp syntax ' +
        "(Invalid regular expression: /((/u: Unterminated group).",
    );
    const keyed = errorOf(() =>
      parseDefinition({
        name: "bad",
        systemPrompt: "Work.",
        responseFormat: { anyOf: [{ type: "object", patternProperties: { "[": {} } }] },
      }),
    );
    expect(keyed.message).toMatch(/^Agent "bad": responseFormat\.anyOf\.0\.patternProperties\.\[: "\[" is not valid/);
    const skill = errorOf(
      () =>
        new (class extends SkillAgent {
          constructor() {
            super({ name: "skilled", systemPrompt: "Work.", skills: "all", responseFormat: { type: "object" } });
          }
        })(),
    );
    expect(skill.message).toBe(
      'Agent "skilled": responseFormat is for agents of the default tool loop, not skill agents.',
    );
  });
});
