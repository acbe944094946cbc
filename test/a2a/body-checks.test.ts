// Issue 36 finding 5: both A2A bindings read their body through the reader and checks /v1 uses (its size cap, UTF-8,
// JSON, the checks of src/http/validation.ts) and a message's text as a task's input is checked, answering in A2A's
// error shapes: a JSON-RPC error object (parse error, invalid request, invalid params) or an HTTP+JSON error status,
// with Outpost's code in the ErrorInfo. Nothing refused starts a task (its id follows from the Idempotency-Key).
import { describe, expect, it } from "vitest";
import { derivedTaskId } from "../../src/tasks/task-ids.ts";
import { api, defineAgent } from "../support/helpers.ts";
import { BINDINGS, type Binding, restCall, rpcCall } from "./support.ts";

const chat = defineAgent({ description: "Answers." });

function errorInfo(metadata: Record<string, string>) {
  return {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    reason: "INVALID_PARAMS",
    domain: "a2a-protocol.org",
    metadata,
  };
}

/** A SendMessage body of `binding` whose message's one text part is `text` (JSON text, spliced in unchanged). */
function sendBody(binding: Binding, textJson: string): string {
  const params = `{"message":{"messageId":"${crypto.randomUUID()}","role":"ROLE_USER","parts":[{"text":${textJson}}]},"configuration":{"returnImmediately":true}}`;
  return binding === "JSONRPC" ? `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${params}}` : params;
}

/** Sends `body` as SendMessage over `binding` with a fresh Idempotency-Key; returns the answer and the task id it names. */
async function send(
  binding: Binding,
  body: string | Uint8Array<ArrayBuffer>,
): Promise<{ res: Response; taskId: string }> {
  const key = `a2a-body-${crypto.randomUUID()}`;
  const options = { headers: { "idempotency-key": key } };
  const res =
    binding === "JSONRPC" ? await rpcCall(chat, body, options) : await restCall(chat, "/message:send", body, options);
  return { res, taskId: await derivedTaskId("idempotency", "default", key) };
}

async function notCreated(taskId: string): Promise<void> {
  expect((await api(`/v1/tasks/${taskId}`)).status).toBe(404);
}

describe("A2A bodies are read and checked as /v1 reads them, over JSON-RPC", () => {
  it("a body over 256 KiB is a 413 with JSON-RPC's invalid request (-32600), Outpost's payload_too_large, and starts nothing", async () => {
    const { res, taskId } = await send("JSONRPC", sendBody("JSONRPC", JSON.stringify("x".repeat(4 * 1024 * 1024))));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: "The body is larger than 262144 bytes.",
        data: [errorInfo({ code: "payload_too_large" })],
      },
    });
    await notCreated(taskId);
  });

  it("a body that is not JSON is a parse error (-32700) with Outpost's invalid_json", async () => {
    const { res, taskId } = await send("JSONRPC", '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "The body is not valid JSON.", data: [errorInfo({ code: "invalid_json" })] },
    });
    await notCreated(taskId);
  });

  it("a lone surrogate in a text part is invalid params naming its path, and starts nothing", async () => {
    const { res, taskId } = await send("JSONRPC", sendBody("JSONRPC", '"half \\ud800 a character"'));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32602,
        message: "Invalid params.message.parts.0.text: contains a lone UTF-16 surrogate (half a character).",
        data: [errorInfo({ code: "validation_failed", field: "params.message.parts.0.text" })],
      },
    });
    await notCreated(taskId);
  });

  it("a message's text over 100,000 characters is refused as a task's input is", async () => {
    const { res, taskId } = await send("JSONRPC", sendBody("JSONRPC", JSON.stringify("y".repeat(100_001))));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: {
        code: -32602,
        message: "Invalid message.parts: must be at most 100000 characters",
        data: [errorInfo({ code: "validation_failed", field: "message.parts" })],
      },
    });
    await notCreated(taskId);
  });
});

