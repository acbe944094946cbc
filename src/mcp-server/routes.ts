// /mcp: the MCP server's one endpoint (server.ts). Every request needs an API key as /v1 does (what each MCP method
// needs of its scopes is checked per method). POST carries the JSON-RPC messages; the server is stateless, so it
// offers no standalone GET stream and no session to DELETE (405, which the MCP clients expect).
import { Hono } from "hono";
import type { AppEnv } from "../http/app-env.ts";
import { requireApiKey } from "../http/auth.ts";
import { mcpResponse } from "./server.ts";

export const mcpRoutes = new Hono<AppEnv>()
  .use("*", requireApiKey)
  .post("/", (c) => mcpResponse(c))
  .on(["GET", "DELETE"], "/", (c) =>
    c.json({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }, 405, {
      allow: "POST",
    }),
  );
