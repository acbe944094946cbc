// /mcp: the MCP server's one endpoint (server.ts). A request whose Origin the deployment does not allow is refused
// first (403, as the transport requires against DNS rebinding; src/http/origins.ts); then every request needs an API
// key as /v1 does (what each MCP method needs of its scopes is checked per method). POST carries the JSON-RPC
// messages; the server is stateless, so it offers no standalone GET stream and no session to DELETE (405, which the
// MCP clients expect).
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env.ts";
import { requireApiKey } from "../http/auth.ts";
import { errorBody } from "../http/errors.ts";
import { originRefusal } from "../http/origins.ts";
import { mcpResponse } from "./server.ts";

/**
 * 403 to an Origin that is not allowed, in the shape the MCP SDK's own transport answers it (a JSON-RPC error -32000
 * with no id), Outpost's error body as its `data`, as every JSON-RPC error of this server carries it (errors.ts).
 */
const requireAllowedOrigin = createMiddleware<AppEnv>(async (c, next) => {
  const refused = originRefusal(c.env, c.req.header("origin"));
  if (!refused) return next();
  const { status, body } = errorBody(c.get("requestId"), refused);
  return c.json(
    { jsonrpc: "2.0", error: { code: -32000, message: body.error.message, data: body.error }, id: null },
    status,
  );
});

export const mcpRoutes = new Hono<AppEnv>()
  .use("*", requireAllowedOrigin)
  .use("*", requireApiKey)
  .post("/", (c) => mcpResponse(c))
  .on(["GET", "DELETE"], "/", (c) =>
    c.json({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }, 405, {
      allow: "POST",
    }),
  );
