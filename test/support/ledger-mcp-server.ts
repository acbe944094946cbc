// A small MCP server with a side effect, built on the official SDK's server side, that honours Outpost's idempotency
// keys (src/mcp/idempotency.ts) the way a cooperating server should: its `charge` tool runs a key's first request,
// answers a repeat of a finished key with the stored result, and makes a repeat that arrives while the first is still
// running wait for that same result. Its `balance` tool is a read (annotations.readOnlyHint); `gate` on either tool
// shows whether the call ran beside another (test/support/rendezvous.ts). `delay_ms` makes a charge slow, so a test
// can evict the task's object (or the crash test kill the runtime) while the call is in flight. Both transports are
// served: Streamable HTTP at /mcp and the legacy HTTP+SSE transport at /sse. What the server saw is at GET /stats:
// every POST with its idempotency header and _meta key, and per key how many requests reached the tool and how many
// executed it. POST /forget-sessions drops every Streamable HTTP session, as a restarted server would. Runs in Node:
// started by test/support/global-setup.ts for the tests, and by scripts/crash-test.ts on its own.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { type CallToolResult, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { rendezvous } from "./rendezvous.ts";

// The wire names are written out here, not imported from src/: the server holds Outpost to its documented contract.
const META_KEY = "io.outpost/idempotency-key";
const HEADER = "idempotency-key";

/** One POST as the server saw it (JSON-RPC requests and notifications, on either transport). */
export interface LedgerRequest {
  path: string;
  /** The JSON-RPC method of the body, e.g. "tools/call". */
  rpc: string | null;
  /** The mcp-session-id header (Streamable HTTP) or the sessionId query parameter (legacy SSE). */
  session: string | null;
  /** The Idempotency-Key header, if any. */
  header: string | null;
  /** params._meta["io.outpost/idempotency-key"], if any. */
  meta: string | null;
  /** The `account` argument of a tools/call, so a test finds its own calls. */
  account: string | null;
  /** The status the server answered with (null while the answer is still open). */
  status: number | null;
}

/** One idempotency key: requests that reached the tool with it, and how many of them ran the charge. */
export interface LedgerKey {
  key: string;
  account: string;
  requests: number;
  executions: number;
}

export interface LedgerStats {
  requests: LedgerRequest[];
  keys: LedgerKey[];
  /** Charges executed per account, with or without a key: the side effect itself. */
  executions: Record<string, number>;
}

export interface LedgerServer {
  /** http://127.0.0.1:<port>: /mcp, /sse, /stats and /forget-sessions are below it. */
  url: string;
  close(): Promise<void>;
}

