// Redaction (seed 002 redaction_mode): secrets never reach events, transcripts or artifacts, whoever put them
// there (here: the model itself and a tool's input); and a task in redacted mode keeps prompts and responses out of
// its event stream while the run bundle's private transcript keeps them.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NESTED_TOO_DEEP, parsePatterns, REDACTED, Redactor, redactContent } from "../../src/events/redaction.ts";
import {
  ArtifactListSchema,
  CheckpointListSchema,
  ErrorBodySchema,
  TaskResourceSchema,
} from "../../src/http/responses.ts";
import { DeltaBatcher } from "../../src/runtime/delta-batcher.ts";
import {
  api,
  apiJson,
  defineAgent,
  events,
  ofType,
  parseBody,
  script,
  startTask,
  stubFor,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** Every file of a task's run bundle, concatenated. */
async function bundleText(id: string): Promise<string> {
  const list = await apiJson(`/v1/tasks/${id}/artifacts`, ArtifactListSchema);
  const texts = await Promise.all(
    list.artifacts.map(async (a) => (await api(`/v1/tasks/${id}/artifacts/${a.path}`)).text()),
  );
  expect(list.artifacts.map((a) => a.path)).toEqual(expect.arrayContaining(["llm_transcript.log", "events.jsonl"]));
  return texts.join("\n");
}

const MODEL_KEY = (env as unknown as Record<string, string>).ANTHROPIC_API_KEY as string;
const GITHUB_TOKEN = `ghp_${"A1b2C3d4E5".repeat(4)}`;

describe("secrets", () => {
  it("never reach events, transcripts, artifacts, the result or the conversation a client reads", async () => {
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
    // The answer is kept, minus its secrets; the model's own context (storage) is what it said.
    expect(done.result).toBe(
      `The key is ${REDACTED}, the token ${REDACTED}, and curl -H "Authorization: ${REDACTED}".`,
    );
    const messages = await (await api(`/v1/tasks/${task.id}/messages`)).text();
    for (const secret of [MODEL_KEY, GITHUB_TOKEN, "s3cr3t-b34r3r"]) expect(messages).not.toContain(secret);
  });

  it("hold across streamed deltas: a private key and a header split over many deltas reach no event", async () => {
    const marker = uniqueMarker("redact-stream");
    const body = ["MIIEpAIBAAKCAQEAq1w2e3r4", "t5y6u7i8o9p0AsDfGhJkL", "zXcVbNm1Q2w3E4r5T6y7"];
    const answer =
      `Here is the key:\n-----BEGIN RSA PRIVATE KEY-----\n${body.join("\n")}\n-----END RSA PRIVATE KEY-----\n` +
      "and the header is Authorization: Bearer zq-custom-token-9876 so use it.";
    // The emulator streams word by word, each word a delta event of its own at this pace.
    await script(marker, [{ content: [{ type: "text", text: answer }] }], { token_delay_ms: 25 });
    const task = await startTask("assistant", `show ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    const deltas = ofType(await events(task.id), "llm_text_delta").map((e) => String(e.payload.text));
    expect(deltas.length).toBeGreaterThan(4);
    const secrets = [...body, "zq-custom-token-9876"];
    for (const delta of deltas) for (const secret of secrets) expect(delta).not.toContain(secret);
    // Nothing is lost but the secrets: the stream reads as the answer with them replaced.
    expect(deltas.join("")).toBe(
      `Here is the key:\n${REDACTED}\nand the header is Authorization: ${REDACTED} so use it.`,
    );
    const file = await (await api(`/v1/tasks/${task.id}/artifacts/events.jsonl`)).text();
    for (const secret of secrets) expect(file).not.toContain(secret);
  });

  it("never store what a provider echoed in its error: the task's error is redacted", async () => {
    const marker = uniqueMarker("redact-error");
    await script(marker, [
      {
        content: [{ type: "text", text: "unused" }],
        faults: [{ kind: "http", status: 401, message: `invalid x-api-key: ${MODEL_KEY} (${GITHUB_TOKEN})` }],
      },
    ]);
    const task = await startTask("assistant", `fail ${marker}`);
    const done = await waitForTask(task.id);
    expect(done.status).toBe("failed");
    const stored = JSON.stringify(done.error);
    expect(stored).toContain(`invalid x-api-key: ${REDACTED} (${REDACTED})`);
    for (const text of [stored, JSON.stringify(await events(task.id)), await bundleText(task.id)]) {
      expect(text).not.toContain(MODEL_KEY);
      expect(text).not.toContain(GITHUB_TOKEN);
    }
  });

  it("never show what a waiting call carries unredacted, in the task or in a conflict's body", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
    const marker = uniqueMarker("redact-pending");
    const todos = [{ content: `rotate ${GITHUB_TOKEN}`, status: "pending" }];
    await script(marker, [{ content: [toolUse("TodoWrite", { todos })], stop_reason: "tool_use" }, { content: [] }]);
    const task = await waitForTask((await startTask(agent, `plan ${marker}`)).id);
    expect(task.status).toBe("input_required");
    expect(task.pending_input).toMatchObject({ input: { todos: [{ content: `rotate ${REDACTED}` }] } });
    const conflict = await api(`/v1/tasks/${task.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: "toolu_other", action: "approve" }),
    });
    expect(conflict.status).toBe(409);
    const text = await conflict.text();
    expect(text).toContain(`rotate ${REDACTED}`);
    expect(text).not.toContain(GITHUB_TOKEN);
  });

  it("leave a fork the conversation as the model had it, while clients of either task read it redacted", async () => {
    const agent = defineAgent({ bash: { enabled: true }, fileSystem: { read: true } });
    const marker = uniqueMarker("redact-fork");
    await script(marker, [
      { content: [toolUse("Bash", { command: "cat reply.txt" })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "Read it." }] },
    ]);
    const task = await startTask(agent, `read ${marker}`, { files: { "reply.txt": `token ${GITHUB_TOKEN}` } });
    expect((await waitForTask(task.id)).status).toBe("completed");
    const list = await apiJson(`/v1/tasks/${task.id}/checkpoints`, CheckpointListSchema);
    const at = list.checkpoints.find((c) => c.position === "turn_1_tools")?.checkpoint_id;
    const shown = await (await api(`/v1/tasks/${task.id}/checkpoints/${at}`)).text();
    expect(shown).not.toContain(GITHUB_TOKEN);
    const res = await api(`/v1/tasks/${task.id}/fork`, { method: "POST", body: JSON.stringify({ checkpoint_id: at }) });
    const fork = await parseBody(res, TaskResourceSchema);
    expect((await waitForTask(fork.id)).status).toBe("completed");
    const stored = await runInDurableObject(stubFor(fork.id), (_instance, state) =>
      state.storage.sql
        .exec<{ content: string }>("SELECT content FROM runtime_messages ORDER BY idx")
        .toArray()
        .map((row) => row.content)
        .join("\n"),
    );
    expect(stored).toContain(GITHUB_TOKEN);
    expect(await (await api(`/v1/tasks/${fork.id}/messages`)).text()).not.toContain(GITHUB_TOKEN);
  });

  it("never give the model a secret that a tool's error text echoed", async () => {
    const agent = defineAgent({ bash: { enabled: true }, fileSystem: { read: true } });
    const marker = uniqueMarker("redact-tool-error");
    await script(marker, [
      { content: [toolUse("Bash", { command: "cat reply.txt >&2; exit 3" })] },
      { content: [{ type: "text", text: "It failed." }] },
    ]);
    // The secret comes from what the tool read, not from anything the model wrote.
    const task = await startTask(agent, `run ${marker}`, { files: { "reply.txt": `denied for ${GITHUB_TOKEN}` } });
    expect((await waitForTask(task.id)).status).toBe("completed");
    // The conversation the model is sent, as stored: the error result says what failed, without the token.
    const stored = await runInDurableObject(stubFor(task.id), (_instance, state) =>
      state.storage.sql
        .exec<{ content: string }>("SELECT content FROM runtime_messages ORDER BY idx")
        .toArray()
        .map((row) => row.content)
        .join("\n"),
    );
    expect(stored).toContain(`denied for ${REDACTED}`);
    expect(stored).not.toContain(GITHUB_TOKEN);
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
    expect((await parseBody(res, ErrorBodySchema)).error.field).toBe("redaction_mode");
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

  it("finds every built-in shape with no operator pattern set, whatever the case of a header's name", () => {
    // Without operator patterns a text is first searched for the shapes' literals (BUILT_IN_LITERALS): each shape
    // here must still be found, in text and in an event's JSON.
    const redactor = new Redactor([]);
    const shapes = [
      "sk-ant-api03-abcdefghijklmnop",
      `ghp_${"a1".repeat(18)}`,
      `gho_${"b2".repeat(18)}`,
      `ghu_${"c3".repeat(18)}`,
      `ghs_${"d4".repeat(18)}`,
      `ghr_${"e5".repeat(18)}`,
      `github_pat_${"f6".repeat(18)}`,
      "AKIAABCDEFGHIJKLMNOP",
      "ASIAABCDEFGHIJKLMNOP",
      "whsec_abcdefghijklmnopqrst",
      "xoxb-1234567890-abcdef",
      "sk_live_abcdefghijklmnop12",
      "rk_live_abcdefghijklmnop12",
      `op_${"ab12".repeat(12)}`,
      "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
      "-----BEGIN EC PRIVATE KEY-----\nMIIE cut short",
    ];
    for (const shape of shapes) {
      expect(redactor.text(`before ${shape} after`), shape).not.toContain(shape.slice(0, 20));
      expect(redactor.mightNeedRedaction(JSON.stringify({ text: `x ${shape}` })), shape).toBe(true);
    }
    for (const header of [
      "AUTHORIZATION: Bearer abc123def",
      "Proxy-Authorization: token xyz789",
      "AuThOrIzAtIoN=basic q1w2e3",
    ]) {
      expect(redactor.text(header), header).toMatch(/\[REDACTED\]$/);
      expect(redactor.mightNeedRedaction(JSON.stringify({ header })), header).toBe(true);
    }
    expect(redactor.text("HTTPS://User:Pass-123@host.example/")).toBe(`HTTPS://${REDACTED}@host.example/`);
    const plain = "A plan: gather the requirements, sketch the design (see docs), then ship it.";
    expect(redactor.text(plain)).toBe(plain);
    expect(redactor.mightNeedRedaction(JSON.stringify({ text: plain }))).toBe(false);
  });

  it("replaces a URL's user information, keeping its scheme and host, and leaves URLs and addresses without any", () => {
    const redactor = new Redactor([]);
    expect(redactor.text("git clone https://deploy:s3cr3t-Pa55@git.example.com/org/repo.git now")).toBe(
      `git clone https://${REDACTED}@git.example.com/org/repo.git now`,
    );
    expect(redactor.text('{"url":"postgres://app:pw-9f8e7d6c@db.internal:5432/main"}')).toBe(
      `{"url":"postgres://${REDACTED}@db.internal:5432/main"}`,
    );
    expect(redactor.text("https://x-oauth-token@example.com/")).toBe(`https://${REDACTED}@example.com/`);
    const untouched = "https://example.com/users/@alice?by=bob@example.com and git@github.com:org/repo.git";
    expect(redactor.text(untouched)).toBe(untouched);
    expect(redactor.mightNeedRedaction(JSON.stringify({ text: "see https://a:b@c.example" }))).toBe(true);
  });

  it("fails closed: a value nested deeper than it walks is replaced by a marker, never kept as it is", () => {
    let deep: unknown = { token: GITHUB_TOKEN };
    for (let i = 0; i < 80; i++) deep = { next: deep };
    const out = JSON.stringify(new Redactor([]).value({ ok: "fine", deep }));
    expect(out).not.toContain(GITHUB_TOKEN);
    expect(out).toContain(NESTED_TOO_DEEP);
    expect(out).toContain('"ok":"fine"');
  });

  it("redacts a private key cut short (a preview) from its header to the end", () => {
    expect(new Redactor([]).text("see -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB7x")).toBe(`see ${REDACTED}`);
  });

  it("releases streamed text so that no delta ever holds a secret or a piece of one, however it is split", () => {
    const spaced = "zebra quartz 7781 mango";
    const redactor = new Redactor([spaced]);
    const shapes = [
      `sk-ant-api03-${"Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz".repeat(2)}`,
      `ghp_${"Q1w2E3r4T5y6U7i8O9p0".repeat(2)}`,
      "AKIAQWERTYUIOPASDFGH",
      `op_${"0123456789abcdef".repeat(3)}`,
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nBG5vbmUAAAAEbm9uZQAAAAAA\n-----END OPENSSH PRIVATE KEY-----",
      "Authorization: Bearer Yq7Lm3Np0Rs8Tv5Wx",
      // Header values take characters no token has: a split after one of them must not release the rest.
      "Authorization: Basic user:hunter2secretpass",
      "authorization=token abc!def123xyz789",
      // A URL's user information ends at an @ that comes after characters no token has.
      "https://deploy:Pa55!w0rd-Xq9Lm2@git.example.com/repo.git",
      spaced,
    ];
    // What a piece of each secret looks like: any 8 characters of its secret part.
    const secretParts = [
      "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz",
      "Q1w2E3r4T5y6U7i8O9p0",
      "QWERTYUIOPASDFGH",
      "0123456789abcdef",
      "b3BlbnNzaC1rZXktdjEAAAAA",
      "BG5vbmUAAAAEbm9uZQAAAAAA",
      "Yq7Lm3Np0Rs8Tv5Wx",
      "user:hunter2secretpass",
      "abc!def123xyz789",
      "deploy:Pa55!w0rd-Xq9Lm2",
      "quartz 7781",
    ];
    const pieces = secretParts.flatMap((part) =>
      Array.from({ length: Math.max(1, part.length - 7) }, (_, i) => part.slice(i, i + 8)),
    );
    const words = fc.constantFrom("the", "key", "is", "\n", ". ", "ok", "value:", "—", "日本語", "x=1;");
    const text = fc
      .array(fc.oneof(words, fc.constantFrom(...shapes)), { minLength: 1, maxLength: 12 })
      .map((parts) => parts.join(" "));
    fc.assert(
      fc.property(text, fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 40 }), (input, sizes) => {
        const emitted: string[] = [];
        const batcher = new DeltaBatcher(
          (_kind, _index, chunk) => emitted.push(chunk),
          (t) => redactor.releasable(t),
        );
        // Split the input into deltas of the generated sizes, as a model stream would.
        for (let at = 0, i = 0; at < input.length; i++) {
          const size = sizes[i % sizes.length] ?? 1;
          batcher.add("text", 0, input.slice(at, at + size));
          at += size;
          // Every delta is a chance for the batcher to let text out, as its timer does.
          (batcher as unknown as { release(): void }).release();
        }
        batcher.flush();
        expect(emitted.join("")).toBe(input);
        for (const chunk of emitted) {
          const stored = redactor.text(chunk);
          for (const piece of pieces) expect(stored).not.toContain(piece);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("never holds a stream back without bound: a key header with no end line is released after 16 KiB, redacted", () => {
    const redactor = new Redactor([]);
    const open = `-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAopen\n${"lorem ipsum ".repeat(1500)}`;
    expect(redactor.releasable(open.slice(0, 4096))).toBe(0);
    const released = redactor.releasable(open + "x ".repeat(1000));
    expect(released).toBeGreaterThan(0);
    // What goes out is still redacted as one event: from the header to its end.
    expect(redactor.text(open.slice(0, released))).toBe(REDACTED);
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
    // A JSON literal is no credential: left as it is, the JSON stays JSON.
    const none = JSON.stringify({ authorization: null, "proxy-authorization": false });
    expect(new Redactor([]).text(none)).toBe(none);
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
    // Why a skill agent's answer did not decode may quote the answer.
    const failed = { turn_index: 1, success: false, error: "Unexpected token in 'the answer'", raw_action_types: [] };
    expect(redactContent("llm_decision_decoded", failed, "redacted")).toEqual({ ...failed, error: REDACTED });
    expect(redactContent("native_tool_fallback", { turn_index: 1, reason: "(the answer)" }, "redacted")).toEqual({
      turn_index: 1,
      reason: REDACTED,
    });
  });
});
