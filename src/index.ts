// The Worker entry point: the HTTP API with the protocol endpoints built on it (the MCP server at /mcp), and the
// Durable Object classes it routes to (tasks, tenants, schedules, knowledge, evaluations, rate limits). The MCP server uses the HTTP API's functions
// (src/http/), so it is mounted here rather than in src/http/app.ts: http/ must not import what imports it.
import { app } from "./http/app.ts";
import { mcpRoutes } from "./mcp-server/routes.ts";

export { EvaluationObject } from "../durable-objects/evaluation-object.ts";
export { KnowledgeObject } from "../durable-objects/knowledge-object.ts";
export { RateLimiter } from "../durable-objects/rate-limiter.ts";
export { ScheduleObject } from "../durable-objects/schedule-object.ts";
export { TaskObject } from "../durable-objects/task-object.ts";
export { TenantObject } from "../durable-objects/tenant-object.ts";

app.route("/mcp", mcpRoutes);

export default app satisfies ExportedHandler<import("./env.ts").Env>;
