// Redaction (seed 002 redaction_mode): secrets never reach events, transcripts or artifacts, whoever put them
// there (here: the model itself and a tool's input); and a task in redacted mode keeps prompts and responses out of
// its event stream while the run bundle's private transcript keeps them.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { parsePatterns, REDACTED, Redactor, redactContent } from "../src/events/redaction.ts";
import { api, events, script, startTask, toolUse, uniqueMarker, waitForTask } from "./helpers.ts";

/** Every file of a task's run bundle, concatenated. */
async function bundleText(id: string): Promise<string> {
  const list = (await (await api(`/v1/tasks/${id}/artifacts`)).json()) as { artifacts: { path: string }[] };
  const texts = await Promise.all(
    list.artifacts.map(async (a) => (await api(`/v1/tasks/${id}/artifacts/${a.path}`)).text()),
  );
  expect(list.artifacts.map((a) => a.path)).toEqual(expect.arrayContaining(["llm_transcript.log", "events.jsonl"]));
  return texts.join("\n");
}

const MODEL_KEY = (env as unknown as Record<string, string>).ANTHROPIC_API_KEY as string;
const GITHUB_TOKEN = `ghp_${"A1b2C3d4E5".repeat(4)}`;

describe("secrets", () => {
  it("never reach events, transcripts or artifacts, though the conversation keeps what the model said", async () => {
    const marker = uniqueMarker("redact-secrets");
    const leak = `The key is ${MODEL_KEY}, the token ${GITHUB_TOKEN}, and curl -H "Authorization: Bearer s3cr3t-b34r3r".`;
    await script(marker, [
      { content: [toolUse("TodoWrite", { todos: [{ content: `rotate ${GITHUB_TOKEN}`, status: "pending" }] })] },
      { content: [{ type: "text", text: leak }] },
    ]);
    const task = await startTask("planner", `check ${marker}`);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    const log = JSON.stringify(await events(task.id));
    const bundle = await bundleText(task.id);
    for (const secret of [MODEL_KEY, GITHUB_TOKEN, "s3cr3t-b34r3r"]) {
      expect(log).not.toContain(secret);
      expect(bundle).not.toContain(secret);
    }
    expect(log).toContain(REDACTED);
    expect(bundle).toContain(`Authorization: ${REDACTED}`);
    // The product is the answer: the task's result and conversation are what the model said.
    expect(done.result).toBe(leak);
  });
});

describe("redacted mode", () => {
  it("keeps prompts and responses out of the event stream; the private transcript keeps them", async () => {
    const marker = uniqueMarker("redact-mode");
    const answer = `Private answer ${marker}`;
    await script(marker, [{ content: [{ type: "text", text: answer }] }]);
    const task = await startTask("assistant", `private question ${marker}`, { redaction_mode: "redacted" });
    expect((task as typeof task & { redaction_mode: string }).redaction_mode).toBe("redacted");
    expect((await waitForTask(task.id)).result).toBe(answer);
    const log = await events(task.id);
    expect(log.every((e) => e.redaction_mode === "redacted")).toBe(true);
    const text = JSON.stringify(log);
    expect(text).not.toContain(marker);
    expect(log.find((e) => e.event_type === "task_created")?.payload.input).toBe(REDACTED);
    expect(log.find((e) => e.event_type === "run_finished")?.payload.final_summary).toBe(REDACTED);
    expect(log.filter((e) => e.event_type === "llm_text_delta").every((e) => e.payload.text === REDACTED)).toBe(true);
    // The SSE stream is the same log.
    const sse = await (await api(`/v1/tasks/${task.id}/events`)).text();
    expect(sse).not.toContain(marker);
    // The run bundle's transcript and per-call files are the private record.
    const transcript = await (await api(`/v1/tasks/${task.id}/artifacts/llm_transcript.log`)).text();
    expect(transcript).toContain(answer);
    const request = await (
      await api(`/v1/tasks/${task.id}/artifacts/artifacts/llm/decision_loop_turn_1_attempt_1_request.txt`)
    ).text();
    expect(request).toContain(`private question ${marker}`);
    const eventsFile = await (await api(`/v1/tasks/${task.id}/artifacts/events.jsonl`)).text();
    expect(eventsFile).not.toContain(marker);
  });

  it("is the default of an agent that says so, and a bad mode is a 400", async () => {
    const res = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: "x", redaction_mode: "partial" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe("redaction_mode");
  });
});

