// One MCP server connection for one run, with the official SDK client: Streamable HTTP with the legacy SSE
// transport as a fallback, the workerd-safe JSON-schema validator (no code generation from strings), every request
// through the outbound guard, and a session that re-establishes itself when it is lost (an evicted object, a
// restarted server). A call whose connection drops fails at once instead of waiting for its timeout. With it, the
// checks of a call's answer that need the SDK (checkStructuredOutput, describeCallFailure): this is the module the
// Toolbox loads on first use, so an agent without MCP servers never evaluates the SDK.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type CallToolResult, ErrorCode, McpError, type Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { JsonSchemaType, JsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { ErrorCode as OutpostErrorCode } from "../errors/codes.ts";
import { ConfigError, McpConnectionError, OutpostError, toErrorInfo } from "../errors.ts";
import { checkOutboundUrl, type OutboundPolicy } from "../net/outbound.ts";
import type { McpServerSpec } from "./config.ts";
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_META_KEY, idempotencyKeyOfBody } from "./idempotency.ts";

const CLIENT_INFO = { name: "outpost", version: "0.1.0" };
/** How long connecting (the initialize handshake) and listing tools may take. */
export const CONNECT_TIMEOUT_MS = 30_000;
/** How long ending a session on the server may delay the end of a run. */
const CLOSE_TIMEOUT_MS = 5_000;

export interface McpSessionDeps {
  spec: McpServerSpec;
  /** Reads a Worker secret by name (header values). */
  secret: (name: string) => string | undefined;
  outbound: OutboundPolicy;
  /** What sends the requests: the global fetch unless given (a run with an MCP fault: src/faults/). */
  transport?: ((request: Request) => Promise<Response>) | undefined;
}

/** How one tool call is sent. */
export interface CallOptions {
  timeoutMs: number;
  signal: AbortSignal;
  /** The call's key (src/mcp/idempotency.ts), in params._meta and the Idempotency-Key header of every send of it. */
  idempotencyKey: string;
}

/** Transport errors after which an in-flight call can no longer get its answer. */
const CONNECTION_LOST = /SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts|SSE error/;

export class McpSession {
  /** The transport that connected: "streamable_http", or "sse" after a fallback or when declared. */
  transportUsed: "streamable_http" | "sse" | null = null;

  private readonly deps: McpSessionDeps;
  private client: Client | null = null;
  private connecting: Promise<Client> | null = null;
  /** Calls waiting for an answer on the current connection; aborted when it is lost. */
  private readonly inFlight = new Set<AbortController>();

  constructor(deps: McpSessionDeps) {
    this.deps = deps;
  }

  get name(): string {
    return this.deps.spec.name;
  }

  /** Connects if not connected. Concurrent callers share one handshake. */
  async connect(signal: AbortSignal): Promise<Client> {
    if (this.client) return this.client;
    this.connecting ??= this.open(signal).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  /** Every tool the server offers (all pages). */
  async listTools(signal: AbortSignal): Promise<McpTool[]> {
    const client = await this.connect(signal);
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: CONNECT_TIMEOUT_MS, signal });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /**
   * Calls a tool. Throws on anything that kept the call from producing a result: a timeout (TimeoutError-like
   * McpError), a lost connection (McpConnectionError), cancellation. A session the server no longer knows is
   * re-established once and the call sent again, with the same idempotency key.
   */
  async callTool(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    try {
      return await this.callOnce(tool, args, options);
    } catch (error) {
      if (!isSessionGone(error)) throw error;
      await this.reset();
      return await this.callOnce(tool, args, options);
    }
  }

