// Real MCP servers for the tests: the pinned @modelcontextprotocol/server-everything package, run as Node processes
// on 127.0.0.1. One shared Streamable HTTP instance serves most tests; a small control server lets a test start
// its own instance (Streamable HTTP or legacy SSE) and kill it, e.g. in the middle of a tool call.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer as createHttpServer } from "node:http";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:net";

const require = createRequire(import.meta.url);
const SERVER_ENTRY = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");

export type McpTransport = "streamableHttp" | "sse";

export interface RunningMcpServer {
  id: string;
  /** The endpoint a client connects to: …/mcp (Streamable HTTP) or …/sse (legacy SSE). */
  url: string;
  kill(): void;
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

export async function startEverythingServer(transport: McpTransport): Promise<RunningMcpServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [SERVER_ENTRY, transport], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  // Both transports print a line on stderr once they listen.
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
  const path = transport === "sse" ? "/sse" : "/mcp";
  return {
    id: `mcp-${++counter}`,
    url: `http://127.0.0.1:${port}${path}`,
    kill: () => child.kill("SIGKILL"),
  };
}

/**
 * POST /servers {"transport": "streamableHttp" | "sse"} → 201 {id, url}; DELETE /servers/:id kills that process
 * with SIGKILL. Every process still running is killed when the tests end.
 */
export async function startMcpControl(): Promise<{ url: string; close(): Promise<void> }> {
  const servers = new Map<string, RunningMcpServer>();
  const http = createHttpServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method === "POST" && req.url === "/servers") {
        let raw = "";
        for await (const chunk of req) raw += String(chunk);
        const transport = (JSON.parse(raw || "{}") as { transport?: McpTransport }).transport ?? "streamableHttp";
        const server = await startEverythingServer(transport);
        servers.set(server.id, server);
        return send(201, { id: server.id, url: server.url });
      }
      const match = /^\/servers\/([\w-]+)$/.exec(req.url ?? "");
      if (req.method === "DELETE" && match?.[1]) {
        const server = servers.get(match[1]);
        if (!server) return send(404, { error: "unknown server" });
        server.kill();
        servers.delete(match[1]);
        return send(200, { killed: match[1] });
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
      for (const server of servers.values()) server.kill();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
