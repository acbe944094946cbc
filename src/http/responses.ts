// The HTTP API's response bodies as zod schemas, the counterpart of schemas.ts (request bodies): one per body, and the
// types the routes answer with inferred from them, one module per resource in responses/ (common.ts holds what they
// share). The tests parse every answer they read with them (test/support/helpers.ts), strictly: a member not listed
// there fails; the OpenAPI document is generated from them (src/http/openapi/). The wire types the task's object
// returns are defined beside their code and composed there: the task view (src/tasks/task.ts), a request and a
// decision (src/approvals/requests.ts), messages and checkpoints (src/runtime/), deliveries and the callback payload
// (src/callbacks/delivery.ts, payload.ts), and ErrorInfo (src/errors/error-info.ts).
//
// Nothing parses a response at runtime (a route's body is what it builds, byte for byte), and the Worker imports these
// modules for their types only, except the OpenAPI document, which the first GET /openapi.json loads with import()
// (test/project/layering.unit.test.ts checks it): an isolate builds these schemas only if it serves the document.

export * from "./responses/agents.ts";
export * from "./responses/collections.ts";
export * from "./responses/common.ts";
export * from "./responses/evaluations.ts";
export * from "./responses/hooks.ts";
export * from "./responses/listings.ts";
export * from "./responses/schedules.ts";
export * from "./responses/sessions.ts";
export * from "./responses/tasks.ts";
export * from "./responses/tenant.ts";
