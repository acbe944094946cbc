// Injects a run's faults (src/faults/faults.ts) where the real ones would arrive, so that the SDKs' retries and the
// runtime's recoveries handle them exactly as they would in production:
// - a model fault is an HTTP response under the provider's SDK (its transport): 429 with Retry-After, 529
//   overloaded, or the real response's stream broken off (`midstream`) or turned to bad JSON (`malformed`) after its
//   first events. It strikes the first attempt of the nth model call only;
// - an MCP fault is the MCP client's fetch of each tool call failing as a refused connection (`down`) or never
//   answering until the call's own timeout (`timeout`);
// - evict_after_step resets the object (ctx.abort) right after that checkpoint, with the heartbeat due at once;
// - drop_client closes every client stream of the run after its second checkpoint (the run goes on).
// Each fault is recorded as fired in the task's state before it is injected, so a fault fires once whatever evictions
// follow, and each is an event (`fault_injected`) in the run's log and bundle.
import type { Message, MessageCreateParamsBase } from "@anthropic-ai/sdk/resources/messages";
import type { AgentMessage } from "../contracts/runtime.ts";
import type { TypedState } from "../lib/state-key.ts";
import type { Fetch, ModelProvider, StreamOptions } from "../llm/provider.ts";
import {
  FAULT_STATE_KEY,
  type FaultInjected,
  type FaultState,
  type McpFault,
  type ModelFault,
  modelFaultOf,
} from "./faults.ts";

export interface FaultInjectorDeps {
  state: Pick<TypedState, "get" | "put">;
  /** Appends the fault_injected event. */
  record: (fault: FaultInjected) => void;
  /** Resets the object: the heartbeat due now, the writes durable, then ctx.abort(reason). Never returns. */
  evict: (reason: string) => Promise<void>;
  /** Closes every client stream of the task (SSE subscriptions); how many there were. */
  dropClients: () => number;
  /** The fetch the faults stand in front of. */
  fetch?: Fetch;
}

/** SSE frames (or whatever a provider streams) that pass before a stream fault: the message's start and a little. */
const FRAMES_BEFORE_BREAK = 3;
/** The checkpoint after which drop_client drops the clients: the run's first model call has answered. */
const DROP_AFTER_STEP = 2;

export class FaultInjector {
  private readonly deps: FaultInjectorDeps;
  private readonly fetch: Fetch;
  /** The model call whose first HTTP attempt is to be struck, set as the call starts. */
  private armed: ModelFault | null = null;
  /** The checkpoint just saved whose eviction is due before the next step. */
  private evictDue: number | null = null;
  /** The checkpoint just saved after which the clients are to be dropped. */
  private dropDue: number | null = null;