  /** Ends the session on the server (DELETE) and closes the transport. Never throws. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    const transport = client.transport;
    if (transport instanceof StreamableHTTPClientTransport) {
      // A server that is gone, slow or without DELETE support has nothing we must wait for.
      await withDeadline(transport.terminateSession(), CLOSE_TIMEOUT_MS).catch(() => undefined);
    }
    await client.close().catch(() => undefined);
  }

  private async callOnce(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    const client = await this.connect(options.signal);
    const lost = new AbortController();
    this.inFlight.add(lost);
    try {
      const params = { name: tool, arguments: args, _meta: { [IDEMPOTENCY_META_KEY]: options.idempotencyKey } };
      const result = await client.callTool(params, undefined, {
        timeout: options.timeoutMs,
        maxTotalTimeout: options.timeoutMs,
        signal: AbortSignal.any([options.signal, lost.signal]),
      });
      return result as CallToolResult;
    } catch (error) {
      if (lost.signal.aborted && !options.signal.aborted) throw lost.signal.reason;
      // Cancellation, the server's own protocol errors and a lost session (retried by callTool) pass through;
      // anything else (a refused connection, an HTTP error status) is this server's connection failing.
      if (options.signal.aborted || error instanceof McpError || isSessionGone(error)) throw error;
      throw this.wrap(error);
    } finally {
      this.inFlight.delete(lost);
    }
  }

  private async reset(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => undefined);
  }

  private async open(signal: AbortSignal): Promise<Client> {
    const { spec } = this.deps;
    const url = checkOutboundUrl(spec.url, this.deps.outbound);
    const headers = this.headers();
    if (spec.transport === "streamable_http") {
      try {
        return await this.handshake(
          new StreamableHTTPClientTransport(url, {
            fetch: this.fetcher({ standaloneStream: false }),
            requestInit: { headers },
            reconnectionOptions: {
              initialReconnectionDelay: 250,
              maxReconnectionDelay: 2_000,
              reconnectionDelayGrowFactor: 2,
              maxRetries: 1,
            },
          }),
          "streamable_http",
          signal,
        );
      } catch (error) {
        // MCP's backwards-compatibility rule: a 4xx to the initialize POST means a server of the older
        // HTTP+SSE protocol, reached with a GET on the same URL. Authentication failures are not that.
        if (!(error instanceof StreamableHTTPError) || !isLegacyStatus(error.code)) throw this.wrap(error);
        return await this.handshake(this.legacyTransport(url, headers), "sse", signal).catch((legacy: unknown) => {
          const first = `Streamable HTTP answered ${error.code} (${error.message})`;
          throw this.wrap(new Error(`${first}; the legacy SSE transport failed too: ${messageOf(legacy)}`));
        });
      }
    }
    return await this.handshake(this.legacyTransport(url, headers), "sse", signal).catch((error: unknown) => {
      throw this.wrap(error);
    });
  }

  private legacyTransport(url: URL, headers: Record<string, string>): SSEClientTransport {
    return new SSEClientTransport(url, {
      fetch: this.fetcher({ standaloneStream: true }),
      requestInit: { headers },
      eventSourceInit: { fetch: this.fetcher({ standaloneStream: true, headers }) },
    });
  }

  private async handshake(transport: Transport, kind: "streamable_http" | "sse", signal: AbortSignal): Promise<Client> {
    const client = new Client(CLIENT_INFO, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    client.onerror = (error) => {
      if (!CONNECTION_LOST.test(error.message)) return;
      const lost = new McpConnectionError(this.name, `the connection was lost during the call (${error.message}).`);
      for (const call of this.inFlight) call.abort(lost);
      // Stop the transport's own reconnection attempts; the next call connects afresh.
      if (this.client === client) void this.reset();
    };
    // The timeout option bounds the initialize request only; the legacy transport's wait for its endpoint event
    // and the initialized notification are bounded here, and the transport is closed if the deadline passes.
    try {
      await withDeadline(client.connect(transport, { timeout: CONNECT_TIMEOUT_MS, signal }), CONNECT_TIMEOUT_MS);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    this.client = client;
    this.transportUsed = kind;
    return client;
  }

  /** Header values from Worker secrets; a missing secret is a configuration error, never an empty header. */
  private headers(): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, ref] of Object.entries(this.deps.spec.headers)) {
      const value = this.deps.secret(ref.secret);
      if (!value) {
        throw new ConfigError(
          `MCP server "${this.name}": header ${name} needs the Worker secret ${ref.secret}, which is not set ` +
            `(wrangler secret put ${ref.secret}).`,
        );
      }
      headers[name] = `${ref.prefix}${value}`;
    }
    return headers;
  }

  /**
   * fetch for the SDK: every request URL through the outbound guard (the legacy endpoint event names one). With
   * standaloneStream false, the Streamable HTTP transport's optional GET stream for server-initiated messages is
   * answered 405 here, as the spec allows: Outpost makes no use of it, and it would hold a connection open (Workers
   * allow six at a time) whose drop looks like a lost call. A tools/call POST gets the Idempotency-Key header from
   * its body's params._meta: the SDK has no per-request headers, and both transports send their POSTs through here.
   */
  private fetcher(options: { standaloneStream: boolean; headers?: Record<string, string> }): typeof fetch {
    const policy = this.deps.outbound;
    return async (input, init) => {
      const request = new Request(input, init);
      checkOutboundUrl(request.url, policy);
      if (!options.standaloneStream && request.method === "GET") return new Response(null, { status: 405 });
      for (const [k, v] of Object.entries(options.headers ?? {})) request.headers.set(k, v);
      const key = typeof init?.body === "string" ? idempotencyKeyOfBody(init.body) : undefined;
      if (key !== undefined) request.headers.set(IDEMPOTENCY_HEADER, key);
      return this.deps.transport ? this.deps.transport(request) : fetch(request);
    };
  }

  private wrap(error: unknown): Error {
    if (error instanceof OutpostError) return error;
    let message = messageOf(error);
    // The SDK's HTTP errors leave the status out of their message; an operator needs it (401: check the secret).
    if (error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0) {
      const auth = error.code === 401 || error.code === 403 ? "; check the server's header secrets" : "";
      message = `HTTP ${error.code}${auth}: ${message}`;
    }
    return new McpConnectionError(this.name, message, { cause: error });
  }
}

