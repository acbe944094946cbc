// The doors of Outpost's commands, for the table-driven tests of test/commands/ (issue 36, item 2): one small driver
// per adapter that sends a command the way that adapter's clients send it (/v1 over HTTP, A2A's two bindings, the
// MCP server through the official MCP client) and answers with a normalised Outcome (outcome.ts), so that a row can
// say both "refused for this reason" and "refused in this adapter's shape"; the doors that start a task; and what a
// command left behind (the task a refused creation would have made, the key's creation bucket).
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { expect } from "vitest";
import { z } from "zod";
import { InvocationSchema, TaskResponseSchema } from "../../src/http/responses.ts";
import { derivedTaskId } from "../../src/tasks/task-ids.ts";
import { restCall, rpcCall } from "../a2a/support.ts";
import { API_KEY, api, BASE, workerFetch } from "../support/helpers.ts";
import { carriedOut, httpOutcome, mcpErrorOutcome, type Outcome, toolResultOutcome } from "./outcome.ts";

/** The keys of vitest.config.ts the rows use. */
export const KEYS = {
  /** Tenant "default", admin. */
  admin: API_KEY,
  /** Tenant "default", read only. */
  reader: "test-read-key",
  /** Tenant "default", run only. */
  runner: "test-run-key",
} as const;

/** Tenant "limits", run and read, 3 tasks a minute (vitest.config.ts): the key of every rate row. */
export const LIMITED = { key: "test-limited-key", id: "limited", tenant: "limits", perMinute: 3 } as const;

// ---- /v1 --------------------------------------------------------------------------------------------------------

export interface Call {
  key?: string;
  /** Sent as Idempotency-Key: the id of what the command would create follows from it (idempotent). */
  idempotencyKey?: string;
}

function headersOf(call: Call): Record<string, string> {
  return call.idempotencyKey ? { "idempotency-key": call.idempotencyKey } : {};
}

/** POST `path` of /v1 with `body` as JSON; a success is checked against `success`, the route's response schema. */
export async function v1Post(path: string, body: unknown, success: z.ZodType, call: Call = {}): Promise<Outcome> {
  const headers = headersOf(call);
  return httpOutcome(
    await api(path, { method: "POST", body: JSON.stringify(body), key: call.key ?? API_KEY, headers }),
    success,
  );
}

// ---- A2A --------------------------------------------------------------------------------------------------------

export type Binding = "JSON-RPC" | "HTTP+JSON";

