// The Worker entry point: the HTTP API and the Durable Object classes it routes to (tasks, tenants, rate limits).
import { app } from "./http/app.ts";

export { RateLimiter } from "../durable-objects/rate-limiter.ts";
export { TaskObject } from "../durable-objects/task-object.ts";
export { TenantObject } from "../durable-objects/tenant-object.ts";

export default app satisfies ExportedHandler<import("./env.ts").Env>;
