// The Worker entry point: the HTTP API and the Durable Object class it routes tasks to.
import { app } from "./http/app.ts";

export { RateLimiter } from "../durable-objects/rate-limiter.ts";
export { TaskObject } from "../durable-objects/task-object.ts";

export default app satisfies ExportedHandler<import("./env.ts").Env>;