describe("Redactor", () => {
  it("replaces secret values, credential shapes and operator patterns, in keys and nested values", () => {
    const redactor = new Redactor(["super-secret-value", "short"], parsePatterns('["acct-\\\\d{6}"]'));
    const out = redactor.value({
      a: "x super-secret-value y",
      b: ["sk-ant-api03-abcdefghijklmnop", { c: "AKIAABCDEFGHIJKLMNOP and acct-123456" }],
      "super-secret-value": 1,
      d: "authorization: Basic dXNlcjpwYXNz",
      e: "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
      f: "short stays: secrets under 8 characters are not replaced",
      k: `key op_${"ab12".repeat(12)}`,
      n: 42,
    });
    expect(out).toEqual({
      a: `x ${REDACTED} y`,
      b: [REDACTED, { c: `${REDACTED} and ${REDACTED}` }],
      [REDACTED]: 1,
      d: `authorization: ${REDACTED}`,
      e: REDACTED,
      f: "short stays: secrets under 8 characters are not replaced",
      k: `key ${REDACTED}`,
      n: 42,
    });
  });

  it("tells from an event's JSON whether it may need redaction, without missing a secret JSON escapes", () => {
    const redactor = new Redactor(['pa"ss\\word-123']);
    const clean = JSON.stringify({ text: "hello", n: 1 });
    expect(redactor.mightNeedRedaction(clean)).toBe(false);
    expect(redactor.mightNeedRedaction(JSON.stringify({ text: 'x pa"ss\\word-123 y' }))).toBe(true);
    expect(redactor.mightNeedRedaction(JSON.stringify({ h: "Authorization: Bearer abc" }))).toBe(true);
    expect(
      redactor.mightNeedRedaction(
        JSON.stringify({ k: "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----" }),
      ),
    ).toBe(true);
    // An operator's pattern may depend on characters JSON escapes: then every event is checked string by string.
    expect(new Redactor([], parsePatterns('["pw=\\"[^\\"]+\\""]')).mightNeedRedaction(clean)).toBe(true);
  });

  it("keeps JSON valid when it redacts a header inside JSON inside JSON", () => {
    const nested = JSON.stringify({ log: JSON.stringify({ authorization: "Bearer tok-1234567", ok: 1 }) });
    const out = new Redactor([]).text(nested);
    expect(out).not.toContain("tok-1234567");
    expect(JSON.parse(JSON.parse(out).log)).toEqual({ authorization: REDACTED, ok: 1 });
  });

  it("takes the deployment's secrets from env but not its configuration, and skips bad patterns", () => {
    const redactor = Redactor.fromEnv({
      ANTHROPIC_API_KEY: "model-key-123",
      OUTPOST_API_KEYS: "dev-key-0001,dev-key-0002",
      OUTPOST_DEFAULT_MODEL: "claude-sonnet-5-5",
      MY_TOKEN: "custom-token-xyz",
      OUTPOST_REDACT_PATTERNS: '["(unclosed", "ok-\\\\d+"]',
    });
    expect(redactor.text("model-key-123 dev-key-0002 custom-token-xyz ok-77 claude-sonnet-5-5")).toBe(
      `${REDACTED} ${REDACTED} ${REDACTED} ${REDACTED} claude-sonnet-5-5`,
    );
    expect(parsePatterns("not json")).toEqual([]);
  });

  it("replaces only the content fields of the events that carry prompts and responses", () => {
    expect(redactContent("tool_call_started", { tool_name: "Bash", input: { command: "ls" } }, "redacted")).toEqual({
      tool_name: "Bash",
      input: REDACTED,
    });
    expect(redactContent("run_started", { task: "x", model: "m" }, "full")).toEqual({ task: "x", model: "m" });
    expect(redactContent("step_resumed", { step: "s" }, "redacted")).toEqual({ step: "s" });
  });
});
