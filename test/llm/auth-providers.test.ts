// How an Anthropic agent authenticates its model calls (seed 004 auth_provider): for each auth provider, a task run
// through the API against the emulator speaking that endpoint, asserting the request as the endpoint saw it (path,
// credentials, signature) and the answer; a wrong credential fails the run with provider_auth_failed and no secret
// in any event; a missing secret fails it with provider_not_configured, naming the secret.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  TEST_AWS_ACCESS_KEY_ID,
  TEST_AWS_SECRET_ACCESS_KEY,
  TEST_FOUNDRY_KEY,
  TEST_OAUTH_TOKEN,
  TEST_WRONG_SECRET,
} from "../../emulator/credentials.ts";
import type { RequestRecord } from "../../emulator/server.ts";
import { Agent } from "../../src/agents/agent.ts";
import type { AgentDefinition } from "../../src/agents/definition.ts";
import { DEFAULT_MODEL } from "../../src/config/models.ts";
import type { AgentMessage } from "../../src/contracts/runtime.ts";
import { ConfigError, StreamingError } from "../../src/errors.ts";
import { secretLookup } from "../../src/lib/secrets.ts";
import { AnthropicProvider } from "../../src/llm/anthropic.ts";
import { anthropicAuth } from "../../src/llm/anthropic-auth.ts";
import { vertexBaseUrl } from "../../src/llm/vertex.ts";
import { outboundPolicy } from "../../src/net/outbound.ts";
import {
  api,
  defineAgent,
  events,
  ofType,
  type ScriptTurn,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const emulator = env.ANTHROPIC_BASE_URL as string;
const secrets = env as unknown as Record<string, string>;
const SERVICE_ACCOUNT = JSON.parse(secrets.TEST_VERTEX_CREDENTIALS ?? "{}") as Record<string, string>;
const UNKNOWN_ACCOUNT = JSON.parse(secrets.TEST_VERTEX_CREDENTIALS_UNKNOWN ?? "{}") as Record<string, string>;

function vertexConfig(credentials: string): LlmInput {
  return {
    provider: "anthropic",
    auth_provider: "vertex",
    endpoint: emulator,
    vertex: { region: "us-east5", credentials },
  };
}

function bedrockConfig(secretAccessKey: string, accessKeyId = "TEST_AWS_ACCESS_KEY_ID"): LlmInput {
  return {
    provider: "anthropic",
    auth_provider: "bedrock",
    endpoint: emulator,
    bedrock: { region: "us-east-1", access_key_id: accessKeyId, secret_access_key: secretAccessKey },
  };
}

/** A stretch of a PEM key's base64: enough to tell whether the key leaked. */
function privateKeyBody(pem = ""): string {
  return pem.split("\n")[5] ?? "missing";
}
type LlmInput = NonNullable<AgentDefinition["llmConfig"]>;

/** The requests the emulator recorded for a task. */
async function emulatorSaw(taskId: string): Promise<RequestRecord[]> {
  const res = await fetch(`${emulator}/_emulator/stats`);
  const body = (await res.json()) as { requests: RequestRecord[] };
  return body.requests.filter((r) => r.task_id === taskId);
}

/** Runs one task whose model answers `answer`, and returns the finished task and what the emulator saw. */
async function run(llmConfig: LlmInput, answer: string) {
  const agent = defineAgent({ llmConfig });
  const marker = uniqueMarker("auth");
  await script(marker, [{ content: [{ type: "text", text: answer }] }]);
  const task = await startTask(agent, `hello ${marker}`);
  const finished = await waitForTask(task.id);
  return { task: finished, saw: await emulatorSaw(task.id) };
}

/** Every event of a task as its raw SSE text: what a client could read. */
async function rawEvents(taskId: string): Promise<string> {
  return (await api(`/v1/tasks/${taskId}/events`)).text();
}

interface Case {
  name: string;
  /** The agent's llmConfig with good credentials. */
  good: LlmInput;
  /** The same with a credential the endpoint refuses, in this secret. */
  wrong: LlmInput;
  wrongSecret: string;
  /** What the emulator saw of the wrong credential's run: [path, verified] per model request. */
  wrongSaw: [string, boolean][];
  /** The same naming a secret that is not set. */
  missing: LlmInput;
  missingSecret: string;
  /** The path, and the auth record, the emulator should have seen. */
  path: string;
  auth: RequestRecord["auth"];
  /** Secret values (or telling parts of them) that must appear in no event. */
  secretValues: string[];
}

const cases: Case[] = [
  {
    name: "oauth_token",
    good: { provider: "anthropic", auth_provider: "oauth_token", oauth_token: "TEST_OAUTH_TOKEN" },
    wrong: { provider: "anthropic", auth_provider: "oauth_token", oauth_token: "TEST_WRONG_SECRET" },
    missing: { provider: "anthropic", auth_provider: "oauth_token", oauth_token: "NO_SUCH_OAUTH_TOKEN" },
    missingSecret: "NO_SUCH_OAUTH_TOKEN",
    wrongSecret: "TEST_WRONG_SECRET",
    wrongSaw: [["/v1/messages", false]],
    path: "/v1/messages",
    auth: { scheme: "oauth_token", verified: true, principal: null, detail: { "anthropic-beta": "oauth-2025-04-20" } },
    secretValues: [TEST_OAUTH_TOKEN, TEST_WRONG_SECRET],
  },
  {
    name: "foundry",
    good: {
      provider: "anthropic",
      auth_provider: "foundry",
      endpoint: `${emulator}/anthropic`,
      foundry: { api_key: "TEST_FOUNDRY_KEY" },
    },
    wrong: {
      provider: "anthropic",
      auth_provider: "foundry",
      endpoint: `${emulator}/anthropic`,
      foundry: { api_key: "TEST_WRONG_SECRET" },
    },
    missing: {
      provider: "anthropic",
      auth_provider: "foundry",
      endpoint: `${emulator}/anthropic`,
      foundry: { api_key: "NO_SUCH_FOUNDRY_KEY" },
    },
    missingSecret: "NO_SUCH_FOUNDRY_KEY",
    wrongSecret: "TEST_WRONG_SECRET",
    wrongSaw: [["/anthropic/v1/messages", false]],
    path: "/anthropic/v1/messages",
    auth: { scheme: "foundry", verified: true, principal: null, detail: { header: "x-api-key" } },
    secretValues: [TEST_FOUNDRY_KEY, TEST_WRONG_SECRET],
  },
  {
    name: "vertex",
    good: vertexConfig("TEST_VERTEX_CREDENTIALS"),
    // The same account with a key Google never saw: its token endpoint refuses the signed JWT, so no model call.
    wrong: vertexConfig("TEST_VERTEX_CREDENTIALS_UNKNOWN"),
    wrongSecret: "TEST_VERTEX_CREDENTIALS_UNKNOWN",
    wrongSaw: [],
    missing: vertexConfig("NO_SUCH_SERVICE_ACCOUNT"),
    missingSecret: "NO_SUCH_SERVICE_ACCOUNT",
    path: `/v1/projects/emulator-project/locations/us-east5/publishers/anthropic/models/${DEFAULT_MODEL}:streamRawPredict`,
    auth: {
      scheme: "vertex",
      verified: true,
      principal: SERVICE_ACCOUNT.client_email ?? null,
      detail: { project: "emulator-project", region: "us-east5", token_id: expect.stringMatching(/^tok_\d+$/) },
    },
    secretValues: [privateKeyBody(SERVICE_ACCOUNT.private_key), privateKeyBody(UNKNOWN_ACCOUNT.private_key)],
  },
  {
    name: "bedrock",
    good: bedrockConfig("TEST_AWS_SECRET_ACCESS_KEY"),
    // The right key id with the wrong secret key: the signature does not match.
    wrong: bedrockConfig("TEST_WRONG_SECRET"),
    wrongSecret: "TEST_WRONG_SECRET",
    wrongSaw: [[`/model/${DEFAULT_MODEL}/invoke-with-response-stream`, false]],
    missing: bedrockConfig("TEST_AWS_SECRET_ACCESS_KEY", "NO_SUCH_AWS_KEY_ID"),
    missingSecret: "NO_SUCH_AWS_KEY_ID",
    path: `/model/${DEFAULT_MODEL}/invoke-with-response-stream`,
    auth: {
      scheme: "bedrock",
      verified: true,
      principal: TEST_AWS_ACCESS_KEY_ID,
      detail: {
        region: "us-east-1",
        service: "bedrock",
        signed_headers: "content-type;host;x-amz-content-sha256;x-amz-date",
      },
    },
    secretValues: [TEST_AWS_SECRET_ACCESS_KEY, TEST_WRONG_SECRET],
  },
];

describe.each(cases)("an agent with auth_provider $name", (c) => {
  it("runs a task whose model call the endpoint authenticates, and answers with the model's reply", async () => {
    const { task, saw } = await run(c.good, `Hello from ${c.name}.`);
    expect(task.status).toBe("completed");
    expect(task.result).toBe(`Hello from ${c.name}.`);
    expect(saw).toHaveLength(1);
    expect(saw[0]).toMatchObject({ path: c.path, status: 200, stream: true, auth: c.auth });
  });

  it("fails the run with provider_auth_failed on a wrong credential, naming its secret, with no secret in any event", async () => {
    const { task, saw } = await run(c.wrong, "unused");
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({ code: "provider_auth_failed", retryable: false });
    expect(task.error?.message).toContain(c.wrongSecret);
    expect(saw.map((r) => [r.path, r.auth?.verified])).toEqual(c.wrongSaw);
    const events = await rawEvents(task.id);
    expect(events).toContain("provider_auth_failed");
    for (const value of c.secretValues) expect(events).not.toContain(value);
  });

  it("fails the run with provider_not_configured when its secret is not set, naming the secret", async () => {
    const { task, saw } = await run(c.missing, "unused");
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({ code: "provider_not_configured" });
    expect(task.error?.message).toContain(c.missingSecret);
    expect(saw).toEqual([]);
  });
});

describe("an agent with auth_provider vertex", () => {
  it("exchanges a JWT for an access token once, and reuses it until near its expiry", async () => {
    const first = await run(vertexConfig("TEST_VERTEX_CREDENTIALS"), "One.");
    const second = await run(vertexConfig("TEST_VERTEX_CREDENTIALS"), "Two.");
    expect([first.task.result, second.task.result]).toEqual(["One.", "Two."]);
    const tokens = [...first.saw, ...second.saw].map((r) => r.auth?.detail.token_id);
    expect(tokens).toHaveLength(2);
    expect(tokens[1]).toBe(tokens[0]);
  });

  it("fails with the reason of the token endpoint that refused the account", async () => {
    const { task } = await run(vertexConfig("TEST_VERTEX_CREDENTIALS_UNKNOWN"), "unused");
    expect(task.error?.message).toBe(
      "The model provider rejected the credentials; check the TEST_VERTEX_CREDENTIALS_UNKNOWN secret: Google's token " +
        `endpoint refused the service account ${UNKNOWN_ACCOUNT.client_email} (HTTP 400): invalid_grant: Invalid JWT Signature.`,
    );
  });
});

/** One model call through the provider an agent with `llmConfig` gets, drained: what it yielded and what it threw. */
async function call(llmConfig: LlmInput, turn: ScriptTurn) {
  const marker = uniqueMarker("auth-call");
  await script(marker, [turn]);
  const auth = await anthropicAuth(llmConfig as Parameters<typeof anthropicAuth>[0], {
    secret: secretLookup(env),
    anthropic: { apiKey: undefined, baseURL: undefined },
    outbound: outboundPolicy(env.OUTPOST_ALLOW_PRIVATE_HOSTS),
  });
  const provider = new AnthropicProvider({ ...auth, maxRetries: 0 });
  const items: AgentMessage[] = [];
  const params = {
    model: DEFAULT_MODEL,
    max_tokens: 256,
    messages: [{ role: "user" as const, content: `${marker} go` }],
  };
  try {
    for await (const item of provider.stream(params, { signal: new AbortController().signal })) items.push(item);
    return { items, error: undefined };
  } catch (error) {
    return { items, error };
  }
}

function textOf(items: AgentMessage[]): string {
  return items
    .map((item) =>
      item.type === "stream_event" &&
      item.event.type === "content_block_delta" &&
      item.event.delta.type === "text_delta"
        ? item.event.delta.text
        : "",
    )
    .join("");
}

describe("an agent with auth_provider bedrock", () => {
  const bedrock = bedrockConfig("TEST_AWS_SECRET_ACCESS_KEY");

  it("runs a tool-using task, the tool call and usage carried through the event stream", async () => {
    const agent = defineAgent({ allowedTools: ["TodoWrite"], llmConfig: bedrock });
    const marker = uniqueMarker("bedrock-tools");
    await script(marker, [
      {
        content: [
          { type: "text", text: "Planning." },
          toolUse("TodoWrite", { todos: [{ content: "Pack", status: "pending" }] }),
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 120, output_tokens: 30 },
      },
      { content: [{ type: "text", text: "Packed." }], usage: { input_tokens: 200, output_tokens: 10 } },
    ]);
    const task = await startTask(agent, `plan ${marker}`);
    const finished = await waitForTask(task.id);
    expect(finished).toMatchObject({ status: "completed", result: "Packed." });
    expect(finished.usage).toMatchObject({ model_calls: 2, input_tokens: 320, output_tokens: 40 });
    const log = await events(task.id);
    expect(ofType(log, "todo_list_updated")[0]?.payload.todos).toEqual([{ content: "Pack", status: "pending" }]);
    const saw = await emulatorSaw(task.id);
    expect(saw.map((r) => [r.provider, r.turn, r.status, r.auth?.verified])).toEqual([
      ["bedrock", 0, 200, true],
      ["bedrock", 1, 200, true],
    ]);
  });

  it("yields the events before an exception in the stream, then fails with it mapped onto the provider errors", async () => {
    const { items, error } = await call(bedrock, {
      content: [{ type: "text", text: "one two three four" }],
      faults: [{ kind: "stream_error", after_deltas: 2, error_type: "overloaded_error", message: "Model is busy." }],
    });
    expect(textOf(items)).toBe("one two ");
    expect(error).toBeInstanceOf(StreamingError);
    expect((error as StreamingError).cause).toMatchObject({ code: "provider_overloaded", retryable: true });
    expect((error as StreamingError).message).toContain("Model is busy.");
  });

  it("refuses a message of the event stream whose checksum does not match", async () => {
    const { items, error } = await call(bedrock, {
      content: [{ type: "text", text: "one two three four" }],
      faults: [{ kind: "malformed", after_deltas: 1 }],
    });
    expect(textOf(items)).toBe("one ");
    expect((error as StreamingError).cause).toMatchObject({ code: "malformed_response" });
  });
});

describe("auth provider configuration", () => {
  it("refuses, when the agent is defined, an auth provider on another provider and settings for another one", () => {
    class Defined extends Agent {}
    const make = (llmConfig: unknown) => () =>
      new Defined({ name: "auth_config", systemPrompt: "x", llmConfig: llmConfig as never });
    expect(make({ provider: "gemini", auth_provider: "bedrock", bedrock: { region: "us-east-1" } })).toThrow(
      /llmConfig.auth_provider: is for Anthropic's models only/,
    );
    expect(make({ provider: "anthropic", auth_provider: "vertex", bedrock: { region: "us-east-1" } })).toThrow(
      /llmConfig.bedrock: is for auth_provider bedrock/,
    );
    expect(make({ provider: "anthropic", auth_provider: "bedrock", bedrock: { region: "US_EAST" } })).toThrow(
      /llmConfig.bedrock.region/,
    );
    expect(
      make({ provider: "anthropic", auth_provider: "oauth_token", oauth_token: "OUTPOST_WEBHOOK_SECRET" }),
    ).toThrow(ConfigError);
  });

  it("reaches Vertex at the region's host, or at the global and multi-region hosts Google names", () => {
    expect(["us-east5", "global", "us", "eu"].map(vertexBaseUrl)).toEqual([
      "https://us-east5-aiplatform.googleapis.com",
      "https://aiplatform.googleapis.com",
      "https://aiplatform.us.rep.googleapis.com",
      "https://aiplatform.eu.rep.googleapis.com",
    ]);
  });

  it("refuses a private endpoint the operator has not allowed, before any credential is sent", async () => {
    const { task } = await run(
      { ...bedrockConfig("TEST_AWS_SECRET_ACCESS_KEY"), endpoint: "http://10.1.2.3" },
      "unused",
    );
    expect(task.status).toBe("failed");
    expect(task.error?.code).toBe("url_not_allowed");
  });
});
