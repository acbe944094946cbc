// The normalised answer of every door of test/commands/ (doors.ts sends the commands): an Outcome says whether the
// command was carried out, the HTTP status, Outpost's error code wherever the door's error carries it, and the door's
// own error form, read from the door's answer parsed strictly against the shape it claims to be (Outpost's error
// body, A2A's JSON-RPC and HTTP+JSON errors, an MCP error or isError tool result; a body that is none of them fails
// the test). And the rows of the tables: a command, an adapter, a check, the behaviour it shows.
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { z } from "zod";
import { ErrorBodySchema, TaskId } from "../../src/http/responses.ts";
import { checkBody } from "../support/helpers.ts";

/** What a door answered to one command. */
export interface Outcome {
  /** The command was carried out. */
  ok: boolean;
  /** The HTTP status of the answer (an MCP error or tool error travels in a 200). */
  status: number;
  /** Outpost's error code, wherever the door's error carries it; null when the command was carried out. */
  code: string | null;
  /**
   * The door's own form of the refusal: "outpost" (Outpost's error body), "json-rpc <code>" (A2A's JSON-RPC error
   * object), "a2a-rest <status>" (A2A's HTTP+JSON error), "mcp <code>" (an MCP JSON-RPC error), "mcp isError" (an
   * MCP tool result marked isError); null when the command was carried out.
   */
  form: string | null;
  /** The input at fault, wherever the door's error names it; null when none is named. */
  field: string | null;
  /** The refusal's message as the door words it; null when the command was carried out. */
  message: string | null;
  /** The Retry-After header, where the door sends one. */
  retryAfter: string | null;
  /** The answer is a repeat's: the Idempotent-Replayed header, where the door sends one. */
  replayed: boolean;
  /** The task the command created or acted on, when the answer names one. */
  taskId: string | null;
}

const ErrorInfoSchema = z.strictObject({
  "@type": z.literal("type.googleapis.com/google.rpc.ErrorInfo"),
  reason: z.string(),
  domain: z.literal("a2a-protocol.org"),
  metadata: z.record(z.string(), z.string()).optional(),
});
const JsonRpcErrorSchema = z.strictObject({
  jsonrpc: z.literal("2.0"),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.strictObject({ code: z.number().int(), message: z.string(), data: z.array(ErrorInfoSchema).optional() }),
});
const RestErrorSchema = z.strictObject({
  error: z.strictObject({
    code: z.number().int(),
    status: z.string(),
    message: z.string(),
    details: z.array(ErrorInfoSchema),
  }),
});
/** What a successful answer names as its task: /v1's task or invocation, A2A's task (JSON-RPC's result or REST's). */
const TaskNamingSchema = z.union([
  z.object({ id: TaskId }).transform((b) => b.id),
  z.object({ task_id: TaskId }).transform((b) => b.task_id),
  z.object({ result: z.object({ task: z.object({ id: TaskId }) }) }).transform((b) => b.result.task.id),
  z.object({ task: z.object({ id: TaskId }) }).transform((b) => b.task.id),
  z.object({ result: z.object({ message: z.object({ taskId: TaskId }) }) }).transform((b) => b.result.message.taskId),
  z.object({ message: z.object({ taskId: TaskId }) }).transform((b) => b.message.taskId),
]);

/** A refusal, in the form `error.form` of the door that answered `res` (its Retry-After, if any). */
function refused(
  status: number,
  error: { code: string | null; field?: string | null | undefined; form: string; message: string },
  res?: Response,
): Outcome {
  const { code, form, message } = error;
  const retryAfter = res?.headers.get("retry-after") ?? null;
  const field = error.field ?? null;
  return { ok: false, status, code, form, field, message, retryAfter, replayed: false, taskId: null };
}

/** A command carried out, naming `taskId` if its answer names a task. */
export function carriedOut(status: number, taskId: string | null, res?: Response): Outcome {
  const retryAfter = res?.headers.get("retry-after") ?? null;
  const replayed = res?.headers.get("idempotent-replayed") === "true";
  return { ok: true, status, code: null, form: null, field: null, message: null, retryAfter, replayed, taskId };
}

