// The operation table of the OpenAPI document: every route the app registers, with its operationId (the typed
// client's function names come from it: stable, camelCase), tag, summary, the scope it needs, its parameters, its
// request body, its answers and the error codes it can answer. The schemas are the ones the routes validate with
// (src/http/schemas.ts) and the response schemas (src/http/responses.ts): nothing here restates a wire type.
// test/http/openapi.test.ts holds this table to the app's routes, both ways. Each resource's operations are in
// src/http/openapi/operations/, the parts they share in operations/spec.ts.
//
// It and its tables import the response schemas at runtime, so only src/http/openapi/document.ts imports it, and
// the Worker loads that module on the first GET /openapi.json (test/project/layering.unit.test.ts checks both).
import { EventRecordSchema } from "../../events/event-record.ts";
import { AGENTS, WORKFLOWS } from "./operations/agents.ts";
import { COLLECTIONS } from "./operations/collections.ts";
import { EVALUATIONS } from "./operations/evaluations.ts";
import { HOOKS } from "./operations/hooks.ts";
import { META, TENANT } from "./operations/meta.ts";
import { SCHEDULES } from "./operations/schedules.ts";
import { SESSIONS } from "./operations/sessions.ts";
import type { OperationSpec } from "./operations/spec.ts";
import { fileOperations, TASKS } from "./operations/tasks.ts";

export { type AnswerSpec, impliedErrors, type OperationSpec, TAGS } from "./operations/spec.ts";

/** Every operation the app serves, in the document's order. */
export const OPERATIONS: readonly OperationSpec[] = [
  ...META,
  ...AGENTS,
  ...WORKFLOWS,
  ...TASKS,
  ...fileOperations("task"),
  ...SESSIONS,
  ...fileOperations("session"),
  ...SCHEDULES,
  ...COLLECTIONS,
  ...EVALUATIONS,
  ...HOOKS,
  ...TENANT,
];

/** What an event stream's `data:` carries: one event record as JSON (its payload per the event catalog). */
export { EventRecordSchema };