export async function startLedgerServer(): Promise<LedgerServer> {
  const requests: LedgerRequest[] = [];
  const keys = new Map<string, { record: LedgerKey; result: Promise<CallToolResult> }>();
  const executions: Record<string, number> = {};

  /** The side effect: a numbered charge on the account, after `delayMs`. */
  const execute = async (account: string, amount: number, delayMs: number): Promise<CallToolResult> => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const count = (executions[account] ?? 0) + 1;
    executions[account] = count;
    return { content: [{ type: "text", text: `Charged ${amount} to ${account} (charge ${count} on this account).` }] };
  };

  const buildServer = (): McpServer => {
    const server = new McpServer({ name: "ledger", version: "1.0.0" });
    // A read: how often the account was charged. `gate` meets other calls of that gate (test/support/rendezvous.ts),
    // and the answer says whether `gate_n` of them were in flight together.
    server.registerTool(
      "balance",
      {
        description: "Reads how often an account was charged.",
        inputSchema: { account: z.string(), gate: z.string().optional(), gate_n: z.number().int().min(2).optional() },
        annotations: { readOnlyHint: true },
      },
      async ({ account, gate, gate_n }) => {
        const met = gate ? ` (${await rendezvous(gate, gate_n ?? 2, 1_500)})` : "";
        return { content: [{ type: "text", text: `${account}: ${executions[account] ?? 0} charges${met}` }] };
      },
    );
    server.registerTool(
      "charge",
      {
        description: "Charges an account. Runs once per idempotency key.",
        inputSchema: {
          account: z.string(),
          amount: z.number().int(),
          delay_ms: z.number().int().min(0).optional(),
          gate: z.string().optional(),
        },
      },
      async ({ account, amount, delay_ms, gate }, extra) => {
        // Meets the calls of its gate first: a charge that ran beside another call would answer "together".
        if (gate) {
          const met = await rendezvous(gate, 2, 1_500);
          if (met === "together") return { content: [{ type: "text", text: `${account}: ran beside another call` }] };
        }
        const fromMeta = extra._meta?.[META_KEY];
        const fromHeader = extra.requestInfo?.headers[HEADER];
        const key = typeof fromMeta === "string" ? fromMeta : typeof fromHeader === "string" ? fromHeader : null;
        // No key: nothing to recognise a repeat by, so every request charges.
        if (key === null) return execute(account, amount, delay_ms ?? 0);
        const known = keys.get(key);
        if (known) {
          // Finished: the stored result. Still running: the same promise, so the repeat waits for the first.
          known.record.requests += 1;
          return known.result;
        }
        const record: LedgerKey = { key, account, requests: 1, executions: 1 };
        const result = execute(account, amount, delay_ms ?? 0);
        keys.set(key, { record, result });
        return result;
      },
    );
    return server;
  };

  const streamable = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const legacy = new Map<string, SSEServerTransport>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && url.pathname === "/stats") {
      const stats: LedgerStats = { requests, keys: [...keys.values()].map((k) => k.record), executions };
      return send(200, stats);
    }
    if (req.method === "POST" && url.pathname === "/forget-sessions") {
      const sessions = [...streamable.values()];
      streamable.clear();
      await Promise.all(sessions.map(({ server }) => server.close()));
      return send(200, { forgotten: sessions.length });
    }
    if (req.method === "GET" && url.pathname === "/sse") {
      const transport = new SSEServerTransport("/messages", res);
      legacy.set(transport.sessionId, transport);
      res.on("close", () => legacy.delete(transport.sessionId));
      await buildServer().connect(transport);
      return;
    }

    let body: unknown;
    if (req.method === "POST") {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const sessionHeader = req.headers["mcp-session-id"];
      const entry = logEntry(url.pathname, body, req.headers[HEADER]);
      entry.session = typeof sessionHeader === "string" ? sessionHeader : url.searchParams.get("sessionId");
      requests.push(entry);
      res.on("close", () => {
        entry.status = res.headersSent ? res.statusCode : null;
      });
    }

    if (url.pathname === "/messages" && req.method === "POST") {
      const transport = legacy.get(url.searchParams.get("sessionId") ?? "");
      if (!transport) return send(404, { error: "unknown session" });
      return transport.handlePostMessage(req, res, body);
    }
    if (url.pathname !== "/mcp") return send(404, { error: "not found" });
    const sessionId = req.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? streamable.get(sessionId) : undefined;
    if (known) return known.transport.handleRequest(req, res, body);
    if (typeof sessionId === "string") {
      // The spec's answer to a session the server does not know: 404, after which the client starts a new one.
      return send(404, { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null });
    }
    if (req.method !== "POST" || !isInitializeRequest(body)) {
      return send(400, { jsonrpc: "2.0", error: { code: -32000, message: "No valid session ID" }, id: null });
    }
    const server = buildServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        streamable.set(id, { transport, server });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) streamable.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: String(error) }));
      } else res.destroy();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const address = http.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function logEntry(path: string, body: unknown, header: string | string[] | undefined): LedgerRequest {
  const message = isRecord(body) ? body : {};
  const params = isRecord(message.params) ? message.params : {};
  const meta = isRecord(params._meta) ? params._meta[META_KEY] : undefined;
  const account = isRecord(params.arguments) ? params.arguments.account : undefined;
  return {
    path,
    rpc: typeof message.method === "string" ? message.method : null,
    session: null,
    header: typeof header === "string" ? header : null,
    meta: typeof meta === "string" ? meta : null,
    account: typeof account === "string" ? account : null,
    status: null,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
