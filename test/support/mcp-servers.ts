// Real MCP servers for the tests: the pinned @modelcontextprotocol/server-everything package, run as Node processes
// on 127.0.0.1. One shared Streamable HTTP instance serves most tests; a small control server lets a test start
// its own instance (Streamable HTTP or legacy SSE), kill it (e.g. in the middle of a tool call), restart it on the
// same port (a server that forgot every session), and put a small HTTP proxy in front of it that checks a bearer
// token, logs every request, and can rewrite the server's answers (a server that breaks its own output schema).
import { type ChildProcess, spawn } from "node:child_process";
import {
  Agent,
  createServer as createHttpServer,
  type Server as HttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:net";
import { StringDecoder } from "node:string_decoder";

const require = createRequire(import.meta.url);
const SERVER_ENTRY = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");

export type McpTransport = "streamableHttp" | "sse";

export interface RunningMcpServer {
  id: string;
  /** The endpoint a client connects to: …/mcp (Streamable HTTP) or …/sse (legacy SSE). */
  url: string;
  /** The port the server process listens on; a restart keeps it. */
  port: number;
  transport: McpTransport;
  kill(): void;
  /** Kills the process and starts a fresh one on the same port; resolves once it listens. */
  restart(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (!address || typeof address === "string") throw new Error("no port");
  return address.port;
}

let counter = 0;

/** Starts server-everything on `port` and resolves once it listens (both transports say so on stderr). */
async function spawnEverything(transport: McpTransport, port: number): Promise<ChildProcess> {
  const child: ChildProcess = spawn(process.execPath, [SERVER_ENTRY, transport], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let log = "";
    const timer = setTimeout(() => reject(new Error(`server-everything did not start: ${log}`)), 20_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      log += chunk.toString();
      if (/listening on port|running on port/i.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${log}`));
    });
  });
  child.stderr?.resume();
  return child;
}

/** SIGKILL, resolved once the process is gone (and its listening socket with it). */
async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGKILL");
  await exited;
}

export async function startEverythingServer(transport: McpTransport): Promise<RunningMcpServer> {
  const port = await freePort();
  let child = await spawnEverything(transport, port);
  const path = transport === "sse" ? "/sse" : "/mcp";
  return {
    id: `mcp-${++counter}`,
    url: `http://127.0.0.1:${port}${path}`,
    port,
    transport,
    kill: () => child.kill("SIGKILL"),
    restart: async () => {
      await killProcess(child);
      // The port is free once the process has exited; a few tries cover a slow kernel.
      for (let attempt = 1; ; attempt++) {
        try {
          child = await spawnEverything(transport, port);
          return;
        } catch (error) {
          if (attempt >= 5) throw error;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    },
  };
}

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  method: string;
  /** The JSON-RPC methods of a POST body (e.g. ["tools/call"]); empty for other requests. */
  rpc: string[];
  /** Whether the request carried the bearer token the proxy requires (true when it requires none). */
  authorized: boolean;
  /** The mcp-session-id header, if any. */
  session: string | null;
  /** The status the client got: the proxy's 401, the server's status, or 502 when the server was unreachable. */
  status: number | null;
}

export interface ProxyOptions {
  /** Answer 401 to every request without `Authorization: Bearer <token>`. */
  requireBearer?: string;
  /** Plain-text replacements applied to the server's response bodies. */
  rewrite?: { from: string; to: string }[];
}

/** A log entry that is no request: a marker of something the control server did (e.g. "restart"). */
export type ProxyLogEntry = ProxiedRequest | { marker: string };

interface RunningProxy {
  port: number;
  log: ProxyLogEntry[];
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te"]);

function forwardHeaders(headers: IncomingHttpHeaders, drop: string[] = []): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || drop.includes(name)) continue;
    out[name] = value;
  }
  return out;
}

function rpcMethods(body: string): string[] {
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((m) =>
      m && typeof m === "object" && typeof (m as { method?: unknown }).method === "string"
        ? [(m as { method: string }).method]
        : [],
    );
  } catch {
    return [];
  }
}

/**
 * A reverse proxy on its own port in front of the server on `targetPort`: requests and responses, streaming SSE
 * included, pass verbatim (apart from hop-by-hop headers and any rewrite), each chunk as soon as it arrives.
 */
async function startProxy(targetPort: number, options: ProxyOptions): Promise<RunningProxy> {
  const log: ProxyLogEntry[] = [];
  // No pooled connections to the server: a restarted server must not be reached over a dead socket.
  const agent = new Agent({ keepAlive: false });
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const session = req.headers["mcp-session-id"];
    const entry: ProxiedRequest = {
      method: req.method ?? "",
      rpc: req.method === "POST" ? rpcMethods(body.toString("utf8")) : [],
      authorized:
        options.requireBearer === undefined || req.headers.authorization === `Bearer ${options.requireBearer}`,
      session: typeof session === "string" ? session : null,
      status: null,
    };
    log.push(entry);
    if (!entry.authorized) {
      entry.status = 401;
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "unauthorized" }));
      return;
    }
    const rewrite = options.rewrite ?? [];
    const upstream = httpRequest(
      {
        host: "127.0.0.1",
        port: targetPort,
        method: req.method,
        path: req.url,
        headers: { ...forwardHeaders(req.headers), host: `127.0.0.1:${targetPort}` },
        agent,
      },
      (answer) => {
        entry.status = answer.statusCode ?? 0;
        // A rewritten body has another length; without content-length Node sends it chunked.
        res.writeHead(
          answer.statusCode ?? 502,
          forwardHeaders(answer.headers, rewrite.length > 0 ? ["content-length"] : []),
        );
        res.flushHeaders();
        const decoder = new StringDecoder("utf8");
        answer.on("data", (chunk: Buffer) => {
          if (rewrite.length === 0) {
            res.write(chunk);
            return;
          }
          let text = decoder.write(chunk);
          for (const { from, to } of rewrite) text = text.split(from).join(to);
          res.write(text);
        });
        answer.on("end", () => {
          if (rewrite.length > 0) res.write(decoder.end());
          res.end();
        });
        // The server died in the middle of an answer: the client sees its connection drop, as it would directly.
        answer.on("error", () => res.destroy());
        answer.on("aborted", () => res.destroy());
      },
    );
    upstream.on("error", () => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      entry.status = 502;
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "upstream unreachable" }));
    });
    // The client went away: so does the request to the server.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.end(body);
  };
  const server: HttpServer = createHttpServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return {
    port: address.port,
    log,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

interface ControlledServer {
  server: RunningMcpServer;
  proxy: RunningProxy | null;
  url: string;
}

interface StartRequest extends ProxyOptions {
  transport?: McpTransport;
  /** Put the logging proxy in front even without requireBearer or rewrite. */
  proxy?: boolean;
}

/**
 * The control server:
 * - POST /servers {"transport": "streamableHttp" | "sse", "requireBearer"?: token, "rewrite"?: [{from, to}],
 *   "proxy"?: true} → 201 {id, url}. With requireBearer, rewrite or proxy, the url is the proxy's.
 * - POST /servers/:id/restart → 200 once a fresh process listens on the same port (a "restart" marker goes
 *   into the proxy's log first).
 * - GET /servers/:id/requests → 200 {requests: [...]}, the proxy's log (empty without a proxy).
 * - DELETE /servers/:id kills the process with SIGKILL and closes its proxy.
 * Every process still running is killed when the tests end.
 */
export async function startMcpControl(): Promise<{ url: string; close(): Promise<void> }> {
  const servers = new Map<string, ControlledServer>();
  const http = createHttpServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method === "POST" && req.url === "/servers") {
        let raw = "";
        for await (const chunk of req) raw += String(chunk);
        const options = JSON.parse(raw || "{}") as StartRequest;
        const server = await startEverythingServer(options.transport ?? "streamableHttp");
        const proxied = options.proxy === true || options.requireBearer !== undefined || options.rewrite !== undefined;
        const proxy = proxied
          ? await startProxy(server.port, {
              ...(options.requireBearer !== undefined ? { requireBearer: options.requireBearer } : {}),
              ...(options.rewrite !== undefined ? { rewrite: options.rewrite } : {}),
            })
          : null;
        const url = proxy ? server.url.replace(`:${server.port}/`, `:${proxy.port}/`) : server.url;
        servers.set(server.id, { server, proxy, url });
        return send(201, { id: server.id, url });
      }
      const match = /^\/servers\/([\w-]+)(\/restart|\/requests)?$/.exec(req.url ?? "");
      const id = match?.[1];
      const controlled = id ? servers.get(id) : undefined;
      if (!match || !id) return send(404, { error: "not found" });
      if (!controlled) return send(404, { error: "unknown server" });
      if (req.method === "POST" && match[2] === "/restart") {
        controlled.proxy?.log.push({ marker: "restart" });
        await controlled.server.restart();
        return send(200, { id, url: controlled.url });
      }
      if (req.method === "GET" && match[2] === "/requests") {
        return send(200, { requests: controlled.proxy?.log ?? [] });
      }
      if (req.method === "DELETE" && match[2] === undefined) {
        controlled.server.kill();
        await controlled.proxy?.close();
        servers.delete(id);
        return send(200, { killed: id });
      }
      send(404, { error: "not found" });
    } catch (error) {
      send(500, { error: String(error) });
    }
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const address = http.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      for (const { server, proxy } of servers.values()) {
        server.kill();
        await proxy?.close();
      }
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