describe("A2A bodies are read and checked as /v1 reads them, over HTTP+JSON", () => {
  function restError(code: number, status: string, message: string, metadata: Record<string, string>) {
    return { error: { code, status, message, details: [errorInfo(metadata)] } };
  }

  it("a body over 256 KiB is a 413 with Outpost's payload_too_large, and starts nothing", async () => {
    const { res, taskId } = await send("HTTP+JSON", sendBody("HTTP+JSON", JSON.stringify("x".repeat(4 * 1024 * 1024))));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual(
      restError(413, "INVALID_ARGUMENT", "The body is larger than 262144 bytes.", { code: "payload_too_large" }),
    );
    await notCreated(taskId);
  });

  it("a body that is not UTF-8 is a 400 with Outpost's invalid_json", async () => {
    const bytes = new Uint8Array(new TextEncoder().encode(sendBody("HTTP+JSON", '"caf~"')));
    // "é" as Latin-1 (0xE9 alone, in the place of the "~"), which is not UTF-8.
    bytes[bytes.indexOf(0x7e)] = 0xe9;
    const { res, taskId } = await send("HTTP+JSON", bytes);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(
      restError(400, "INVALID_ARGUMENT", "The body is not valid UTF-8.", { code: "invalid_json" }),
    );
    await notCreated(taskId);
  });

  it("a lone surrogate in a text part is a 400 naming its path, and starts nothing", async () => {
    const { res, taskId } = await send("HTTP+JSON", sendBody("HTTP+JSON", '"half \\udc00 a character"'));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(
      restError(
        400,
        "INVALID_ARGUMENT",
        "Invalid message.parts.0.text: contains a lone UTF-16 surrogate (half a character).",
        {
          code: "validation_failed",
          field: "message.parts.0.text",
        },
      ),
    );
    await notCreated(taskId);
  });

  it("a message's text over 100,000 characters is a 400 as a task's input is", async () => {
    const { res, taskId } = await send("HTTP+JSON", sendBody("HTTP+JSON", JSON.stringify("y".repeat(100_001))));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual(
      restError(400, "INVALID_ARGUMENT", "Invalid message.parts: must be at most 100000 characters", {
        code: "validation_failed",
        field: "message.parts",
      }),
    );
    await notCreated(taskId);
  });
});

describe.each(BINDINGS)("A2A body checks on every route, over %s", (binding) => {
  it("a CreateTaskPushNotificationConfig body with a lone surrogate is refused naming its path", async () => {
    const taskId = crypto.randomUUID();
    const res =
      binding === "JSONRPC"
        ? await rpcCall(
            chat,
            `{"jsonrpc":"2.0","id":"p","method":"CreateTaskPushNotificationConfig","params":{"taskId":"${taskId}","url":"https://example.com/\\ud800"}}`,
          )
        : await restCall(chat, `/tasks/${taskId}/pushNotificationConfigs`, '{"url":"https://example.com/\\ud800"}');
    const field = binding === "JSONRPC" ? "params.url" : "url";
    expect(res.status).toBe(binding === "JSONRPC" ? 200 : 400);
    const body = (await res.json()) as { error: { data?: unknown[]; details?: unknown[] } };
    expect(body.error.data ?? body.error.details).toEqual([errorInfo({ code: "validation_failed", field })]);
  });
});

describe.each(BINDINGS)("Outpost's refusals inside A2A keep /v1's status, over %s", (binding) => {
  it("an Idempotency-Key reused for another message is idempotency_key_reused: 422 on HTTP+JSON, invalid params on JSON-RPC", async () => {
    const key = `a2a-reused-${crypto.randomUUID()}`;
    expect((await restOrRpc(binding, "first message", key)).status).toBe(200);
    const res = await restOrRpc(binding, "another message", key);
    expect(res.status).toBe(binding === "JSONRPC" ? 200 : 422);
    const body = (await res.json()) as { error: { code: number; data?: unknown[]; details?: unknown[] } };
    expect(body.error.code).toBe(binding === "JSONRPC" ? -32602 : 422);
    expect(body.error.data ?? body.error.details).toEqual([
      errorInfo({ code: "idempotency_key_reused", field: "idempotency-key" }),
    ]);
  });
});

function restOrRpc(binding: Binding, text: string, idempotencyKey: string): Promise<Response> {
  const body = sendBody(binding, JSON.stringify(text));
  const options = { headers: { "idempotency-key": idempotencyKey } };
  return binding === "JSONRPC" ? rpcCall(chat, body, options) : restCall(chat, "/message:send", body, options);
}
