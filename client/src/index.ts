// @outpost/client: a typed client for the Outpost agent execution API (docs/client.md).
export {
  createOutpostClient,
  type Evaluation,
  type EvaluationComparison,
  type OutpostClient,
  type OutpostClientOptions,
  type PendingInput,
  type Query,
  type RequestOptions,
  type Schedule,
  type Schemas,
  type Session,
  type Task,
  type TaskStatus,
  type WaitingFor,
  type WaitOptions,
} from "./client.ts";
export { type ErrorBody, OutpostError, OutpostTimeoutError } from "./errors.ts";
export { type EventStreamOptions, isOwnTerminal, type OutpostEvent, TERMINAL_EVENT_TYPES } from "./event-stream.ts";
export type { components, operations, paths } from "./schema.ts";