/**
 * An HTTP answer of /v1 or of A2A as an Outcome: Outpost's error body (its request_id the x-request-id header), A2A's
 * JSON-RPC error, A2A's HTTP+JSON error, or a success naming its task (or naming none: a 204, a push config),
 * checked against `success`, its response schema, when the door has one (src/http/responses.ts).
 */
export async function httpOutcome(res: Response, success?: z.ZodType): Promise<Outcome> {
  const text = await res.text();
  const json: unknown = text ? JSON.parse(text) : null;
  const outpost = ErrorBodySchema.safeParse(json);
  if (outpost.success) {
    expect(outpost.data.error.request_id).toBe(res.headers.get("x-request-id"));
    const { code, field, message } = outpost.data.error;
    return refused(res.status, { code, field, form: "outpost", message }, res);
  }
  const rpc = JsonRpcErrorSchema.safeParse(json);
  if (rpc.success) {
    const { code, message, data } = rpc.data.error;
    const info = data?.[0]?.metadata;
    return refused(
      res.status,
      { code: info?.code ?? null, field: info?.field, form: `json-rpc ${code}`, message },
      res,
    );
  }
  const rest = RestErrorSchema.safeParse(json);
  if (rest.success) {
    const { status, message, details } = rest.data.error;
    const info = details[0]?.metadata;
    return refused(
      res.status,
      { code: info?.code ?? null, field: info?.field, form: `a2a-rest ${status}`, message },
      res,
    );
  }
  if (res.status >= 400) throw new Error(`an error in no door's shape: ${res.status} ${text}`);
  if (success) checkBody(success, json);
  const named = TaskNamingSchema.safeParse(json);
  return carriedOut(res.status, named.success ? named.data : null, res);
}

// ---- MCP's answers ----------------------------------------------------------------------------------------------

/** An MCP JSON-RPC error as an Outcome: its code, and Outpost's code from its `data` when the server put it there. */
export function mcpErrorOutcome(error: unknown): Outcome {
  if (!(error instanceof McpError)) throw error;
  const data = z.object({ code: z.string(), field: z.string().optional() }).safeParse(error.data);
  // The client's McpError says "MCP error <code>: " before the server's message, which said it already.
  const message = error.message.replace(/^(MCP error -?\d+: )+/, "");
  const { code, field } = data.success ? data.data : { code: null, field: null };
  return refused(200, { code, field, form: `mcp ${error.code}`, message });
}

/** A tool result as an Outcome: isError carries Outpost's error body as its text (src/mcp-server/errors.ts). */
export function toolResultOutcome(result: unknown): Outcome {
  const parsed = CallToolResultSchema.parse(result);
  if (!parsed.isError) return carriedOut(200, null);
  const [first] = parsed.content;
  if (first?.type !== "text") throw new Error(`an isError result without text: ${JSON.stringify(parsed)}`);
  const { code, field, message } = checkBody(ErrorBodySchema, JSON.parse(first.text)).error;
  return refused(200, { code, field, form: "mcp isError", message });
}

// ---- The tables -------------------------------------------------------------------------------------------------

export type Check = "scope" | "size cap" | "stale decision" | "rate" | "tree limit" | "callback policy";

/** One row of a table: a command sent through one adapter, and the check it shows holding there. */
export interface Row {
  command: string;
  adapter: string;
  check: Check;
  /** What the row shows, as a sentence: the test's name after "<command> via <adapter>: ". */
  behaviour: string;
  run: () => Promise<void>;
}

export function rowName(row: Row): string {
  return `${row.command} via ${row.adapter}: ${row.behaviour}`;
}

/** A refusal as a door answers it: `expected` says the status, code and form; the rest are absent unless it says. */
export function refusal(expected: Partial<Outcome> & Pick<Outcome, "status" | "code" | "form">): Outcome {
  return {
    ok: false,
    field: null,
    message: expect.any(String),
    retryAfter: null,
    replayed: false,
    taskId: null,
    ...expected,
  };
}