  constructor(deps: FaultInjectorDeps) {
    this.deps = deps;
    this.fetch = deps.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The run's injector, or null when its task asks for no fault. */
  static of(deps: FaultInjectorDeps): FaultInjector | null {
    return deps.state.get(FAULT_STATE_KEY) ? new FaultInjector(deps) : null;
  }

  private current(): FaultState {
    return this.deps.state.get(FAULT_STATE_KEY) ?? { faults: {}, fired: {} };
  }

  private fire(which: keyof FaultState["fired"]): void {
    const state = this.current();
    this.deps.state.put(FAULT_STATE_KEY, { ...state, fired: { ...state.fired, [which]: new Date().toISOString() } });
  }

  /** The provider with its calls counted: the call the model fault names arms the transport for its first attempt. */
  provider(inner: ModelProvider): ModelProvider {
    const spec = this.current().faults.model_fault;
    if (spec === undefined) return inner;
    const fault = modelFaultOf(spec);
    return {
      name: inner.name,
      stream: (params: MessageCreateParamsBase, options: StreamOptions): AsyncGenerator<AgentMessage, Message> => {
        // The call's number is the conversation's: how many answers it already holds, plus one (as a replay counts).
        const call = params.messages.filter((m) => m.role === "assistant").length + 1;
        this.armed = call === fault.call && !this.current().fired.model_fault ? fault : null;
        return inner.stream(params, options);
      },
    };
  }

  /** The transport under the model provider's SDK. */
  readonly transport: Fetch = async (input, init) => {
    const fault = this.armed;
    this.armed = null;
    if (!fault) return this.fetch(input, init);
    this.fire("model_fault");
    this.deps.record({
      fault: "model_fault",
      kind: fault.kind,
      call: fault.call,
      step: null,
      server: null,
      tool: null,
    });
    switch (fault.kind) {
      case "429":
        return errorResponse(429, "rate_limit_error", "Rate limited (fault injection).", { "retry-after": "1" });
      case "529":
        return errorResponse(529, "overloaded_error", "Overloaded (fault injection).");
      case "midstream":
      case "malformed":
        return broken(await this.fetch(input, init), fault.kind);
    }
  };

  /** The fetch of an MCP server's client: the server's tool calls fail as the fault says; the rest passes. */
  mcpTransport(server: string): ((request: Request) => Promise<Response>) | undefined {
    const fault = this.current().faults.mcp_fault;
    if (fault?.server !== server) return undefined;
    return async (request) => {
      const tool = request.method === "POST" ? toolCalled(await request.clone().text()) : null;
      if (tool === null) return this.fetch(request);
      this.deps.record({ fault: "mcp_fault", kind: fault.kind, call: null, step: null, server, tool });
      return mcpFailure(fault, request.signal);
    };
  }

  /** Called as a checkpoint is saved: the eviction it triggers happens before the next step starts. */
  checkpointSaved(sequence: number): void {
    const { faults, fired } = this.current();
    if (faults.evict_after_step === sequence && !fired.evict_after_step) this.evictDue = sequence;
    if (faults.drop_client && sequence >= DROP_AFTER_STEP && !fired.drop_client) this.dropDue = sequence;
  }

  /** Before each step: resets the object if a checkpoint asked for it (never returns then). */
  async beforeStep(): Promise<void> {
    const drop = this.dropDue;
    if (drop !== null) {
      this.dropDue = null;
      this.fire("drop_client");
      // Recorded first: a client that reads the event has seen everything up to the drop.
      this.deps.record({ fault: "drop_client", kind: "drop", call: null, step: drop, server: null, tool: null });
      this.deps.dropClients();
    }
    const step = this.evictDue;
    if (step === null) return;
    this.evictDue = null;
    this.fire("evict_after_step");
    this.deps.record({ fault: "evict_after_step", kind: "evict", call: null, step, server: null, tool: null });
    await this.deps.evict(`Fault injection: the object is reset after step ${step}.`);
  }
}

/** An error response as the Messages API sends one (the SDKs read the status; Anthropic's reads the body too). */
function errorResponse(status: number, type: string, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ type: "error", error: { type, message } }), {
    status,
    headers: { "content-type": "application/json", "request-id": `req_fault_${status}`, ...headers },
  });
}

/**
 * The response with its stream cut after its first frames: `midstream` errors as a dropped connection does;
 * `malformed` ends on a frame whose JSON is cut short. A response that is not a stream passes unchanged.
 */
function broken(response: Response, kind: "midstream" | "malformed"): Response {
  if (!response.ok || !response.body) return response;
  const upstream = response.body.getReader();
  const encoder = new TextEncoder();
  let frames = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await upstream.read();
      if (done) return cut(controller, upstream);
      // Pass the chunk up to the frame boundary at which the stream breaks, if it holds it.
      let end = value.length;
      for (let i = 0; i + 1 < value.length; i++) {
        if (value[i] === 0x0a && value[i + 1] === 0x0a && ++frames === FRAMES_BEFORE_BREAK) {
          end = i + 2;
          break;
        }
      }
      controller.enqueue(value.subarray(0, end));
      if (frames >= FRAMES_BEFORE_BREAK) await cut(controller, upstream);
    },
    cancel(reason) {
      return upstream.cancel(reason);
    },
  });
  async function cut(
    controller: ReadableStreamDefaultController<Uint8Array>,
    reader: ReadableStreamDefaultReader<Uint8Array>,
  ): Promise<void> {
    await reader.cancel().catch(() => undefined);
    if (kind === "malformed") {
      controller.enqueue(
        encoder.encode('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n'),
      );
      controller.close();
    } else {
      controller.error(new TypeError("Network connection lost (fault injection)."));
    }
  }
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The tool an MCP request calls (a JSON-RPC tools/call), or null for any other request. */
function toolCalled(body: string): string | null {
  try {
    const message = JSON.parse(body) as { method?: unknown; params?: { name?: unknown } };
    if (message.method !== "tools/call") return null;
    return typeof message.params?.name === "string" ? message.params.name : "";
  } catch {
    return null;
  }
}

/** What an MCP fault does to a tool call: refuse it at once, or wait until the call gives up. */
function mcpFailure(fault: McpFault, signal: AbortSignal): Promise<Response> {
  if (fault.kind === "down") {
    return Promise.reject(new TypeError(`fetch failed: connection refused by ${fault.server} (fault injection).`));
  }
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
