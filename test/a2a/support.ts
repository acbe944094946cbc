// The official A2A client (@a2a-js/sdk, unchanged) pointed at the Worker: its fetch is the Worker's own, with the
// test's API key, and its transport is the binding a test names. Plus the requests A2A's types spell out in full.

import {
  type AgentCard,
  type Message,
  type Part,
  Role,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { API_KEY, api, BASE, workerFetch as fetchWorker } from "../support/helpers.ts";

export type Binding = "JSONRPC" | "HTTP+JSON";
export const BINDINGS: readonly Binding[] = ["JSONRPC", "HTTP+JSON"];

/**
 * fetch into the Worker, as a client with `key` would call it. `version` replaces the A2A-Version header the client
 * sends (it always sends its own, 1.0), as a client of another protocol version would send it.
 */
export function workerFetch(key: string = API_KEY, version?: string): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    headers.set("authorization", `Bearer ${key}`);
    if (version !== undefined) headers.set("a2a-version", version);
    return fetchWorker(new Request(request, { headers }));
  };
}

function factory(binding: Binding, key: string, version?: string): ClientFactory {
  const fetchImpl = workerFetch(key, version);
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [binding],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
}

/** The client of /a2a/<agent> over `binding`, from the agent's card. */
export function clientFor(agent: string, binding: Binding, key: string = API_KEY): Promise<Client> {
  // The card is at .well-known/agent-card.json relative to the URL: the trailing slash keeps the agent in the path.
  return factory(binding, key).createFromUrl(`${BASE}/a2a/${agent}/`);
}

/** A client built from a card, whose requests carry A2A-Version `version` (a client of another protocol version). */
export function clientSpeaking(version: string, card: AgentCard, binding: Binding): Promise<Client> {
  return factory(binding, API_KEY, version).createFromAgentCard(card);
}

export function text(value: string): Part {
  return { content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" };
}

export function data(value: unknown): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "application/json" };
}

export function userMessage(parts: Part[], ids: { taskId?: string; contextId?: string } = {}): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: ids.contextId ?? "",
    taskId: ids.taskId ?? "",
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

export function sendRequest(
  message: Message,
  options: { returnImmediately?: boolean; historyLength?: number } = {},
): SendMessageRequest {
  return {
    tenant: "",
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: options.returnImmediately ?? false,
      ...(options.historyLength !== undefined ? { historyLength: options.historyLength } : {}),
    },
    metadata: undefined,
  };
}

/** The result of SendMessage as a Task (a Message there fails the test: Outpost always answers with a task). */
export function asTask(result: Message | Task): Task {
  if ("messageId" in result) throw new Error(`expected a task, got a message: ${JSON.stringify(result)}`);
  return result;
}

/** Every response of a stream, read to its end. */
export async function drain(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

/** The texts of a message or an artifact's parts. */
export function textsOf(parts: readonly Part[] | undefined): string[] {
  return (parts ?? []).flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : []));
}

/** A state's short name: "working" for TASK_STATE_WORKING. */
export function stateName(state: TaskState | undefined): string {
  return state === undefined ? "none" : TaskState[state].replace("TASK_STATE_", "").toLowerCase();
}

/** A stream response as a short label: "task:submitted", "status:working", "artifact:+chunk", "artifact:last". */
export function label(item: StreamResponse): string {
  const payload = item.payload;
  switch (payload?.$case) {
    case "task":
      return `task:${stateName(payload.value.status?.state)}`;
    case "statusUpdate":
      return `status:${stateName(payload.value.status?.state)}`;
    case "artifactUpdate":
      return payload.value.lastChunk ? "artifact:last" : payload.value.append ? "artifact:append" : "artifact:start";
    case "message":
      return "message";
    default:
      return "empty";
  }
}

/**
 * A raw JSON-RPC call of /a2a/<agent> (A2A-Version 1.0), as a client that is not the SDK would send it: `body` as JSON
 * (a string or bytes are sent unchanged), with `key` and any other headers.
 */
export function rpcCall(
  agent: string,
  body: unknown,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return api(`/a2a/${agent}`, {
    method: "POST",
    key: options.key ?? API_KEY,
    headers: { "a2a-version": "1.0", "content-type": "application/json", ...options.headers },
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
}

/** A raw HTTP+JSON POST of /a2a/<agent><path> (A2A-Version 1.0), `body` as rpcCall sends it. */
export function restCall(
  agent: string,
  path: string,
  body: unknown,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return api(`/a2a/${agent}${path}`, {
    method: "POST",
    key: options.key ?? API_KEY,
    headers: { "a2a-version": "1.0", "content-type": "application/json", ...options.headers },
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
}

/** The same request over either binding: a JSON-RPC `method` with `params`, or the HTTP+JSON route that is it. */
export function a2aCall(
  binding: Binding,
  agent: string,
  call: { method: "SendMessage" | "SendStreamingMessage"; params: unknown },
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  if (binding === "JSONRPC") {
    return rpcCall(agent, { jsonrpc: "2.0", id: 1, method: call.method, params: call.params }, options);
  }
  const path = call.method === "SendMessage" ? "/message:send" : "/message:stream";
  return restCall(agent, path, call.params, options);
}
