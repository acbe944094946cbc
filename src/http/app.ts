// The Hono app: request ids, authentication on /v1, the routes, and the single error handler.
import { Hono } from "hono";
import { consoleRoutes } from "../console/routes.tsx";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./app-env.ts";
import { requireApiKey, requireMethodScope } from "./auth.ts";
import { errorResponse } from "./errors.ts";
import { openApiRoutes } from "./openapi/routes.ts";
import type { Health } from "./responses.ts";
import { a2aRoutes } from "./routes/a2a.ts";
import { agentRoutes } from "./routes/agents.ts";
import { collectionRoutes } from "./routes/collections.ts";
import { agentEvaluationRoutes, evaluationRoutes } from "./routes/evaluations.ts";
import { hookRoutes } from "./routes/hooks.ts";
import { replayRoutes } from "./routes/replays.ts";
import { scheduleRoutes } from "./routes/schedules.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { taskRoutes } from "./routes/tasks.ts";
import { tenantRoutes } from "./routes/tenant.ts";
import { workflowRoutes } from "./routes/workflows.ts";

export const app = new Hono<AppEnv>();

app.use("*", async (c, next) => {
  const requestId = crypto.randomUUID();
  c.set("requestId", requestId);
  await next();
  c.res.headers.set("x-request-id", requestId);
});

// Unauthenticated, so it says nothing about the deployment's configuration.
app.get("/", (c) => c.json({ name: "outpost", status: "ok" } satisfies Health));
// The OpenAPI document: unauthenticated, it describes the API, not the deployment.
app.route("/", openApiRoutes);

// Every /v1 route needs an API key, except webhook deliveries: their signature is checked instead.
app.use("/v1/*", (c, next) => (c.req.path.startsWith("/v1/hooks/") ? next() : requireApiKey(c, next)));
app.use("/v1/*", (c, next) => (c.req.path.startsWith("/v1/hooks/") ? next() : requireMethodScope(c, next)));
app.route("/v1/hooks", hookRoutes);
app.route("/v1/agents", agentRoutes);
app.route("/v1/agents", agentEvaluationRoutes);
app.route("/v1/evaluations", evaluationRoutes);
app.route("/v1/workflows", workflowRoutes);
app.route("/v1/tasks", taskRoutes);
app.route("/v1/replays", replayRoutes);
app.route("/v1/sessions", sessionRoutes);
app.route("/v1/schedules", scheduleRoutes);
app.route("/v1/collections", collectionRoutes);
app.route("/v1/tenant", tenantRoutes);
// A2A v1.0 (docs/a2a.md): every route needs an API key; each route checks the scope its method needs.
app.use("/a2a", requireApiKey);
app.use("/a2a/*", requireApiKey);
app.route("/a2a", a2aRoutes);

// The web console (docs/console.md): public page shells and their assets; its data comes from /v1 with the user's key.
app.route("/console", consoleRoutes);

app.notFound((c) => errorResponse(c, new ApiError("route_not_found", `No route for ${c.req.method} ${c.req.path}.`)));
app.onError((error, c) => errorResponse(c, error));