export function a2aMessage(
  parts: unknown[],
  extra: { taskId?: string; messageId?: string; metadata?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return { messageId: extra.messageId ?? crypto.randomUUID(), role: "ROLE_USER", parts, ...extra };
}

/** SendMessage over `binding`: `params` as A2A v1.0 spells them (message, configuration). */
export async function a2aSend(binding: Binding, agent: string, params: unknown, call: Call = {}): Promise<Outcome> {
  const options = { key: call.key ?? API_KEY, headers: headersOf(call) };
  const res =
    binding === "JSON-RPC"
      ? await rpcCall(agent, { jsonrpc: "2.0", id: 1, method: "SendMessage", params }, options)
      : await restCall(agent, "/message:send", params, options);
  return httpOutcome(res);
}

/** CancelTask over `binding`. */
export async function a2aCancel(binding: Binding, agent: string, taskId: string, key: string): Promise<Outcome> {
  const res =
    binding === "JSON-RPC"
      ? await rpcCall(agent, { jsonrpc: "2.0", id: 1, method: "CancelTask", params: { id: taskId } }, { key })
      : await restCall(agent, `/tasks/${taskId}:cancel`, "", { key });
  return httpOutcome(res);
}

/** CreateTaskPushNotificationConfig of `config` (its url, token) for task `taskId` over `binding`. */
export async function a2aCreatePushConfig(
  binding: Binding,
  agent: string,
  taskId: string,
  config: Record<string, unknown>,
  key: string,
): Promise<Outcome> {
  const method = "CreateTaskPushNotificationConfig";
  const res =
    binding === "JSON-RPC"
      ? await rpcCall(agent, { jsonrpc: "2.0", id: 1, method, params: { taskId, ...config } }, { key })
      : await restCall(agent, `/tasks/${taskId}/pushNotificationConfigs`, config, { key });
  return httpOutcome(res);
}

// ---- MCP --------------------------------------------------------------------------------------------------------

/** The official MCP client connected to /mcp with `key`, each request carrying `headers`; closed after `use`. */
export async function withMcp<T>(
  key: string,
  use: (client: Client) => Promise<T>,
  headers: Record<string, string> = {},
): Promise<T> {
  const client = new Client(
    { name: "commands", version: "1.0.0" },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${BASE}/mcp`), {
    fetch: (url, init) => {
      const all = new Headers(init?.headers);
      all.set("authorization", `Bearer ${key}`);
      for (const [name, value] of Object.entries(headers)) all.set(name, value);
      return workerFetch(new Request(url, { ...init, headers: all }));
    },
  });
  await client.connect(transport);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** tools/call of `name` with `args`, held open until the run ends. */
export function mcpCall(name: string, args: Record<string, unknown>, call: Call = {}): Promise<Outcome> {
  return withMcp(
    call.key ?? API_KEY,
    async (client) => {
      try {
        return toolResultOutcome(await client.callTool({ name, arguments: args }));
      } catch (error) {
        return mcpErrorOutcome(error);
      }
    },
    headersOf(call),
  );
}

/** A task-augmented tools/call of `name`: the handle it answers with at once (its taskId the Outpost task's). */
export function mcpTaskCall(name: string, args: Record<string, unknown>, call: Call = {}): Promise<Outcome> {
  return withMcp(
    call.key ?? API_KEY,
    async (client) => {
      // The listing tells the client which tools take a task.
      await client.listTools();
      const stream = client.experimental.tasks.callToolStream({ name, arguments: args });
      const first = (await stream.next()).value;
      await stream.return();
      if (first?.type === "taskCreated") return carriedOut(200, first.task.taskId);
      if (first?.type === "error") return mcpErrorOutcome(first.error);
      throw new Error(`expected taskCreated or error, got ${JSON.stringify(first)}`);
    },
    headersOf(call),
  );
}

/**
 * A tools/call sent to /mcp as raw JSON-RPC over HTTP, as a client that is not the SDK would send it: for what the
 * SDK's client does not let through as the server answered it (the transport's HTTP refusal of a body too large).
 */
export async function mcpPost(params: Record<string, unknown>, call: Call = {}): Promise<Outcome> {
  const res = await api("/mcp", {
    method: "POST",
    key: call.key ?? API_KEY,
    headers: { accept: "application/json, text/event-stream", ...headersOf(call) },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params }),
  });
  return httpOutcome(res);
}

/** tasks/cancel of an Outpost task through the MCP server. */
export function mcpCancel(taskId: string, key: string): Promise<Outcome> {
  return withMcp(key, async (client) => {
    try {
      await client.experimental.tasks.cancelTask(taskId);
      return carriedOut(200, taskId);
    } catch (error) {
      return mcpErrorOutcome(error);
    }
  });
}

// ---- Starting a task, on each door a client calls ---------------------------------------------------------------

/** A door that starts a task on `agent` with `input`: what "start a task" is on that adapter. */
export interface StartDoor {
  adapter: string;
  start: (agent: string, input: string, call: Call) => Promise<Outcome>;
}

function a2aStart(binding: Binding): StartDoor["start"] {
  return (agent, input, call) =>
    a2aSend(
      binding,
      agent,
      { message: a2aMessage([{ text: input }]), configuration: { returnImmediately: true } },
      call,
    );
}

/** What POST …/invoke answers: the ExecutionResult once the run has ended, else the task. */
const InvokeResponseSchema = z.union([InvocationSchema, TaskResponseSchema]);

export const START_DOORS = {
  v1Tasks: {
    adapter: "/v1 POST /v1/agents/:name/tasks",
    start: (agent, input, call) => v1Post(`/v1/agents/${agent}/tasks`, { input }, TaskResponseSchema, call),
  },
  v1Invoke: {
    adapter: "/v1 POST /v1/agents/:name/invoke",
    start: (agent, input, call) =>
      v1Post(`/v1/agents/${agent}/invoke?wait=0`, { message: input }, InvokeResponseSchema, call),
  },
  a2aJsonRpc: { adapter: "A2A JSON-RPC SendMessage", start: a2aStart("JSON-RPC") },
  a2aRest: { adapter: "A2A HTTP+JSON POST /message:send", start: a2aStart("HTTP+JSON") },
  mcp: { adapter: "MCP tools/call", start: (agent, input, call) => mcpCall(agent, { input }, call) },
  mcpTask: {
    adapter: "MCP task-augmented tools/call",
    start: (agent, input, call) => mcpTaskCall(agent, { input }, call),
  },
} satisfies Record<string, StartDoor>;

/**
 * Starts a task through `door` with a fresh Idempotency-Key: the outcome, and the id the task has (or would have had:
 * the id follows from the key, whatever the door answered).
 */
export async function startThrough(
  door: StartDoor,
  agent: string,
  input: string,
  key: string,
  tenant = "default",
): Promise<{ outcome: Outcome; id: string }> {
  const { idempotencyKey, id } = await idempotent("start", tenant);
  return { outcome: await door.start(agent, input, { key, idempotencyKey }), id };
}

// ---- What a command left behind ---------------------------------------------------------------------------------

/** A fresh Idempotency-Key, and the id of the task (or schedule, or evaluation) a creation under it gets. */
export async function idempotent(label: string, tenant = "default"): Promise<{ idempotencyKey: string; id: string }> {
  const idempotencyKey = `${label}-${crypto.randomUUID()}`;
  return { idempotencyKey, id: await derivedTaskId("idempotency", tenant, idempotencyKey) };
}

/** Whether task `id` exists, read with `key` (a tenant's key): 404 task_not_found is "no". */
export async function taskExists(id: string, key: string = API_KEY): Promise<boolean> {
  const res = await api(`/v1/tasks/${id}`, { key });
  if (res.status === 200) return true;
  const outcome = await httpOutcome(res);
  expect([outcome.status, outcome.code]).toEqual([404, "task_not_found"]);
  return false;
}

/** The key's creation bucket (durable-objects/rate-limiter.ts) holding `tokens` as of now: a minute's start. */
export async function setBucket(keyId: string, tokens: number): Promise<void> {
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${keyId}`));
  await runInDurableObject(limiter, (_instance, state) => {
    state.storage.sql.exec("INSERT OR REPLACE INTO bucket (id, tokens, at) VALUES (1, ?, ?)", tokens, Date.now());
  });
}
