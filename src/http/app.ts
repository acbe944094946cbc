// The Hono app: request ids, authentication on /v1, the routes, and the single error handler.
import { Hono } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";
import { requireApiKey } from "./auth.ts";
import { errorResponse } from "./errors.ts";
import { agentRoutes } from "./routes/agents.ts";
import { taskRoutes } from "./routes/tasks.ts";

export const app = new Hono<AppEnv>();

app.use("*", async (c, next) => {
  const requestId = crypto.randomUUID();
  c.set("requestId", requestId);
  await next();
  c.res.headers.set("x-request-id", requestId);
});

// Unauthenticated, so it says nothing about the deployment's configuration.
app.get("/", (c) => c.json({ name: "outpost", status: "ok" }));

app.use("/v1/*", requireApiKey);
app.route("/v1/agents", agentRoutes);
app.route("/v1/tasks", taskRoutes);

app.notFound((c) =>
  errorResponse(c, new ApiError(404, "route_not_found", `No route for ${c.req.method} ${c.req.path}.`)),
);
app.onError((error, c) => errorResponse(c, error));