const validators = new Map<string, JsonSchemaValidator<unknown>>();

/**
 * A tool with an output schema must answer with structuredContent that matches it (MCP spec). Checked against the
 * journaled schema with the workerd-safe validator, so it holds after an eviction as well as on a session's first
 * use (the SDK client only checks tools it has listed itself). Compiled validators are cached by schema.
 */
export function checkStructuredOutput(schema: Record<string, unknown> | undefined, raw: CallToolResult): void {
  if (!schema || raw.isError) return;
  if (raw.structuredContent === undefined) {
    throw new McpError(ErrorCode.InvalidParams, `The tool has an output schema but returned no structured content`);
  }
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = new CfWorkerJsonSchemaValidator().getValidator(schema as JsonSchemaType);
    validators.set(key, validate);
  }
  const verdict = validate(raw.structuredContent);
  if (!verdict.valid) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Structured content does not match the tool's output schema: ${verdict.errorMessage}`,
    );
  }
}

/** A failed call as the model and the event log see it; a timeout says which limit it hit. */
export function describeCallFailure(
  error: unknown,
  timeoutSeconds: number,
): { code: OutpostErrorCode; message: string } {
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return { code: "timeout", message: `the call did not finish within its timeout of ${timeoutSeconds} s` };
    }
    // A protocol-level error from the server (unknown tool, invalid arguments): its message is meant for the caller.
    return { code: "mcp_error", message: error.message };
  }
  const info = toErrorInfo(error);
  return { code: info.code, message: info.message };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Rejects with a timeout error if `promise` has not settled within `ms`. */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function isLegacyStatus(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && status !== 401 && status !== 403;
}

/** The server lost or never had our session: 404 per the spec; some servers answer 400 "No valid session ID". */
function isSessionGone(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}
