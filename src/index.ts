// The Worker entry point: the HTTP API and the Durable Object class it routes tasks to.
import { app } from "./http/app.ts";

export { TaskObject } from "../durable-objects/task-object.ts";

export default app satisfies ExportedHandler<import("./env.ts").Env>;
